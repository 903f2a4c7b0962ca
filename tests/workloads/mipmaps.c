/* Mipmapped arrays: 16×8 floats in 3 levels (hipMallocMipmappedArray), its
 * levels looked up (hipGetMipmappedArrayLevel), level 0 and level 1 (8×4)
 * filled from the host, a window of level 1 read back; a texture object
 * over the mipmapped array (read at level 0) handed to a kernel, whose
 * result is read back; a 1D mipmapped array of bytes in the driver style
 * (hipMipmappedArrayCreate, hipMipmappedArrayGetLevel: level 1 of 32 bytes
 * written and read with hipMemcpyHtoA/AtoH). Every step is checked here. */
#include "hrr_workload.h"

#define W 16
#define H 8

struct tex_scale_args {
    float *out;
    hipTextureObject_t tex;
    int32_t width;
    int32_t height;
};

int main(void) {
    CHECK(hipInit(0));
    static float host[H][W], half[H / 2][W / 2], back[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) host[y][x] = (float)(y * 100 + x) + 0.5f;
    for (int y = 0; y < H / 2; y++)
        for (int x = 0; x < W / 2; x++) half[y][x] = -(float)(y * 10 + x);

    hipChannelFormatDesc fd = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipMipmappedArray_t mip;
    CHECK(hipMallocMipmappedArray(&mip, &fd, make_hipExtent(W, H, 0), 3, 0));
    hipArray_t l0, l1;
    CHECK(hipGetMipmappedArrayLevel(&l0, mip, 0));
    CHECK(hipGetMipmappedArrayLevel(&l1, mip, 1));
    EXPECT(hipGetMipmappedArrayLevel(&l1, mip, 3) != hipSuccess, "a fourth level");
    (void)hipGetLastError();

    /* host → levels 0 and 1; a 4×2 window of level 1 (from x = 2, row 1) back */
    CHECK(hipMemcpy2DToArray(l0, 0, 0, host, sizeof host[0], W * sizeof(float), H,
                             hipMemcpyHostToDevice));
    CHECK(hipMemcpy2DToArray(l1, 0, 0, half, sizeof half[0], (W / 2) * sizeof(float), H / 2,
                             hipMemcpyHostToDevice));
    float window[2][4];
    CHECK(hipMemcpy2DFromArray(window, sizeof window[0], l1, 2 * sizeof(float), 1,
                               sizeof window[0], 2, hipMemcpyDeviceToHost));
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 4; x++)
            EXPECT(window[y][x] == half[y + 1][x + 2], "level 1 (%d, %d): %f", x, y, window[y][x]);

    /* a texture object over the mipmapped array, read by a kernel */
    hipResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = hipResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = mip;
    hipTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = hipAddressModeClamp;
    td.addressMode[1] = hipAddressModeClamp;
    td.filterMode = hipFilterModePoint;
    td.readMode = hipReadModeElementType;
    hipTextureObject_t tex;
    CHECK(hipCreateTextureObject(&tex, &res, &td, NULL));
    float *out;
    CHECK(hipMalloc((void **)&out, sizeof host));
    hipModule_t m = hrr_load_module_data("texture.so");
    hipFunction_t f;
    CHECK(hipModuleGetFunction(&f, m, "tex_scale"));
    struct tex_scale_args ka = {out, tex, W, H};
    size_t ka_size = sizeof ka;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &ka, HIP_LAUNCH_PARAM_BUFFER_SIZE, &ka_size,
                     HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(f, W / 8, H / 4, 1, 8, 4, 1, 0, NULL, NULL, extra));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(back, out, sizeof back, hipMemcpyDeviceToHost));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            EXPECT(back[y][x] == 2.0f * host[y][x] + 1.0f, "texel (%d, %d): %f", x, y, back[y][x]);

    /* the driver style: a 1D mipmapped array of 64 bytes, 2 levels */
    HIP_ARRAY3D_DESCRIPTOR d3;
    memset(&d3, 0, sizeof d3);
    d3.Width = 64;
    d3.Format = HIP_AD_FORMAT_UNSIGNED_INT8;
    d3.NumChannels = 1;
    hipMipmappedArray_t mip1;
    CHECK(hipMipmappedArrayCreate(&mip1, &d3, 2));
    hipArray_t b1;
    CHECK(hipMipmappedArrayGetLevel(&b1, mip1, 1));
    unsigned char bytes[32], bytes_back[32];
    for (int i = 0; i < 32; i++) bytes[i] = (unsigned char)(i * 7 + 3);
    CHECK(hipMemcpyHtoA(b1, 0, bytes, sizeof bytes));
    CHECK(hipMemcpyAtoH(bytes_back, b1, 0, sizeof bytes_back));
    EXPECT(memcmp(bytes, bytes_back, sizeof bytes) == 0, "level 1 round trip differs");

    CHECK(hipDestroyTextureObject(tex));
    CHECK(hipFreeMipmappedArray(mip));
    CHECK(hipMipmappedArrayDestroy(mip1));
    CHECK(hipFree(out));
    CHECK(hipModuleUnload(m));
    printf("mipmaps: OK\n");
    return 0;
}
