/* add(unsigned *p, unsigned v): p[i] += v;  mul(unsigned *p, unsigned v): p[i] *= v;
 * tagged(unsigned *p, unsigned v, uint64_t tag): add, with a by-value word it ignores
 * (one element per thread; used by launch_repeat.c) */
#include "hrr_cpu_kernel.h"

struct repeat_args {
    unsigned *p;
    unsigned v;
};

HRR_KERNEL(add) {
    const struct repeat_args *a = (const struct repeat_args *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) { a->p[hrr_global_id_x(l, tx)] += a->v; }
}

HRR_KERNEL(mul) {
    const struct repeat_args *a = (const struct repeat_args *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) { a->p[hrr_global_id_x(l, tx)] *= a->v; }
}

struct tagged_args {
    unsigned *p;
    unsigned v;
    uint64_t tag;
};

HRR_KERNEL(tagged) {
    const struct tagged_args *a = (const struct tagged_args *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) { a->p[hrr_global_id_x(l, tx)] += a->v; }
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"add\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":4,\"value_kind\":\"by_value\"}]},"
                    "{\"name\":\"mul\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":4,\"value_kind\":\"by_value\"}]},"
                    "{\"name\":\"tagged\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":16,\"size\":8,\"value_kind\":\"by_value\"}]}]}");
