/* A workload that calls an entry point the capture library forwards but
 * does not record: two placement hints (hipMemAdvise). The rest is
 * recorded and replays: a plain copy round trip, checked by replay as
 * usual. */
#include "hrr_workload.h"

int main(void) {
    static unsigned char plain[4096], plain_back[4096];
    for (int i = 0; i < 4096; i++) plain[i] = (unsigned char)(i ^ 0x5A);

    /* recorded */
    void *flat;
    CHECK(hipMalloc(&flat, sizeof plain));
    /* unrecorded: two placement hints */
    CHECK(hipMemAdvise(flat, sizeof plain, hipMemAdviseSetReadMostly, 0));
    CHECK(hipMemAdvise(flat, sizeof plain, hipMemAdviseUnsetReadMostly, 0));
    CHECK(hipMemcpy(flat, plain, sizeof plain, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(plain_back, flat, sizeof plain, hipMemcpyDeviceToHost));
    EXPECT(memcmp(plain, plain_back, sizeof plain) == 0, "flat round trip differs");
    CHECK(hipFree(flat));
    printf("unrecorded_host_nodes: OK\n");
    return 0;
}
