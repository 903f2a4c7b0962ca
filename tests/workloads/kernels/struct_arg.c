/* axpy_struct(struct axpy_params p, int n): p.y[i] = p.a * p.x[i] + p.y[i]
 * The struct is one by_value argument: its pointers are not global_buffer. */
#include "hrr_cpu_kernel.h"

struct axpy_params {
    const float *x;
    float *y;
    float a;
};

HRR_KERNEL(axpy_struct) {
    const struct axpy_params *p = (const struct axpy_params *)kernarg;
    int n = HRR_ARG(int, 24);
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)n) p->y[i] = p->a * p->x[i] + p->y[i];
    }
}

HRR_KERNEL_METADATA("{\"kernels\":[{\"name\":\"axpy_struct\",\"args\":["
                    "{\"offset\":0,\"size\":24,\"value_kind\":\"by_value\"},"
                    "{\"offset\":24,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
