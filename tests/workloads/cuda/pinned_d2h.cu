// D2H into page-locked memory from cudaMallocHost, synchronous and async.
#include <cstring>
#include "common.h"

__global__ void fill(unsigned* p, int n, unsigned k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = (unsigned)i * k + 11u;
}

int main() {
    const int n = 1 << 22;  // 16 MiB
    const size_t bytes = n * sizeof(unsigned);
    unsigned *d, *h1, *h2;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    CK(cudaMalloc(&d, bytes));
    CK(cudaMallocHost(&h1, bytes));
    CK(cudaMallocHost(&h2, bytes));
    std::memset(h1, 0, bytes);
    std::memset(h2, 0, bytes);
    fill<<<(n + 255) / 256, 256>>>(d, n, 7u);
    CK_LAUNCH();
    CK(cudaMemcpy(h1, d, bytes, cudaMemcpyDeviceToHost));
    fill<<<(n + 255) / 256, 256, 0, s>>>(d, n, 13u);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(h2, d, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        if (h1[i] != (unsigned)i * 7u + 11u) ++bad;
        if (h2[i] != (unsigned)i * 13u + 11u) ++bad;
    }
    CK(cudaFreeHost(h1));
    CK(cudaFreeHost(h2));
    CK(cudaFree(d));
    CK(cudaStreamDestroy(s));
    std::printf("pinned_d2h: 2 x %zu bytes into cudaMallocHost memory, %d wrong\n", bytes, bad);
    return report("pinned_d2h", bad == 0, "sync and async D2H into pinned memory");
}
