/* Runtime API behaviour of libhrr_hip_cpu.so, compiled against Debian's real
 * HIP 5.2 and HSA headers (gcc -D__HIP_PLATFORM_AMD__). */
#include <hip/hip_runtime_api.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stddef.h>
#include "common.h"

_Static_assert(sizeof(hipDeviceProp_t) == 792, "hipDeviceProp_t layout (HIP 5.2)");
_Static_assert(sizeof(hipPointerAttribute_t) == 32, "hipPointerAttribute_t layout");
_Static_assert(offsetof(hipPointerAttribute_t, isManaged) == 24, "isManaged offset");
_Static_assert(sizeof(dim3) == 12, "dim3");

static void test_device(void) {
    int n = -1, dev = -1, v = 0;
    OK(hipInit(0));
    OK(hipGetDeviceCount(&n));
    CHECK(n == 1);
    OK(hipGetDevice(&dev));
    CHECK(dev == 0);
    OK(hipSetDevice(0));
    EXPECT(hipSetDevice(1), hipErrorInvalidDevice);
    CHECK(hipPeekAtLastError() == hipErrorInvalidDevice);
    CHECK(hipGetLastError() == hipErrorInvalidDevice);
    CHECK(hipGetLastError() == hipSuccess);
    CHECK(strcmp(hipGetErrorName(hipErrorInvalidValue), "hipErrorInvalidValue") == 0);
    CHECK(strcmp(hipGetErrorString(hipErrorInvalidValue), "invalid argument") == 0);
    CHECK(strcmp(hipGetErrorName(hipErrorNotReady), "hipErrorNotReady") == 0);

    /* The struct is written exactly: a sentinel right behind it survives. */
    unsigned char buf[sizeof(hipDeviceProp_t) + 64];
    memset(buf, 0xAB, sizeof buf);
    hipDeviceProp_t *p = (hipDeviceProp_t *)buf;
    OK(hipGetDeviceProperties(p, 0));
    CHECK(strcmp(p->name, "hrr cpu") == 0);
    CHECK(strcmp(p->gcnArchName, "cpu") == 0);
    CHECK(p->totalGlobalMem >= (1ull << 28));
    CHECK(p->maxThreadsPerBlock == 1024);
    CHECK(p->warpSize == 64);
    CHECK(p->maxThreadsDim[2] == 1024);
    CHECK(p->sharedMemPerBlock == 65536);
    CHECK(p->multiProcessorCount >= 1);
    CHECK(p->integrated == 1);
    CHECK(p->arch.hasDoubles == 1 && p->arch.hasDynamicParallelism == 0);
    CHECK(p->managedMemory == 1);
    CHECK(p->pageableMemoryAccessUsesHostPageTables == 1); /* the last field */
    CHECK(buf[sizeof(hipDeviceProp_t)] == 0xAB && buf[sizeof buf - 1] == 0xAB);
    EXPECT(hipGetDeviceProperties(p, 3), hipErrorInvalidDevice);
    OK(hipDeviceGetAttribute(&v, hipDeviceAttributeMaxThreadsPerBlock, 0));
    CHECK(v == 1024);
    OK(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, 0));
    CHECK(v == 64);
    OK(hipDeviceGetAttribute(&v, hipDeviceAttributeMultiprocessorCount, 0));
    CHECK(v == p->multiProcessorCount);
    OK(hipDriverGetVersion(&v));
    CHECK(v == HIP_VERSION);
    OK(hipRuntimeGetVersion(&v));
    CHECK(v == HIP_VERSION);
    (void)hipGetLastError();
}

