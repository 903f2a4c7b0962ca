/* Mipmapped arrays at the driver layer (linked with -lcuda): 8×6 floats in
 * 3 levels; level 1 (4×3) looked up, filled from the host by cuMemcpy3D
 * and a window of it read back; a texture object over the mipmapped array;
 * everything destroyed. */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

struct array3d_desc { size_t w, h, d; int format; unsigned channels, flags; };
/* CUDA_RESOURCE_DESC (144 bytes) and CUDA_TEXTURE_DESC (104). */
struct res_desc { int type; void *handle; char rest[120]; unsigned flags; };
struct tex_desc { int address[3], filter; unsigned flags, aniso; int mip_filter; float f[7]; int reserved[12]; };
enum { HOST = 1, ARRAY = 3 };

int cuMipmappedArrayCreate(void **, const struct array3d_desc *, unsigned);
int cuMipmappedArrayGetLevel(void **, void *, unsigned);
int cuMipmappedArrayDestroy(void *);
int cuMemcpy3D_v2(const struct memcpy3d *);
int cuTexObjectCreate(unsigned long long *, const struct res_desc *, const struct tex_desc *, const void *);
int cuTexObjectDestroy(unsigned long long);

int main(void) {
    float level1[12], back[2];
    for (int i = 0; i < 12; i++) level1[i] = 0.25f * (float)i;
    void *m, *l1;
    CHECK(cuInit(0));
    struct array3d_desc d = {8, 6, 0, 0x20, 1, 0};
    CHECK(cuMipmappedArrayCreate(&m, &d, 3));
    CHECK(cuMipmappedArrayGetLevel(&l1, m, 1));
    printf("m=%p l1=%p\n", m, l1);
    struct memcpy3d c;
    memset(&c, 0, sizeof c);
    c.stype = HOST, c.shost = level1, c.spitch = 4 * sizeof(float), c.sheight = 3;
    c.dtype = ARRAY, c.darray = l1;
    c.width = 4 * sizeof(float), c.height = 3, c.depth = 1;
    CHECK(cuMemcpy3D_v2(&c));
    memset(&c, 0, sizeof c);
    c.stype = ARRAY, c.sarray = l1, c.sx = 2 * sizeof(float), c.sy = 2;
    c.dtype = HOST, c.dhost = back, c.dpitch = sizeof back, c.dheight = 1;
    c.width = sizeof back, c.height = 1, c.depth = 1;
    CHECK(cuMemcpy3D_v2(&c));
    if (back[0] != level1[10] || back[1] != level1[11]) {
        printf("WRONG: %g %g\n", back[0], back[1]);
        return 1;
    }
    struct res_desc res;
    memset(&res, 0, sizeof res);
    res.type = 1; /* CU_RESOURCE_TYPE_MIPMAPPED_ARRAY */
    res.handle = m;
    struct tex_desc td;
    memset(&td, 0, sizeof td);
    unsigned long long tex;
    CHECK(cuTexObjectCreate(&tex, &res, &td, NULL));
    CHECK(cuTexObjectDestroy(tex));
    CHECK(cuMipmappedArrayDestroy(m));
    printf("driver_mipmaps: OK\n");
    return 0;
}
