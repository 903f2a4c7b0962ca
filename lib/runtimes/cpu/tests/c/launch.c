/* Kernel launch paths of libhrr_hip_cpu.so: hipModuleLoad / hipModuleLoadData
 * (ELF and offload bundle) + hipModuleLaunchKernel (kernelParams and extra), and
 * the compiler path (__hipRegisterFatBinary + __hipRegisterFunction +
 * hipLaunchKernel). argv[1]: the kernels .so. The bundles are linked in by the
 * harness (.incbin): hrr_test_bundle (host + CPU entries), hrr_gpu_only_bundle, and
 * the test bundle compressed (hrr_test_ccob, hrr_test_ccob_v2). */
#include <hip/hip_runtime_api.h>
#include <math.h>
#include "common.h"

extern const unsigned char hrr_test_bundle[];
extern const unsigned char hrr_gpu_only_bundle[];
extern const unsigned char hrr_test_ccob[];    /* the test bundle, CCOB v3 (zstd) */
extern const unsigned char hrr_test_ccob_v2[]; /* CCOB v2 (zlib), old "hip-" entry id */

/* Emitted by clang for HIP programs; not declared by Debian's C headers. */
extern void **__hipRegisterFatBinary(const void *data);
extern void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                                  const char *deviceName, unsigned int threadLimit, void *tid,
                                  void *bid, dim3 *blockDim, dim3 *gridDim, int *wSize);
extern void __hipUnregisterFatBinary(void **modules);
/* hip_ext.h is C++ only (default arguments). */
extern hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                           uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem,
                                           hipStream_t stream, void **kernelParams, void **extra,
                                           hipEvent_t start, hipEvent_t stop, uint32_t flags);

struct hipf { uint32_t magic, version; const void *binary; void *unused; };
struct pair { double *out; double scale; int32_t count; };

/* Host stubs, as clang emits them: their addresses identify kernels. */
static void saxpy_stub(float *y, const float *x, float a, uint32_t n) {
    void *args[] = {&y, &x, &a, &n};
    dim3 g, b;
    size_t sh;
    hipStream_t s;
    if (__hipPopCallConfiguration(&g, &b, &sh, &s) == hipSuccess)
        (void)hipLaunchKernel((const void *)saxpy_stub, g, b, args, sh, s);
}
static void scale_struct_stub(void) {}
static void not_a_kernel_stub(void) {}
static void gpu_only_stub(void) {}

enum { N = 10000 };

static float *dev_floats(const float *h, size_t n) {
    void *d = NULL;
    OK(hipMalloc(&d, n * sizeof(float)));
    OK(hipMemcpy(d, h, n * sizeof(float), hipMemcpyHostToDevice));
    return d;
}

