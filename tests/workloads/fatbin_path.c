/* The compiler path, as hipcc lowers `vadd<<<g, b>>>(a, b, c, n)`:
 * a HIPF wrapper around a clang offload bundle in `.hip_fatbin`, registered by
 * a static constructor with __hipRegisterFatBinary + __hipRegisterFunction,
 * and a host stub (its address is the kernel's key) that pops the launch
 * configuration pushed at the call site and calls hipLaunchKernel.
 *
 * Build with -DHRR_BUNDLE_PATH="\"/path/to/kernels.bundle\"": the offload
 * bundle (host-x86_64-unknown-linux-gnu empty entry, then
 * hipv4-x86_64-unknown-linux-gnu-cpu holding the kernel .so) is embedded
 * with .incbin. */
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

/* Host stubs: hipcc emits one per __global__ function. */
static void vadd(const float *a, const float *b, float *c, int n) {
    void *args[] = {&a, &b, &c, &n};
    hip_stub_launch((const void *)vadd, args);
}

static void scale(float *c, float k, int n) {
    void *args[] = {&c, &k, &n};
    hip_stub_launch((const void *)scale, args);
}

static void __hip_module_dtor(void) {
    if (__hip_gpubin_handle) {
        __hipUnregisterFatBinary(__hip_gpubin_handle);
        __hip_gpubin_handle = NULL;
    }
}

__attribute__((constructor)) static void __hip_module_ctor(void) {
    if (!__hip_gpubin_handle) __hip_gpubin_handle = __hipRegisterFatBinary(&__hip_fatbin_wrapper);
    __hipRegisterFunction(__hip_gpubin_handle, (const void *)vadd, "vadd", "vadd", (unsigned)-1,
                          NULL, NULL, NULL, NULL, NULL);
    __hipRegisterFunction(__hip_gpubin_handle, (const void *)scale, "scale", "scale",
                          (unsigned)-1, NULL, NULL, NULL, NULL, NULL);
    atexit(__hip_module_dtor);
}

/* `kernel<<<g, b, sh, s>>>(args…)` */
#define LAUNCH(kernel, g, b, sh, s, ...)                                                   \
    do {                                                                                   \
        if (__hipPushCallConfiguration((g), (b), (sh), (s)) == hipSuccess) kernel(__VA_ARGS__); \
        CHECK(hipGetLastError());                                                          \
    } while (0)

#define N 3000 /* not a multiple of the block: the kernel checks its bound */

int main(void) {
    static float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = (float)(2 * i + 1);
    }
    float *da, *db, *dc;
    CHECK(hipMalloc((void **)&da, sizeof a));
    CHECK(hipMalloc((void **)&db, sizeof b));
    CHECK(hipMalloc((void **)&dc, sizeof c));
    CHECK(hipMemcpy(da, a, sizeof a, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b, sizeof b, hipMemcpyHostToDevice));
    CHECK(hipMemset(dc, 0xff, sizeof c));

    dim3 block = {256, 1, 1};
    dim3 grid = {(N + 255) / 256, 1, 1};
    LAUNCH(vadd, grid, block, 0, NULL, da, db, dc, N);
    LAUNCH(scale, grid, block, 0, NULL, dc, 0.5f, N);
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(c, dc, sizeof c, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(c[i] == (a[i] + b[i]) * 0.5f, "c[%d] = %g, want %g", i, c[i], (a[i] + b[i]) * 0.5f);
    printf("fatbin_path: vadd+scale over %d elements ok (c[%d] = %g)\n", N, N - 1, c[N - 1]);

    /* The same launch repeated, then its scalar changed (the recorder appends
     * a repeated launch's kept line): by 1/2 four times, by 2 three times. */
    for (int i = 0; i < 7; i++) LAUNCH(scale, grid, block, 0, NULL, dc, i < 4 ? 0.5f : 2.0f, N);
    CHECK(hipDeviceSynchronize());
    static float c2[N];
    CHECK(hipMemcpy(c2, dc, sizeof c2, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(c2[i] == c[i] * 0.5f, "repeated: c[%d] = %g, want %g", i, c2[i], c[i] * 0.5f);
    printf("fatbin_path: 7 repeated scale launches ok\n");

    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    printf("fatbin_path: OK\n");
    return 0;
}
