// Repeated launches (<<<>>> and the explicit API) whose inputs change one at a time, for the
// recorder's repeat path (lib/capture/src/launch_memo.rs): a launch
// that repeats the previous one is recorded from a kept line, so every input
// that can change between two launches must end the repeat. Each phase
// changes one (a scalar, the buffer, the kernel, the grid, the stream, an
// allocation elsewhere, the entry point) and reads the results back; a stale
// line would make the replay compute something else, and its D2H check fail.
#include <cstring>
#include "common.h"

__global__ void add(unsigned* p, unsigned v) { p[blockIdx.x * blockDim.x + threadIdx.x] += v; }
__global__ void mul(unsigned* p, unsigned v) { p[blockIdx.x * blockDim.x + threadIdx.x] *= v; }

static const int N = 64;

// The device buffers and what they must hold.
struct Buf {
    unsigned* d;
    unsigned want[N];
};

// Launches add or mul <<<grid, 32, 0, stream>>>(b.d, v) and applies it to
// b.want.
static void launch(bool multiply, Buf& b, unsigned v, int grid = 1, cudaStream_t st = 0) {
    if (multiply)
        mul<<<grid, 32, 0, st>>>(b.d, v);
    else
        add<<<grid, 32, 0, st>>>(b.d, v);
    for (int i = 0; i < grid * 32; ++i) b.want[i] = multiply ? b.want[i] * v : b.want[i] + v;
}

// Reads `b` back and checks it.
static bool check(const Buf& b, const char* phase) {
    unsigned got[N];
    CK_LAUNCH();
    CK(cudaMemcpy(got, b.d, sizeof got, cudaMemcpyDeviceToHost));
    bool ok = std::memcmp(got, b.want, sizeof got) == 0;
    report("launch_repeat", ok, phase);
    return ok;
}

static void fresh(Buf& b) {
    CK(cudaMalloc(&b.d, sizeof b.want));
    CK(cudaMemset(b.d, 0, sizeof b.want));
    std::memset(b.want, 0, sizeof b.want);
}

int main() {
    Buf a, b;
    fresh(a);
    fresh(b);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    bool ok = true;

    // The same launch 200 times, then its scalar changing every 7 launches.
    for (int i = 0; i < 200; ++i) launch(false, a, 1);
    for (int i = 0; i < 200; ++i) launch(false, a, 2 + i / 7);
    ok &= check(a, "repeated launches, then a changing scalar");

    // Buffers alternating, then the kernel alternating on one buffer.
    for (int i = 0; i < 100; ++i) launch(false, i % 2 ? a : b, 3);
    for (int i = 0; i < 6; ++i) launch(i % 2, b, 2);
    ok &= check(a, "alternating buffers");
    ok &= check(b, "alternating buffers, then kernels");

    // The grid, then the stream (a blocking one: ordered with the legacy
    // default stream), changing under the same arguments.
    for (int i = 0; i < 50; ++i) launch(false, a, 1, 1 + i % 2);
    for (int i = 0; i < 50; ++i) launch(false, a, 1, 2, i % 2 ? s : 0);
    CK(cudaDeviceSynchronize());
    ok &= check(a, "changing grid, then stream");

    // The buffer freed and allocated again (often at the same address), and
    // an unrelated allocation in the middle of a run of repeats.
    CK(cudaFree(b.d));
    fresh(b);
    unsigned* c = nullptr;
    for (int i = 0; i < 60; ++i) {
        if (i == 30) CK(cudaMalloc(&c, 1 << 20));
        launch(false, b, 5);
    }
    ok &= check(b, "buffer freed and allocated again");

    // The explicit API, repeated: cudaLaunchKernel on the host stub (its
    // scalar changing every 5 launches), then cudaLaunchKernelExC on a stream.
    unsigned v = 1;
    void* kargs[] = {&a.d, &v};
    for (int i = 0; i < 20; ++i) {
        v = 1 + i / 5;
        CK(cudaLaunchKernel((const void*)add, dim3(1), dim3(32), kargs, 0, 0));
        for (int j = 0; j < 32; ++j) a.want[j] += v;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(2);
    cfg.blockDim = dim3(32);
    cfg.stream = s;
    v = 3;
    for (int i = 0; i < 10; ++i) {
        CK(cudaLaunchKernelExC(&cfg, (const void*)add, kargs));
        for (int j = 0; j < N; ++j) a.want[j] += v;
    }
    CK(cudaStreamSynchronize(s));
    ok &= check(a, "explicit API: cudaLaunchKernel, then cudaLaunchKernelExC");

    CK(cudaFree(c));
    CK(cudaFree(a.d));
    CK(cudaFree(b.d));
    CK(cudaStreamDestroy(s));
    return ok ? 0 : 1;
}
