/*
 * hrr_cpu_texture.h — reading texture and surface objects in kernels for hrr's
 * CPU HIP runtime.
 *
 * On the CPU runtime a hipTextureObject_t (and a hipSurfaceObject_t) points at
 * an hrr_cpu_texture: the resource's first element, its extent in elements,
 * its row and slice pitch and its element size. A kernel receives the object
 * as an 8-byte by-value argument and reads through it with the helpers below:
 * point sampling at integer coordinates, clamped to the edge. Filtering,
 * normalised coordinates, border colours and read modes are not implemented.
 */
#ifndef HRR_CPU_TEXTURE_H
#define HRR_CPU_TEXTURE_H

#include <stdint.h>

typedef struct hrr_cpu_texture {
    const void *data;    /* the first element */
    uint64_t extent[3];  /* width, height, depth in elements */
    uint64_t pitch[2];   /* row and slice pitch in bytes */
    uint32_t element;    /* bytes per element */
    uint32_t resource;   /* hipResourceType of the resource */
} hrr_cpu_texture;

static inline int64_t hrr_tex_clamp(int64_t v, uint64_t n) {
    return v < 0 ? 0 : (v >= (int64_t)n ? (int64_t)n - 1 : v);
}

/* The element at (x, y, z), clamped to the edge. */
static inline const void *hrr_tex_at(uint64_t obj, int64_t x, int64_t y, int64_t z) {
    const hrr_cpu_texture *t = (const hrr_cpu_texture *)(uintptr_t)obj;
    x = hrr_tex_clamp(x, t->extent[0]);
    y = hrr_tex_clamp(y, t->extent[1]);
    z = hrr_tex_clamp(z, t->extent[2]);
    return (const char *)t->data + z * t->pitch[1] + y * t->pitch[0] + x * t->element;
}

/* tex2D<float>(obj, x, y) at integer coordinates. */
static inline float hrr_tex2d_f32(uint64_t obj, int64_t x, int64_t y) {
    return *(const float *)hrr_tex_at(obj, x, y, 0);
}

#endif /* HRR_CPU_TEXTURE_H */
