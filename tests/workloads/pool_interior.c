/* One big hipMalloc carved into sub-allocations, the way a caching allocator
 * hands out blocks: every kernel argument, copy and memset below uses an
 * interior pointer of the pool, never its base. */
#include "hrr_workload.h"

#define POOL (4u << 20)
#define N 2048
#define OFF_A (4096u + 64u)
#define OFF_B (1u << 20)
#define OFF_C ((2u << 20) + 512u)
#define OFF_D ((3u << 20) + 4096u * 3u)
#define OFF_E (POOL - 8192u)

int main(void) {
    CHECK(hipInit(0));
    char *pool;
    CHECK(hipMalloc((void **)&pool, POOL));
    float *a = (float *)(pool + OFF_A), *b = (float *)(pool + OFF_B), *c = (float *)(pool + OFF_C);
    float *d = (float *)(pool + OFF_D);
    unsigned char *e = (unsigned char *)(pool + OFF_E);

    static float ha[N], hb[N], hc[N], hd[N];
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = 1000.0f - (float)i;
    }
    CHECK(hipMemcpy(a, ha, sizeof ha, hipMemcpyHostToDevice));
    /* second half of b first, from an interior host offset too */
    CHECK(hipMemcpy(b + N / 2, hb + N / 2, sizeof hb / 2, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(b, hb, sizeof hb / 2, hipMemcpyHostToDevice));
    CHECK(hipMemset(c, 0, sizeof hc));

    hipModule_t mod = hrr_load_module_data("pool.so");
    hipFunction_t vmul;
    CHECK(hipModuleGetFunction(&vmul, mod, "vmul"));
    int n = N;
    void *params[] = {&c, &a, &b, &n};
    CHECK(hipModuleLaunchKernel(vmul, N / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
    CHECK(hipDeviceSynchronize());

    /* D2D between interior pointers, shifted by 16 elements */
    CHECK(hipMemcpy(d, c + 16, (N - 16) * sizeof(float), hipMemcpyDeviceToDevice));
    CHECK(hipMemset(e, 0x5a, 8192));
    CHECK(hipMemsetD32((hipDeviceptr_t)(d + N - 16), 0x3f800000u, 16)); /* 1.0f */

    CHECK(hipMemcpy(hc, c, sizeof hc, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(hd, d, sizeof hd, hipMemcpyDeviceToHost));
    static unsigned char he[8192];
    CHECK(hipMemcpy(he, e, sizeof he, hipMemcpyDeviceToHost));
    /* a D2H of a window in the middle of a sub-allocation */
    float mid[8];
    CHECK(hipMemcpy(mid, c + 1000, sizeof mid, hipMemcpyDeviceToHost));

    for (int i = 0; i < N; i++) EXPECT(hc[i] == ha[i] * hb[i], "c[%d] = %g", i, hc[i]);
    for (int i = 0; i < N - 16; i++) EXPECT(hd[i] == hc[i + 16], "d[%d] = %g", i, hd[i]);
    for (int i = N - 16; i < N; i++) EXPECT(hd[i] == 1.0f, "d[%d] = %g", i, hd[i]);
    for (int i = 0; i < 8192; i++) EXPECT(he[i] == 0x5a, "e[%d] = %#x", i, he[i]);
    for (int i = 0; i < 8; i++) EXPECT(mid[i] == hc[1000 + i], "mid[%d] = %g", i, mid[i]);
    printf("pool_interior: 1 pool of %u bytes, 5 sub-allocations, kernel + D2D + memsets on "
           "interior pointers ok\n",
           POOL);

    CHECK(hipModuleUnload(mod));
    CHECK(hipFree(pool));
    printf("pool_interior: OK\n");
    return 0;
}