static int all_eq(const unsigned char *p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

static void test_copies(void) {
    const size_t N = 1 << 20;
    unsigned char *h = malloc(N), *h2 = malloc(N);
    void *d1 = NULL, *d2 = NULL;
    for (size_t i = 0; i < N; i++) h[i] = (unsigned char)(i * 7 + 3);
    size_t free0, total0, free1, total1;
    OK(hipMemGetInfo(&free0, &total0));
    OK(hipMalloc(&d1, N));
    OK(hipMalloc(&d2, N));
    CHECK(d1 && d2 && ((uintptr_t)d1 % 256) == 0 && ((uintptr_t)d2 % 256) == 0);
    OK(hipMemGetInfo(&free1, &total1));
    CHECK(total0 == total1 && free1 <= free0 - 2 * N);

    /* fresh device memory reads as zero */
    memset(h2, 1, N);
    OK(hipMemcpy(h2, d1, N, hipMemcpyDeviceToHost));
    CHECK(all_eq(h2, N, 0));

    /* explicit kinds */
    OK(hipMemcpy(d1, h, N, hipMemcpyHostToDevice));
    OK(hipMemcpy(d2, d1, N, hipMemcpyDeviceToDevice));
    memset(h2, 0, N);
    OK(hipMemcpy(h2, d2, N, hipMemcpyDeviceToHost));
    CHECK(memcmp(h, h2, N) == 0);
    memset(h2, 0, N);
    OK(hipMemcpy(h2, h, N, hipMemcpyHostToHost));
    CHECK(memcmp(h, h2, N) == 0);

    /* the HtoD/DtoH/DtoD entry points, with interior pointers */
    OK(hipMemset(d1, 0, N));
    OK(hipMemcpyHtoD((char *)d1 + 4096, h, 1000));
    OK(hipMemcpyDtoD(d2, (char *)d1 + 4096, 1000));
    memset(h2, 0, N);
    OK(hipMemcpyDtoH(h2, d2, 1000));
    CHECK(memcmp(h, h2, 1000) == 0);

    /* hipMemcpyDefault resolves each operand by address */
    OK(hipMemset(d1, 0, N));
    OK(hipMemset(d2, 0, N));
    OK(hipMemcpy(d1, h, N, hipMemcpyDefault));           /* H2D */
    OK(hipMemcpy(d2, d1, N, hipMemcpyDefault));          /* D2D */
    memset(h2, 0, N);
    OK(hipMemcpy(h2, d2, N, hipMemcpyDefault));          /* D2H */
    CHECK(memcmp(h, h2, N) == 0);
    memset(h2, 0, N);
    OK(hipMemcpy(h2, h, N, hipMemcpyDefault));           /* H2H */
    CHECK(memcmp(h, h2, N) == 0);

    /* memsets */
    OK(hipMemset(d1, 0x5A, N));
    OK(hipMemcpy(h2, d1, N, hipMemcpyDeviceToHost));
    CHECK(all_eq(h2, N, 0x5A));
    OK(hipMemsetD8((char *)d1 + 10, 0x11, 5));
    OK(hipMemcpy(h2, d1, 32, hipMemcpyDeviceToHost));
    CHECK(h2[9] == 0x5A && all_eq(h2 + 10, 5, 0x11) && h2[15] == 0x5A);
    OK(hipMemsetD32(d1, 0x01020304, N / 4));
    OK(hipMemcpy(h2, d1, N, hipMemcpyDeviceToHost));
    {
        int ok = 1;
        for (size_t i = 0; i < N / 4; i++) {
            uint32_t w;
            memcpy(&w, h2 + 4 * i, 4);
            if (w != 0x01020304) ok = 0;
        }
        CHECK(ok);
    }
    OK(hipMemset(d1, 0, 0)); /* empty: fine */

    /* bad device operands: hipErrorInvalidValue, never a crash */
    (void)hipGetLastError();
    EXPECT(hipMemcpy((char *)d1 + N - 8, h, 16, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK(hipGetLastError() == hipErrorInvalidValue);
    EXPECT(hipMemcpy((void *)0x1000, h, 16, hipMemcpyHostToDevice), hipErrorInvalidValue);
    EXPECT(hipMemcpy(h2, h, 16, hipMemcpyDeviceToHost), hipErrorInvalidValue); /* plain malloc as device */
    EXPECT(hipMemcpy(d1, (char *)d2 + N, 16, hipMemcpyDeviceToDevice), hipErrorInvalidValue); /* past the last allocation */
    EXPECT(hipMemcpy(NULL, h, 16, hipMemcpyHostToDevice), hipErrorInvalidValue);
    EXPECT(hipMemcpy(d1, h, 16, (hipMemcpyKind)7), hipErrorInvalidMemcpyDirection);
    EXPECT(hipMemset((char *)d2 + N - 4, 0, 8), hipErrorInvalidValue);
    EXPECT(hipMemset(h2, 0, 8), hipErrorInvalidValue);
    EXPECT(hipMemsetD32((char *)d2 + N - 4, 0, 2), hipErrorInvalidValue);
    EXPECT(hipFree((char *)d1 + 256), hipErrorInvalidValue);
    EXPECT(hipFree(h2), hipErrorInvalidValue);

    /* a freed range is gone: Default sees it as inside the device space, not host */
    void *gone = d2;
    OK(hipFree(d2));
    EXPECT(hipMemcpy(h2, gone, 16, hipMemcpyDefault), hipErrorInvalidValue);
    EXPECT(hipMemcpy(gone, h, 16, hipMemcpyDefault), hipErrorInvalidValue);
    EXPECT(hipMemcpy(h2, gone, 16, hipMemcpyDeviceToHost), hipErrorInvalidValue);
    EXPECT(hipMemcpy(gone, h, 16, hipMemcpyHostToHost), hipErrorInvalidValue);

    /* a reused range comes back zero-filled */
    OK(hipMalloc(&d2, N));
    CHECK(d2 == gone);
    OK(hipMemcpy(h2, d2, N, hipMemcpyDeviceToHost));
    CHECK(all_eq(h2, N, 0));
    OK(hipFree(d1));
    OK(hipFree(d2));
    OK(hipFree(NULL));
    void *z = (void *)1;
    OK(hipMalloc(&z, 0));
    CHECK(z == NULL);
    free(h);
    free(h2);
    (void)hipGetLastError();
}

/* hipMemcpy2D(Async): rows of `width` bytes at each side's pitch; the
 * bytes between rows are left alone; a bad pitch or row copies nothing.
 * Stream-ordered allocation and the deprecated allocation names. */
static void test_pitched_and_async_alloc(void) {
    enum { W = 24, H = 5, SP = 40, DP = 32 };
    unsigned char src[SP * H], back[DP * H];
    for (int i = 0; i < SP * H; i++) src[i] = (unsigned char)(i + 1);
    void *d = NULL;
    OK(hipMalloc(&d, DP * H));
    OK(hipMemset(d, 0xEE, DP * H));
    OK(hipMemcpy2D(d, DP, src, SP, W, H, hipMemcpyHostToDevice));
    OK(hipMemcpy(back, d, DP * H, hipMemcpyDeviceToHost));
    int ok = 1;
    for (int r = 0; r < H; r++)
        for (int c = 0; c < DP; c++)
            if (back[r * DP + c] != (c < W ? src[r * SP + c] : 0xEE)) ok = 0;
    CHECK(ok);
    /* back to the host on a stream, at a pitch of its own */
    hipStream_t s;
    OK(hipStreamCreate(&s));
    unsigned char dst[48 * H];
    memset(dst, 0, sizeof dst);
    OK(hipMemcpy2DAsync(dst, 48, d, DP, W, H, hipMemcpyDeviceToHost, s));
    OK(hipStreamSynchronize(s));
    ok = 1;
    for (int r = 0; r < H; r++)
        for (int c = 0; c < 48; c++)
            if (dst[r * 48 + c] != (c < W ? src[r * SP + c] : 0)) ok = 0;
    CHECK(ok);
    EXPECT(hipMemcpy2D(d, 16, src, SP, W, H, hipMemcpyHostToDevice), hipErrorInvalidValue); /* width > pitch */
    OK(hipMemset(d, 0, DP * H));
    EXPECT(hipMemcpy2D(d, DP, src, SP, W, H + 1, hipMemcpyHostToDevice), hipErrorInvalidValue); /* last row past the end */
    OK(hipMemcpy(back, d, DP * H, hipMemcpyDeviceToHost));
    CHECK(all_eq(back, DP * H, 0)); /* nothing copied */
    OK(hipFree(d));

    void *a = NULL;
    OK(hipMallocAsync(&a, 4096, s));
    OK(hipMemsetAsync(a, 0x3C, 4096, s));
    OK(hipMemcpyAsync(back, a, sizeof back, hipMemcpyDeviceToHost, s));
    OK(hipFreeAsync(a, s)); /* after the work queued before it */
    OK(hipStreamSynchronize(s));
    CHECK(all_eq(back, sizeof back, 0x3C));
    EXPECT(hipMallocAsync(&a, 16, (hipStream_t)0x1234), hipErrorInvalidHandle);
    OK(hipStreamDestroy(s));
    void *h1 = NULL, *h2 = NULL;
    OK(hipHostAlloc(&h1, 64, 0));
    OK(hipMemAllocHost(&h2, 64));
    hipPointerAttribute_t attr;
    OK(hipPointerGetAttributes(&attr, h1));
    CHECK(attr.memoryType == hipMemoryTypeHost);
    OK(hipHostFree(h1));
    OK(hipHostFree(h2));
    OK(hipCtxSynchronize());
    (void)hipGetLastError();
}

static void test_host_and_attributes(void) {
    void *d = NULL, *pinned = NULL, *managed = NULL, *dp = NULL;
    hipPointerAttribute_t a;
    OK(hipMalloc(&d, 4096));
    OK(hipHostMalloc(&pinned, 10000, hipHostMallocMapped));
    OK(hipMallocManaged(&managed, 8192, hipMemAttachGlobal));

    memset(&a, 0x7f, sizeof a);
    OK(hipPointerGetAttributes(&a, (char *)d + 100)); /* interior pointer */
    CHECK(a.memoryType == hipMemoryTypeDevice && a.device == 0 && a.isManaged == 0);
    CHECK(a.devicePointer == (char *)d + 100 && a.hostPointer == NULL);

    memset(&a, 0x7f, sizeof a);
    OK(hipPointerGetAttributes(&a, (char *)pinned + 9999));
    CHECK(a.memoryType == hipMemoryTypeHost && a.isManaged == 0);
    CHECK(a.hostPointer == (char *)pinned + 9999 && a.allocationFlags == hipHostMallocMapped);

    memset(&a, 0x7f, sizeof a);
    OK(hipPointerGetAttributes(&a, managed));
    CHECK(a.isManaged == 1 && a.memoryType == hipMemoryTypeDevice);
    CHECK(a.devicePointer == managed && a.hostPointer == managed);

    int local[4] = {0};
    EXPECT(hipPointerGetAttributes(&a, local), hipErrorInvalidValue);
    EXPECT(hipPointerGetAttributes(&a, (char *)managed + 8192), hipErrorInvalidValue);
    (void)hipGetLastError();

    /* managed memory is host accessible and a valid copy operand */
    ((unsigned char *)managed)[5] = 42;
    unsigned char b = 0;
    OK(hipMemcpy(&b, (char *)managed + 5, 1, hipMemcpyDeviceToHost));
    CHECK(b == 42);

    /* pinned memory: device-accessible, and mapped to itself */
    OK(hipHostGetDevicePointer(&dp, pinned, 0));
    CHECK(dp == pinned);
    memset(pinned, 9, 10000);
    OK(hipMemcpy(d, pinned, 4096, hipMemcpyHostToDevice));
    OK(hipMemset(pinned, 3, 10000));
    CHECK(((unsigned char *)pinned)[9999] == 3);
    OK(hipMemcpy(pinned, d, 4096, hipMemcpyDeviceToHost));
    CHECK(((unsigned char *)pinned)[4095] == 9 && ((unsigned char *)pinned)[4096] == 3);

    /* registered host memory */
    static char reg[8192];
    OK(hipHostRegister(reg, sizeof reg, 0));
    EXPECT(hipHostRegister(reg + 16, 16, 0), hipErrorHostMemoryAlreadyRegistered);
    OK(hipPointerGetAttributes(&a, reg + 10));
    CHECK(a.memoryType == hipMemoryTypeHost && a.hostPointer == reg + 10);
    OK(hipHostGetDevicePointer(&dp, reg, 0));
    CHECK(dp == reg);
    OK(hipMemsetD8(reg, 7, 100));
    CHECK(reg[99] == 7 && reg[100] == 0);
    OK(hipHostUnregister(reg));
    EXPECT(hipHostUnregister(reg), hipErrorHostMemoryNotRegistered);
    EXPECT(hipHostGetDevicePointer(&dp, local, 0), hipErrorInvalidValue);

    OK(hipHostFree(pinned));
    EXPECT(hipHostFree(pinned), hipErrorInvalidValue);
    OK(hipFree(managed));
    OK(hipFree(d));
    void *mh = NULL;
    OK(hipMallocHost(&mh, 100));
    OK(hipFreeHost(mh));
    (void)hipGetLastError();
}

static void test_streams_events(void) {
    const size_t N = 32 << 20;
    unsigned char *h = malloc(N), *h2 = malloc(N);
    void *d = NULL, *d2 = NULL;
    hipStream_t s1, s2, snb;
    hipEvent_t e0, e1, ev, enot;
    float ms = -1;
    memset(h, 0x3C, N);
    OK(hipMalloc(&d, N));
    OK(hipMalloc(&d2, N));
    OK(hipStreamCreate(&s1));
    OK(hipStreamCreateWithFlags(&s2, 0));
    OK(hipStreamCreateWithFlags(&snb, hipStreamNonBlocking));
    OK(hipEventCreate(&e0));
    OK(hipEventCreate(&e1));
    OK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
    OK(hipEventCreate(&enot));

    /* in-order stream work */
    OK(hipEventRecord(e0, s1));
    for (int i = 0; i < 4; i++) {
        OK(hipMemcpyAsync(d, h, N, hipMemcpyHostToDevice, s1));
        OK(hipMemcpyDtoDAsync(d2, d, N, s1));
    }
    OK(hipMemsetAsync(d, 0x11, N / 2, s1));
    OK(hipMemsetD32Async((char *)d + N / 2, 0x22222222, N / 8, s1));
    OK(hipMemsetD8Async(d, 0x33, 1, s1));
    OK(hipMemcpyDtoHAsync(h2, d, N, s1));
    OK(hipEventRecord(e1, s1));
    OK(hipEventSynchronize(e1));
    OK(hipEventQuery(e1));
    OK(hipStreamQuery(s1));
    OK(hipEventElapsedTime(&ms, e0, e1));
    CHECK(ms > 0.0f && ms < 60000.0f);
    CHECK(h2[0] == 0x33 && h2[1] == 0x11 && h2[N / 2 - 1] == 0x11 && h2[N / 2] == 0x22 && h2[N - 1] == 0x22);
    OK(hipEventElapsedTime(&ms, e1, e0));
    CHECK(ms <= 0.0f);

    /* cross-stream dependency through an event */
    OK(hipMemsetAsync(d2, 0x44, N, s1));
    OK(hipEventRecord(ev, s1));
    OK(hipStreamWaitEvent(s2, ev, 0));
    OK(hipMemcpyAsync(h2, d2, N, hipMemcpyDeviceToHost, s2));
    OK(hipStreamSynchronize(s2));
    CHECK(all_eq(h2, N, 0x44));

    /* the null stream waits for blocking streams (legacy semantics) */
    OK(hipMemsetAsync(d2, 0x55, N, s1));
    OK(hipMemcpy(h2, d2, N, hipMemcpyDeviceToHost));
    CHECK(all_eq(h2, N, 0x55));

    /* async work on a non-blocking stream still completes in order */
    OK(hipMemsetAsync(d2, 0x66, N, snb));
    OK(hipMemcpyDtoHAsync(h2, d2, N, snb));
    OK(hipStreamSynchronize(snb));
    CHECK(all_eq(h2, N, 0x66));

    /* events on the null stream */
    OK(hipEventRecord(e0, NULL));
    OK(hipMemcpy(d, h, N, hipMemcpyHostToDevice));
    OK(hipEventRecord(e1, 0));
    OK(hipEventSynchronize(e1));
    OK(hipEventElapsedTime(&ms, e0, e1));
    CHECK(ms >= 0.0f);

    /* error cases */
    EXPECT(hipEventElapsedTime(&ms, e0, enot), hipErrorInvalidHandle); /* never recorded */
    EXPECT(hipEventElapsedTime(&ms, e0, ev), hipErrorInvalidHandle);   /* timing disabled */
    OK(hipEventSynchronize(enot));
    OK(hipEventQuery(enot));
    EXPECT(hipMemcpyAsync((char *)d2 + N, h, 1, hipMemcpyHostToDevice, s1), hipErrorInvalidValue);
    EXPECT(hipStreamSynchronize((hipStream_t)0xdead0), hipErrorInvalidHandle);
    EXPECT(hipMemcpyAsync(d, h, 1, hipMemcpyHostToDevice, (hipStream_t)0xdead0), hipErrorInvalidHandle);
    EXPECT(hipEventRecord((hipEvent_t)0xdead0, s1), hipErrorInvalidHandle);

    OK(hipDeviceSynchronize());
    OK(hipStreamDestroy(s1));
    OK(hipStreamDestroy(s2));
    OK(hipStreamDestroy(snb));
    EXPECT(hipStreamDestroy(s1), hipErrorInvalidHandle);
    OK(hipEventDestroy(e0));
    OK(hipEventDestroy(e1));
    OK(hipEventDestroy(ev));
    OK(hipEventDestroy(enot));
    EXPECT(hipEventDestroy(e0), hipErrorInvalidHandle);
    OK(hipFree(d));
    OK(hipFree(d2));
    free(h);
    free(h2);
    (void)hipGetLastError();
}

struct agents { hsa_agent_t gpu, cpu; int ngpu, ncpu; };

static hsa_status_t on_agent(hsa_agent_t a, void *data) {
    struct agents *ag = data;
    hsa_device_type_t t;
    if (hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
    if (t == HSA_DEVICE_TYPE_GPU) { ag->gpu = a; ag->ngpu++; }
    if (t == HSA_DEVICE_TYPE_CPU) { ag->cpu = a; ag->ncpu++; }
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t on_pool(hsa_amd_memory_pool_t p, void *data) {
    hsa_amd_segment_t seg;
    uint32_t flags = 0;
    bool alloc = false;
    hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
    hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
    hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc);
    if (seg == HSA_AMD_SEGMENT_GLOBAL && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && alloc) {
        *(hsa_amd_memory_pool_t *)data = p;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

static void test_hsa(void) {
    struct agents ag = {0};
    hsa_amd_memory_pool_t pool = {0};
    char name[64] = {0};
    size_t size = 0;
    void *p = NULL;
    CHECK(hsa_iterate_agents(on_agent, &ag) == HSA_STATUS_ERROR_NOT_INITIALIZED);
    CHECK(hsa_init() == HSA_STATUS_SUCCESS);
    CHECK(hsa_init() == HSA_STATUS_SUCCESS); /* refcounted */
    CHECK(hsa_iterate_agents(on_agent, &ag) == HSA_STATUS_SUCCESS);
    CHECK(ag.ngpu == 1 && ag.ncpu == 1);
    CHECK(hsa_agent_get_info(ag.gpu, HSA_AGENT_INFO_NAME, name) == HSA_STATUS_SUCCESS);
    CHECK(name[0] != 0);
    CHECK(hsa_amd_agent_iterate_memory_pools(ag.gpu, on_pool, &pool) == HSA_STATUS_INFO_BREAK);
    CHECK(pool.handle != 0);
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size) == HSA_STATUS_SUCCESS);
    CHECK(size >= (1ull << 28));
    CHECK(hsa_amd_memory_pool_allocate(pool, 1 << 20, 0, &p) == HSA_STATUS_SUCCESS);
    CHECK(p != NULL && ((uintptr_t)p % 4096) == 0);
    hsa_agent_t both[2] = {ag.gpu, ag.cpu};
    CHECK(hsa_amd_agents_allow_access(2, both, NULL, p) == HSA_STATUS_SUCCESS);
    hsa_agent_t bogus = {12345};
    CHECK(hsa_amd_agents_allow_access(1, &bogus, NULL, p) == HSA_STATUS_ERROR_INVALID_AGENT);

    /* HSA memory is real device memory for copies, though hipMalloc never saw it */
    unsigned char src[4096], dst[4096];
    for (int i = 0; i < 4096; i++) src[i] = (unsigned char)(i ^ 0x5c);
    OK(hipMemcpy((char *)p + 8192, src, sizeof src, hipMemcpyHostToDevice));
    memset(dst, 0, sizeof dst);
    OK(hipMemcpy(dst, (char *)p + 8192, sizeof dst, hipMemcpyDefault));
    CHECK(memcmp(src, dst, sizeof dst) == 0);
    hipPointerAttribute_t a;
    OK(hipPointerGetAttributes(&a, (char *)p + 8192));
    CHECK(a.memoryType == hipMemoryTypeDevice);
    EXPECT(hipMemcpy((char *)p + (1 << 20) - 8, src, 16, hipMemcpyHostToDevice), hipErrorInvalidValue);
    EXPECT(hipFree(p), hipErrorInvalidValue); /* not hipMalloc'ed */
    CHECK(hsa_amd_memory_pool_free(p) == HSA_STATUS_SUCCESS);
    CHECK(hsa_amd_memory_pool_free(p) != HSA_STATUS_SUCCESS);
    EXPECT(hipMemcpy(p, src, 16, hipMemcpyHostToDevice), hipErrorInvalidValue);
    CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS);
    CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS);
    CHECK(hsa_shut_down() == HSA_STATUS_ERROR_NOT_INITIALIZED);
    (void)hipGetLastError();
}

int main(void) {
    test_device();
    test_copies();
    test_pitched_and_async_alloc();
    test_host_and_attributes();
    test_streams_events();
    test_hsa();
    OK(hipDeviceReset());
    return finish("api");
}
