/* Variants of the seed's scenario as real applications (the seed's scenarios
 * (c), (d), (e)); argv[1] picks one:
 *
 *   hostdst  (c) a D2H whose *host* destination is reported as a segment
 *                (`HRR_SEGMENT base=<host buffer>`): replay must not
 *                materialise anything for a host operand.
 *   d2d      (d) two hidden HSA segments: a memset is the first touch of one,
 *                a D2D *source* the first touch of the other, then D2D
 *                hidden -> hidden and D2H from both.
 *   kernel   (e) two hidden HSA segments first touched by kernels: one through
 *                a pointer argument, one through a pointer embedded in a
 *                by-value struct argument; D2H from both.
 */
#include "hrr_workload.h"
#include "hsa_segment.h"

#define SEG (64 * 1024)

static void report(const void *base, size_t size) {
    printf("HRR_SEGMENT base=%p size=%zu\n", base, size);
    fflush(stdout);
}

static int hostdst(void) {
    CHECK(hipInit(0));
    unsigned char *host = aligned_alloc(4096, SEG);
    unsigned char src[SEG];
    for (int i = 0; i < SEG; i++) src[i] = (unsigned char)(i ^ 0x33);
    memset(host, 0, SEG);
    report(host, SEG); /* a host buffer, declared as a segment on purpose */
    unsigned char *d;
    CHECK(hipMalloc((void **)&d, SEG));
    CHECK(hipMemcpy(d, src, SEG, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(host, d, SEG, hipMemcpyDeviceToHost)); /* host dst inside the "segment" */
    EXPECT(memcmp(host, src, SEG) == 0, "D2H into host buffer differs");
    printf("seed_variants hostdst: D2H into a host buffer declared as a segment ok\n");
    CHECK(hipFree(d));
    free(host);
    return 0;
}

static int d2d(void) {
    HSA_CHECK(hsa_init());
    CHECK(hipInit(0));
    unsigned char *a = hrr_hsa_alloc_hidden(SEG); /* first touch: D2D source */
    unsigned char *b = hrr_hsa_alloc_hidden(SEG); /* first touch: memset */
    report(a, SEG);
    report(b, SEG);
    unsigned char *d;
    CHECK(hipMalloc((void **)&d, SEG));
    CHECK(hipMemset(d, 0xee, SEG));
    CHECK(hipMemset(b + 4096, 0x3c, SEG - 8192));             /* memset dst, interior */
    CHECK(hipMemcpy(d, a, SEG, hipMemcpyDeviceToDevice));     /* D2D hidden src */
    CHECK(hipMemcpy(a + 100, b + 4096, 1000, hipMemcpyDeviceToDevice)); /* hidden -> hidden */
    static unsigned char ha[SEG], hb[SEG], hd[SEG];
    CHECK(hipMemcpy(hd, d, SEG, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(ha, a, SEG, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(hb, b, SEG, hipMemcpyDeviceToHost));
    /* HSA pool memory is not promised to be zero; what a replay must
     * reproduce is what the copies did, so check relations, not zeros. */
    for (int i = 0; i < 1000; i++) EXPECT(ha[100 + i] == 0x3c, "a[%d] = %#x", 100 + i, ha[100 + i]);
    for (int i = 4096; i < SEG - 4096; i++) EXPECT(hb[i] == 0x3c, "b[%d] = %#x", i, hb[i]);
    EXPECT(memcmp(hd, ha, 100) == 0, "D2D from hidden a differs");
    printf("seed_variants d2d: memset into hidden b, D2D from hidden a, D2D b -> a ok\n");
    CHECK(hipFree(d));
    HSA_CHECK(hsa_amd_memory_pool_free(a));
    HSA_CHECK(hsa_amd_memory_pool_free(b));
    HSA_CHECK(hsa_shut_down());
    return 0;
}

struct fill_params {
    float *dst;
    float value;
    int n;
};

static int kernel(void) {
    HSA_CHECK(hsa_init());
    CHECK(hipInit(0));
    float *a = hrr_hsa_alloc_hidden(SEG); /* first touch: kernel pointer argument */
    float *b = hrr_hsa_alloc_hidden(SEG); /* first touch: pointer inside a struct argument */
    report(a, SEG);
    report(b, SEG);
    hipModule_t mod = hrr_load_module_data("fill.so");
    hipFunction_t fill, fill_struct;
    CHECK(hipModuleGetFunction(&fill, mod, "fill"));
    CHECK(hipModuleGetFunction(&fill_struct, mod, "fill_struct"));
    const int n = SEG / sizeof(float);
    float va = 1.5f;
    int na = n;
    void *pa[] = {&a, &va, &na};
    CHECK(hipModuleLaunchKernel(fill, n / 256, 1, 1, 256, 1, 1, 0, NULL, pa, NULL));
    struct fill_params p = {b + 16, -2.25f, n - 32}; /* interior pointer, in a struct */
    void *pb[] = {&p};
    CHECK(hipModuleLaunchKernel(fill_struct, n / 256, 1, 1, 256, 1, 1, 0, NULL, pb, NULL));
    CHECK(hipDeviceSynchronize());
    static float ha[SEG / sizeof(float)], hb[SEG / sizeof(float)];
    CHECK(hipMemcpy(ha, a, SEG, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(hb + 16, b + 16, (n - 32) * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(ha[i] == 1.5f, "a[%d] = %g", i, ha[i]);
    for (int i = 16; i < n - 16; i++) EXPECT(hb[i] == -2.25f, "b[%d] = %g", i, hb[i]);
    printf("seed_variants kernel: pointer arg and struct-embedded pointer into hidden segments ok\n");
    CHECK(hipModuleUnload(mod));
    HSA_CHECK(hsa_amd_memory_pool_free(a));
    HSA_CHECK(hsa_amd_memory_pool_free(b));
    HSA_CHECK(hsa_shut_down());
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    int rc;
    if (!strcmp(mode, "hostdst")) rc = hostdst();
    else if (!strcmp(mode, "d2d")) rc = d2d();
    else if (!strcmp(mode, "kernel")) rc = kernel();
    else {
        fprintf(stderr, "usage: seed_variants hostdst|d2d|kernel\n");
        return 2;
    }
    if (rc == 0) printf("seed_variants %s: OK\n", mode);
    return rc;
}
