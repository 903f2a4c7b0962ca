/* A kernel that reads and writes module globals by name (globals.so's
 * g_acc and g_scale, `__device__` variables): the host sets g_scale and
 * reads g_acc through hipModuleGetGlobal; each accumulate launch adds its
 * input to g_acc, so a launch's result depends on the launches before it
 * (a fresh load of the module would start from g_acc = 1, g_scale = 1). */
#include "hrr_workload.h"

#define N 256
#define ROUNDS 3

int main(void) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    hipModule_t mod = hrr_load_module_data("globals.so");
    hipFunction_t acc_k;
    CHECK(hipModuleGetFunction(&acc_k, mod, "accumulate"));

    hipDeviceptr_t acc, scale;
    size_t acc_size = 0, scale_size = 0;
    CHECK(hipModuleGetGlobal(&acc, &acc_size, mod, "g_acc"));
    CHECK(hipModuleGetGlobal(&scale, &scale_size, mod, "g_scale"));
    EXPECT(acc_size == N * sizeof(float), "g_acc is %zu bytes", acc_size);
    EXPECT(scale_size == sizeof(float), "g_scale is %zu bytes", scale_size);
    hipDeviceptr_t missing;
    EXPECT(hipModuleGetGlobal(&missing, NULL, mod, "no_such_global") != hipSuccess,
           "an unknown global is an error");
    float s = 3.0f;
    CHECK(hipMemcpyHtoD(scale, &s, sizeof s));

    float *in, *out;
    CHECK(hipMalloc((void **)&in, N * sizeof(float)));
    CHECK(hipMalloc((void **)&out, N * sizeof(float)));
    float hin[N], got[N], want_acc[N];
    int n = N;
    for (int i = 0; i < N; i++) want_acc[i] = 1.0f;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N; i++) hin[i] = (float)(i + 10 * round);
        CHECK(hipMemcpy(in, hin, sizeof hin, hipMemcpyHostToDevice));
        void *params[] = {&out, &in, &n};
        CHECK(hipModuleLaunchKernel(acc_k, N / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
        CHECK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            want_acc[i] += hin[i];
            EXPECT(got[i] == want_acc[i] * s, "round %d: out[%d] = %g, want %g", round, i,
                   got[i], want_acc[i] * s);
        }
        printf("module_global: round %d ok\n", round);
    }
    float back[N];
    CHECK(hipMemcpyDtoH(back, acc, sizeof back));
    for (int i = 0; i < N; i++)
        EXPECT(back[i] == want_acc[i], "g_acc[%d] = %g, want %g", i, back[i], want_acc[i]);

    CHECK(hipFree(in));
    CHECK(hipFree(out));
    CHECK(hipModuleUnload(mod));
    printf("module_global: OK\n");
    return 0;
}
