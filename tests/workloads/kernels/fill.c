/* fill(float *dst, float v, int n): dst[i] = v
 * fill_struct(struct fill_params p): p.dst[i] = p.value (pointer inside a by-value struct) */
#include "hrr_cpu_kernel.h"

struct fill_params {
    float *dst;
    float value;
    int n;
};

HRR_KERNEL(fill) {
    /* fill's kernarg has the same layout as struct fill_params */
    const struct fill_params *p = (const struct fill_params *)kernarg;
    float *dst = p->dst;
    float v = p->value;
    int n = p->n;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)n) dst[i] = v;
    }
}

HRR_KERNEL(fill_struct) {
    const struct fill_params *p = (const struct fill_params *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)p->n) p->dst[i] = p->value;
    }
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"fill\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":12,\"size\":4,\"value_kind\":\"by_value\"}]},"
                    "{\"name\":\"fill_struct\",\"args\":["
                    "{\"offset\":0,\"size\":16,\"value_kind\":\"by_value\"}]}]}");
