/* saxpy(float a, const float *x, float *y, int n): y = a*x + y */
#include "hrr_cpu_kernel.h"

struct saxpy_args {
    float a;
    const float *x;
    float *y;
    int n;
};

HRR_KERNEL(saxpy) {
    const struct saxpy_args *a = (const struct saxpy_args *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)a->n) a->y[i] = a->a * a->x[i] + a->y[i];
    }
}

HRR_KERNEL_METADATA("{\"kernels\":[{\"name\":\"saxpy\",\"kernarg_segment_size\":28,\"args\":["
                    "{\"offset\":0,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":24,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
