/* Pointers stored in device memory, which replay's translation cannot see:
 * (a) a table of device pointers copied host-to-device, read by a kernel;
 * (b) a table a kernel builds in device memory, read by a second kernel;
 *     the program also reads the table back (its pointers are output) and
 *     writes it, reversed, to a second table another kernel reads.
 * Replay is right only when every allocation is at its recorded address.
 * Buffers are small (not page multiples), so neighbours share pages.
 * (r) reserves an address arena as the CUDA driver does (512 MiB,
 *     PROT_NONE, no hint) and prints its base: the capture notes it.
 * (v) as (a), in memory the program maps itself (hipMemAddressReserve,
 *     hipMemCreate, hipMemMap: PyTorch's expandable segments): the sources
 *     and the table live in one reservation, so only a reservation made at
 *     its recorded address keeps the table right.
 * Usage: ptr_placed [a|b|r|v] (a and b when no argument). */
#include <sys/mman.h>

#include "hrr_workload.h"

#define N 300
#define T 3

static void check_gather(const char *what, const float *out, float *const src[T]) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < N; i++)
            EXPECT(out[t * N + i] == (float)(t + 1) * src[t][i], "%s: out[%d][%d] = %g", what, t,
                   i, out[t * N + i]);
}

static void part_a(hipFunction_t gather);
static void part_b(hipFunction_t gather, hipFunction_t build);
static void part_v(hipFunction_t gather);
static float host[T][N], out[T * N];
static float *hsrc[T];
static int tables = T, n = N;

int main(int argc, char **argv) {
    const char *part = argc > 1 ? argv[1] : "ab";
    CHECK(hipInit(0));
    hipModule_t mod = hrr_load_module_data("ptr_placed.so");
    hipFunction_t gather, build;
    CHECK(hipModuleGetFunction(&gather, mod, "gather"));
    CHECK(hipModuleGetFunction(&build, mod, "build_table"));
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < N; i++) host[t][i] = (float)(t * 1000 + i);
        hsrc[t] = host[t];
    }
    if (strchr(part, 'r')) {
        void *arena = mmap(NULL, 512UL << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT(arena != MAP_FAILED, "mmap of an arena failed");
        printf("ptr_placed: arena %p\n", arena);
    }
    if (strchr(part, 'a')) part_a(gather);
    if (strchr(part, 'b')) part_b(gather, build);
    if (strchr(part, 'v')) part_v(gather);
    CHECK(hipModuleUnload(mod));
    printf("ptr_placed: OK\n");
    return 0;
}

static void part_a(hipFunction_t gather) {
    /* (a) a table of device pointers copied to the device */
    float *dsrc[T], **dtable, *dout;
    for (int t = 0; t < T; t++) {
        CHECK(hipMalloc((void **)&dsrc[t], sizeof host[t]));
        CHECK(hipMemcpy(dsrc[t], host[t], sizeof host[t], hipMemcpyHostToDevice));
    }
    CHECK(hipMalloc((void **)&dtable, sizeof dsrc));
    CHECK(hipMalloc((void **)&dout, sizeof out));
    CHECK(hipMemcpy(dtable, dsrc, sizeof dsrc, hipMemcpyHostToDevice));
    void *ga[] = {&dtable, &dout, &tables, &n};
    CHECK(hipModuleLaunchKernel(gather, (N + 63) / 64, 1, 1, 64, 1, 1, 0, NULL, ga, NULL));
    CHECK(hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost));
    check_gather("copied table", out, hsrc);
    printf("ptr_placed: a table copied to the device, read by a kernel: ok\n");
    for (int t = 0; t < T; t++) CHECK(hipFree(dsrc[t]));
    CHECK(hipFree(dtable));
    CHECK(hipFree(dout));
}

