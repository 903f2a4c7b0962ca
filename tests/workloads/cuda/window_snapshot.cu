// What opening a capture window costs per GiB of live device memory.
//   window_snapshot [GiB]   (default 4)
// Allocates GiB of device memory in 256 MiB buffers, fills each with a
// kernel (distinct bytes per buffer), then times cudaProfilerStart: under
// `hrr-cap --window profiler` that call is where the recorder synchronises
// and snapshots every live allocation (the window's state preamble);
// plain, it does next to nothing. Inside the window one kernel reads every
// buffer and its sum is copied to the host: the window's replay must
// reproduce it from the snapshot alone.
#include <chrono>
#include <cstdlib>
#include <vector>
#include <cuda_profiler_api.h>
#include "common.h"

__global__ void fill(unsigned* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (unsigned)(i * 2654435761u) ^ seed;
}

__global__ void sum(const unsigned* p, size_t n, unsigned long long* out) {
    unsigned long long s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += p[i];
    atomicAdd(out, s);
}

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
    const size_t gib = argc > 1 ? (size_t)std::atoll(argv[1]) : 4;
    const size_t chunk = 256ull << 20, words = chunk / sizeof(unsigned);
    std::vector<unsigned*> bufs(gib * 4);
    for (size_t b = 0; b < bufs.size(); ++b) {
        CK(cudaMalloc(&bufs[b], chunk));
        fill<<<1024, 256>>>(bufs[b], words, (unsigned)b * 0x9e3779b9u);
        CK_LAUNCH();
    }
    unsigned long long* acc;
    CK(cudaMalloc(&acc, sizeof(*acc)));
    CK(cudaMemset(acc, 0, sizeof(*acc)));
    CK(cudaDeviceSynchronize());

    auto t = Clock::now();
    CK(cudaProfilerStart());
    double start_ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();

    for (auto* p : bufs) {
        sum<<<1024, 256>>>(p, words, acc);
        CK_LAUNCH();
    }
    unsigned long long got = 0;
    CK(cudaMemcpy(&got, acc, sizeof(got), cudaMemcpyDeviceToHost));
    CK(cudaProfilerStop());

    // The same sum on the host, from the fill's formula.
    unsigned long long want = 0;
    for (size_t b = 0; b < bufs.size(); ++b)
        for (size_t i = 0; i < words; ++i) want += (unsigned)(i * 2654435761u) ^ ((unsigned)b * 0x9e3779b9u);
    std::printf("window_snapshot: %zu GiB live, cudaProfilerStart took %.3f ms\n", gib, start_ms);
    std::printf("HRR_TIME profiler_start_ms=%.3f live_bytes=%zu\n", start_ms, gib << 30);
    for (auto* p : bufs) CK(cudaFree(p));
    CK(cudaFree(acc));
    return report("window_snapshot", got == want, "sum over the snapshot");
}
