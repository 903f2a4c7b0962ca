/* Launch-rate benchmark through the driver API (the layer hrr records CUDA
 * at): LAUNCHES cuLaunchKernel of the stand-in driver's `iota` kernel with
 * n = 1, each followed by touching FOOTPRINT KiB of memory, as a real
 * driver's launch path evicts the caller's data from the core's caches.
 * Usage: driver_loop [LAUNCHES] [FOOTPRINT_KIB]
 * Prints the per-launch time (ns), median of 10 rounds. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "stand_in_cuda.h"

int main(int argc, char **argv) {
    long launches = argc > 1 ? atol(argv[1]) : 100000;
    size_t footprint = (argc > 2 ? (size_t)atol(argv[2]) : 0) * 1024;
    volatile uint64_t *junk = footprint ? calloc(1, footprint) : NULL;
    CUdeviceptr d;
    CHECK(cuInit(0));
    CHECK(cuMemAlloc_v2(&d, 4096));
    void *m, *f;
    CHECK(cuModuleLoadData(&m, IOTA_PTX));
    CHECK(cuModuleGetFunction(&f, m, "iota"));
    int n = 1;
    void *params[] = {&d, &n};
    double rounds[10];
    for (int r = 0; r < 10; r++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < launches / 10; i++) {
            CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
            for (size_t o = 0; o < footprint / 8; o += 8) junk[o]++;
        }
        rounds[r] = (double)(now_ns() - t0) / (double)(launches / 10);
    }
    qsort(rounds, 10, sizeof rounds[0], cmp);
    printf("driver_loop: %ld launches, %.1f ns/launch (median of 10 rounds; min %.1f, max %.1f)\n",
           launches, (rounds[4] + rounds[5]) / 2, rounds[0], rounds[9]);
    CHECK(cuMemFree_v2(d));
    return 0;
}
