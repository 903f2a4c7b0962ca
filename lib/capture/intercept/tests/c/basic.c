/* Module API, every copy direction, memsets, streams and events, a failed
 * call, hipGetProcAddress and HSA memory the recorder never saw allocated.
 * Usage: basic KERNELS.so
 * Prints the addresses it used (the test matches them against the archive). */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#define N 64

/* ROCm 6 API, absent from Debian's 5.2 headers. */
typedef hipError_t (*get_proc_address_t)(const char *symbol, void **pfn, int hipVersion,
                                         uint64_t flags, int *symbolStatus);
/* Looked up, not linked: the CPU runtime (like ROCm 5) does not define it;
 * under capture the interposer does. */
static hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                                    int *symbolStatus) {
    get_proc_address_t f = (get_proc_address_t)dlsym(RTLD_DEFAULT, "hipGetProcAddress");
    if (!f) return hipErrorNotSupported;
    return f(symbol, pfn, hipVersion, flags, symbolStatus);
}
/* hip_ext.h is C++ only (default arguments). */
extern hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                           uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem,
                                           hipStream_t stream, void **kernelParams, void **extra,
                                           hipEvent_t start, hipEvent_t stop, uint32_t flags);

static hsa_agent_t gpu;
static hsa_status_t find_gpu(hsa_agent_t a, void *data) {
    hsa_device_type_t t;
    hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t);
    if (t == HSA_DEVICE_TYPE_GPU) { gpu = a; *(int *)data = 1; return HSA_STATUS_INFO_BREAK; }
    return HSA_STATUS_SUCCESS;
}
static hsa_status_t find_pool(hsa_amd_memory_pool_t p, void *data) {
    uint32_t flags = 0;
    hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
    if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) {
        *(hsa_amd_memory_pool_t *)data = p;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: basic KERNELS.so\n"); return 2; }
    size_t len;
    void *img = read_file(argv[1], &len);
    hipModule_t m, m2;
    CHECK(hipModuleLoadData(&m, img));
    memset(img, 0, len); /* the recorder must have copied the image already */
    free(img);
    CHECK(hipModuleLoad(&m2, argv[1]));
    hipFunction_t fill, gather, poke;
    CHECK(hipModuleGetFunction(&fill, m, "fill"));
    CHECK(hipModuleGetFunction(&gather, m, "gather"));
    CHECK(hipModuleGetFunction(&poke, m2, "poke"));

    uint32_t *d, *d2, *pinned;
    CHECK(hipMalloc((void **)&d, N * 4));
    CHECK(hipMalloc((void **)&d2, N * 4));
    CHECK(hipHostMalloc((void **)&pinned, N * 4, 0));
    uint32_t host[N], out[N], h2[N];
    for (int i = 0; i < N; i++) host[i] = 3 * i + 1;

    /* 1: default H2D from pageable memory */
    CHECK(hipMemcpy(d, host, sizeof host, hipMemcpyDefault));
    /* 2: fill through kernelParams */
    uint32_t v = 100, n = N;
    void *kp[] = {&d, &v, &n};
    CHECK(hipModuleLaunchKernel(fill, 1, 1, 1, N, 1, 1, 0, NULL, kp, NULL));
    CHECK(hipDeviceSynchronize());
    /* 3: default D2H */
    CHECK(hipMemcpy(out, d, sizeof out, hipMemcpyDefault));
    for (int i = 0; i < N; i++) EXPECT(out[i] == 100u + i);

    /* 4: a struct with an embedded (interior) pointer, through `extra` */
    struct { uint32_t tag; const uint32_t *src; uint32_t n; } span = {7, d + 4, N - 4};
    char buf[32];
    memset(buf, 0, sizeof buf);
    memcpy(buf, &span, 24);
    memcpy(buf + 24, &d2, 8);
    size_t sz = sizeof buf;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                     HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(gather, 1, 1, 1, N, 1, 1, 0, NULL, NULL, extra));
    /* 5: a packed struct with an unaligned pointer, through hipExtModuleLaunchKernel */
    struct __attribute__((packed)) { uint8_t tag; uint32_t *p; } ref = {3, d2};
    uint32_t val = 0xabcdef;
    void *kp2[] = {&ref, &val};
    CHECK(hipExtModuleLaunchKernel(poke, 10, 1, 1, 4, 1, 1, 0, NULL, kp2, NULL, NULL, NULL, 0));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpyDtoH(out, d2, sizeof out));
    EXPECT(out[0] == (100u + 4) * 2 + 7 && out[3] == 0xabcdef);

    /* 6: async D2H on a stream, right behind a kernel on that stream */
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    uint32_t v2 = 1000;
    void *kp3[] = {&d, &v2, &n};
    CHECK(hipModuleLaunchKernel(fill, 1, 1, 1, N, 1, 1, 0, s, kp3, NULL));
    CHECK(hipMemcpyAsync(out, d, sizeof out, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    EXPECT(out[5] == 1005);

    /* 7: default D2D and H2H; pinned host memory is host */
    CHECK(hipMemcpy(d2, d, sizeof out, hipMemcpyDefault));
    CHECK(hipMemcpy(h2, host, sizeof h2, hipMemcpyDefault));
    for (int i = 0; i < N; i++) pinned[i] = 0x5a5a0000u + i;
    CHECK(hipMemcpy(d, pinned, N * 4, hipMemcpyDefault));
    CHECK(hipMemcpyHtoDAsync(d2, host, sizeof host, s));
    CHECK(hipMemcpyDtoHAsync(out, d2, sizeof out, s));
    CHECK(hipStreamSynchronize(s));

    /* 8: memory the recorder never saw allocated (an HSA pool), Default both ways */
    CHECK(hsa_init() == HSA_STATUS_SUCCESS ? hipSuccess : hipErrorUnknown);
    int found = 0;
    hsa_iterate_agents(find_gpu, &found);
    EXPECT(found);
    hsa_amd_memory_pool_t pool = {0};
    hsa_amd_agent_iterate_memory_pools(gpu, find_pool, &pool);
    void *hidden = NULL;
    EXPECT(hsa_amd_memory_pool_allocate(pool, 4096, 0, &hidden) == HSA_STATUS_SUCCESS);
    CHECK(hipMemcpy(hidden, host, 64, hipMemcpyDefault));
    CHECK(hipMemcpy(out, hidden, 64, hipMemcpyDefault));

    /* 9: memsets of each width */
    CHECK(hipMemsetD32(d, 0xdeadbeef, N));
    CHECK(hipMemsetD16Async(d, 0x1234, N, s));
    CHECK(hipMemset(d, 0xab, 16));

    /* 10: failed calls */
    void *huge = NULL;
    hipError_t e1 = hipMalloc(&huge, (size_t)1 << 62);
    hipError_t e2 = hipMemcpy(out, (void *)0x10, 64, hipMemcpyDeviceToHost);
    EXPECT(e1 != hipSuccess && e2 != hipSuccess);

    /* 11: through hipGetProcAddress */
    hipError_t (*pmalloc)(void **, size_t) = NULL;
    int st = -1;
    CHECK(hipGetProcAddress("hipMalloc", (void **)&pmalloc, 0, 0, &st));
    EXPECT(pmalloc != NULL && st == 0);
    void *q;
    CHECK(pmalloc(&q, 256));

    /* 12: events */
    hipEvent_t ev;
    CHECK(hipEventCreate(&ev));
    CHECK(hipEventRecord(ev, s));
    CHECK(hipEventSynchronize(ev));
    CHECK(hipStreamWaitEvent(s, ev, 0));
    CHECK(hipEventDestroy(ev));
    CHECK(hipStreamDestroy(s));

    printf("d=%p d2=%p pinned=%p hidden=%p q=%p host=%p out=%p\n", (void *)d, (void *)d2,
           (void *)pinned, hidden, q, (void *)host, (void *)out);
    printf("errors=%d,%d\n", (int)e1, (int)e2);
    CHECK(hipFree(q));
    CHECK(hipFree(d));
    CHECK(hipFree(d2));
    CHECK(hipHostFree(pinned));
    CHECK(hipModuleUnload(m));
    CHECK(hipModuleUnload(m2));
    printf("basic: OK\n");
    return 0;
}
