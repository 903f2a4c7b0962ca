/* Kernels of ptr_table.c: a later kernel reads, through a table of pointers
 * an earlier kernel stored in device memory, a buffer another kernel wrote.
 *   twice(float *dst, const float *src, int n):  dst = 2 * src
 *   build_table(float **table, float *a, float *b): table[0] = a, table[1] = b
 *   gather(float *out, float *const *table, int n): out = table[0] + 10 * table[1] */
#include "hrr_cpu_kernel.h"

struct twice_args {
    float *dst;
    const float *src;
    int n;
};

HRR_KERNEL(twice) {
    const struct twice_args *a = (const struct twice_args *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)a->n) a->dst[i] = 2.0f * a->src[i];
    }
}

struct build_args {
    float **table;
    float *a, *b;
};

HRR_KERNEL(build_table) {
    const struct build_args *a = (const struct build_args *)kernarg;
    a->table[0] = a->a;
    a->table[1] = a->b;
}

struct gather_args {
    float *out;
    float *const *table;
    int n;
};

HRR_KERNEL(gather) {
    const struct gather_args *a = (const struct gather_args *)kernarg;
    const float *x = a->table[0], *y = a->table[1];
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)a->n) a->out[i] = x[i] + 10.0f * y[i];
    }
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"twice\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"}]},"
                    "{\"name\":\"build_table\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":8,\"value_kind\":\"global_buffer\"}]},"
                    "{\"name\":\"gather\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
