/* iota(unsigned *p): p[i] = 3i + 1, the same every run;
 * stamp(uint64_t *p): p[i] = CLOCK_MONOTONIC in ns as thread i runs, different
 * every run, captured or replayed (used by nondeterministic.c) */
#include <time.h>

#include "hrr_cpu_kernel.h"

HRR_KERNEL(iota) {
    unsigned *p = *(unsigned *const *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        p[i] = 3u * (unsigned)i + 1u;
    }
}

HRR_KERNEL(stamp) {
    uint64_t *p = *(uint64_t *const *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        p[hrr_global_id_x(l, tx)] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"iota\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"}]},"
                    "{\"name\":\"stamp\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"}]}]}");
