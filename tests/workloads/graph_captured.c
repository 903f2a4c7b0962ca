/* A stream-captured graph: memset y, upload x from a host buffer, saxpy
 * (y = a*x + y), download y to a host buffer; instantiated once and
 * launched twice, the host buffer changed between the launches (each
 * launch uploads what it holds then). */
#include "hrr_workload.h"

#define N 2048

int main(void) {
    static float hx[N], hy[N];
    float *dx, *dy;
    CHECK(hipMalloc((void **)&dx, sizeof hx));
    CHECK(hipMalloc((void **)&dy, sizeof hy));
    hipModule_t mod = hrr_load_module_data("saxpy.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "saxpy"));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));

    float a = 2.0f;
    int n = N;
    void *params[] = {&a, &dx, &dy, &n};
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    CHECK(hipMemsetAsync(dy, 0, sizeof hy, s));
    CHECK(hipMemcpyAsync(dx, hx, sizeof hx, hipMemcpyHostToDevice, s));
    CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
    CHECK(hipMemcpyAsync(hy, dy, sizeof hy, hipMemcpyDeviceToHost, s));
    hipGraph_t g;
    CHECK(hipStreamEndCapture(s, &g));
    hipGraphExec_t ge;
    CHECK(hipGraphInstantiate(&ge, g, NULL, NULL, 0));

    for (int round = 1; round <= 2; round++) {
        for (int i = 0; i < N; i++) hx[i] = (float)(i * round) * 0.25f;
        CHECK(hipGraphLaunch(ge, s));
        CHECK(hipStreamSynchronize(s));
        for (int i = 0; i < N; i++)
            EXPECT(hy[i] == 2.0f * hx[i], "round %d: y[%d] = %g, want %g", round, i, hy[i],
                   2.0f * hx[i]);
        printf("graph_captured: launch %d: y[1] = %g, y[%d] = %g\n", round, hy[1], N - 1,
               hy[N - 1]);
    }
    CHECK(hipGraphExecDestroy(ge));
    CHECK(hipGraphDestroy(g));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    printf("graph_captured: OK\n");
    return 0;
}
