/* Arrays and texture objects at the driver layer, linked with -lcuda: a
 * 2D float array filled by cuMemcpy3D, copied to device memory and back to
 * the host by cuMemcpy2D, a 1D array written and read by cuMemcpyHtoA/AtoH,
 * a texture object over the 2D array (cuTexObjectCreate looked up through
 * cuGetProcAddress, as the runtime does) passed by value to the stand-in's
 * `sample` kernel, a surface object, a descriptor query, and every handle
 * destroyed. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

/* CUDA_ARRAY_DESCRIPTOR, CUDA_ARRAY3D_DESCRIPTOR, CUDA_MEMCPY2D. */
struct array_desc { size_t w, h; int format; unsigned channels; };
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
/* CUDA_RESOURCE_DESC (144 bytes) and CUDA_TEXTURE_DESC (104). */
struct res_desc { int type; void *array; char rest[120]; unsigned flags; };
struct tex_desc { int address[3], filter; unsigned flags, aniso; int mip_filter; float f[7]; int reserved[12]; };
enum { HOST = 1, DEVICE = 2, ARRAY = 3, FLOAT = 0x20, U8 = 0x01 };

int cuArrayCreate_v2(void **, const struct array_desc *);
int cuArray3DCreate_v2(void **, const struct array3d_desc *);
int cuArrayDestroy(void *);
int cuMemcpy2D_v2(const struct memcpy2d *);
int cuMemcpy3D_v2(const struct memcpy3d *);
int cuMemcpyHtoA_v2(void *, size_t, const void *, size_t);
int cuMemcpyAtoH_v2(void *, void *, size_t, size_t);
int cuTexObjectDestroy(unsigned long long);
int cuSurfObjectCreate(unsigned long long *, const struct res_desc *);
int cuSurfObjectDestroy(unsigned long long);
int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);

#define SAMPLE_PTX                                                                                 \
    ".version 8.0\n.target sm_90\n.address_size 64\n"                                              \
    ".visible .entry sample(.param .u64 p0, .param .u64 p1, .param .u32 p2)\n{\n    ret;\n}\n"

int main(void) {
    enum { W = 8, H = 4, N = W * H };
    float src[N], back[N], out[N];
    for (int i = 0; i < N; i++) src[i] = 0.5f * (float)i - 3.0f;
    CHECK(cuInit(0));

    void *a2, *a1;
    struct array3d_desc d3 = {W, H, 0, FLOAT, 1, 0};
    CHECK(cuArray3DCreate_v2(&a2, &d3));
    struct array_desc d1 = {16, 0, U8, 4};
    CHECK(cuArrayCreate_v2(&a1, &d1));

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
    CHECK(cuMemcpy3D_v2(&up));

    CUdeviceptr lin, dout;
    CHECK(cuMemAlloc_v2(&lin, sizeof src));
    CHECK(cuMemAlloc_v2(&dout, sizeof out));
    struct memcpy2d a2d = {.stype = ARRAY, .sarray = a2, .dtype = DEVICE, .ddev = lin,
                           .dpitch = W * sizeof(float), .width = W * sizeof(float), .height = H};
    CHECK(cuMemcpy2D_v2(&a2d));

    unsigned char bytes[32], bytes_back[32];
    for (int i = 0; i < 32; i++) bytes[i] = (unsigned char)(7 * i + 1);
    CHECK(cuMemcpyHtoA_v2(a1, 4, bytes, sizeof bytes));
    CHECK(cuMemcpyAtoH_v2(bytes_back, a1, 4, sizeof bytes_back));
    if (memcmp(bytes, bytes_back, sizeof bytes)) {
        printf("WRONG 1D array round trip\n");
        return 1;
    }

    int (*tex_create)(unsigned long long *, const struct res_desc *, const struct tex_desc *,
                      const void *);
    CHECK(cuGetProcAddress_v2("cuTexObjectCreate", (void **)&tex_create, 13000, 0, NULL));
    struct res_desc res;
    memset(&res, 0, sizeof res);
    res.type = 0;
    res.array = a2;
    struct tex_desc td;
    memset(&td, 0, sizeof td);
    td.address[0] = td.address[1] = 1; /* clamp */
    unsigned long long tex;
    CHECK(tex_create(&tex, &res, &td, NULL));

    void *m, *f;
    CHECK(cuModuleLoadData(&m, SAMPLE_PTX));
    CHECK(cuModuleGetFunction(&f, m, "sample"));
    int n = N;
    void *params[] = {&tex, &dout, &n};
    CHECK(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
    CHECK(cuMemcpyDtoH_v2(out, dout, sizeof out));

    struct memcpy2d down = {.stype = ARRAY, .sarray = a2, .dtype = HOST, .dhost = back,
                            .dpitch = W * sizeof(float), .width = W * sizeof(float), .height = H};
    CHECK(cuMemcpy2D_v2(&down));
    if (memcmp(out, src, sizeof src) || memcmp(back, src, sizeof src)) {
        printf("WRONG texture or array read back\n");
        return 1;
    }

    int (*get_desc)(struct array_desc *, void *);
    CHECK(cuGetProcAddress_v2("cuArrayGetDescriptor", (void **)&get_desc, 13000, 0, NULL));
    struct array_desc q;
    CHECK(get_desc(&q, a1));
    if (q.w != 16 || q.channels != 4) {
        printf("WRONG descriptor\n");
        return 1;
    }

    unsigned long long surf;
    CHECK(cuSurfObjectCreate(&surf, &res));
    CHECK(cuSurfObjectDestroy(surf));
    CHECK(cuTexObjectDestroy(tex));
    CHECK(cuArrayDestroy(a1));
    CHECK(cuArrayDestroy(a2));
    CHECK(cuMemFree_v2(lin));
    CHECK(cuMemFree_v2(dout));
    printf("driver_arrays: OK tex=0x%llx a2=0x%llx\n", tex, (unsigned long long)(uintptr_t)a2);
    return 0;
}
