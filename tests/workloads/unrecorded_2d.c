/* A workload that calls an entry point the capture library forwards but does
 * not record: hipMemcpy2D, twice (a pitched upload into one buffer and the
 * download of it, checked here). The rest is recorded and replays: a plain
 * copy round trip through a second buffer, checked by replay as usual. */
#include "hrr_workload.h"

#define W 40
#define H 16
#define PITCH 64

int main(void) {
    static unsigned char src[W * H], back[W * H], plain[4096], plain_back[4096];
    for (int i = 0; i < W * H; i++) src[i] = (unsigned char)(i * 13 + 1);
    for (int i = 0; i < 4096; i++) plain[i] = (unsigned char)(i ^ 0x5A);

    void *pitched, *flat;
    CHECK(hipMalloc(&pitched, PITCH * H));
    CHECK(hipMalloc(&flat, sizeof plain));

    /* unrecorded: W bytes per row, rows PITCH apart on the device */
    CHECK(hipMemcpy2D(pitched, PITCH, src, W, W, H, hipMemcpyHostToDevice));
    CHECK(hipMemcpy2D(back, W, pitched, PITCH, W, H, hipMemcpyDeviceToHost));
    EXPECT(memcmp(src, back, sizeof src) == 0, "pitched round trip differs");

    /* recorded */
    CHECK(hipMemcpy(flat, plain, sizeof plain, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(plain_back, flat, sizeof plain, hipMemcpyDeviceToHost));
    EXPECT(memcmp(plain, plain_back, sizeof plain) == 0, "flat round trip differs");

    CHECK(hipFree(pitched));
    CHECK(hipFree(flat));
    printf("unrecorded_2d: OK\n");
    return 0;
}
