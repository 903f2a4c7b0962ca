// The seed's scenario in CUDA form: 256 KiB that the runtime never sees
// (cuMemAlloc, the driver API), its base reported on stdout for
// hrr-sidecar, then used by runtime calls: H2D into it, a kernel on an
// interior pointer, D2D out of it into a cudaMalloc buffer, D2H back.
// Build: nvcc -cudart shared -arch=sm_90 hidden_segment.cu -lcuda
#include <cstdint>
#include <cstring>
#include <vector>
#include <cuda.h>
#include "common.h"

#define CKD(call)                                                                   \
    do {                                                                            \
        CUresult r_ = (call);                                                       \
        if (r_ != CUDA_SUCCESS) {                                                   \
            const char* s_ = "?";                                                   \
            cuGetErrorName(r_, &s_);                                                \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s_); \
            std::exit(2);                                                           \
        }                                                                           \
    } while (0)

__global__ void bump(unsigned char* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = (unsigned char)(p[i] + 1);
}

int main() {
    const size_t size = 256 * 1024;
    // The runtime creates and binds the primary context; the driver API
    // allocation below lands in it.
    CK(cudaFree(0));
    CUdeviceptr seg = 0;
    CKD(cuMemAlloc(&seg, size));
    std::printf("HRR_SEGMENT base=0x%llx size=%zu\n", (unsigned long long)seg, size);
    std::fflush(stdout);

    std::vector<unsigned char> h(size), back(size, 0);
    for (size_t i = 0; i < size; ++i) h[i] = (unsigned char)(i * 31 + 7);
    void* segp = (void*)(uintptr_t)seg;
    CK(cudaMemcpy(segp, h.data(), size, cudaMemcpyHostToDevice));
    // A kernel argument pointing 4 KiB into the segment.
    const int off = 4096, len = 8192;
    bump<<<(len + 255) / 256, 256>>>((unsigned char*)segp + off, len);
    CK_LAUNCH();
    unsigned char* out = nullptr;
    CK(cudaMalloc(&out, size));
    CK(cudaMemcpy(out, segp, size, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(back.data(), out, size, cudaMemcpyDeviceToHost));

    int bad = 0;
    for (size_t i = 0; i < size; ++i) {
        unsigned char want = (unsigned char)(h[i] + ((i >= (size_t)off && i < (size_t)(off + len)) ? 1 : 0));
        if (back[i] != want) ++bad;
    }
    std::printf("hidden_segment: first=0x%02x last=0x%02x (want 0x%02x 0x%02x), %d wrong\n", back[0],
                back[size - 1], h[0], h[size - 1], bad);
    CK(cudaFree(out));
    CKD(cuMemFree(seg));
    return report("hidden_segment", bad == 0 && back[0] == h[0] && back[size - 1] == h[size - 1],
                  "H2D into a driver-API segment, kernel on an interior pointer, D2D out, D2H back");
}
