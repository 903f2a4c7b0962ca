/* Kernels that read and write host memory directly, as the host changes it
 * between launches. One scenario per argument:
 *   mapped      x in mapped pinned memory (hipHostMalloc, the device pointer
 *               from hipHostGetDevicePointer), changed by the host before each
 *               of three launches of saxpy into device memory y
 *   managed     x and y managed (hipMallocManaged): the host writes x and
 *               bumps y between launches, the kernel updates y
 *   registered  x in malloc'd memory the host registers (hipHostRegister),
 *               filled by the host, read by saxpy
 *   devwrite    fill writes pinned host memory; the host reads it after a
 *               device synchronisation
 *   graph       as mapped, but the memset of y and saxpy are nodes of an
 *               executable graph launched three times on a stream
 *   graphwrite  fill, the kernel node of an executable graph, writes pinned
 *               host memory; the host reads it after a stream
 *               synchronisation, changes all of it, and launches again
 *   copyin      saxpy reads x in mapped pinned memory; before the stream is
 *               synchronised, an async D2H copy writes part of x (what a
 *               framework's `.item()` does with its pinned staging buffer);
 *               the host checks it, then saxpy reads the new x
 *   d2dfrom     the host writes a value in pinned memory, then a
 *               device-to-device copy reads it from there into device
 *               memory (an XLA loop's counter set up this way) and saxpy
 *               uses it; twice, with another value
 * Each prints what it checked and ends with ": OK". */
#include "hrr_workload.h"

#define N 4096

static hipFunction_t kernel(const char *so, const char *name) {
    hipModule_t mod = hrr_load_module_data(so);
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, name));
    return fn;
}

static void saxpy(hipFunction_t fn, float a, const float *x, float *y) {
    int n = N;
    void *params[] = {&a, &x, &y, &n};
    CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
}

static void mapped(void) {
    hipFunction_t fn = kernel("saxpy.so", "saxpy");
    float *hx, *dx, *dy;
    CHECK(hipHostMalloc((void **)&hx, N * sizeof(float), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void **)&dx, hx, 0));
    CHECK(hipMalloc((void **)&dy, N * sizeof(float)));
    static float out[N];
    for (int k = 1; k <= 3; k++) {
        /* A different x each time; only part of it changes after the first. */
        for (int i = 0; i < N; i++)
            if (k == 1 || i < 64) hx[i] = (float)(i * k);
        CHECK(hipMemset(dy, 0, N * sizeof(float)));
        saxpy(fn, 1.0f, dx, dy);
        CHECK(hipDeviceSynchronize());
        CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) EXPECT(out[i] == hx[i], "launch %d: y[%d] = %g", k, i, out[i]);
        printf("mapped launch %d: y[63] = %g\n", k, out[63]);
    }
    CHECK(hipHostFree(hx));
    CHECK(hipFree(dy));
    printf("host_memory mapped: OK\n");
}

static void managed(void) {
    hipFunction_t fn = kernel("saxpy.so", "saxpy");
    float *x, *y;
    CHECK(hipMallocManaged((void **)&x, N * sizeof(float), hipMemAttachGlobal));
    CHECK(hipMallocManaged((void **)&y, N * sizeof(float), hipMemAttachGlobal));
    float want[N];
    for (int i = 0; i < N; i++) want[i] = 0.0f;
    for (int k = 1; k <= 3; k++) {
        for (int i = 0; i < N; i++) {
            x[i] = (float)(i + k);
            y[i] += 1.0f; /* the host changes the kernel's output */
            want[i] = 2.0f * x[i] + want[i] + 1.0f;
        }
        saxpy(fn, 2.0f, x, y);
        CHECK(hipDeviceSynchronize());
        for (int i = 0; i < N; i++) EXPECT(y[i] == want[i], "round %d: y[%d] = %g", k, i, y[i]);
        printf("managed round %d: y[5] = %g\n", k, y[5]);
    }
    static float out[N];
    CHECK(hipMemcpy(out, y, sizeof out, hipMemcpyDeviceToHost));
    CHECK(hipFree(x));
    CHECK(hipFree(y));
    printf("host_memory managed: OK\n");
}

