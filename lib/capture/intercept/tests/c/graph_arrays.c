/* Array copies inside graphs (linked with -lcuda): an 8×4 float array and
 * a graph built node by node: host rows (40 bytes apart) → the array, the
 * array → device memory, a 4×2 window of the array (from float 2 of row 1)
 * → host. Launched twice with new host data; the window node moved to row
 * 2, float 0 by cuGraphExecMemcpyNodeSetParams and launched again; then a
 * stream-captured cuMemcpy3DAsync_v2 of the whole array to host, as a graph
 * of its own. Each launch checked. */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

struct array3d_desc { size_t w, h, d; int format; unsigned channels, flags; };
int cuArray3DCreate_v2(void **, const struct array3d_desc *);
int cuArrayDestroy(void *);
int cuGraphAddMemcpyNode(void **, void *, void *const *, size_t, const struct memcpy3d *, void *);
int cuGraphExecMemcpyNodeSetParams(void *, void *, const struct memcpy3d *, void *);
int cuMemcpy3DAsync_v2(const struct memcpy3d *, void *);

enum { HOST = 1, DEVICE = 2, ARRAY = 3 };

static float host_in[4][10];
static float window[2][4], whole[4][8], captured_whole[4][8];

static void fill(int k) {
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 10; x++) host_in[y][x] = (float)(k * 100 + y * 8 + x);
}

static int check(const char *what, CUdeviceptr d, int wy, int wx) {
    if (cuMemcpyDtoH_v2(whole, d, sizeof whole)) return 1;
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 8; x++)
            if (whole[y][x] != host_in[y][x]) {
                printf("WRONG %s: device [%d][%d] = %g\n", what, y, x, whole[y][x]);
                return 1;
            }
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 4; x++)
            if (window[y][x] != host_in[wy + y][wx + x]) {
                printf("WRONG %s: window [%d][%d] = %g\n", what, y, x, window[y][x]);
                return 1;
            }
    return 0;
}

static struct memcpy3d window_copy(void *a, size_t row, size_t x) {
    struct memcpy3d c;
    memset(&c, 0, sizeof c);
    c.stype = ARRAY, c.sarray = a, c.sx = x * sizeof(float), c.sy = row;
    c.dtype = HOST, c.dhost = window, c.dpitch = sizeof window[0], c.dheight = 2;
    c.width = sizeof window[0], c.height = 2, c.depth = 1;
    return c;
}

int main(void) {
    void *a, *g, *g2, *exec, *exec2, *up, *down, *win, *s = (void *)0x5000;
    CUdeviceptr d;
    CHECK(cuInit(0));
    struct array3d_desc desc = {8, 4, 0, 0x20, 1, 0};
    CHECK(cuArray3DCreate_v2(&a, &desc));
    CHECK(cuMemAlloc_v2(&d, sizeof whole));
    printf("a=%p host_in=%p window=%p whole=%p\n", a, (void *)host_in, (void *)window,
           (void *)captured_whole);

    struct memcpy3d c;
    memset(&c, 0, sizeof c);
    c.stype = HOST, c.shost = host_in, c.spitch = sizeof host_in[0], c.sheight = 4;
    c.dtype = ARRAY, c.darray = a;
    c.width = 8 * sizeof(float), c.height = 4, c.depth = 1;
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddMemcpyNode(&up, g, NULL, 0, &c, NULL));
    memset(&c, 0, sizeof c);
    c.stype = ARRAY, c.sarray = a;
    c.dtype = DEVICE, c.ddev = d, c.dpitch = sizeof whole[0], c.dheight = 4;
    c.width = 8 * sizeof(float), c.height = 4, c.depth = 1;
    CHECK(cuGraphAddMemcpyNode(&down, g, &up, 1, &c, NULL));
    c = window_copy(a, 1, 2);
    CHECK(cuGraphAddMemcpyNode(&win, g, &up, 1, &c, NULL));
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));

    for (int k = 1; k <= 2; k++) {
        fill(k);
        CHECK(cuGraphLaunch(exec, s));
        CHECK(cuStreamSynchronize(s));
        if (check("a launch", d, 1, 2)) return 1;
    }
    c = window_copy(a, 2, 0);
    CHECK(cuGraphExecMemcpyNodeSetParams(exec, win, &c, NULL));
    fill(3);
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    if (check("the window node set", d, 2, 0)) return 1;

    memset(&c, 0, sizeof c);
    c.stype = ARRAY, c.sarray = a;
    c.dtype = HOST, c.dhost = captured_whole, c.dpitch = sizeof captured_whole[0], c.dheight = 4;
    c.width = sizeof captured_whole[0], c.height = 4, c.depth = 1;
    CHECK(cuStreamBeginCapture_v2(s, 0));
    CHECK(cuMemcpy3DAsync_v2(&c, s));
    CHECK(cuStreamEndCapture(s, &g2));
    CHECK(cuGraphInstantiateWithFlags(&exec2, g2, 0));
    CHECK(cuGraphLaunch(exec2, s));
    CHECK(cuStreamSynchronize(s));
    if (memcmp(captured_whole, whole, sizeof whole)) {
        printf("WRONG: the captured copy\n");
        return 1;
    }
    CHECK(cuGraphExecDestroy(exec2));
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuArrayDestroy(a));
    printf("graph_arrays: OK\n");
    return 0;
}
