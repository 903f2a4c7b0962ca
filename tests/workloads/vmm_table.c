/* Memory from HIP's virtual memory management, as PyTorch's expandable
 * segments get theirs: a 1 GiB reservation with a few pieces mapped into it.
 * build_table stores pointers to a and b in a table in mapped memory;
 * combine reads a and b only through that table, writes out (in a piece far
 * from the others) and bumps a, so each combine depends on the ones before.
 * b spans two pieces mapped next to each other; one more piece holds
 * unrelated data the launches never reach.
 *
 *   reservation R, granule g (4 pieces each):
 *     R          table, a           piece 0
 *     R + 4g     b's second half    piece 1 (b starts 2 KiB before it)
 *     R + 512M   out                piece 2
 *     R + 768M   unrelated (0x5a)   piece 3 */
#include "hrr_workload.h"

#define N 1024
#define ROUNDS 3
#define RESERVED (1ull << 30)

static hipMemGenericAllocationHandle_t map_piece(char *at, size_t len) {
    hipMemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    hipMemGenericAllocationHandle_t h;
    CHECK(hipMemCreate(&h, len, &prop, 0));
    CHECK(hipMemMap(at, len, 0, h, 0));
    hipMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.location.type = hipMemLocationTypeDevice;
    desc.location.id = 0;
    desc.flags = hipMemAccessFlagsProtReadWrite;
    CHECK(hipMemSetAccess(at, len, &desc, 1));
    return h;
}

int main(void) {
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));
    hipModule_t mod = hrr_load_module_data("vmm_table.so");
    hipFunction_t build, combine;
    CHECK(hipModuleGetFunction(&build, mod, "build_table"));
    CHECK(hipModuleGetFunction(&combine, mod, "combine"));

    hipMemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    size_t g = 0;
    CHECK(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
    size_t piece = 4 * g;
    EXPECT(N * sizeof(float) + 256 <= piece, "granule %zu too small", g);

    void *base;
    CHECK(hipMemAddressReserve(&base, RESERVED, 0, NULL, 0));
    char *r = (char *)base;
    char *offsets[] = {r, r + piece, r + (512ull << 20), r + (768ull << 20)};
    hipMemGenericAllocationHandle_t handles[4];
    for (int k = 0; k < 4; k++) handles[k] = map_piece(offsets[k], piece);

    float **table = (float **)r;
    float *a = (float *)(r + 256);
    float *b = (float *)(r + piece - 2048); /* spans pieces 0 and 1 */
    float *out = (float *)offsets[2];
    CHECK(hipMemset(offsets[3], 0x5a, piece));

    float ha[N], hb[N], got[N];
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = (float)(i % 13);
    }
    CHECK(hipMemcpy(a, ha, sizeof ha, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(b, hb, sizeof hb, hipMemcpyHostToDevice));
    void *bp[] = {&table, &a, &b};
    CHECK(hipModuleLaunchKernel(build, 1, 1, 1, 1, 1, 1, 0, NULL, bp, NULL));

    int n = N;
    for (int round = 0; round < ROUNDS; round++) {
        void *cp[] = {&out, &table, &n};
        CHECK(hipModuleLaunchKernel(combine, N / 64, 1, 1, 64, 1, 1, 0, NULL, cp, NULL));
        CHECK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            float want = ha[i] + (float)round + 10.0f * hb[i];
            EXPECT(got[i] == want, "round %d: out[%d] = %g, want %g", round, i, got[i], want);
        }
        printf("vmm_table: round %d ok\n", round);
    }

    for (int k = 0; k < 4; k++) {
        CHECK(hipMemUnmap(offsets[k], piece));
        CHECK(hipMemRelease(handles[k]));
    }
    CHECK(hipMemAddressFree(base, RESERVED));
    CHECK(hipModuleUnload(mod));
    printf("vmm_table: OK\n");
    return 0;
}
