// A CUDA graph made by stream capture through the runtime, launched three
// times: an H2D copy from a page-locked host buffer the program refills
// before every launch, a memset, three kernels (one forked onto a second
// stream and joined back by events), a D2H copy into host memory the
// program checks after every launch. The capture must record the graph
// (graph_exec) and each launch's host bytes (graph_launch), not the
// captured work as if it ran; replay (graphs or --no-graphs) must give the
// same D2H bytes.
// Build: nvcc -cudart shared -arch=sm_90 graph_captured.cu
#include <vector>
#include "common.h"

__global__ void twice(const int* a, int* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] += 2 * a[i];
}
__global__ void add_index(int* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] += i;
}
__global__ void mix(const int* a, const int* b, int* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = b[i] * 3 - a[(i + 1) % n];
}

int main() {
    const int n = 1 << 16;
    const size_t bytes = n * sizeof(int);
    int *hin = nullptr, *hout = nullptr, *a = nullptr, *b = nullptr, *c = nullptr;
    CK(cudaMallocHost(&hin, bytes));
    CK(cudaMallocHost(&hout, bytes));
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&c, bytes));
    cudaStream_t s, side;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t fork, join;
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

    cudaGraph_t g;
    cudaGraphExec_t exec;
    const int blocks = n / 256;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemcpyAsync(a, hin, bytes, cudaMemcpyHostToDevice, s));
    CK(cudaMemsetAsync(b, 0, bytes, s));
    twice<<<blocks, 256, 0, s>>>(a, b, n);
    CK_LAUNCH();
    CK(cudaEventRecord(fork, s));
    CK(cudaStreamWaitEvent(side, fork, 0));
    add_index<<<blocks, 256, 0, side>>>(b, n);
    CK_LAUNCH();
    CK(cudaEventRecord(join, side));
    CK(cudaStreamWaitEvent(s, join, 0));
    mix<<<blocks, 256, 0, s>>>(a, b, c, n);
    CK_LAUNCH();
    CK(cudaMemcpyAsync(hout, c, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));

    bool ok = true;
    long long sum = 0;
    for (int it = 0; it < 3; ++it) {
        for (int i = 0; i < n; ++i) hin[i] = (i * 7 + it * 1000) % 4099 - 2000;
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; ++i) {
            int want = (2 * hin[i] + i) * 3 - hin[(i + 1) % n];
            ok &= hout[i] == want;
            sum += hout[i];
        }
        std::printf("graph_captured: launch %d checksum %lld\n", it, sum);
    }
    // One ordinary download after the graphs.
    std::vector<int> h(n);
    CK(cudaMemcpy(h.data(), b, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) ok &= h[i] == 2 * hin[i] + i;

    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    CK(cudaEventDestroy(fork));
    CK(cudaEventDestroy(join));
    CK(cudaStreamDestroy(side));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(c));
    CK(cudaFreeHost(hin));
    CK(cudaFreeHost(hout));
    return report("graph_captured", ok, "three launches of a captured graph");
}
