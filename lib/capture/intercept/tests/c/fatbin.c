/* The compiler path, as hipcc lowers it: two fat binaries registered by a
 * constructor, a kernel launched from the first only (the second's bundle
 * must never be read or written), unregistered at exit.
 * Build with -DBUNDLE1="…" -DBUNDLE2="…" (offload bundle files to embed). */
#include "common.h"

extern void **__hipRegisterFatBinary(const void *data);
extern void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                                  const char *deviceName, unsigned int threadLimit, void *tid,
                                  void *bid, dim3 *blockDim, dim3 *gridDim, int *wSize);
extern void __hipUnregisterFatBinary(void **modules);

__asm__(".section .hip_fatbin,\"a\",@progbits\n"
        ".p2align 12\n"
        "bundle1_start:\n"
        ".incbin \"" BUNDLE1 "\"\n"
        ".p2align 12\n"
        "bundle2_start:\n"
        ".incbin \"" BUNDLE2 "\"\n"
        ".previous\n");
extern const char bundle1_start[], bundle2_start[];

struct wrapper { uint32_t magic, version; const void *binary; void *dummy; };
static const struct wrapper w1 = {0x48495046u, 1u, bundle1_start, NULL};
static const struct wrapper w2 = {0x48495046u, 1u, bundle2_start, NULL};
static void **h1, **h2;

static void fill_stub(uint32_t *out, uint32_t v, uint32_t n) {
    void *args[] = {&out, &v, &n};
    dim3 g, b;
    size_t sh;
    hipStream_t s;
    if (__hipPopCallConfiguration(&g, &b, &sh, &s) != hipSuccess) return;
    (void)hipLaunchKernel((const void *)fill_stub, g, b, args, sh, s);
}
static void nop_stub(void) {}

static void dtor(void) {
    __hipUnregisterFatBinary(h1);
    __hipUnregisterFatBinary(h2);
}

__attribute__((constructor)) static void ctor(void) {
    h1 = __hipRegisterFatBinary(&w1);
    h2 = __hipRegisterFatBinary(&w2);
    __hipRegisterFunction(h1, (const void *)fill_stub, "fill", "fill", (unsigned)-1, NULL, NULL,
                          NULL, NULL, NULL);
    __hipRegisterFunction(h2, (const void *)nop_stub, "nop", "nop", (unsigned)-1, NULL, NULL,
                          NULL, NULL, NULL);
    atexit(dtor);
}

#define N 300

int main(void) {
    uint32_t *d, out[N];
    CHECK(hipMalloc((void **)&d, sizeof out));
    dim3 grid = {(N + 127) / 128, 1, 1}, block = {128, 1, 1};
    for (int k = 0; k < 3; k++) {
        CHECK(__hipPushCallConfiguration(grid, block, 0, NULL));
        fill_stub(d, 40 + k, N);
        CHECK(hipGetLastError());
    }
    CHECK(hipMemcpy(out, d, sizeof out, hipMemcpyDeviceToHost));
    EXPECT(out[N - 1] == 42 + N - 1);
    printf("fatbin: d=%p fill=%p OK\n", (void *)d, (void *)fill_stub);
    CHECK(hipFree(d));
    return 0;
}
