/* Large-copy benchmark: COPIES host-to-device copies of MIB MiB, each of
 * fresh data (so every copy's blob is new), then one device-to-host copy.
 * Usage: h2d_copy [MIB] [COPIES]; prints the copy rate seen by the app. */
#include "common.h"

#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 64;
    int copies = argc > 2 ? atoi(argv[2]) : 8;
    size_t size = mib << 20;
    uint8_t *host = malloc(size);
    for (size_t i = 0; i < size; i++) host[i] = (uint8_t)(i * 7 + i / 4096);
    void *d;
    CHECK(hipMalloc(&d, size));
    double t = 0;
    for (int k = 0; k < copies; k++) {
        memcpy(host, &k, sizeof k); /* fresh data: a new blob every time */
        double t0 = now_s();
        CHECK(hipMemcpy(d, host, size, hipMemcpyHostToDevice));
        t += now_s() - t0;
    }
    double t0 = now_s();
    CHECK(hipMemcpy(host, d, size, hipMemcpyDeviceToHost));
    double d2h = now_s() - t0;
    printf("h2d_copy: %d x %zu MiB H2D at %.2f GB/s, D2H at %.2f GB/s\n", copies, mib,
           (double)size * copies / t / 1e9, (double)size / d2h / 1e9);
    CHECK(hipFree(d));
    free(host);
    return 0;
}
