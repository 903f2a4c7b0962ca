/* Array copies through the per-thread default stream forms, obtained as a
 * runtime built with `--default-stream per-thread` obtains them: by
 * cuGetProcAddress_v2 with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 * (the driver answers cuMemcpy3D with cuMemcpy3D_v2_ptds, …). A 2D float
 * array filled by cuMemcpy3D, read back to the host by cuMemcpy2D and by
 * cuMemcpy3DAsync on the per-thread stream (0), a 1D array written by
 * cuMemcpyHtoA and read by cuMemcpyAtoH and cuMemcpyAtoHAsync. */
#define _GNU_SOURCE
#include <stdint.h>
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
enum { HOST = 1, ARRAY = 3, FLOAT = 0x20, U8 = 0x01, PER_THREAD = 2 };

int cuArray3DCreate_v2(void **, const struct array3d_desc *);
int cuArrayDestroy(void *);
int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);

static void *lookup(const char *name) {
    void *f = NULL;
    if (cuGetProcAddress_v2(name, &f, 13000, PER_THREAD, NULL) || !f) {
        printf("lookup of %s failed\n", name);
        return NULL;
    }
    return f;
}

int main(void) {
    enum { W = 8, H = 4, N = W * H };
    float src[N], back[N], back3[N];
    for (int i = 0; i < N; i++) src[i] = 1.5f * (float)i + 2.0f;
    CHECK(cuInit(0));
    int (*copy3d)(const struct memcpy3d *) = lookup("cuMemcpy3D");
    int (*copy3d_async)(const struct memcpy3d *, void *) = lookup("cuMemcpy3DAsync");
    int (*copy2d)(const struct memcpy2d *) = lookup("cuMemcpy2D");
    int (*htoa)(void *, size_t, const void *, size_t) = lookup("cuMemcpyHtoA");
    int (*atoh)(void *, void *, size_t, size_t) = lookup("cuMemcpyAtoH");
    int (*atoh_async)(void *, void *, size_t, size_t, void *) = lookup("cuMemcpyAtoHAsync");
    if (!copy3d || !copy3d_async || !copy2d || !htoa || !atoh || !atoh_async) return 1;

    void *a2, *a1;
    struct array3d_desc d2 = {W, H, 0, FLOAT, 1, 0};
    CHECK(cuArray3DCreate_v2(&a2, &d2));
    struct array3d_desc d1 = {64, 0, 0, U8, 1, 0};
    CHECK(cuArray3DCreate_v2(&a1, &d1));

    struct memcpy3d up;
    memset(&up, 0, sizeof up);
    up.stype = HOST;
    up.shost = src;
    up.spitch = W * sizeof(float);
    up.sheight = H;
    up.dtype = ARRAY;
    up.darray = a2;
    up.width = W * sizeof(float);
    up.height = H;
    up.depth = 1;
    CHECK(copy3d(&up));

    struct memcpy2d down = {.stype = ARRAY, .sarray = a2, .dtype = HOST, .dhost = back,
                            .dpitch = W * sizeof(float), .width = W * sizeof(float), .height = H};
    CHECK(copy2d(&down));

    struct memcpy3d down3;
    memset(&down3, 0, sizeof down3);
    down3.stype = ARRAY;
    down3.sarray = a2;
    down3.dtype = HOST;
    down3.dhost = back3;
    down3.dpitch = W * sizeof(float);
    down3.dheight = H;
    down3.width = W * sizeof(float);
    down3.height = H;
    down3.depth = 1;
    CHECK(copy3d_async(&down3, NULL));

    unsigned char bytes[16], bytes_back[16], bytes_async[16];
    for (int i = 0; i < 16; i++) bytes[i] = (unsigned char)(5 * i + 3);
    CHECK(htoa(a1, 8, bytes, sizeof bytes));
    CHECK(atoh(bytes_back, a1, 8, sizeof bytes_back));
    CHECK(atoh_async(bytes_async, a1, 8, sizeof bytes_async, NULL));
    CHECK(cuStreamSynchronize(NULL));
    if (memcmp(back, src, sizeof src) || memcmp(back3, src, sizeof src) ||
        memcmp(bytes_back, bytes, sizeof bytes) || memcmp(bytes_async, bytes, sizeof bytes)) {
        printf("WRONG copies read back\n");
        return 1;
    }
    CHECK(cuArrayDestroy(a1));
    CHECK(cuArrayDestroy(a2));
    printf("driver_arrays_ptds: OK\n");
    return 0;
}
