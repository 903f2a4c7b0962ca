/* A plane of a multi-planar array (linked with -lcuda): an 8×4 NV12 array,
 * its chroma plane (4×2 pairs of bytes) and luma plane (8×4 bytes) looked
 * up by cuArrayGetPlane, each filled from host rows by cuMemcpy2D, a 4-byte
 * window of the chroma plane's second row copied back and checked. */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

struct array3d_desc { size_t w, h, d; int format; unsigned channels, flags; };
struct memcpy2d {
    size_t sx, sy;
    unsigned stype;
    const void *shost;
    CUdeviceptr sdev;
    void *sarray;
    size_t spitch;
    size_t dx, dy;
    unsigned dtype;
    void *dhost;
    CUdeviceptr ddev;
    void *darray;
    size_t dpitch;
    size_t width, height;
};
enum { HOST = 1, ARRAY = 3 };

int cuArray3DCreate_v2(void **, const struct array3d_desc *);
int cuArrayGetPlane(void **, void *, unsigned);
int cuArrayDestroy(void *);
int cuMemcpy2D_v2(const struct memcpy2d *);

static struct memcpy2d up(void *plane, const void *src, size_t width, size_t height) {
    struct memcpy2d c;
    memset(&c, 0, sizeof c);
    c.stype = HOST, c.shost = src, c.spitch = width;
    c.dtype = ARRAY, c.darray = plane;
    c.width = width, c.height = height;
    return c;
}

int main(void) {
    unsigned char luma[32], chroma[16], back[4];
    for (int i = 0; i < 32; i++) luma[i] = (unsigned char)i;
    for (int i = 0; i < 16; i++) chroma[i] = (unsigned char)(100 + i);
    void *a, *y, *uv;
    CHECK(cuInit(0));
    struct array3d_desc d = {8, 4, 0, 0xb0, 3, 0};
    CHECK(cuArray3DCreate_v2(&a, &d));
    CHECK(cuArrayGetPlane(&uv, a, 1));
    CHECK(cuArrayGetPlane(&y, a, 0));
    if (cuArrayGetPlane(&y, a, 2) == 0) {
        printf("WRONG: a third plane\n");
        return 1;
    }
    printf("a=%p y=%p uv=%p\n", a, y, uv);
    struct memcpy2d c = up(y, luma, 8, 4);
    CHECK(cuMemcpy2D_v2(&c));
    c = up(uv, chroma, 8, 2);
    CHECK(cuMemcpy2D_v2(&c));
    memset(&c, 0, sizeof c);
    c.stype = ARRAY, c.sarray = uv, c.sx = 2, c.sy = 1;
    c.dtype = HOST, c.dhost = back, c.dpitch = 4;
    c.width = 4, c.height = 1;
    CHECK(cuMemcpy2D_v2(&c));
    for (int i = 0; i < 4; i++)
        if (back[i] != chroma[8 + 2 + i]) {
            printf("WRONG: [%d] = %d\n", i, back[i]);
            return 1;
        }
    CHECK(cuArrayDestroy(a));
    printf("driver_planes: OK\n");
    return 0;
}
