/* Arrays and a texture object: a 2D float array made with hipMallocArray,
 * filled from the host (hipMemcpy2DToArray), copied into a second array made
 * with hipArray3DCreate (hipMemcpy3D, array to array, at an offset), out of it
 * into device memory (hipMemcpy2DFromArray) and to the host
 * (hipMemcpyParam2D); a 1D array written and read with hipMemcpyHtoA/AtoH; a
 * texture object over the second array handed to a kernel, whose result is
 * read back. Every step is checked here. */
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
    static float host[H][W], back[H][W], moved[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) host[y][x] = (float)(y * 100 + x) + 0.25f;

    hipChannelFormatDesc fd = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipArray_t a, b;
    CHECK(hipMallocArray(&a, &fd, W, H, 0));
    HIP_ARRAY3D_DESCRIPTOR d3;
    memset(&d3, 0, sizeof d3);
    d3.Width = W;
    d3.Height = H;
    d3.Format = HIP_AD_FORMAT_FLOAT;
    d3.NumChannels = 1;
    CHECK(hipArray3DCreate(&b, &d3));

    /* host → array a */
    CHECK(hipMemcpy2DToArray(a, 0, 0, host, sizeof host[0], W * sizeof(float), H,
                             hipMemcpyHostToDevice));
    /* array a → array b, whole (elements in the extent) */
    hipMemcpy3DParms p3;
    memset(&p3, 0, sizeof p3);
    p3.srcArray = a;
    p3.dstArray = b;
    p3.extent = make_hipExtent(W, H, 1);
    p3.kind = hipMemcpyDeviceToDevice;
    CHECK(hipMemcpy3D(&p3));
    /* array b → device memory, then device → host */
    float *dev;
    CHECK(hipMalloc((void **)&dev, sizeof host));
    CHECK(hipMemcpy2DFromArray(dev, W * sizeof(float), b, 0, 0, W * sizeof(float), H,
                               hipMemcpyDeviceToDevice));
    CHECK(hipMemcpy(moved, dev, sizeof moved, hipMemcpyDeviceToHost));
    EXPECT(memcmp(host, moved, sizeof host) == 0, "array → array → device differs");
    /* array b → host, rows 2..5 from x = 4 floats (hipMemcpyParam2D) */
    hip_Memcpy2D p2;
    memset(&p2, 0, sizeof p2);
    p2.srcMemoryType = hipMemoryTypeArray;
    p2.srcArray = b;
    p2.srcXInBytes = 4 * sizeof(float);
    p2.srcY = 2;
    p2.dstMemoryType = hipMemoryTypeHost;
    p2.dstHost = back;
    p2.dstPitch = sizeof back[0];
    p2.WidthInBytes = 8 * sizeof(float);
    p2.Height = 4;
    CHECK(hipMemcpyParam2D(&p2));
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 8; x++)
            EXPECT(back[y][x] == host[y + 2][x + 4], "window (%d, %d): %f", x, y, back[y][x]);

    /* a 1D array of bytes: host → array at an offset, array → host */
    hipArray_t c;
    HIP_ARRAY_DESCRIPTOR d1 = {64, 0, HIP_AD_FORMAT_UNSIGNED_INT8, 1};
    CHECK(hipArrayCreate(&c, &d1));
    unsigned char bytes[32], bytes_back[32];
    for (int i = 0; i < 32; i++) bytes[i] = (unsigned char)(i * 5 + 1);
    CHECK(hipMemcpyHtoA(c, 16, bytes, sizeof bytes));
    CHECK(hipMemcpyAtoH(bytes_back, c, 16, sizeof bytes_back));
    EXPECT(memcmp(bytes, bytes_back, sizeof bytes) == 0, "1D array round trip differs");

    /* a texture object over array b, read by a kernel */
    hipResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = hipResourceTypeArray;
    res.res.array.array = b;
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

    CHECK(hipDestroyTextureObject(tex));
    CHECK(hipFreeArray(a));
    CHECK(hipArrayDestroy(b));
    CHECK(hipArrayDestroy(c));
    CHECK(hipFree(dev));
    CHECK(hipFree(out));
    CHECK(hipModuleUnload(m));
    printf("arrays: OK\n");
    return 0;
}
