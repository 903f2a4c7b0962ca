/* Kernels of the compiler-path workload (embedded as an offload bundle):
 *   vadd(const float *a, const float *b, float *c, int n): c = a + b
 *   scale(float *c, float k, int n):                      c *= k
 *   bump(int k): adds k to each element of the global `table` (int[16]) and
 *   sets the global `counter` to their sum (one block does it all) */
#include "hrr_cpu_kernel.h"

/* Kernarg layouts (the metadata below gives the same offsets). */
struct vadd_args {
    const float *a, *b;
    float *c;
    int n;
};
struct scale_args {
    float *c;
    float k;
    int n;
};

HRR_KERNEL(vadd) {
    const struct vadd_args *p = (const struct vadd_args *)kernarg;
    const float *a = p->a, *b = p->b;
    float *c = p->c;
    int n = p->n;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)n) c[i] = a[i] + b[i];
    }
}

HRR_KERNEL(scale) {
    const struct scale_args *p = (const struct scale_args *)kernarg;
    float *c = p->c;
    float k = p->k;
    int n = p->n;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)n) c[i] *= k;
    }
}

/* Module globals (`__device__ int table[16], counter;`): exported data. */
__attribute__((visibility("default"))) int table[16];
__attribute__((visibility("default"))) int counter;

HRR_KERNEL(bump) {
    int k = HRR_ARG(int, 0);
    if (l->block_idx.x != 0) return;
    int sum = 0;
    for (int i = 0; i < 16; i++) {
        table[i] += k;
        sum += table[i];
    }
    counter = sum;
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"vadd\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":24,\"size\":4,\"value_kind\":\"by_value\"}]},"
                    "{\"name\":\"scale\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":12,\"size\":4,\"value_kind\":\"by_value\"}]},"
                    "{\"name\":\"bump\",\"args\":["
                    "{\"offset\":0,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