static int saxpy_ok(float *dy, const float *x, const float *y0, float a, int reps) {
    static float out[N];
    if (hipMemcpy(out, dy, sizeof out, hipMemcpyDeviceToHost) != hipSuccess) return 0;
    for (int i = 0; i < N; i++) {
        float want = y0[i];
        for (int r = 0; r < reps; r++) want = a * x[i] + want;
        if (fabsf(out[i] - want) > 1e-3f * fabsf(want) + 1e-3f) {
            printf("saxpy mismatch at %d: %f vs %f\n", i, out[i], want);
            return 0;
        }
    }
    return 1;
}

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*len);
    if (fread(b, 1, *len, f) != *len) { free(b); b = NULL; }
    fclose(f);
    return b;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    static float x[N], y0[N];
    for (int i = 0; i < N; i++) { x[i] = (float)i * 0.5f; y0[i] = 1.0f + (float)(i % 7); }
    float *dx = dev_floats(x, N), *dy = dev_floats(y0, N);
    float a = 2.0f;
    uint32_t n = N;

    /* 1. hipModuleLoad(path) + kernelParams */
    hipModule_t m1 = NULL, m2 = NULL, m3 = NULL;
    hipFunction_t f_saxpy = NULL, f_saxpy2 = NULL, f = NULL;
    OK(hipModuleLoad(&m1, argv[1]));
    OK(hipModuleGetFunction(&f_saxpy, m1, "saxpy"));
    EXPECT(hipModuleGetFunction(&f, m1, "no_such_kernel"), hipErrorNotFound);
    void *params[] = {&dy, &dx, &a, &n};
    OK(hipModuleLaunchKernel(f_saxpy, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    CHECK(saxpy_ok(dy, x, y0, a, 1));

    /* 2. hipModuleLoadData(ELF image in memory): a fresh, independent load; + extra */
    size_t len = 0;
    unsigned char *image = read_file(argv[1], &len);
    CHECK(image != NULL);
    OK(hipModuleLoadData(&m2, image));
    CHECK(m2 != m1);
    OK(hipModuleGetFunction(&f_saxpy2, m2, "saxpy"));
    CHECK(f_saxpy2 != f_saxpy);
    struct { float *y; const float *x; float a; uint32_t n; } packed = {dy, dx, a, n};
    size_t psize = sizeof packed;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &psize,
                     HIP_LAUNCH_PARAM_END};
    OK(hipModuleLaunchKernel(f_saxpy2, 40, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
    CHECK(saxpy_ok(dy, x, y0, a, 2));
    EXPECT(hipModuleLaunchKernel(f_saxpy2, 1, 1, 1, 1, 1, 1, 0, NULL, params, extra), hipErrorInvalidValue);
    EXPECT(hipModuleLaunchKernel(f_saxpy2, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), hipErrorInvalidValue);
    EXPECT(hipModuleLaunchKernel(f_saxpy2, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL), hipErrorInvalidValue);
    EXPECT(hipModuleLaunchKernel(f_saxpy2, 0, 1, 1, 1, 1, 1, 0, NULL, params, NULL), hipErrorInvalidValue);
    /* A grid whose volume overflows 64 bits is refused, not a panic or a wrapped count. */
    EXPECT(hipModuleLaunchKernel(f_saxpy2, 0xffffffffu, 0xffffffffu, 0xffffffffu, 1, 1, 1, 0, NULL, params, NULL), hipErrorInvalidValue);
    EXPECT(hipModuleLaunchKernel((hipFunction_t)0x1234, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), hipErrorInvalidHandle);
    (void)hipGetLastError();

    /* unloading one load leaves the other working; the unloaded function is gone */
    OK(hipModuleUnload(m1));
    EXPECT(hipModuleLaunchKernel(f_saxpy, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL), hipErrorInvalidHandle);
    EXPECT(hipModuleUnload(m1), hipErrorInvalidHandle);
    OK(hipModuleLoadDataEx(&m1, image, 0, NULL, NULL));
    OK(hipModuleGetFunction(&f_saxpy, m1, "saxpy"));

    /* 3. hipModuleLoadData(offload bundle) + a struct by value holding a device pointer */
    OK(hipModuleLoadData(&m3, hrr_test_bundle));
    hipFunction_t f_scale = NULL;
    OK(hipModuleGetFunction(&f_scale, m3, "scale_struct"));
    double hin[N], hout[N];
    for (int i = 0; i < N; i++) hin[i] = i * 0.25;
    void *din = NULL, *dout = NULL;
    OK(hipMalloc(&din, sizeof hin));
    OK(hipMalloc(&dout, sizeof hout));
    OK(hipMemcpy(din, hin, sizeof hin, hipMemcpyHostToDevice));
    struct pair pr = {dout, 3.0, N};
    void *sparams[] = {&pr, &din};
    OK(hipModuleLaunchKernel(f_scale, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, sparams, NULL));
    OK(hipMemcpy(hout, dout, sizeof hout, hipMemcpyDeviceToHost));
    {
        int ok = 1;
        for (int i = 0; i < N; i++) if (hout[i] != hin[i] * 3.0) ok = 0;
        CHECK(ok);
    }
    /* compressed offload bundles (CCOB), sized from their header and inflated */
    {
        const unsigned char *ccobs[] = {hrr_test_ccob, hrr_test_ccob_v2};
        for (int c = 0; c < 2; c++) {
            hipModule_t mc = NULL;
            hipFunction_t fc = NULL;
            OK(hipModuleLoadData(&mc, ccobs[c]));
            OK(hipModuleGetFunction(&fc, mc, "saxpy"));
            OK(hipMemcpy(dy, y0, sizeof y0, hipMemcpyHostToDevice));
            OK(hipModuleLaunchKernel(fc, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
            CHECK(saxpy_ok(dy, x, y0, a, 1));
            OK(hipModuleUnload(mc));
        }
    }
    hipModule_t mbad = NULL;
    EXPECT(hipModuleLoadData(&mbad, hrr_gpu_only_bundle), hipErrorNoBinaryForGpu);
    static const char junk[64] = "definitely not a code object";
    EXPECT(hipModuleLoadData(&mbad, junk), hipErrorInvalidImage);
    EXPECT(hipModuleLoad(&mbad, "/nonexistent/kernels.so"), hipErrorFileNotFound);
    (void)hipGetLastError();

    /* 4. the compiler path: HIPF wrapper -> bundle, registered lazily */
    struct hipf w = {0x48495046u, 1, hrr_test_bundle, NULL};
    struct hipf wbad = {0x48495046u, 1, hrr_gpu_only_bundle, NULL};
    void **h = __hipRegisterFatBinary(&w);
    void **hbad = __hipRegisterFatBinary(&wbad); /* cheap: nothing is loaded yet */
    CHECK(h != NULL && hbad != NULL);
    __hipRegisterFunction(h, (const void *)saxpy_stub, "saxpy", "saxpy", (unsigned)-1, 0, 0, 0, 0, 0);
    __hipRegisterFunction(h, (const void *)scale_struct_stub, "scale_struct", "scale_struct", (unsigned)-1, 0, 0, 0, 0, 0);
    __hipRegisterFunction(h, (const void *)not_a_kernel_stub, "nope", "nope", (unsigned)-1, 0, 0, 0, 0, 0);
    __hipRegisterFunction(hbad, (const void *)gpu_only_stub, "saxpy", "saxpy", (unsigned)-1, 0, 0, 0, 0, 0);
    OK(hipMemcpy(dy, y0, sizeof y0, hipMemcpyHostToDevice));
    /* what `saxpy<<<40, 256>>>(dy, dx, a, n)` compiles to */
    OK(__hipPushCallConfiguration((dim3){40, 1, 1}, (dim3){256, 1, 1}, 0, NULL));
    saxpy_stub(dy, dx, a, n);
    OK(hipGetLastError());
    CHECK(saxpy_ok(dy, x, y0, a, 1));
    OK(hipMemset(dout, 0, sizeof hout));
    OK(hipLaunchKernel((const void *)scale_struct_stub, (dim3){(N + 63) / 64, 1, 1}, (dim3){64, 1, 1}, sparams, 0, NULL));
    OK(hipMemcpy(hout, dout, sizeof hout, hipMemcpyDeviceToHost));
    CHECK(hout[N - 1] == hin[N - 1] * 3.0 && hout[1] == 0.75);
    EXPECT(hipLaunchKernel((const void *)not_a_kernel_stub, (dim3){1, 1, 1}, (dim3){1, 1, 1}, NULL, 0, NULL), hipErrorInvalidDeviceFunction);
    EXPECT(hipLaunchKernel((const void *)main, (dim3){1, 1, 1}, (dim3){1, 1, 1}, NULL, 0, NULL), hipErrorInvalidDeviceFunction);
    EXPECT(hipLaunchKernel((const void *)gpu_only_stub, (dim3){1, 1, 1}, (dim3){1, 1, 1}, params, 0, NULL), hipErrorNoBinaryForGpu);
    EXPECT(__hipPopCallConfiguration(&(dim3){0}, &(dim3){0}, &(size_t){0}, &(hipStream_t){0}), hipErrorMissingConfiguration);
    (void)hipGetLastError();

    /* 5. shared memory, 3-D grids, streams */
    hipFunction_t f_sum = NULL, f_idx = NULL, f_sleep = NULL, f_empty = NULL;
    OK(hipModuleGetFunction(&f_sum, m3, "block_sum"));
    OK(hipModuleGetFunction(&f_idx, m3, "grid_index"));
    OK(hipModuleGetFunction(&f_sleep, m3, "sleep_then_set"));
    OK(hipModuleGetFunction(&f_empty, m3, "empty"));
    enum { B = 64, T = 128 };
    static uint32_t hin32[B * T], hsum[B];
    for (int i = 0; i < B * T; i++) hin32[i] = (uint32_t)i;
    void *din32 = NULL, *dsum = NULL, *ddirty = NULL;
    OK(hipMalloc(&din32, sizeof hin32));
    OK(hipMalloc(&dsum, sizeof hsum));
    OK(hipMalloc(&ddirty, 4));
    OK(hipMemcpy(din32, hin32, sizeof hin32, hipMemcpyHostToDevice));
    hipStream_t s;
    OK(hipStreamCreate(&s));
    void *bparams[] = {&din32, &dsum, &ddirty};
    for (int rep = 0; rep < 3; rep++) /* scratch is reused: it must be re-zeroed */
        OK(hipModuleLaunchKernel(f_sum, B, 1, 1, T, 1, 1, T * sizeof(uint32_t), s, bparams, NULL));
    EXPECT(hipModuleLaunchKernel(f_sum, B, 1, 1, T, 1, 1, 1 << 20, s, bparams, NULL), hipErrorInvalidValue);
    CHECK(hipGetLastError() == hipErrorInvalidValue);
    OK(hipStreamSynchronize(s));
    uint32_t dirty = 7;
    OK(hipMemcpy(hsum, dsum, sizeof hsum, hipMemcpyDeviceToHost));
    OK(hipMemcpy(&dirty, ddirty, 4, hipMemcpyDeviceToHost));
    CHECK(dirty == 0);
    {
        int ok = 1;
        for (int b = 0; b < B; b++) {
            uint32_t want = 0;
            for (int t = 0; t < T; t++) want += (uint32_t)(b * T + t);
            if (hsum[b] != want) ok = 0;
        }
        CHECK(ok);
    }
    enum { GX = 5, GY = 3, GZ = 4, BX = 8, BY = 2, BZ = 2, TOTAL = GX * GY * GZ * BX * BY * BZ };
    static uint32_t hidx[TOTAL];
    void *didx = NULL;
    OK(hipMalloc(&didx, sizeof hidx));
    OK(hipMemsetD32(didx, -1, TOTAL));
    void *iparams[] = {&didx};
    OK(hipModuleLaunchKernel(f_idx, GX, GY, GZ, BX, BY, BZ, 0, s, iparams, NULL));
    OK(hipMemcpyAsync(hidx, didx, sizeof hidx, hipMemcpyDeviceToHost, s));
    OK(hipStreamSynchronize(s));
    {
        int ok = 1;
        for (uint32_t i = 0; i < TOTAL; i++) if (hidx[i] != i) ok = 0;
        CHECK(ok);
    }

    /* 6. events time stream work; the null stream waits for blocking streams */
    hipEvent_t e0, e1;
    OK(hipEventCreate(&e0));
    OK(hipEventCreate(&e1));
    void *dflag = NULL;
    OK(hipMalloc(&dflag, 4));
    uint32_t ms_sleep = 60, flag = 0;
    void *slp[] = {&ms_sleep, &dflag};
    OK(hipEventRecord(e0, s));
    OK(hipModuleLaunchKernel(f_sleep, 4, 1, 1, 1, 1, 1, 0, s, slp, NULL));
    OK(hipEventRecord(e1, s));
    EXPECT(hipEventQuery(e1), hipErrorNotReady);
    EXPECT(hipStreamQuery(s), hipErrorNotReady);
    CHECK(hipPeekAtLastError() == hipSuccess); /* NotReady is not an error */
    OK(hipMemcpy(&flag, dflag, 4, hipMemcpyDeviceToHost)); /* waits for s */
    CHECK(flag == 1);
    OK(hipEventSynchronize(e1));
    float ms = 0;
    OK(hipEventElapsedTime(&ms, e0, e1));
    CHECK(ms >= 50.0f && ms < 10000.0f);
    printf("sleep kernel timed at %.1f ms\n", ms);

    /* hipExtModuleLaunchKernel: global work sizes, with events */
    OK(hipMemcpy(dy, y0, sizeof y0, hipMemcpyHostToDevice));
    OK(hipExtModuleLaunchKernel(f_saxpy, N, 1, 1, 256, 1, 1, 0, s, params, NULL, e0, e1, 0));
    OK(hipEventSynchronize(e1));
    CHECK(saxpy_ok(dy, x, y0, a, 1));

    /* 7. launch overhead of a 1x1 empty kernel (figures only, no assertion) */
    int reps = 20000;
    double t0 = now_ms();
    for (int i = 0; i < reps; i++) (void)hipModuleLaunchKernel(f_empty, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    double t1 = now_ms();
    for (int i = 0; i < reps; i++) (void)hipModuleLaunchKernel(f_empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
    OK(hipStreamSynchronize(s));
    double t2 = now_ms();
    for (int i = 0; i < reps; i++) (void)hipModuleLaunchKernel(f_empty, 64, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL);
    double t3 = now_ms();
    printf("launch overhead: null stream %.2f us, stream %.2f us, 64 blocks %.2f us\n",
           (t1 - t0) * 1e3 / reps, (t2 - t1) * 1e3 / reps, (t3 - t2) * 1e3 / reps);

    OK(hipStreamDestroy(s));
    OK(hipEventDestroy(e0));
    OK(hipEventDestroy(e1));
    __hipUnregisterFatBinary(h);
    __hipUnregisterFatBinary(hbad);
    EXPECT(hipLaunchKernel((const void *)scale_struct_stub, (dim3){1, 1, 1}, (dim3){1, 1, 1}, sparams, 0, NULL), hipErrorInvalidDeviceFunction);
    (void)hipGetLastError();
    OK(hipModuleUnload(m1));
    OK(hipModuleUnload(m2));
    OK(hipModuleUnload(m3));
    OK(hipFree(dx));
    OK(hipFree(dy));
    OK(hipFree(din));
    OK(hipFree(dout));
    free(image);
    return finish("launch");
}