static void registered(void) {
    hipFunction_t fn = kernel("saxpy.so", "saxpy");
    float *hx = malloc(N * sizeof(float)), *dx, *dy;
    for (int i = 0; i < N; i++) hx[i] = (float)i * 0.25f;
    CHECK(hipHostRegister(hx, N * sizeof(float), hipHostRegisterMapped));
    CHECK(hipHostGetDevicePointer((void **)&dx, hx, 0));
    CHECK(hipMalloc((void **)&dy, N * sizeof(float)));
    CHECK(hipMemset(dy, 0, N * sizeof(float)));
    saxpy(fn, 4.0f, dx, dy);
    CHECK(hipDeviceSynchronize());
    static float out[N];
    CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(out[i] == 4.0f * hx[i], "y[%d] = %g", i, out[i]);
    printf("registered: y[7] = %g\n", out[7]);
    CHECK(hipHostUnregister(hx));
    free(hx);
    CHECK(hipFree(dy));
    printf("host_memory registered: OK\n");
}

static void devwrite(void) {
    hipFunction_t fn = kernel("fill.so", "fill");
    float *h, *d;
    CHECK(hipHostMalloc((void **)&h, N * sizeof(float), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void **)&d, h, 0));
    float v = 2.5f;
    int n = N / 2;
    void *params[] = {&d, &v, &n};
    CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    CHECK(hipDeviceSynchronize());
    for (int i = 0; i < N; i++)
        EXPECT(h[i] == (i < N / 2 ? v : 0.0f), "h[%d] = %g", i, h[i]);
    printf("devwrite: h[0] = %g, h[%d] = %g\n", h[0], N - 1, h[N - 1]);
    CHECK(hipHostFree(h));
    printf("host_memory devwrite: OK\n");
}

/* An executable graph of one kernel node, `fn` with `params`, after a
 * memset of `memset_dst` (N floats of 0) when that is not NULL. */
static hipGraphExec_t kernel_graph(hipFunction_t fn, void **params, float *memset_dst) {
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t set, k;
    size_t deps = 0;
    if (memset_dst) {
        hipMemsetParams ms = {.dst = memset_dst, .elementSize = 4, .height = 1, .pitch = 0,
                              .value = 0, .width = N};
        CHECK(hipGraphAddMemsetNode(&set, g, NULL, 0, &ms));
        deps = 1;
    }
    hipKernelNodeParams kp = {.blockDim = {256, 1, 1}, .extra = NULL, .func = (void *)fn,
                              .gridDim = {N / 256, 1, 1}, .kernelParams = params,
                              .sharedMemBytes = 0};
    CHECK(hipGraphAddKernelNode(&k, g, deps ? &set : NULL, deps, &kp));
    hipGraphExec_t ge;
    CHECK(hipGraphInstantiateWithFlags(&ge, g, 0));
    CHECK(hipGraphDestroy(g));
    return ge;
}

static void graph(void) {
    hipFunction_t fn = kernel("saxpy.so", "saxpy");
    float *hx, *dx, *dy;
    CHECK(hipHostMalloc((void **)&hx, N * sizeof(float), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void **)&dx, hx, 0));
    CHECK(hipMalloc((void **)&dy, N * sizeof(float)));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float a = 1.0f;
    int n = N;
    void *params[] = {&a, &dx, &dy, &n};
    hipGraphExec_t ge = kernel_graph(fn, params, dy);
    static float out[N];
    for (int k = 1; k <= 3; k++) {
        for (int i = 0; i < N; i++)
            if (k == 1 || i < 64) hx[i] = (float)(i * k);
        CHECK(hipGraphLaunch(ge, s));
        CHECK(hipStreamSynchronize(s));
        CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) EXPECT(out[i] == hx[i], "graph launch %d: y[%d] = %g", k, i, out[i]);
        printf("graph launch %d: y[63] = %g\n", k, out[63]);
    }
    CHECK(hipGraphExecDestroy(ge));
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(hx));
    CHECK(hipFree(dy));
    printf("host_memory graph: OK\n");
}

