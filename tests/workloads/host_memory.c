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

int main(int argc, char **argv) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "mapped")) mapped();
    else if (!strcmp(what, "managed")) managed();
    else if (!strcmp(what, "registered")) registered();
    else if (!strcmp(what, "devwrite")) devwrite();
    else {
        fprintf(stderr, "usage: host_memory mapped|managed|registered|devwrite\n");
        return 2;
    }
    return 0;
}
