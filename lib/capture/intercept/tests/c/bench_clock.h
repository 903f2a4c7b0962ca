/* What the launch-rate benchmarks (launch_loop.c, driver_loop.c) share: the
 * clock they time rounds with and the order they sort rounds in. */
#ifndef HRR_BENCH_CLOCK_H
#define HRR_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
