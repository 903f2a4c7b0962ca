/* Stream callbacks and host functions as the application's own code in
 * stream order: on a stream busy with a large memset, a callback
 * (hipStreamAddCallback, rounds 1-3) or a host function (hipLaunchHostFunc,
 * round 4) writes x in mapped pinned memory, then a kernel on the same
 * stream reads it (y = x) and y is read back. The function runs later, on
 * the stream's thread, after the memset; the kernel's launch call returns
 * before. Each round writes a different x. hipLaunchHostFunc is looked up
 * at run time, as a program built for several ROCm releases does: ROCm 5.2
 * (whose headers and library the ABI check builds against) declares it
 * without exporting it. */
#include <dlfcn.h>

#include "hrr_workload.h"

typedef hipError_t (*launch_host_func_t)(hipStream_t, hipHostFn_t, void *);

#define N 4096
#define BUSY (64u << 20)

static float *hx;
static int rounds_run;

static void write_x(hipStream_t stream, hipError_t status, void *data) {
    (void)stream;
    int k = *(int *)data;
    EXPECT(status == hipSuccess, "callback status %d", (int)status);
    for (int i = 0; i < N; i++) hx[i] = (float)(i * k) + 0.5f;
    rounds_run++;
}

static void write_x_host_fn(void *data) { write_x(NULL, hipSuccess, data); }

int main(void) {
    CHECK(hipInit(0));
    launch_host_func_t launch_host_func = (launch_host_func_t)dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
    EXPECT(launch_host_func != NULL, "hipLaunchHostFunc: not in this HIP runtime");
    hipModule_t mod = hrr_load_module_data("saxpy.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "saxpy"));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float *dx, *dy;
    void *busy;
    CHECK(hipHostMalloc((void **)&hx, N * sizeof(float), hipHostMallocMapped));
    CHECK(hipHostGetDevicePointer((void **)&dx, hx, 0));
    CHECK(hipMalloc((void **)&dy, N * sizeof(float)));
    CHECK(hipMalloc(&busy, BUSY));
    memset(hx, 0, N * sizeof(float));
    static float out[N];
    static int ks[5];
    for (int k = 1; k <= 4; k++) {
        ks[k] = k;
        CHECK(hipMemsetAsync(busy, k, BUSY, s));
        if (k < 4)
            CHECK(hipStreamAddCallback(s, write_x, &ks[k], 0));
        else
            CHECK(launch_host_func(s, write_x_host_fn, &ks[k]));
        float a = 1.0f;
        int n = N;
        void *params[] = {&a, &dx, &dy, &n};
        CHECK(hipMemsetAsync(dy, 0, N * sizeof(float), s));
        CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
        CHECK(hipStreamSynchronize(s));
        CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            EXPECT(out[i] == (float)(i * k) + 0.5f, "round %d: y[%d] = %g", k, i, out[i]);
        printf("host_funcs round %d: y[7] = %g\n", k, out[7]);
    }
    EXPECT(rounds_run == 4, "%d callbacks ran", rounds_run);
    CHECK(hipStreamDestroy(s));
    CHECK(hipHostFree(hx));
    CHECK(hipFree(dy));
    CHECK(hipFree(busy));
    printf("host_funcs: OK\n");
    return 0;
}
