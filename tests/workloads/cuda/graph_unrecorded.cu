// Work no event records: a kernel captured into a CUDA graph and run by
// cudaGraphLaunch. hrr-cap must say so (`unrecorded : N calls (…)`) and
// `hrr-play --strict` must refuse the archive.
// Build: nvcc -cudart shared -arch=sm_90 graph_unrecorded.cu
#include <vector>
#include "common.h"

__global__ void add_one(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

int main() {
    const int n = 4096;
    int* d = nullptr;
    CK(cudaMalloc(&d, n * sizeof(int)));
    CK(cudaMemset(d, 0, n * sizeof(int)));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    add_one<<<n / 256, 256, 0, s>>>(d, n);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    std::vector<int> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int v : h) ok &= v == 3;
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    CK(cudaFree(d));
    return report("graph_unrecorded", ok, "three graph launches");
}
