/* Module globals and symbols. The compiler path: a fat binary registered
 * with its kernel and its two `__device__` variables (__hipRegisterVar, as
 * hipcc's host code does), hipMemcpyToSymbol / hipMemcpyToSymbolAsync into
 * `table`, a kernel that updates `table` and writes `counter`, then
 * hipMemcpyFromSymbol / hipMemcpyFromSymbolAsync (at an offset) and
 * hipGetSymbolAddress + a plain hipMemcpy. The module path: the same code
 * object loaded with hipModuleLoadData (its own copy of the globals),
 * hipModuleGetGlobal, plain copies to and from the global, a launch. */
#include "hip_compiler_abi.h"
#include "hrr_workload.h"

#ifndef HRR_BUNDLE_PATH
#error "define HRR_BUNDLE_PATH to the offload bundle to embed"
#endif


__asm__(".section .hip_fatbin,\"a\",@progbits\n"
        ".p2align 12\n"
        "__hip_fatbin_start:\n"
        ".incbin \"" HRR_BUNDLE_PATH "\"\n"
        ".previous\n");
extern const char __hip_fatbin_start[];

__attribute__((section(".hipFatBinSegment"), aligned(8), used))
static const struct hip_fatbin_wrapper __hip_fatbin_wrapper = {HIP_FATBIN_MAGIC, 1u,
                                                               __hip_fatbin_start, NULL};
static void **__hip_gpubin_handle;

/* Host shadows of the device variables: their addresses are the symbols. */
static int table[16];
static int counter;

static void bump(int k) {
    void *args[] = {&k};
    hip_stub_launch((const void *)bump, args);
}

static void __hip_module_dtor(void) {
    if (__hip_gpubin_handle) {
        __hipUnregisterFatBinary(__hip_gpubin_handle);
        __hip_gpubin_handle = NULL;
    }
}

__attribute__((constructor)) static void __hip_module_ctor(void) {
    if (!__hip_gpubin_handle) __hip_gpubin_handle = __hipRegisterFatBinary(&__hip_fatbin_wrapper);
    __hipRegisterFunction(__hip_gpubin_handle, (const void *)bump, "bump", "bump", (unsigned)-1,
                          NULL, NULL, NULL, NULL, NULL);
    __hipRegisterVar(__hip_gpubin_handle, table, "table", "table", 0, sizeof table, 0, 0);
    __hipRegisterVar(__hip_gpubin_handle, &counter, "counter", "counter", 0, sizeof counter, 0, 0);
    atexit(__hip_module_dtor);
}

int main(void) {
    CHECK(hipInit(0));
    int init[16], got[16], sum = 0, c = 0;
    for (int i = 0; i < 16; i++) init[i] = i * i;

    /* compiler path */
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipMemcpyToSymbol(table, init, 8 * sizeof(int), 0, hipMemcpyHostToDevice));
    CHECK(hipMemcpyToSymbolAsync(table, init + 8, 8 * sizeof(int), 8 * sizeof(int),
                                 hipMemcpyHostToDevice, s));
    CHECK(hipStreamSynchronize(s));
    dim3 one = {1, 1, 1};
    if (__hipPushCallConfiguration(one, one, 0, NULL) == hipSuccess) bump(3);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpyFromSymbol(&c, &counter, sizeof c, 0, hipMemcpyDeviceToHost));
    for (int i = 0; i < 16; i++) sum += init[i] + 3;
    EXPECT(c == sum, "counter = %d, want %d", c, sum);
    CHECK(hipMemcpyFromSymbolAsync(got, table, 4 * sizeof(int), 12 * sizeof(int),
                                   hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < 4; i++) EXPECT(got[i] == init[12 + i] + 3, "table[%d] = %d", 12 + i, got[i]);
    void *addr;
    size_t size;
    CHECK(hipGetSymbolAddress(&addr, table));
    CHECK(hipGetSymbolSize(&size, table));
    EXPECT(size == sizeof table, "symbol size %zu", size);
    CHECK(hipMemcpy(got, addr, sizeof got, hipMemcpyDeviceToHost));
    for (int i = 0; i < 16; i++) EXPECT(got[i] == init[i] + 3, "table[%d] = %d", i, got[i]);
    printf("symbols: compiler path: counter %d ok\n", c);

    /* module path: the same code object, its own globals */
    hipModule_t m = hrr_load_module_data("fatbin.so");
    hipFunction_t f;
    CHECK(hipModuleGetFunction(&f, m, "bump"));
    hipDeviceptr_t mt, mc;
    size_t mt_size;
    CHECK(hipModuleGetGlobal(&mt, &mt_size, m, "table"));
    CHECK(hipModuleGetGlobal(&mc, NULL, m, "counter"));
    EXPECT(mt_size == sizeof table && mt != addr, "module global %p of %zu", mt, mt_size);
    CHECK(hipMemcpyHtoD(mt, init, sizeof init));
    int k = 10;
    void *params[] = {&k};
    CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpyDtoH(&c, mc, sizeof c));
    EXPECT(c == sum + 16 * 7, "module counter = %d, want %d", c, sum + 16 * 7);
    CHECK(hipMemcpyDtoH(got, mt, sizeof got));
    for (int i = 0; i < 16; i++) EXPECT(got[i] == init[i] + 10, "module table[%d] = %d", i, got[i]);
    CHECK(hipModuleUnload(m));
    CHECK(hipStreamDestroy(s));
    printf("symbols: module path: counter %d ok\n", c);
    printf("symbols: OK\n");
    return 0;
}
