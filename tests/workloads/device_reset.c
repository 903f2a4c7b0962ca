/* Two "tests" with a device reset between them, as test suites reset the
 * device between test cases: the first allocates a buffer, fills it with a
 * kernel on its own stream and downloads it; hipDeviceReset frees it (and
 * destroys the stream); the second allocates the same size again, which
 * the CPU runtime hands out at the same address (checked), computes
 * something else with kernels of the module loaded before the reset (code
 * outlives a reset) and downloads it. Every result is checked here.
 *
 * ./device_reset          as above
 * ./device_reset stale    also synchronises the stream destroyed by the
 *                         reset, which must fail (hipErrorInvalidHandle)
 * ./device_reset primary  resets with hipDevicePrimaryCtxReset(0) */
#include "hrr_workload.h"

#define N 1024

struct fill_args {
    float *dst;
    float value;
    int n;
};

struct saxpy_args {
    float a;
    uint32_t pad;
    const float *x;
    float *y;
    int n;
    uint32_t pad2;
};

static void launch(hipFunction_t f, hipStream_t s, void *args, size_t size) {
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, s, NULL, extra));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "plain";
    CHECK(hipInit(0));
    hipModule_t fm = hrr_load_module_data("fill.so");
    hipModule_t sm = hrr_load_module_data("saxpy.so");
    hipFunction_t fill, saxpy;
    CHECK(hipModuleGetFunction(&fill, fm, "fill"));
    CHECK(hipModuleGetFunction(&saxpy, sm, "saxpy"));
    static float out[N], x[N];

    /* test 1: a = 3 on a stream of its own */
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float *a;
    CHECK(hipMalloc((void **)&a, sizeof out));
    struct fill_args fa = {a, 3.0f, N};
    launch(fill, s, &fa, sizeof fa);
    CHECK(hipMemcpyAsync(out, a, sizeof out, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++) EXPECT(out[i] == 3.0f, "a[%d] = %g", i, out[i]);

    if (!strcmp(mode, "primary"))
        CHECK(hipDevicePrimaryCtxReset(0));
    else
        CHECK(hipDeviceReset());
    if (!strcmp(mode, "stale")) {
        hipError_t e = hipStreamSynchronize(s);
        EXPECT(e == hipErrorInvalidHandle, "a stream the reset destroyed: %d", (int)e);
        (void)hipGetLastError();
    }

    /* test 2: b = 2x + 1 at a's address, on the null stream */
    float *b, *dx;
    CHECK(hipMalloc((void **)&b, sizeof out));
    EXPECT(b == a, "the reset freed a: the same size comes back at %p, not %p", (void *)a,
           (void *)b);
    CHECK(hipMalloc((void **)&dx, sizeof x));
    for (int i = 0; i < N; i++) x[i] = (float)i;
    CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
    struct fill_args fb = {b, 1.0f, N};
    launch(fill, 0, &fb, sizeof fb);
    struct saxpy_args sa = {2.0f, 0, dx, b, N, 0};
    launch(saxpy, 0, &sa, sizeof sa);
    CHECK(hipMemcpy(out, b, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(out[i] == 2.0f * i + 1.0f, "b[%d] = %g", i, out[i]);
    CHECK(hipFree(dx));
    CHECK(hipFree(b));
    printf("device_reset: OK (%s; %p again after the reset)\n", mode, (void *)b);
    return 0;
}
