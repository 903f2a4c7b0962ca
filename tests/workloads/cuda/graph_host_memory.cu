// Kernel nodes of executable graphs reaching mapped pinned host memory
// (cudaHostAlloc, device pointer from cudaHostGetDevicePointer):
//   read   a graph captured from a stream (memset of y, axpy reading x in
//          pinned memory) launched three times, the host changing x before
//          each launch; y is downloaded and checked after each;
//   write  a graph whose kernel fills the first half of a pinned buffer,
//          launched twice, the host changing all of the buffer in between
//          and checking it after each stream synchronisation.
// The capture must hold host_write events before the graph launches and
// host_read events at the synchronisations; replay (graphs or --no-graphs)
// must reproduce both, and fails when captured with HRR_HOST_MEMORY=off.
// Build: nvcc -cudart shared -arch=sm_90 graph_host_memory.cu
#include <vector>
#include "common.h"

__global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void fill(float* p, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v;
}

int main() {
    const int n = 1 << 16;
    const size_t bytes = n * sizeof(float);
    const int blocks = (n + 255) / 256;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int bad = 0;

    // Read: x in mapped pinned memory, changed by the host between launches.
    float *hx, *dx, *dy;
    CK(cudaHostAlloc(&hx, bytes, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&dx, hx, 0));
    CK(cudaMalloc(&dy, bytes));
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemsetAsync(dy, 0, bytes, s));
    axpy<<<blocks, 256, 0, s>>>(1.0f, dx, dy, n);
    CK_LAUNCH();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    std::vector<float> out(n);
    for (int k = 1; k <= 3; ++k) {
        for (int i = 0; i < n; ++i)
            if (k == 1 || i < 1024) hx[i] = float(i * k);
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(out.data(), dy, bytes, cudaMemcpyDeviceToHost));
        int wrong = 0;
        for (int i = 0; i < n; ++i) wrong += out[i] != hx[i];
        std::printf("read: graph launch %d: y[1023] = %g, %d wrong\n", k, out[1023], wrong);
        bad += wrong;
    }
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));

    // Write: the kernel node writes pinned memory the host reads.
    float *hw, *dw;
    CK(cudaHostAlloc(&hw, bytes, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&dw, hw, 0));
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    fill<<<blocks, 256, 0, s>>>(dw, 2.5f, n / 2);
    CK_LAUNCH();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    for (int k = 1; k <= 2; ++k) {
        // Before the second launch the host changes all of it: the half the
        // kernel does not write keeps the host's value.
        const float rest = k == 1 ? 0.0f : -1.0f;
        if (k == 2)
            for (int i = 0; i < n; ++i) hw[i] = rest;
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        int wrong = 0;
        for (int i = 0; i < n; ++i) wrong += hw[i] != (i < n / 2 ? 2.5f : rest);
        std::printf("write: graph launch %d: h[0] = %g, h[%d] = %g, %d wrong\n", k, hw[0], n - 1,
                    hw[n - 1], wrong);
        bad += wrong;
    }
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));

    CK(cudaFreeHost(hx));
    CK(cudaFreeHost(hw));
    CK(cudaFree(dy));
    CK(cudaStreamDestroy(s));
    return report("graph_host_memory", bad == 0,
                  "graph kernel nodes reading and writing mapped pinned host memory");
}
