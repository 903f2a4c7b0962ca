// NCCL's own API with one rank, from C++/CUDA (nccl.h and libnccl.so.2 of
// the nvidia-nccl pip package): a communicator, an all-reduce, a group of
// broadcast, all-gather, reduce-scatter and a send/receive to itself, an
// all-reduce (max) into memory from ncclMemAlloc, and a kernel between
// them, each result read back and checked (one rank: each collective is a
// copy of its input). Prints "nccl_one_rank: OK"; exits non-zero on a
// wrong result.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <nccl.h>

#include "common.h"

#define NK(x)                                                                     \
    do {                                                                          \
        ncclResult_t r_ = (x);                                                    \
        if (r_ != ncclSuccess) {                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,           \
                    ncclGetErrorString(r_));                                      \
            exit(3);                                                              \
        }                                                                         \
    } while (0)
#define EXPECT(c, ...)                                                            \
    do {                                                                          \
        if (!(c)) {                                                               \
            printf("nccl_one_rank: WRONG: " __VA_ARGS__);                         \
            printf("\n");                                                         \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

__global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + 1.0f;
}

int main() {
    const int n = 1 << 20;  // floats
    std::vector<float> h(n), out(n);
    for (int i = 0; i < n; i++) h[i] = (float)(i % 1009) * 0.25f - 100.0f;
    CK(cudaSetDevice(0));
    int version = 0;
    NK(ncclGetVersion(&version));
    ncclUniqueId id;
    NK(ncclGetUniqueId(&id));
    ncclComm_t comm;
    NK(ncclCommInitRank(&comm, 1, id, 0));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    float *x, *sum, *bc, *gather, *scat, *ring;
    CK(cudaMalloc(&x, n * sizeof(float)));
    CK(cudaMalloc(&sum, n * sizeof(float)));
    CK(cudaMalloc(&bc, n * sizeof(float)));
    CK(cudaMalloc(&gather, n * sizeof(float)));
    CK(cudaMalloc(&scat, n * sizeof(float)));
    CK(cudaMalloc(&ring, n * sizeof(float)));
    CK(cudaMemcpyAsync(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));

    NK(ncclAllReduce(x, sum, n, ncclFloat32, ncclSum, comm, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(out.data(), sum, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(out[i] == h[i], "all_reduce[%d] = %g, want %g", i, out[i], h[i]);

    // The collective's result feeds a kernel, whose output is reduced again.
    scale<<<(n + 255) / 256, 256, 0, s>>>(sum, 2.0f, n);
    NK(ncclGroupStart());
    NK(ncclBroadcast(sum, bc, n, ncclFloat32, 0, comm, s));
    NK(ncclAllGather(x, gather, n, ncclFloat32, comm, s));
    NK(ncclReduceScatter(sum, scat, n, ncclFloat32, ncclSum, comm, s));
    NK(ncclSend(x, n, ncclFloat32, 0, comm, s));
    NK(ncclRecv(ring, n, ncclFloat32, 0, comm, s));
    NK(ncclGroupEnd());
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(out.data(), bc, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(out[i] == h[i] * 2.0f + 1.0f, "broadcast[%d] = %g", i, out[i]);
    CK(cudaMemcpy(out.data(), gather, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(out[i] == h[i], "all_gather[%d] = %g", i, out[i]);
    CK(cudaMemcpy(out.data(), scat, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        EXPECT(out[i] == h[i] * 2.0f + 1.0f, "reduce_scatter[%d] = %g", i, out[i]);
    CK(cudaMemcpy(out.data(), ring, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(out[i] == h[i], "recv[%d] = %g", i, out[i]);

    float *mem = nullptr;
    NK(ncclMemAlloc((void **)&mem, n * sizeof(float)));
    NK(ncclAllReduce(x, mem, n, ncclFloat32, ncclMax, comm, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(out.data(), mem, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(out[i] == h[i], "max[%d] = %g", i, out[i]);
    NK(ncclMemFree(mem));

    NK(ncclCommFinalize(comm));
    NK(ncclCommDestroy(comm));
    for (float *p : {x, sum, bc, gather, scat, ring}) CK(cudaFree(p));
    CK(cudaStreamDestroy(s));
    printf("nccl_one_rank: nccl %d: OK\n", version);
    return 0;
}
