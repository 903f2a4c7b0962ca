/* vmul(float *c, const float *a, const float *b, int n): c = a * b */
#include "hrr_cpu_kernel.h"

struct vmul_args {
    float *c;
    const float *a, *b;
    int n;
};

HRR_KERNEL(vmul) {
    const struct vmul_args *p = (const struct vmul_args *)kernarg;
    float *c = p->c;
    const float *a = p->a, *b = p->b;
    int n = p->n;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)n) c[i] = a[i] * b[i];
    }
}

HRR_KERNEL_METADATA("{\"kernels\":[{\"name\":\"vmul\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":24,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
