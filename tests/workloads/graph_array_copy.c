/* A node-built graph whose copy nodes name arrays (hipGraphAddMemcpyNode
 * with hipMemcpy3DParms.srcArray/dstArray): host → array a (a 2D float
 * array), array a → array b, a window of array b → host (rows pitched wider
 * than the window), array b → device memory, then device → host (1D).
 * Launched twice, the host source changed between the launches; every
 * result is checked here. */
#include "hrr_workload.h"

#define W 16
#define H 8

int main(void) {
    CHECK(hipInit(0));
    static float src[H][W], window[4][W], flat[H][W];
    hipChannelFormatDesc fd = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
    hipArray_t a, b;
    CHECK(hipMallocArray(&a, &fd, W, H, 0));
    CHECK(hipMallocArray(&b, &fd, W, H, 0));
    float *dev;
    CHECK(hipMalloc((void **)&dev, sizeof src));

    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t up, across, down, out, back;
    hipMemcpy3DParms p;
    /* host → array a, whole (the extent and array positions in elements) */
    memset(&p, 0, sizeof p);
    p.srcPtr = make_hipPitchedPtr(src, sizeof src[0], W, H);
    p.dstArray = a;
    p.extent = make_hipExtent(W, H, 1);
    p.kind = hipMemcpyHostToDevice;
    CHECK(hipGraphAddMemcpyNode(&up, g, NULL, 0, &p));
    /* array a → array b */
    memset(&p, 0, sizeof p);
    p.srcArray = a;
    p.dstArray = b;
    p.extent = make_hipExtent(W, H, 1);
    p.kind = hipMemcpyDeviceToDevice;
    CHECK(hipGraphAddMemcpyNode(&across, g, &up, 1, &p));
    /* array b, 8 elements from x = 4 of rows 2..5 → host rows W floats apart */
    memset(&p, 0, sizeof p);
    p.srcArray = b;
    p.srcPos = make_hipPos(4, 2, 0);
    p.dstPtr = make_hipPitchedPtr(window, sizeof window[0], W, 4);
    p.extent = make_hipExtent(8, 4, 1);
    p.kind = hipMemcpyDeviceToHost;
    CHECK(hipGraphAddMemcpyNode(&down, g, &across, 1, &p));
    /* array b → device memory */
    memset(&p, 0, sizeof p);
    p.srcArray = b;
    p.dstPtr = make_hipPitchedPtr(dev, sizeof src[0], W, H);
    p.extent = make_hipExtent(W, H, 1);
    p.kind = hipMemcpyDeviceToDevice;
    CHECK(hipGraphAddMemcpyNode(&out, g, &across, 1, &p));
    /* device memory → host, 1D */
    CHECK(hipGraphAddMemcpyNode1D(&back, g, &out, 1, flat, dev, sizeof flat,
                                  hipMemcpyDeviceToHost));
    hipGraphExec_t ge;
    CHECK(hipGraphInstantiate(&ge, g, NULL, NULL, 0));

    for (int round = 1; round <= 2; round++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) src[y][x] = (float)(round * 1000 + y * 100 + x) + 0.5f;
        memset(window, 0, sizeof window);
        CHECK(hipGraphLaunch(ge, NULL));
        CHECK(hipDeviceSynchronize());
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                EXPECT(flat[y][x] == src[y][x], "round %d: flat (%d, %d) = %g", round, x, y,
                       flat[y][x]);
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < W; x++) {
                float want = x < 8 ? src[y + 2][x + 4] : 0.0f;
                EXPECT(window[y][x] == want, "round %d: window (%d, %d) = %g, want %g", round, x,
                       y, window[y][x], want);
            }
        printf("graph_array_copy: launch %d: window[0][0] = %g\n", round, window[0][0]);
    }

    CHECK(hipGraphExecDestroy(ge));
    CHECK(hipGraphDestroy(g));
    CHECK(hipFreeArray(a));
    CHECK(hipFreeArray(b));
    CHECK(hipFree(dev));
    printf("graph_array_copy: OK\n");
    return 0;
}