static void graphwrite(void) {
    hipFunction_t fn = kernel("fill.so", "fill");
    float *h, *d;
    CHECK(hipHostMalloc((void **)&h, N * sizeof(float), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void **)&d, h, 0));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float v = 2.5f;
    int n = N / 2;
    void *params[] = {&d, &v, &n};
    hipGraphExec_t ge = kernel_graph(fn, params, NULL);
    for (int k = 1; k <= 2; k++) {
        /* Before the second launch the host changes all of it: the half the
         * kernel does not write keeps the host's value. */
        float rest = k == 1 ? 0.0f : -1.0f;
        if (k == 2)
            for (int i = 0; i < N; i++) h[i] = rest;
        CHECK(hipGraphLaunch(ge, s));
        CHECK(hipStreamSynchronize(s));
        for (int i = 0; i < N; i++)
            EXPECT(h[i] == (i < N / 2 ? v : rest), "graph launch %d: h[%d] = %g", k, i, h[i]);
        printf("graphwrite launch %d: h[0] = %g, h[%d] = %g\n", k, h[0], N - 1, h[N - 1]);
    }
    CHECK(hipGraphExecDestroy(ge));
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(h));
    printf("host_memory graphwrite: OK\n");
}

static void copyin(void) {
    hipFunction_t fn = kernel("saxpy.so", "saxpy");
    float *hx, *dx, *dy;
    CHECK(hipHostMalloc((void **)&hx, N * sizeof(float), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void **)&dx, hx, 0));
    CHECK(hipMalloc((void **)&dy, N * sizeof(float)));
    for (int i = 0; i < N; i++) hx[i] = (float)i;
    CHECK(hipMemset(dy, 0, N * sizeof(float)));
    saxpy(fn, 1.0f, dx, dy); /* y = x */
    /* Into x, on the launch's stream, before its synchronisation: y[0..8) + 0.5. */
    CHECK(hipMemcpyAsync(hx + 100, dy + 4000, 8 * sizeof(float), hipMemcpyDeviceToHost, NULL));
    CHECK(hipStreamSynchronize(NULL));
    for (int i = 0; i < 8; i++) EXPECT(hx[100 + i] == 4000.0f + i, "x[%d] = %g", 100 + i, hx[100 + i]);
    saxpy(fn, 1.0f, dx, dy); /* y = x + y */
    static float out[N];
    CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        float x = (i >= 100 && i < 108) ? 4000.0f + (i - 100) : (float)i;
        EXPECT(out[i] == x + (float)i, "y[%d] = %g", i, out[i]);
    }
    printf("copyin: y[100] = %g\n", out[100]);
    CHECK(hipHostFree(hx));
    CHECK(hipFree(dy));
    printf("host_memory copyin: OK\n");
}

static void d2dfrom(void) {
    hipFunction_t fn = kernel("saxpy.so", "saxpy");
    float *hx, *dx, *dy;
    CHECK(hipHostMalloc((void **)&hx, N * sizeof(float), 0));
    CHECK(hipMalloc((void **)&dx, N * sizeof(float)));
    CHECK(hipMalloc((void **)&dy, N * sizeof(float)));
    static float out[N];
    for (int k = 1; k <= 2; k++) {
        for (int i = 0; i < N; i++) hx[i] = (float)(i * k) + 0.25f;
        CHECK(hipMemcpyAsync(dx, hx, N * sizeof(float), hipMemcpyDeviceToDevice, NULL));
        CHECK(hipMemset(dy, 0, N * sizeof(float)));
        saxpy(fn, 1.0f, dx, dy); /* y = x */
        CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            EXPECT(out[i] == (float)(i * k) + 0.25f, "round %d: y[%d] = %g", k, i, out[i]);
        printf("d2dfrom round %d: y[9] = %g\n", k, out[9]);
    }
    CHECK(hipHostFree(hx));
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    printf("host_memory d2dfrom: OK\n");
}

int main(int argc, char **argv) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "mapped")) mapped();
    else if (!strcmp(what, "managed")) managed();
    else if (!strcmp(what, "registered")) registered();
    else if (!strcmp(what, "devwrite")) devwrite();
    else if (!strcmp(what, "graph")) graph();
    else if (!strcmp(what, "graphwrite")) graphwrite();
    else if (!strcmp(what, "copyin")) copyin();
    else if (!strcmp(what, "d2dfrom")) d2dfrom();
    else {
        fprintf(stderr, "usage: host_memory mapped|managed|registered|devwrite|graph|graphwrite|copyin|d2dfrom\n");
        return 2;
    }
    return 0;
}
