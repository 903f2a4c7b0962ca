// Work no event records: a CUDA graph captured with a host function
// (cudaLaunchHostFunc, a host node) between two kernels, run by
// cudaGraphLaunch, then a 3D copy between device buffers by
// cudaMemcpy3DPeer (device 0 to device 0). The graph, its kernels and its
// host node are recorded; the peer 3D copy is not (the driver's
// cuMemcpy3DPeer has no op yet), so hrr-cap must say so
// (`unrecorded : N calls (cuMemcpy3DPeer …)`) and `hrr-play --strict` must
// refuse the archive.
// Build: nvcc -cudart shared -arch=sm_90 graph_unrecorded.cu
#include <vector>
#include "common.h"

__global__ void add_one(int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

static void CUDART_CB count_calls(void* user) { ++*static_cast<int*>(user); }

int main() {
    const int n = 4096;
    int* d = nullptr;
    int calls = 0;
    CK(cudaMalloc(&d, n * sizeof(int)));
    CK(cudaMemset(d, 0, n * sizeof(int)));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    add_one<<<n / 256, 256, 0, s>>>(d, n);
    CK(cudaLaunchHostFunc(s, count_calls, &calls));
    add_one<<<n / 256, 256, 0, s>>>(d, n);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    std::vector<int> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
    bool ok = calls == 3;
    for (int v : h) ok &= v == 6;
    int* d2 = nullptr;
    CK(cudaMalloc(&d2, n * sizeof(int)));
    cudaMemcpy3DPeerParms p = {};
    p.srcPtr = make_cudaPitchedPtr(d, 64 * sizeof(int), 64, 64);
    p.dstPtr = make_cudaPitchedPtr(d2, 64 * sizeof(int), 64, 64);
    p.srcDevice = p.dstDevice = 0;
    p.extent = make_cudaExtent(64 * sizeof(int), 64, 1);
    CK(cudaMemcpy3DPeer(&p));
    CK(cudaFree(d2));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    CK(cudaFree(d));
    return report("graph_unrecorded", ok, "three launches of a graph with a host node");
}
