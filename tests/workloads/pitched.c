/* Pitched memory end to end: hipMallocPitch, 2D copies host→device,
 * device→device and device→host (hipMemcpy2D, hipMemcpy2DAsync,
 * hipMemcpyParam2D), hipMemset2D, a kernel over the pitched rows, then
 * hipMalloc3D with a 3D upload, hipMemset3D and a 3D download at an offset.
 * Every result is checked here, and downloaded so that replay checks it. */
#include "hrr_workload.h"

#define W 40 /* floats per row */
#define H 12
#define X 24 /* 3D: bytes per row */
#define Y 5
#define Z 3

struct scale_rows_args {
    float *base;
    uint64_t pitch;
    int32_t width;
    int32_t height;
    float k;
};

int main(void) {
    CHECK(hipInit(0));
    static float host[H][W], back[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) host[y][x] = (float)(y * 100 + x);

    float *a, *b;
    size_t pa, pb;
    CHECK(hipMallocPitch((void **)&a, &pa, W * sizeof(float), H));
    CHECK(hipMallocPitch((void **)&b, &pb, W * sizeof(float), H));
    EXPECT(pa >= W * sizeof(float), "pitch %zu", pa);
    CHECK(hipMemset(a, 0x7f, pa * H)); /* the padding too: it must stay */

    /* host → device, device → device (async), device → host (Param2D) */
    CHECK(hipMemcpy2D(a, pa, host, sizeof host[0], W * sizeof(float), H, hipMemcpyHostToDevice));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipMemcpy2DAsync(b, pb, a, pa, W * sizeof(float), H, hipMemcpyDeviceToDevice, s));
    CHECK(hipStreamSynchronize(s));
    hip_Memcpy2D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = hipMemoryTypeDevice;
    p.srcDevice = b;
    p.srcPitch = pb;
    p.dstMemoryType = hipMemoryTypeHost;
    p.dstHost = back;
    p.dstPitch = sizeof back[0];
    p.WidthInBytes = W * sizeof(float);
    p.Height = H;
    CHECK(hipMemcpyParam2D(&p));
    EXPECT(memcmp(host, back, sizeof host) == 0, "2D round trip differs");

    /* a memset of a 2D window: rows 2..5, bytes 8..23 */
    CHECK(hipMemset2D((char *)a + 2 * pa + 8, pa, 0, 16, 4));
    /* a kernel over the pitched rows: a = 2a + y */
    hipModule_t m = hrr_load_module_data("pitched.so");
    hipFunction_t f;
    CHECK(hipModuleGetFunction(&f, m, "scale_rows"));
    struct scale_rows_args ka = {a, pa, W, H, 2.0f};
    size_t ka_size = sizeof ka;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &ka, HIP_LAUNCH_PARAM_BUFFER_SIZE, &ka_size,
                     HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(f, W / 8, H / 4, 1, 8, 4, 1, 0, NULL, NULL, extra));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy2DAsync(back, sizeof back[0], a, pa, W * sizeof(float), H, hipMemcpyDeviceToHost, s));
    CHECK(hipStreamSynchronize(s));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int zeroed = y >= 2 && y < 6 && x >= 2 && x < 6;
            float want = 2.0f * (zeroed ? 0.0f : host[y][x]) + (float)y;
            EXPECT(back[y][x] == want, "a[%d][%d] = %g, want %g", y, x, back[y][x], want);
        }
    /* the whole pitched allocation, padding included (0x7f bytes) */
    unsigned char *whole = malloc(pa * H);
    CHECK(hipMemcpy(whole, a, pa * H, hipMemcpyDeviceToHost));
    EXPECT(whole[W * sizeof(float)] == 0x7f && whole[pa - 1] == 0x7f, "padding overwritten");
    free(whole);
    printf("pitched 2D: %dx%d floats, pitch %zu: ok\n", W, H, pa);

    /* 3D: a pitched volume, a packed upload into it at an offset, a 3D memset
     * of one slice, and the whole volume downloaded packed */
    hipPitchedPtr v;
    CHECK(hipMalloc3D(&v, make_hipExtent(X, Y, Z)));
    CHECK(hipMemset(v.ptr, 0, v.pitch * Y * Z));
    static unsigned char cube[Z][Y][X], cube_back[Z][Y][X];
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++) cube[z][y][x] = (unsigned char)(z * 50 + y * 7 + x);
    hipMemcpy3DParms q;
    memset(&q, 0, sizeof q);
    q.srcPtr = make_hipPitchedPtr(cube, X, X, Y);
    q.srcPos = make_hipPos(4, 1, 0);
    q.dstPtr = v;
    q.dstPos = make_hipPos(4, 1, 1);
    q.extent = make_hipExtent(X - 4, Y - 1, Z - 1);
    q.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&q));
    CHECK(hipMemset3D(make_hipPitchedPtr((char *)v.ptr + 2 * v.pitch * Y, v.pitch, X, Y), 0xee,
                      make_hipExtent(2, Y, 1)));
    memset(&q, 0, sizeof q);
    q.srcPtr = v;
    q.dstPtr = make_hipPitchedPtr(cube_back, X, X, Y);
    q.extent = make_hipExtent(X, Y, Z);
    q.kind = hipMemcpyDeviceToHost;
    CHECK(hipMemcpy3DAsync(&q, s));
    CHECK(hipStreamSynchronize(s));
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++) {
                unsigned char want = 0;
                if (z >= 1 && y >= 1 && x >= 4) want = cube[z - 1][y][x];
                if (z == 2 && x < 2) want = 0xee;
                EXPECT(cube_back[z][y][x] == want, "v[%d][%d][%d] = %d, want %d", z, y, x,
                       cube_back[z][y][x], want);
            }
    printf("pitched 3D: %dx%dx%d, pitch %zu: ok\n", X, Y, Z, v.pitch);

    CHECK(hipFree(v.ptr));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipStreamDestroy(s));
    printf("pitched: OK\n");
    return 0;
}
