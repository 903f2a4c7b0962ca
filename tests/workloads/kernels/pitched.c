/* Kernels over pitched memory.
 * scale_rows(float *base, uint64 pitch_bytes, int width, int height, float k):
 *   row y (pitch_bytes apart), element x < width: base[y][x] = k * base[y][x] + y.
 * bump_symbol(): adds 1 to each element of the module global `table` (int[16])
 *   and sets `counter` to the sum. */
#include "hrr_cpu_kernel.h"

struct scale_rows_args {
    float *base;
    uint64_t pitch;
    int32_t width;
    int32_t height;
    float k;
};

HRR_KERNEL(scale_rows) {
    const struct scale_rows_args *a = (const struct scale_rows_args *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t x = hrr_global_id_x(l, tx), y = hrr_global_id_y(l, ty);
        if (x < (uint64_t)a->width && y < (uint64_t)a->height) {
            float *row = (float *)((char *)a->base + y * a->pitch);
            row[x] = a->k * row[x] + (float)y;
        }
    }
}

__attribute__((visibility("default"))) int table[16];
__attribute__((visibility("default"))) int counter;

HRR_KERNEL(bump_symbol) {
    (void)kernarg;
    if (l->block_idx.x != 0) return;
    int sum = 0;
    for (int i = 0; i < 16; i++) {
        table[i] += 1;
        sum += table[i];
    }
    counter = sum;
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"scale_rows\",\"kernarg_segment_size\":28,\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"by_value\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":20,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":24,\"size\":4,\"value_kind\":\"by_value\"}]},"
                    "{\"name\":\"bump_symbol\",\"kernarg_segment_size\":0,\"args\":[]}]}");
