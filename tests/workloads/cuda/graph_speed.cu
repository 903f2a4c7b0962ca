// Graph launch speed: a graph of KERNELS tiny kernels (one stream capture)
// launched LAUNCHES times. Prints `graph_loop_ms=` (the launches and the
// final synchronisation, after one warm-up launch) for scripts/gpu-speed.sh.
// Usage: graph_speed [KERNELS=128] [LAUNCHES=1000]
// Build: nvcc -cudart shared -arch=sm_90 graph_speed.cu
#include <chrono>
#include <cstdlib>
#include "common.h"

__global__ void bump(int* p, int k) { p[threadIdx.x] += k; }

int main(int argc, char** argv) {
    const int kernels = argc > 1 ? std::atoi(argv[1]) : 128;
    const int launches = argc > 2 ? std::atoi(argv[2]) : 1000;
    int* d = nullptr;
    CK(cudaMalloc(&d, 256 * sizeof(int)));
    CK(cudaMemset(d, 0, 256 * sizeof(int)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    cudaGraphExec_t exec;
    long long per_launch = 0;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < kernels; ++k) {
        bump<<<1, 256, 0, s>>>(d, k % 7 + 1);
        per_launch += k % 7 + 1;
    }
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    CK(cudaGraphLaunch(exec, s));  // warm-up (uploads the graph)
    CK(cudaStreamSynchronize(s));
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    auto t1 = std::chrono::steady_clock::now();
    int h[256];
    CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int v : h) ok &= v == (launches + 1) * per_launch;
    std::printf("graph_loop_ms=%.2f kernels=%d launches=%d\n",
                std::chrono::duration<double, std::milli>(t1 - t0).count(), kernels, launches);
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d));
    return report("graph_speed", ok, "graph launches");
}
