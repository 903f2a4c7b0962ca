/* CUDA graphs through the driver API (linked with -lcuda): a stream capture
 * (an H2D copy from a host buffer refilled before every launch, a kernel, a
 * memset, a D2H copy into host memory) launched three times; then a graph
 * built node by node (kernel, empty node, child graph), launched, its kernel
 * node changed by cuGraphExecKernelNodeSetParams_v2, launched again. */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

int main(void) {
    enum { N = 64 };
    static float in[N], out[N];
    CUdeviceptr d, z;
    void *m, *f, *s = (void *)0x5000;
    CHECK(cuInit(0));
    CHECK(cuMemAlloc_v2(&d, sizeof in));
    CHECK(cuMemAlloc_v2(&z, 16));
    CHECK(cuModuleLoadData(&m, IOTA_PTX));
    CHECK(cuModuleGetFunction(&f, m, "iota"));

    /* Captured: nothing runs until the graph is launched. */
    for (int i = 0; i < N; i++) out[i] = -7.0f;
    int n = 8;
    void *params[] = {&d, &n};
    CHECK(cuStreamBeginCapture_v2(s, 0));
    CHECK(cuMemcpyHtoDAsync_v2(d, in, sizeof in, s));
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
    CHECK(cuMemsetD32Async(z, 0x3f800000u, 4, s));
    CHECK(cuMemcpyDtoHAsync_v2(out, d, sizeof out, s));
    void *g, *exec;
    CHECK(cuStreamEndCapture(s, &g));
    if (out[0] != -7.0f) { printf("WRONG: captured work ran\n"); return 1; }
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < N; i++) in[i] = 100.0f * it + i + 0.5f;
        CHECK(cuGraphLaunch(exec, s));
        CHECK(cuStreamSynchronize(s));
        for (int i = 0; i < N; i++) {
            float want = i < 8 ? (float)i : in[i];
            if (out[i] != want) { printf("WRONG launch %d: out[%d] = %g\n", it, i, out[i]); return 1; }
        }
    }
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(g));

    /* Built node by node: kernel -> empty -> child graph (a kernel). */
    void *g2, *child, *k, *e, *ck, *c, *exec2;
    CHECK(cuGraphCreate(&g2, 0));
    CHECK(cuGraphCreate(&child, 0));
    n = 4;
    struct kernel_params p = {f, 1, 1, 1, 32, 1, 1, 0, params, NULL, NULL, NULL};
    CHECK(cuGraphAddKernelNode_v2(&k, g2, NULL, 0, &p));
    CHECK(cuGraphAddEmptyNode(&e, g2, &k, 1));
    n = 2;
    CHECK(cuGraphAddKernelNode_v2(&ck, child, NULL, 0, &p));
    CHECK(cuGraphAddChildGraphNode(&c, g2, &e, 1, child));
    CHECK(cuGraphInstantiateWithFlags(&exec2, g2, 0));
    CHECK(cuGraphLaunch(exec2, s));
    n = 16;
    CHECK(cuGraphExecKernelNodeSetParams_v2(exec2, k, &p));
    CHECK(cuGraphLaunch(exec2, s));
    CHECK(cuMemcpyDtoH_v2(out, d, sizeof out));
    for (int i = 0; i < 16; i++)
        if (out[i] != (float)i) { printf("WRONG node-built graph: out[%d] = %g\n", i, out[i]); return 1; }
    CHECK(cuGraphExecDestroy(exec2));
    printf("graph_driver: OK\n");
    return 0;
}
