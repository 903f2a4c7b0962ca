/* A kernel taking a struct by value that carries two device pointers and a
 * scalar: the pointers are invisible to code-object metadata (the argument is
 * `by_value`), so capture has to find them inside the argument bytes. */
#include "hrr_workload.h"

#define N 1024

struct axpy_params {
    const float *x; /* device */
    float *y;       /* device (interior: one element in) */
    float a;
};

int main(void) {
    CHECK(hipInit(0));
    static float hx[N], hy[N + 1], out[N + 1];
    for (int i = 0; i < N; i++) hx[i] = (float)i;
    for (int i = 0; i <= N; i++) hy[i] = 7.0f;
    float *dx, *dy;
    CHECK(hipMalloc((void **)&dx, sizeof hx));
    CHECK(hipMalloc((void **)&dy, sizeof hy));
    CHECK(hipMemcpy(dx, hx, sizeof hx, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dy, hy, sizeof hy, hipMemcpyHostToDevice));

    hipModule_t mod = hrr_load_module_data("struct_arg.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "axpy_struct"));
    struct axpy_params p = {dx, dy + 1, 4.0f};
    int n = N;
    void *params[] = {&p, &n};
    CHECK(hipModuleLaunchKernel(fn, N / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost));
    EXPECT(out[0] == 7.0f, "y[0] = %g (must be untouched)", out[0]);
    for (int i = 0; i < N; i++)
        EXPECT(out[i + 1] == 4.0f * hx[i] + 7.0f, "y[%d] = %g", i + 1, out[i + 1]);
    printf("struct_arg: struct {x, y, a} by value, %d elements ok\n", N);
    CHECK(hipModuleUnload(mod));
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    printf("struct_arg: OK\n");
    return 0;
}
