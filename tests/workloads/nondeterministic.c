/* One deterministic and one nondeterministic D2H, for hrr-play --runs and
 * hrr-diff --against: `iota` writes the same values every run; `stamp`
 * writes the CPU clock as its threads run, so its result differs from run
 * to run, at capture and at every replay alike. */
#include "hrr_workload.h"

#define N 64

int main(void) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    hipModule_t mod = hrr_load_module_data("nondet.so");
    hipFunction_t iota, stamp;
    CHECK(hipModuleGetFunction(&iota, mod, "iota"));
    CHECK(hipModuleGetFunction(&stamp, mod, "stamp"));
    unsigned *dv;
    uint64_t *dt;
    CHECK(hipMalloc((void **)&dv, N * sizeof *dv));
    CHECK(hipMalloc((void **)&dt, N * sizeof *dt));

    void *pv[] = {&dv};
    CHECK(hipModuleLaunchKernel(iota, 1, 1, 1, N, 1, 1, 0, NULL, pv, NULL));
    unsigned v[N];
    CHECK(hipMemcpy(v, dv, sizeof v, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(v[i] == 3u * (unsigned)i + 1u, "iota[%d] = %u", i, v[i]);
    printf("nondeterministic: iota ok\n");

    void *pt[] = {&dt};
    CHECK(hipModuleLaunchKernel(stamp, 1, 1, 1, N, 1, 1, 0, NULL, pt, NULL));
    uint64_t t[N];
    CHECK(hipMemcpy(t, dt, sizeof t, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) EXPECT(t[i] != 0, "stamp[%d] = 0", i);
    printf("nondeterministic: stamp ok (%llu ns)\n", (unsigned long long)t[0]);

    CHECK(hipFree(dv));
    CHECK(hipFree(dt));
    CHECK(hipModuleUnload(mod));
    printf("nondeterministic: OK\n");
    return 0;
}
