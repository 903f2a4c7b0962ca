/* A workload that calls entry points the capture library forwards but does
 * not record: HIP's virtual memory management, an address range reserved
 * and given back twice (checked here). The rest is recorded and replays: a
 * plain copy round trip, checked by replay as usual. */
#include "hrr_workload.h"

#define RANGE (2u << 20)

int main(void) {
    static unsigned char plain[4096], plain_back[4096];
    for (int i = 0; i < 4096; i++) plain[i] = (unsigned char)(i ^ 0x5A);

    /* unrecorded: two reservations of device address space, freed */
    void *r1, *r2;
    CHECK(hipMemAddressReserve(&r1, RANGE, 0, NULL, 0));
    CHECK(hipMemAddressReserve(&r2, RANGE, 0, NULL, 0));
    EXPECT(r1 != NULL && r2 != NULL && r1 != r2, "two reservations");
    CHECK(hipMemAddressFree(r1, RANGE));
    CHECK(hipMemAddressFree(r2, RANGE));

    /* recorded */
    void *flat;
    CHECK(hipMalloc(&flat, sizeof plain));
    CHECK(hipMemcpy(flat, plain, sizeof plain, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(plain_back, flat, sizeof plain, hipMemcpyDeviceToHost));
    EXPECT(memcmp(plain, plain_back, sizeof plain) == 0, "flat round trip differs");
    CHECK(hipFree(flat));
    printf("unrecorded_vmm: OK\n");
    return 0;
}
