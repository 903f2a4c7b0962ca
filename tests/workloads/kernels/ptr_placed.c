/* Kernels that reach device memory through pointers stored in device memory,
 * where replay's translation of kernel arguments cannot see them:
 *   gather(const float *const *table, float *out, int tables, int n):
 *       out[t*n + i] = (t + 1) * table[t][i]
 *   build_table(float **table, float *base, int tables, int stride):
 *       table[t] = base + t*stride   (a kernel writing device pointers) */
#include "hrr_cpu_kernel.h"

HRR_KERNEL(gather) {
    const float *const *table = HRR_ARG(const float *const *, 0);
    float *out = HRR_ARG(float *, 8);
    int tables = HRR_ARG(int, 16);
    int n = HRR_ARG(int, 20);
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i >= (uint64_t)n) continue;
        for (int t = 0; t < tables; t++) out[(uint64_t)t * n + i] = (float)(t + 1) * table[t][i];
    }
}

HRR_KERNEL(build_table) {
    float **table = HRR_ARG(float **, 0);
    float *base = HRR_ARG(float *, 8);
    int tables = HRR_ARG(int, 16);
    int stride = HRR_ARG(int, 20);
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t t = hrr_global_id_x(l, tx);
        if (t < (uint64_t)tables) table[t] = base + t * (uint64_t)stride;
    }
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"gather\",\"kernarg_segment_size\":24,\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":20,\"size\":4,\"value_kind\":\"by_value\"}]},"
                    "{\"name\":\"build_table\",\"kernarg_segment_size\":24,\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":20,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
