/* Peer copies on one device: device 0 to device 0, synchronous and on a
 * stream, and the peer queries (a device is not its own peer: enabling
 * access to itself fails, as on ROCm and CUDA). */
#include "hrr_workload.h"

#define N 8192

int main(void) {
    CHECK(hipInit(0));
    int can = -1;
    CHECK(hipDeviceCanAccessPeer(&can, 0, 0));
    EXPECT(can == 0, "can access itself: %d", can);
    EXPECT(hipDeviceEnablePeerAccess(0, 0) == hipErrorInvalidDevice, "enable to itself");
    static unsigned char in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 7 + 3);
    void *a, *b, *c;
    CHECK(hipMalloc(&a, N));
    CHECK(hipMalloc(&b, N));
    CHECK(hipMalloc(&c, N));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipMemcpy(a, in, N, hipMemcpyHostToDevice));
    CHECK(hipMemcpyPeer(b, 0, a, 0, N));
    CHECK(hipMemcpyPeerAsync(c, 0, b, 0, N / 2, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(out, c, N / 2, hipMemcpyDeviceToHost));
    EXPECT(memcmp(in, out, N / 2) == 0, "peer copies differ");
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipFree(c));
    printf("peer_copies: OK\n");
    return 0;
}
