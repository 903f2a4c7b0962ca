// Speed probes.
//   launch_loop loop [N]   N (default 100000) tiny kernel launches, then a check
//   launch_loop bw [MiB]   H2D and D2H of a pinned buffer (default 256 MiB), GB/s
//   launch_loop bwnew [MiB] D2H only, new content each copy: a one-thread
//                          kernel changes a word of the buffer before each
//                          copy (outside the timed copy), so a capture can
//                          never find the result in its archive already
//   launch_loop            both
// Prints its own wall times so that a captured run can be compared with a
// plain one without counting process start-up.
#include <chrono>
#include <cstring>
#include <cstdlib>
#include "common.h"

__global__ void bump(unsigned* word, unsigned v) { *word = v; }

__global__ void tick(unsigned* counter, unsigned* scratch) {
    if (threadIdx.x == 0) counter[0] += 1u;
    scratch[threadIdx.x] = threadIdx.x;
}

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

static int loop(int n) {
    unsigned *counter, *scratch, got = 0;
    CK(cudaMalloc(&counter, sizeof(unsigned)));
    CK(cudaMalloc(&scratch, 32 * sizeof(unsigned)));
    CK(cudaMemset(counter, 0, sizeof(unsigned)));
    CK(cudaDeviceSynchronize());
    auto t = Clock::now();
    for (int i = 0; i < n; ++i) tick<<<1, 32>>>(counter, scratch);
    // Host time to enqueue: equal to the loop's when the launch calls, not
    // the GPU, are the bottleneck.
    double enqueue = ms_since(t);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    double ms = ms_since(t);
    CK(cudaMemcpy(&got, counter, sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(counter));
    CK(cudaFree(scratch));
    std::printf("launch_loop: %d launches in %.3f ms (%.3f us/launch)\n", n, ms, ms * 1000.0 / n);
    std::printf("HRR_TIME launch_loop_ms=%.3f enqueue_ms=%.3f\n", ms, enqueue);
    return report("launch_loop", got == (unsigned)n, "counter == launches");
}

static int bw(size_t mib) {
    const size_t bytes = mib << 20;
    const int reps = 4;
    unsigned char *h, *d;
    CK(cudaMallocHost(&h, bytes));
    CK(cudaMalloc(&d, bytes));
    for (size_t i = 0; i < bytes; i += 4096) h[i] = (unsigned char)(i >> 12);
    // Warm-up (maps pages, wakes the copy engines).
    CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    auto t = Clock::now();
    for (int r = 0; r < reps; ++r) CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    double h2d = ms_since(t);
    t = Clock::now();
    for (int r = 0; r < reps; ++r) CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    double d2h = ms_since(t);
    bool ok = true;
    for (size_t i = 0; i < bytes; i += 4096) ok = ok && h[i] == (unsigned char)(i >> 12);
    double gb = (double)bytes * reps / 1e9;
    std::printf("bandwidth: %d x %zu MiB pinned: h2d %.2f GB/s (%.3f ms/copy), d2h %.2f GB/s (%.3f ms/copy)\n", reps,
                mib, gb / (h2d / 1e3), h2d / reps, gb / (d2h / 1e3), d2h / reps);
    std::printf("HRR_TIME bw_h2d_ms_per_copy=%.3f bw_d2h_ms_per_copy=%.3f bw_bytes=%zu\n", h2d / reps, d2h / reps, bytes);
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    return report("bandwidth", ok, "round trip intact");
}

static int bw_new(size_t mib) {
    const size_t bytes = mib << 20;
    const int reps = 4;
    unsigned char *h, *d;
    CK(cudaMallocHost(&h, bytes));
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemset(d, 0x5a, bytes));
    // Warm-up (maps pages, wakes the copy engines).
    CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    double d2h = 0;
    bool ok = true;
    for (int r = 0; r < reps; ++r) {
        bump<<<1, 1>>>((unsigned*)d + 1024 * r, 0xC0DE0000u + r);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        auto t = Clock::now();
        CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
        d2h += ms_since(t);
        ok = ok && ((unsigned*)h)[1024 * r] == 0xC0DE0000u + r;
    }
    double gb = (double)bytes * reps / 1e9;
    std::printf("bandwidth: %d x %zu MiB pinned, new content each: d2h %.2f GB/s (%.3f ms/copy)\n", reps, mib,
                gb / (d2h / 1e3), d2h / reps);
    std::printf("HRR_TIME bw_new_d2h_ms_per_copy=%.3f bw_bytes=%zu\n", d2h / reps, bytes);
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    return report("bandwidth_new", ok, "each copy's new word");
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "all";
    int rc = 0;
    if (!std::strcmp(mode, "loop") || !std::strcmp(mode, "all")) rc |= loop(argc > 2 && !std::strcmp(mode, "loop") ? std::atoi(argv[2]) : 100000);
    if (!std::strcmp(mode, "bw") || !std::strcmp(mode, "all")) rc |= bw(argc > 2 && !std::strcmp(mode, "bw") ? (size_t)std::atoll(argv[2]) : 256);
    if (!std::strcmp(mode, "bwnew")) rc |= bw_new(argc > 2 ? (size_t)std::atoll(argv[2]) : 256);
    return rc;
}
