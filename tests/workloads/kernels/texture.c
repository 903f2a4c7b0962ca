/* A kernel reading a 2D float texture object it receives as an argument.
 * tex_scale(float *out, hipTextureObject_t tex, int width, int height):
 *   out[y * width + x] = 2 * tex2D(tex, x, y) + 1.
 */
#include "hrr_cpu_kernel.h"
#include "hrr_cpu_texture.h"

struct tex_scale_args {
    float *out;
    uint64_t tex;
    int32_t width;
    int32_t height;
};

HRR_KERNEL(tex_scale) {
    const struct tex_scale_args *a = (const struct tex_scale_args *)kernarg;
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t x = hrr_global_id_x(l, tx), y = hrr_global_id_y(l, ty);
        if (x < (uint64_t)a->width && y < (uint64_t)a->height)
            a->out[y * a->width + x] = 2.0f * hrr_tex2d_f32(a->tex, x, y) + 1.0f;
    }
}

HRR_KERNEL_METADATA("{\"kernels\":["
                    "{\"name\":\"tex_scale\",\"kernarg_segment_size\":24,\"args\":["
                    "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
                    "{\"offset\":8,\"size\":8,\"value_kind\":\"by_value\"},"
                    "{\"offset\":16,\"size\":4,\"value_kind\":\"by_value\"},"
                    "{\"offset\":20,\"size\":4,\"value_kind\":\"by_value\"}]}]}");
