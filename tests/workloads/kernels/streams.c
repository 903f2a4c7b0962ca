/* scale_add(float *out, const float *in, float k, float add, int n): out = in*k + add */
#include "hrr_cpu_kernel.h"

struct scale_add_args {
    float *out;
    const float *in;
    float k, add;
    int n;
};

HRR_KERNEL(scale_add) {
    const struct scale_add_args *p = (const struct scale_add_args *)kernarg;
    float *out = p->out;
    const float *in = p->in;
    float k = p->k, add = p->add;
    int n = p->n;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)n) out[i] = in[i] * k + add;
    }
}

HRR_KERNEL_METADATA("{\"kernels\":[{\"name\":\"scale_add\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":20,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":24,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
