/* A launch-heavy loop for measuring archive size and replay speed
 * (docs/PERFORMANCE.md, *Compression*): argv[1] launches (default 100 000)
 * of one kernel whose scalar argument changes every launch, one D2H at the
 * end, checked. */
#include "hrr_workload.h"

#define N 256

int main(int argc, char **argv) {
    long launches = argc > 1 ? atol(argv[1]) : 100000L;
    CHECK(hipInit(0));
    hipModule_t mod = hrr_load_module_file("streams.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "scale_add"));
    float *d;
    CHECK(hipMalloc((void **)&d, N * sizeof(float)));
    CHECK(hipMemset(d, 0, N * sizeof(float)));
    double want = 0;
    for (long it = 0; it < launches; it++) {
        float k = 1.0f, add = (float)(it % 7);
        int n = N;
        void *params[] = {&d, &d, &k, &add, &n};
        CHECK(hipModuleLaunchKernel(fn, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
        want += it % 7;
    }
    static float out[N];
    CHECK(hipMemcpy(out, d, sizeof out, hipMemcpyDeviceToHost));
    EXPECT(out[0] == (float)want, "out[0] = %g, want %g", out[0], want);
    CHECK(hipFree(d));
    CHECK(hipModuleUnload(mod));
    printf("launch_loop: OK\n");
    return 0;
}
