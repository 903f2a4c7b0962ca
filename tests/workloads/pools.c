/* Stream-ordered allocation from a memory pool: hipMemPoolCreate, a release
 * threshold, hipMallocFromPoolAsync of a buffer that a kernel fills, its
 * hipFreeAsync, and a second allocation of the same size that the pool
 * hands out at the same address (checked) and that another kernel run
 * fills; then the pool made the device's (hipMallocAsync from it), trimmed
 * and destroyed. Every result is downloaded, and checked here. */
#include "hrr_workload.h"

#define N 2048

struct saxpy_args {
    float a;
    uint32_t pad;
    const float *x;
    float *y;
    int n;
    uint32_t pad2;
};

static void saxpy(hipFunction_t f, hipStream_t s, float a, const float *x, float *y) {
    struct saxpy_args ka = {a, 0, x, y, N, 0};
    size_t ka_size = sizeof ka;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &ka, HIP_LAUNCH_PARAM_BUFFER_SIZE, &ka_size,
                     HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, s, NULL, extra));
}

int main(void) {
    CHECK(hipInit(0));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipModule_t m = hrr_load_module_data("saxpy.so");
    hipFunction_t f;
    CHECK(hipModuleGetFunction(&f, m, "saxpy"));
    static float x[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)i;
    float *dx;
    CHECK(hipMalloc((void **)&dx, sizeof x));
    CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));

    hipMemPool_t pool;
    hipMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = hipMemAllocationTypePinned;
    props.location.type = hipMemLocationTypeDevice;
    props.location.id = 0;
    CHECK(hipMemPoolCreate(&pool, &props));
    uint64_t threshold = UINT64_MAX;
    CHECK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold));

    /* first life of the block: y = 2x */
    float *y1;
    CHECK(hipMallocFromPoolAsync((void **)&y1, sizeof out, pool, s));
    CHECK(hipMemsetAsync(y1, 0, sizeof out, s));
    saxpy(f, s, 2.0f, dx, y1);
    CHECK(hipMemcpyAsync(out, y1, sizeof out, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++) EXPECT(out[i] == 2.0f * x[i], "y1[%d] = %g", i, out[i]);
    CHECK(hipFreeAsync(y1, s));

    /* second life at the same address: y += 3x on what the block held */
    float *y2;
    CHECK(hipMallocFromPoolAsync((void **)&y2, sizeof out, pool, s));
    EXPECT(y2 == y1, "the pool reuses the freed block (%p, then %p)", (void *)y1, (void *)y2);
    saxpy(f, s, 3.0f, dx, y2);
    CHECK(hipMemcpyAsync(out, y2, sizeof out, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++) EXPECT(out[i] == 5.0f * x[i], "y2[%d] = %g", i, out[i]);

    /* the device's pool: hipMallocAsync comes from it */
    CHECK(hipDeviceSetMemPool(0, pool));
    float *y3;
    CHECK(hipMallocAsync((void **)&y3, sizeof out, s));
    CHECK(hipMemcpyAsync(y3, y2, sizeof out, hipMemcpyDeviceToDevice, s));
    saxpy(f, s, 1.0f, dx, y3);
    CHECK(hipMemcpyAsync(out, y3, sizeof out, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++) EXPECT(out[i] == 6.0f * x[i], "y3[%d] = %g", i, out[i]);
    CHECK(hipFreeAsync(y2, s));
    CHECK(hipFreeAsync(y3, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemPoolTrimTo(pool, 0));
    CHECK(hipMemPoolDestroy(pool));
    CHECK(hipFree(dx));
    CHECK(hipStreamDestroy(s));
    printf("pools: OK (block reused at %p)\n", (void *)y1);
    return 0;
}
