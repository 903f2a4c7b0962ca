/* More of the driver API through its exports (linked with -lcuda): virtual
 * memory as PyTorch's expandable segments use it, a module global,
 * cuLaunchKernelEx with an attribute, and a function that is only counted
 * (cuLaunchHostFunc). */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

static int host_fn_runs;
static void host_fn(void *p) { host_fn_runs += p == (void *)&host_fn_runs; }
/* The function the stand-in driver was last handed (tests/c/fake_cuda). */
void *fake_last_host_fn(void);
struct launch_attr { unsigned id; char pad[4]; unsigned char value[64]; };
struct launch_config {
    unsigned gx, gy, gz, bx, by, bz, shmem;
    void *stream;
    struct launch_attr *attrs;
    unsigned n_attrs;
};
int cuLaunchKernelEx(const struct launch_config *, void *, void **, void **);

#define MIB (1u << 20)
static const char PTX[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .global .align 4 .b8 table[256];\n"
                          ".visible .entry iota(.param .u64 p0, .param .u32 p1)\n{\n    ret;\n}\n";
static unsigned char up[MIB], down[MIB];

int main(void) {
    /* A reservation, two 2 MiB pieces, a buffer across them. */
    CUdeviceptr va;
    unsigned long long h[2];
    unsigned char prop[32] = {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    CHECK(cuMemAddressReserve(&va, 8 * MIB, 0, 0, 0));
    for (int i = 0; i < 2; i++) {
        CHECK(cuMemCreate(&h[i], 2 * MIB, prop, 0));
        CHECK(cuMemMap(va + i * 2 * MIB, 2 * MIB, 0, h[i], 0));
    }
    CHECK(cuMemSetAccess(va, 4 * MIB, prop + 8, 1));
    for (unsigned i = 0; i < MIB; i++) up[i] = (unsigned char)(i * 7 + 1);
    CUdeviceptr across = va + 2 * MIB - MIB / 2;
    CHECK(cuMemcpyHtoD_v2(across, up, MIB));
    CHECK(cuMemcpyDtoH_v2(down, across, MIB));
    if (memcmp(up, down, MIB)) { printf("WRONG vmm round trip\n"); return 1; }

    /* A module global and a launch with a cluster attribute. */
    void *m, *f;
    CUdeviceptr g;
    size_t gsize;
    CHECK(cuModuleLoadData(&m, PTX));
    CHECK(cuModuleGetGlobal_v2(&g, &gsize, m, "table"));
    CHECK(cuMemcpyHtoD_v2(g, up, 64));
    CHECK(cuModuleGetFunction(&f, m, "iota"));
    struct launch_attr attr = {4, {0}, {0}};
    attr.value[0] = 2; attr.value[4] = 1; attr.value[8] = 1;
    struct launch_config c = {2, 1, 1, 32, 1, 1, 0, NULL, &attr, 1};
    int n = 64;
    void *params[] = {&across, &n};
    CHECK(cuLaunchKernelEx(&c, f, params, NULL));
    CHECK(cuLaunchHostFunc(NULL, host_fn, &host_fn_runs));
    CHECK(cuLaunchHostFunc(NULL, host_fn, &host_fn_runs));
    if (host_fn_runs != 2) { printf("WRONG host function runs: %d\n", host_fn_runs); return 1; }
    printf("driver_more: host function %s\n",
           fake_last_host_fn() == (void *)host_fn ? "as given" : "wrapped");

    CHECK(cuMemUnmap(va, 4 * MIB));
    for (int i = 0; i < 2; i++) CHECK(cuMemRelease(h[i]));
    CHECK(cuMemAddressFree(va, 8 * MIB));
    printf("driver_more: OK global=%zu\n", gsize);
    return 0;
}
