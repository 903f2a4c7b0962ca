/* Kernels of vmm_table.c, on memory mapped into a virtual-memory reservation:
 *   build_table(float **table, float *a, float *b): table[0] = a, table[1] = b
 *   combine(float *out, float *const *table, int n):
 *       out = table[0] + 10 * table[1], then table[0] += 1
 * combine reads its inputs only through the stored table, and changes one of
 * them, so each launch depends on the ones before it. */
#include "hrr_cpu_kernel.h"

struct build_args {
    float **table;
    float *a, *b;
};

HRR_KERNEL(build_table) {
    const struct build_args *a = (const struct build_args *)kernarg;
    a->table[0] = a->a;
    a->table[1] = a->b;
}

struct combine_args {
    float *out;
    float *const *table;
    int n;
};

HRR_KERNEL(combine) {
    const struct combine_args *a = (const struct combine_args *)kernarg;
    float *x = a->table[0];
    const float *y = a->table[1];
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)a->n) {
            a->out[i] = x[i] + 10.0f * y[i];
            x[i] += 1.0f;
        }
    }
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"build_table\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":8,\"value_kind\":\"global_buffer\"}]},"
                    "{\"name\":\"combine\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
