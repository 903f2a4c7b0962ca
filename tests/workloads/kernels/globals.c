/* Kernels of module_global.c: a `__device__` variable of the code object
 * (an exported data symbol of the CPU code object), read and written by
 * name, not through an argument.
 *   accumulate(float *out, const float *in, int n):
 *       g_acc += in; out = g_acc * g_scale
 * `g_acc` starts at 1.0 in the loaded module; `g_scale` is set by the host. */
#include "hrr_cpu_kernel.h"

#define N 256

__attribute__((visibility("default"))) float g_acc[N] = {
    [0 ... N - 1] = 1.0f,
};
__attribute__((visibility("default"))) float g_scale = 1.0f;

struct accumulate_args {
    float *out;
    const float *in;
    int n;
};

HRR_KERNEL(accumulate) {
    const struct accumulate_args *a = (const struct accumulate_args *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < (uint64_t)a->n && i < N) {
            g_acc[i] += a->in[i];
            a->out[i] = g_acc[i] * g_scale;
        }
    }
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"accumulate\",\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
