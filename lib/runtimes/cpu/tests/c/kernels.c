/* CPU kernels for the launch tests: gcc -shared -fPIC -I tests/workloads/include. */
#define _POSIX_C_SOURCE 199309L
#include "hrr_cpu_kernel.h"
#include <time.h>

/* saxpy(float *y, const float *x, float a, uint32_t n): y = a*x + y */
HRR_KERNEL(saxpy) {
    float *y = HRR_ARG(float *, 0);
    const float *x = HRR_ARG(const float *, 8);
    float a = HRR_ARG(float, 16);
    uint32_t n = HRR_ARG(uint32_t, 20);
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < n) y[i] = a * x[i] + y[i];
    }
}

/* scale_struct(struct pair p, const double *in): p.out[i] = in[i] * p.scale
 * A struct passed by value with a device pointer inside it. */
struct pair {
    double *out;
    double scale;
    int32_t count;
};
HRR_KERNEL(scale_struct) {
    struct pair p = HRR_ARG(struct pair, 0);
    const double *in = HRR_ARG(const double *, 24);
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)p.count) p.out[i] = in[i] * p.scale;
    }
}

/* block_sum(const uint32_t *in, uint32_t *out, uint32_t *dirty): per-block sum
 * through shared memory; flags shared memory that did not start zeroed. */
HRR_KERNEL(block_sum) {
    const uint32_t *in = HRR_ARG(const uint32_t *, 0);
    uint32_t *out = HRR_ARG(uint32_t *, 8);
    uint32_t *dirty = HRR_ARG(uint32_t *, 16);
    uint32_t *sh = (uint32_t *)l->shared;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        if (sh[tx] != 0) __atomic_store_n(dirty, 1, __ATOMIC_RELAXED);
        sh[tx] = in[hrr_global_id_x(l, tx)];
    }
    uint32_t s = 0;
    for (uint32_t t = 0; t < l->block_dim.x; t++) s += sh[t];
    out[l->block_idx.x] = s;
}

/* grid_index(uint32_t *out): every thread of a 3-D grid writes its linear id. */
HRR_KERNEL(grid_index) {
    uint32_t *out = HRR_ARG(uint32_t *, 0);
    uint64_t W = hrr_global_size_x(l), H = hrr_global_size_y(l);
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = (hrr_global_id_z(l, tz) * H + hrr_global_id_y(l, ty)) * W + hrr_global_id_x(l, tx);
        out[i] = (uint32_t)i;
    }
}

/* sleep_then_set(uint32_t ms, uint32_t *flag): block 0 sleeps, then sets *flag. */
HRR_KERNEL(sleep_then_set) {
    uint32_t ms = HRR_ARG(uint32_t, 0);
    uint32_t *flag = HRR_ARG(uint32_t *, 8);
    if (hrr_block_linear(l) == 0) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, 0);
        *flag = 1;
    }
}

HRR_KERNEL(empty) {
    (void)l;
    (void)kernarg;
}

HRR_KERNEL_METADATA(
    "{\"kernels\":["
    "{\"name\":\"saxpy\",\"symbol\":\"saxpy\",\"kernarg_segment_size\":24,\"args\":["
    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"},"
    "{\"offset\":20,\"size\":4,\"value_kind\":\"by_value\"}]},"
    "{\"name\":\"scale_struct\",\"kernarg_segment_size\":32,\"args\":["
    "{\"offset\":0,\"size\":24,\"value_kind\":\"by_value\"},"
    "{\"offset\":24,\"size\":8,\"value_kind\":\"global_buffer\"}]},"
    "{\"name\":\"block_sum\",\"args\":["
    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
    "{\"offset\":16,\"size\":8,\"value_kind\":\"global_buffer\"}]},"
    "{\"name\":\"grid_index\",\"args\":[{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"}]},"
    "{\"name\":\"sleep_then_set\",\"args\":["
    "{\"offset\":0,\"size\":4,\"value_kind\":\"by_value\"},"
    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"}]},"
    "{\"name\":\"empty\",\"args\":[]}"
    "]}");
