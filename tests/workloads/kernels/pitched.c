/* Kernels over pitched memory.
 * scale_rows(float *base, uint64 pitch_bytes, int width, int height, float k):
 *   row y (pitch_bytes apart), element x < width: base[y][x] = k * base[y][x] + y.
 */
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

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"scale_rows\",\"kernarg_segment_size\":28,\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"by_value\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":20,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":24,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
