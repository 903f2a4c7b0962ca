/* Repeated hipModuleLaunchKernel calls whose inputs change one at a time,
 * for the recorder's repeat path (lib/capture/recorder/src/record/launch_memo.rs): a
 * launch that repeats the thread's previous one is recorded from a kept
 * line, so every input that can change between two launches must end the
 * repeat. Each phase changes one (a scalar, the buffer, the kernel, the
 * grid, the stream, an allocation elsewhere, an `extra` launch in between,
 * repeated `extra` launches whose packed bytes change,
 * the liveness of an address passed by value, the module itself) and reads the results back; a stale line would make
 * the replay compute something else, and its D2H check fail.
 * (tests/workloads/cuda/launch_repeat.cu is the CUDA form.) */
#include "hrr_workload.h"

#define N 64

struct buf {
    unsigned *d;
    unsigned want[N];
};

static hipModule_t mod;
static hipFunction_t add, mul;
static int launches;

static void fresh(struct buf *b) {
    CHECK(hipMalloc((void **)&b->d, sizeof b->want));
    CHECK(hipMemset(b->d, 0, sizeof b->want));
    memset(b->want, 0, sizeof b->want);
}

/* f<<<grid, 32, 0, st>>>(b->d, v) through kernelParams, applied to b->want. */
static void launch(hipFunction_t f, struct buf *b, unsigned v, unsigned grid, hipStream_t st) {
    void *params[] = {&b->d, &v};
    CHECK(hipModuleLaunchKernel(f, grid, 1, 1, 32, 1, 1, 0, st, params, NULL));
    launches++;
    for (unsigned i = 0; i < grid * 32; i++) b->want[i] = f == mul ? b->want[i] * v : b->want[i] + v;
}

/* The same through a packed `extra` buffer (kept by the recorder as one
 * argument). */
static void launch_packed(hipFunction_t f, struct buf *b, unsigned v) {
    struct {
        unsigned *p;
        unsigned v;
        unsigned pad;
    } ka = {b->d, v, 0};
    size_t ka_size = sizeof ka;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &ka, HIP_LAUNCH_PARAM_BUFFER_SIZE, &ka_size,
                     HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra));
    launches++;
    for (unsigned i = 0; i < 32; i++) b->want[i] = f == mul ? b->want[i] * v : b->want[i] + v;
}

static void check(const struct buf *b, const char *phase) {
    unsigned got[N];
    CHECK(hipMemcpy(got, b->d, sizeof got, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(got[i] == b->want[i], "%s: [%d] = %u, want %u", phase, i, got[i], b->want[i]);
    printf("launch_repeat: %s: ok\n", phase);
}

int main(void) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    mod = hrr_load_module_data("repeat.so");
    CHECK(hipModuleGetFunction(&add, mod, "add"));
    CHECK(hipModuleGetFunction(&mul, mod, "mul"));
    struct buf a, b;
    fresh(&a);
    fresh(&b);
    hipStream_t s;
    CHECK(hipStreamCreate(&s));

    for (int i = 0; i < 200; i++) launch(add, &a, 1, 1, NULL);
    for (int i = 0; i < 200; i++) launch(add, &a, 2 + i / 7, 1, NULL);
    check(&a, "repeated launches, then a changing scalar");

    for (int i = 0; i < 100; i++) launch(add, i % 2 ? &a : &b, 3, 1, NULL);
    for (int i = 0; i < 6; i++) launch(i % 2 ? mul : add, &b, 2, 1, NULL);
    check(&a, "alternating buffers");
    check(&b, "alternating buffers, then kernels");

    for (int i = 0; i < 50; i++) launch(add, &a, 1, 1 + i % 2, NULL);
    for (int i = 0; i < 50; i++) launch(add, &a, 1, 2, i % 2 ? s : NULL);
    CHECK(hipDeviceSynchronize());
    check(&a, "changing grid, then stream");

    /* The buffer freed and allocated again (often at the same address), and
     * an unrelated allocation in the middle of a run of repeats. */
    CHECK(hipFree(b.d));
    fresh(&b);
    void *c = NULL;
    for (int i = 0; i < 60; i++) {
        if (i == 30) CHECK(hipMalloc(&c, 1 << 20));
        launch(add, &b, 5, 1, NULL);
    }
    check(&b, "buffer freed and allocated again");

    /* An `extra` launch between repeats of the same launch. */
    for (int i = 0; i < 10; i++) launch(add, &a, 1, 1, NULL);
    launch_packed(add, &a, 7);
    for (int i = 0; i < 10; i++) launch(add, &a, 1, 1, NULL);
    check(&a, "an extra launch between repeats");

    /* Repeated `extra` launches: a change of the packed bytes (the scalar,
     * then the buffer) must end the repeat, as for kernelParams. */
    for (int i = 0; i < 5; i++) launch_packed(add, &a, 3);
    for (int i = 0; i < 5; i++) launch_packed(add, &a, 4);
    for (int i = 0; i < 5; i++) launch_packed(add, &b, 4);
    launch_packed(mul, &b, 3);
    check(&a, "repeated extra launches, then a changing scalar");
    check(&b, "repeated extra launches on another buffer, then another kernel");

    /* A by-value word equal to a live address is recorded as a pointer;
     * once that allocation is freed, the same bytes are not (a replay of
     * them as a pointer would find it unmapped). */
    hipFunction_t tagged;
    CHECK(hipModuleGetFunction(&tagged, mod, "tagged"));
    void *t;
    CHECK(hipMalloc(&t, 4096));
    uint64_t tag = (uint64_t)(uintptr_t)t;
    unsigned one = 1;
    void *tp[] = {&a.d, &one, &tag};
    for (int i = 0; i < 6; i++) {
        if (i == 3) CHECK(hipFree(t));
        CHECK(hipModuleLaunchKernel(tagged, 1, 1, 1, 32, 1, 1, 0, NULL, tp, NULL));
        launches++;
        for (int j = 0; j < 32; j++) a.want[j] += 1;
    }
    check(&a, "a pointer-valued scalar outliving its allocation");

    /* The module unloaded and loaded again: its functions may come back
     * under the old handles, naming other kernels. */
    launch(add, &a, 2, 1, NULL);
    CHECK(hipModuleUnload(mod));
    mod = hrr_load_module_data("repeat.so");
    CHECK(hipModuleGetFunction(&mul, mod, "mul"));
    CHECK(hipModuleGetFunction(&add, mod, "add"));
    for (int i = 0; i < 3; i++) launch(mul, &a, 2, 1, NULL);
    check(&a, "module loaded again");

    CHECK(hipFree(c));
    CHECK(hipFree(a.d));
    CHECK(hipFree(b.d));
    CHECK(hipStreamDestroy(s));
    CHECK(hipModuleUnload(mod));
    printf("launch_repeat: %d launches: OK\n", launches);
    return 0;
}