static void part_b(hipFunction_t gather, hipFunction_t build) {
    /* (b) a table a kernel builds */
    float *dbase, **dtable2, *dout2;
    CHECK(hipMalloc((void **)&dbase, sizeof host));
    CHECK(hipMemcpy(dbase, host, sizeof host, hipMemcpyHostToDevice));
    CHECK(hipMalloc((void **)&dtable2, T * sizeof(float *)));
    CHECK(hipMalloc((void **)&dout2, sizeof out));
    void *ba[] = {&dtable2, &dbase, &tables, &n};
    CHECK(hipModuleLaunchKernel(build, 1, 1, 1, 64, 1, 1, 0, NULL, ba, NULL));
    void *ga2[] = {&dtable2, &dout2, &tables, &n};
    CHECK(hipModuleLaunchKernel(gather, (N + 63) / 64, 1, 1, 64, 1, 1, 0, NULL, ga2, NULL));
    memset(out, 0, sizeof out);
    CHECK(hipMemcpy(out, dout2, sizeof out, hipMemcpyDeviceToHost));
    check_gather("kernel-built table", out, hsrc);
    printf("ptr_placed: a table built by a kernel, read by another: ok\n");

    /* The table's pointers are output too; reversed on the host, written to a
     * second table, read by a kernel. */
    float *ptrs[T], *rev[T], *hrev[T], **dtable3;
    CHECK(hipMemcpy(ptrs, dtable2, sizeof ptrs, hipMemcpyDeviceToHost));
    for (int t = 0; t < T; t++) {
        EXPECT(ptrs[t] == dbase + (size_t)t * N, "table[%d] = %p", t, (void *)ptrs[t]);
        rev[t] = ptrs[T - 1 - t];
        hrev[t] = host[T - 1 - t];
    }
    CHECK(hipMalloc((void **)&dtable3, sizeof rev));
    CHECK(hipMemcpy(dtable3, rev, sizeof rev, hipMemcpyHostToDevice));
    void *ga3[] = {&dtable3, &dout2, &tables, &n};
    CHECK(hipModuleLaunchKernel(gather, (N + 63) / 64, 1, 1, 64, 1, 1, 0, NULL, ga3, NULL));
    CHECK(hipMemcpy(out, dout2, sizeof out, hipMemcpyDeviceToHost));
    check_gather("table read back and reversed", out, hrev);
    printf("ptr_placed: the table read back, reversed, written and read: ok\n");

    CHECK(hipFree(dbase));
    CHECK(hipFree(dtable2));
    CHECK(hipFree(dtable3));
    CHECK(hipFree(dout2));
}

static void part_v(hipFunction_t gather) {
    /* (v) a table copied into mapped virtual memory, pointing next to it */
    hipMemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    size_t g = 0;
    CHECK(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
    size_t len = 2 * g;
    EXPECT(sizeof host + sizeof(float *) * T <= len, "granule %zu too small", g);
    void *base;
    CHECK(hipMemAddressReserve(&base, 4 * len, 0, NULL, 0));
    char *at = (char *)base + len; /* not the reservation's first byte */
    hipMemGenericAllocationHandle_t h;
    CHECK(hipMemCreate(&h, len, &prop, 0));
    CHECK(hipMemMap(at, len, 0, h, 0));
    hipMemAccessDesc desc;
    memset(&desc, 0, sizeof desc);
    desc.location.type = hipMemLocationTypeDevice;
    desc.flags = hipMemAccessFlagsProtReadWrite;
    CHECK(hipMemSetAccess(at, len, &desc, 1));
    float *dsrc[T], **dtable = (float **)at, *dout;
    for (int t = 0; t < T; t++) {
        dsrc[t] = (float *)(at + 256 + t * sizeof host[t]);
        CHECK(hipMemcpy(dsrc[t], host[t], sizeof host[t], hipMemcpyHostToDevice));
    }
    CHECK(hipMalloc((void **)&dout, sizeof out));
    CHECK(hipMemcpy(dtable, dsrc, sizeof dsrc, hipMemcpyHostToDevice));
    void *ga[] = {&dtable, &dout, &tables, &n};
    CHECK(hipModuleLaunchKernel(gather, (N + 63) / 64, 1, 1, 64, 1, 1, 0, NULL, ga, NULL));
    CHECK(hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost));
    check_gather("table in mapped memory", out, hsrc);
    printf("ptr_placed: a table in mapped virtual memory, read by a kernel: ok\n");
    CHECK(hipFree(dout));
    CHECK(hipMemUnmap(at, len));
    CHECK(hipMemRelease(h));
    CHECK(hipMemAddressFree(base, 4 * len));
}
