/* Two rounds of: twice(b, a) writes b; build_table stores pointers to b and
 * c in a device-side table; gather(out, table) reads b and c through it.
 * The gather launches are what hrr-extract tests pull out: their inputs come
 * from an earlier kernel and from pointers stored in device memory, none of
 * which the launch's own arguments name. The second gather runs on a
 * created stream. An unrelated buffer stays allocated (it must not be
 * extracted). */
#include "hrr_workload.h"

#define N 256

static void launch(hipFunction_t f, void **params, int n, hipStream_t s) {
    CHECK(hipModuleLaunchKernel(f, (n + 63) / 64, 1, 1, 64, 1, 1, 0, s, params, NULL));
}

int main(void) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    hipModule_t mod = hrr_load_module_data("ptr_table.so");
    hipFunction_t twice, build, gather;
    CHECK(hipModuleGetFunction(&twice, mod, "twice"));
    CHECK(hipModuleGetFunction(&build, mod, "build_table"));
    CHECK(hipModuleGetFunction(&gather, mod, "gather"));

    float *a, *b, *c, *out, **table, *unrelated;
    CHECK(hipMalloc((void **)&a, N * sizeof(float)));
    CHECK(hipMalloc((void **)&b, N * sizeof(float)));
    CHECK(hipMalloc((void **)&c, N * sizeof(float)));
    CHECK(hipMalloc((void **)&out, N * sizeof(float)));
    CHECK(hipMalloc((void **)&table, 8 * sizeof(float *)));
    CHECK(hipMalloc((void **)&unrelated, 4096));
    CHECK(hipMemset(table, 0, 8 * sizeof(float *)));
    CHECK(hipMemset(unrelated, 0x5a, 4096));

    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float ha[N], hc[N], got[N];
    int n = N;
    for (int i = 0; i < N; i++) hc[i] = (float)(i % 7);
    CHECK(hipMemcpy(c, hc, sizeof hc, hipMemcpyHostToDevice));

    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) ha[i] = (float)(i + 100 * round);
        CHECK(hipMemcpy(a, ha, sizeof ha, hipMemcpyHostToDevice));
        void *tp[] = {&b, &a, &n};
        launch(twice, tp, n, NULL);
        void *bp[] = {&table, &b, &c};
        CHECK(hipModuleLaunchKernel(build, 1, 1, 1, 1, 1, 1, 0, NULL, bp, NULL));
        void *gp[] = {&out, &table, &n};
        /* The second gather runs on a stream of its own. */
        launch(gather, gp, n, round ? s : NULL);
        if (round) CHECK(hipStreamSynchronize(s));
        CHECK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            float want = 2.0f * ha[i] + 10.0f * hc[i];
            EXPECT(got[i] == want, "round %d: out[%d] = %g, want %g", round, i, got[i], want);
        }
        printf("ptr_table: round %d ok\n", round);
    }

    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipFree(c));
    CHECK(hipFree(out));
    CHECK(hipFree(table));
    CHECK(hipFree(unrelated));
    CHECK(hipStreamDestroy(s));
    CHECK(hipModuleUnload(mod));
    printf("ptr_table: OK\n");
    return 0;
}
