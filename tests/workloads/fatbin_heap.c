/* The compiler path with the bundle on the heap, as a program that
 * generates or decompresses its device code at run time does: a HIPF
 * wrapper pointing at a malloc'd copy of an offload bundle is registered,
 * its kernels launched, then the fat binary is unregistered and its memory
 * scribbled over and freed. The recorder writes a registered bundle's blob
 * from where it lies, after the launch that first needed it; the archive
 * must still hold the bundle as launched, so unregistering has to wait for
 * that write.
 *
 * Build with -DHRR_BUNDLE_PATH="\"/path/to/kernels.bundle\"" (read at run
 * time: host-x86_64-unknown-linux-gnu empty entry, then
 * hipv4-x86_64-unknown-linux-gnu-cpu holding the kernel .so). */
#include "hip_compiler_abi.h"
#include "hrr_workload.h"

#ifndef HRR_BUNDLE_PATH
#error "define HRR_BUNDLE_PATH to the offload bundle to load"
#endif



/* Host stub: its address is the kernel's key. */
static void vadd(const float *a, const float *b, float *c, int n) {
    void *args[] = {&a, &b, &c, &n};
    hip_stub_launch((const void *)vadd, args);
}

#define N 2048

int main(void) {
    FILE *f = fopen(HRR_BUNDLE_PATH, "rb");
    EXPECT(f != NULL, "cannot open %s", HRR_BUNDLE_PATH);
    EXPECT(fseek(f, 0, SEEK_END) == 0, "seek");
    long len = ftell(f);
    EXPECT(len > 0, "empty bundle");
    rewind(f);
    unsigned char *bundle = malloc((size_t)len);
    EXPECT(bundle != NULL, "malloc");
    EXPECT(fread(bundle, 1, (size_t)len, f) == (size_t)len, "short read");
    fclose(f);

    struct hip_fatbin_wrapper *wrapper = malloc(sizeof *wrapper);
    EXPECT(wrapper != NULL, "malloc");
    *wrapper = (struct hip_fatbin_wrapper){HIP_FATBIN_MAGIC, 1u, bundle, NULL};
    void **handle = __hipRegisterFatBinary(wrapper);
    __hipRegisterFunction(handle, (const void *)vadd, "vadd", "vadd", (unsigned)-1, NULL, NULL,
                          NULL, NULL, NULL);

    static float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = (float)(3 * i);
    }
    float *da, *db, *dc;
    CHECK(hipMalloc((void **)&da, sizeof a));
    CHECK(hipMalloc((void **)&db, sizeof b));
    CHECK(hipMalloc((void **)&dc, sizeof c));
    CHECK(hipMemcpy(da, a, sizeof a, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b, sizeof b, hipMemcpyHostToDevice));
    dim3 block = {256, 1, 1};
    dim3 grid = {N / 256, 1, 1};
    if (__hipPushCallConfiguration(grid, block, 0, NULL) == hipSuccess) vadd(da, db, dc, N);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(c, dc, sizeof c, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(c[i] == a[i] + b[i], "c[%d] = %g, want %g", i, c[i], a[i] + b[i]);

    /* At once, as a program freeing its generated code would: the recorder
     * may not have written the bundle's blob yet. */
    __hipUnregisterFatBinary(handle);
    memset(bundle, 0xa5, (size_t)len);
    free(bundle);
    free(wrapper);

    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    printf("fatbin_heap: vadd over %d elements from a heap bundle (%ld bytes) ok\n", N, len);
    printf("fatbin_heap: OK\n");
    return 0;
}
