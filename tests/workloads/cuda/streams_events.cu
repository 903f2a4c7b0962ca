// Several streams: async H2D from pinned memory, a kernel and async D2H on
// each; events per stream; stream 0 waits (cudaStreamWaitEvent) on stream 3's
// kernel before combining both buffers; elapsed time between two events.
#include <vector>
#include "common.h"

__global__ void scale(float* p, int n, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = p[i] * s + 1.0f;
}

__global__ void combine(float* out, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

int main() {
    const int S = 4, n = 1 << 18;
    const size_t bytes = n * sizeof(float);
    cudaStream_t st[S];
    cudaEvent_t done[S], t0, t1;
    float *h[S], *d[S], *hout, *dout;
    for (int s = 0; s < S; ++s) {
        CK(cudaStreamCreate(&st[s]));
        CK(cudaEventCreate(&done[s]));
        CK(cudaMallocHost(&h[s], bytes));
        CK(cudaMalloc(&d[s], bytes));
        for (int i = 0; i < n; ++i) h[s][i] = (float)(s * 1000 + (i % 997));
    }
    CK(cudaMallocHost(&hout, bytes));
    CK(cudaMalloc(&dout, bytes));
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));

    CK(cudaEventRecord(t0, st[0]));
    for (int s = 0; s < S; ++s) {
        CK(cudaMemcpyAsync(d[s], h[s], bytes, cudaMemcpyHostToDevice, st[s]));
        scale<<<(n + 255) / 256, 256, 0, st[s]>>>(d[s], n, (float)(s + 2));
        CK_LAUNCH();
        CK(cudaEventRecord(done[s], st[s]));
    }
    // Stream 0 needs stream 3's result.
    CK(cudaStreamWaitEvent(st[0], done[3], 0));
    combine<<<(n + 255) / 256, 256, 0, st[0]>>>(dout, d[0], d[3], n);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, st[0]));
    for (int s = 1; s < S; ++s) CK(cudaMemcpyAsync(h[s], d[s], bytes, cudaMemcpyDeviceToHost, st[s]));
    CK(cudaEventRecord(t1, st[0]));
    CK(cudaEventSynchronize(t1));
    for (int s = 1; s < S; ++s) CK(cudaStreamSynchronize(st[s]));
    float ms = -1;
    CK(cudaEventElapsedTime(&ms, t0, t1));

    int bad = 0;
    for (int i = 0; i < n; ++i) {
        float v0 = (float)(0 * 1000 + (i % 997)) * 2.0f + 1.0f;
        float v3 = (float)(3 * 1000 + (i % 997)) * 5.0f + 1.0f;
        if (hout[i] != v0 + v3) ++bad;
        for (int s = 1; s < S; ++s)
            if (h[s][i] != (float)(s * 1000 + (i % 997)) * (float)(s + 2) + 1.0f) ++bad;
    }
    for (int s = 0; s < S; ++s) {
        CK(cudaEventDestroy(done[s]));
        CK(cudaStreamDestroy(st[s]));
        CK(cudaFreeHost(h[s]));
        CK(cudaFree(d[s]));
    }
    CK(cudaEventDestroy(t0));
    CK(cudaEventDestroy(t1));
    CK(cudaFreeHost(hout));
    CK(cudaFree(dout));
    std::printf("streams_events: %d streams, n=%d, elapsed %.3f ms, %d wrong\n", S, n, ms, bad);
    return report("streams_events", bad == 0 && ms >= 0.0f, "per-stream results, cross-stream wait, elapsed >= 0");
}
