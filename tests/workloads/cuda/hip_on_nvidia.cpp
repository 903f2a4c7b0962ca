// A HIP program built for NVIDIA: Debian's libamdhip64-dev headers
// (hip/hip_runtime.h -> hip/nvidia_detail, a.k.a. nvcc_detail) with nvcc:
//   nvcc -cudart shared -arch=sm_90 -x cu -I .gpu/hip-include hip_on_nvidia.cpp
// With CUDA 13 this is expected not to compile (see scripts/gpu-pass.sh,
// which records the compiler's errors); with CUDA 12 it builds and runs.
#include <cstdio>
#include <vector>
#include <hip/hip_runtime.h>

#define HK(call)                                                                     \
    do {                                                                             \
        hipError_t e_ = (call);                                                      \
        if (e_ != hipSuccess) {                                                      \
            std::fprintf(stderr, "%s failed: %s\n", #call, hipGetErrorString(e_));   \
            return 2;                                                                \
        }                                                                            \
    } while (0)

__global__ void vadd(const int* a, const int* b, int* c, int n) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1 << 16;
    std::vector<int> a(n), b(n), c(n, 0);
    for (int i = 0; i < n; ++i) {
        a[i] = i;
        b[i] = 2 * i;
    }
    int *da, *db, *dc;
    HK(hipMalloc(&da, n * sizeof(int)));
    HK(hipMalloc(&db, n * sizeof(int)));
    HK(hipMalloc(&dc, n * sizeof(int)));
    HK(hipMemcpy(da, a.data(), n * sizeof(int), hipMemcpyHostToDevice));
    HK(hipMemcpy(db, b.data(), n * sizeof(int), hipMemcpyHostToDevice));
    hipLaunchKernelGGL(vadd, dim3((n + 255) / 256), dim3(256), 0, 0, da, db, dc, n);
    HK(hipGetLastError());
    HK(hipMemcpy(c.data(), dc, n * sizeof(int), hipMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += c[i] != 3 * i;
    HK(hipFree(da));
    HK(hipFree(db));
    HK(hipFree(dc));
    std::printf("hip_on_nvidia: n=%d, %d wrong\n", n, bad);
    std::printf("hip_on_nvidia: vadd through HIP-on-CUDA: %s\n", bad ? "WRONG" : "OK");
    return bad ? 1 : 0;
}
