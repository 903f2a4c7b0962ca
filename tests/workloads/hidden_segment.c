/* The seed's workload (ROCm HRR, Unit_HRR_Regions_MemcpyFirstTouchMaterialization):
 * 256 KiB from an HSA coarse-grained device pool, invisible to the HIP API and
 * never passed to a kernel. Its base goes to stdout as
 *   HRR_SEGMENT base=0x… size=262144
 * so `hrr-sidecar` can declare it; then the segment's first touch is a
 * captured H2D copy, followed by D2D into a hipMalloc buffer, a D2H back from
 * that buffer and a D2H straight from the segment. */
#include "hrr_workload.h"
#include "hsa_segment.h"

#define SEG_SIZE 262144

int main(void) {
    HSA_CHECK(hsa_init());
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));

    unsigned char *seg = hrr_hsa_alloc_hidden(SEG_SIZE);
    printf("HRR_SEGMENT base=%p size=%d\n", (void *)seg, SEG_SIZE);
    fflush(stdout);

    unsigned char *host = malloc(SEG_SIZE), *back = malloc(SEG_SIZE), *direct = malloc(SEG_SIZE);
    for (size_t i = 0; i < SEG_SIZE; i++) host[i] = (unsigned char)(i * 7u + 3u);
    host[0] = 0xa5;
    host[SEG_SIZE - 1] = 0x5a;
    memset(back, 0, SEG_SIZE);
    memset(direct, 0, SEG_SIZE);

    unsigned char *dbuf;
    CHECK(hipMalloc((void **)&dbuf, SEG_SIZE));
    CHECK(hipMemcpy(seg, host, SEG_SIZE, hipMemcpyHostToDevice));   /* first touch: H2D dst */
    CHECK(hipMemcpy(dbuf, seg, SEG_SIZE, hipMemcpyDeviceToDevice)); /* D2D src */
    CHECK(hipMemcpy(back, dbuf, SEG_SIZE, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(direct, seg, SEG_SIZE, hipMemcpyDeviceToHost)); /* D2H src */

    EXPECT(back[0] == 0xa5 && back[SEG_SIZE - 1] == 0x5a, "via hipMalloc: first %#x last %#x",
           back[0], back[SEG_SIZE - 1]);
    EXPECT(direct[0] == 0xa5 && direct[SEG_SIZE - 1] == 0x5a, "from segment: first %#x last %#x",
           direct[0], direct[SEG_SIZE - 1]);
    EXPECT(memcmp(back, host, SEG_SIZE) == 0, "D2D/D2H round trip differs");
    EXPECT(memcmp(direct, host, SEG_SIZE) == 0, "segment D2H differs");
    printf("hidden_segment: H2D -> segment -> D2D -> D2H ok (first %#x, last %#x)\n", back[0],
           back[SEG_SIZE - 1]);
    printf("hidden_segment: D2H from segment ok (first %#x, last %#x)\n", direct[0],
           direct[SEG_SIZE - 1]);

    CHECK(hipFree(dbuf));
    HSA_CHECK(hsa_amd_memory_pool_free(seg));
    HSA_CHECK(hsa_shut_down());
    free(host);
    free(back);
    free(direct);
    printf("hidden_segment: OK\n");
    return 0;
}
