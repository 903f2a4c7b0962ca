/* saxpy through the module API: hipModuleLoadData + hipModuleGetFunction +
 * hipModuleLaunchKernel, once with kernelParams and once with `extra`
 * (HIP_LAUNCH_PARAM_BUFFER_POINTER / _SIZE / _END). */
#include "hrr_workload.h"

#define N 4096

/* The kernarg layout of `saxpy(float a, const float *x, float *y, int n)`. */
struct saxpy_args {
    float a;
    uint32_t pad;
    const float *x;
    float *y;
    int n;
    uint32_t pad2;
};

int main(void) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    static float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = (float)(N - i);
    }
    float *dx, *dy;
    CHECK(hipMalloc((void **)&dx, sizeof x));
    CHECK(hipMalloc((void **)&dy, sizeof y));
    CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dy, y, sizeof y, hipMemcpyHostToDevice));

    hipModule_t mod = hrr_load_module_data("saxpy.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "saxpy"));

    /* 1: kernelParams. y = 2x + y */
    float a = 2.0f;
    int n = N;
    void *params[] = {&a, &dx, &dy, &n};
    CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(out[i] == 2.0f * x[i] + y[i], "kernelParams: y[%d] = %g, want %g", i, out[i],
               2.0f * x[i] + y[i]);
    printf("saxpy kernelParams: %d elements ok (y[1] = %g)\n", N, out[1]);

    /* 2: extra. y = 3x + y (on the updated y) */
    struct saxpy_args ka = {3.0f, 0, dx, dy, N, 0};
    size_t ka_size = sizeof ka;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &ka, HIP_LAUNCH_PARAM_BUFFER_SIZE, &ka_size,
                     HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(fn, N / 128, 1, 1, 128, 1, 1, 0, NULL, NULL, extra));
    CHECK(hipDeviceSynchronize());
    static float out2[N];
    CHECK(hipMemcpy(out2, dy, sizeof out2, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(out2[i] == 3.0f * x[i] + out[i], "extra: y[%d] = %g, want %g", i, out2[i],
               3.0f * x[i] + out[i]);
    printf("saxpy extra: %d elements ok (y[1] = %g)\n", N, out2[1]);

    CHECK(hipModuleUnload(mod));
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    printf("saxpy_module: OK\n");
    return 0;
}
