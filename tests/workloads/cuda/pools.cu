// Stream-ordered allocation from a memory pool: cudaMemPoolCreate, a
// release threshold, cudaMallocFromPoolAsync of a buffer a kernel fills,
// cudaFreeAsync, a second allocation of the same size (the pool hands the
// same address out again: printed, not required), filled whole by another
// kernel; the pool made the device's (cudaMallocAsync from it), trimmed,
// destroyed. No result depends on what a reused block held. Checked here
// and printed; replay checks every download byte for byte.
#include <cstdint>
#include "common.h"

#define N 4096

__global__ void affine(float* y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * (float)i + b;
}

int main() {
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaMemPool_t pool;
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    CK(cudaMemPoolCreate(&pool, &props));
    uint64_t threshold = UINT64_MAX;
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    static float out[N];
    int bad = 0;

    float *y1, *y2, *y3;
    CK(cudaMallocFromPoolAsync((void**)&y1, sizeof out, pool, s));
    affine<<<N / 256, 256, 0, s>>>(y1, 2.0f, 1.0f, N);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(out, y1, sizeof out, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        if (out[i] != 2.0f * i + 1.0f) ++bad;
    CK(cudaFreeAsync(y1, s));
    CK(cudaMallocFromPoolAsync((void**)&y2, sizeof out, pool, s));
    affine<<<N / 256, 256, 0, s>>>(y2, 3.0f, -1.0f, N);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(out, y2, sizeof out, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        if (out[i] != 3.0f * i - 1.0f) ++bad;

    CK(cudaDeviceSetMemPool(0, pool));
    CK(cudaMallocAsync((void**)&y3, sizeof out, s));
    CK(cudaMemcpyAsync(y3, y2, sizeof out, cudaMemcpyDeviceToDevice, s));
    CK(cudaMemcpyAsync(out, y3, sizeof out, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        if (out[i] != 3.0f * i - 1.0f) ++bad;
    CK(cudaFreeAsync(y2, s));
    CK(cudaFreeAsync(y3, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemPoolTrimTo(pool, 0));
    cudaMemPool_t def;
    CK(cudaDeviceGetDefaultMemPool(&def, 0));
    CK(cudaDeviceSetMemPool(0, def));
    CK(cudaMemPoolDestroy(pool));
    CK(cudaStreamDestroy(s));
    std::printf("pools: second block %s the first, %d wrong\n", y2 == y1 ? "reuses" : "differs from",
                bad);
    return report("pools", bad == 0, "pool allocations, reuse, cudaMallocAsync from the pool");
}
