/* A kernel node of an executable graph reaching pinned host memory
 * (cuMemHostAlloc, linked with -lcuda): before each of two launches the host
 * changes the memory, and the stand-in's kernel (iota: out[i] = i for
 * i < n) writes its first floats, which the host reads after a stream
 * synchronisation. */
#include <stdio.h>

#include "stand_in_cuda.h"

int main(void) {
    enum { N = 64 };
    float *h;
    void *m, *f, *g, *k, *exec, *s = (void *)0x5000;
    CHECK(cuInit(0));
    CHECK(cuMemHostAlloc((void **)&h, N * sizeof(float), 2 /* CU_MEMHOSTALLOC_DEVICEMAP */));
    CHECK(cuModuleLoadData(&m, IOTA_PTX));
    CHECK(cuModuleGetFunction(&f, m, "iota"));
    int n = 8;
    void *params[] = {&h, &n};
    struct kernel_params p = {f, 1, 1, 1, 32, 1, 1, 0, params, NULL, NULL, NULL};
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddKernelNode_v2(&k, g, NULL, 0, &p));
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    for (int it = 0; it < 2; it++) {
        h[1] = -1.0f;
        h[N - 1] = 100.0f + it;
        CHECK(cuGraphLaunch(exec, s));
        CHECK(cuStreamSynchronize(s));
        if (h[1] != 1.0f || h[N - 1] != 100.0f + it) {
            printf("WRONG launch %d: h[1] = %g, h[%d] = %g\n", it, h[1], N - 1, h[N - 1]);
            return 1;
        }
    }
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(g));
    CHECK(cuMemFreeHost(h));
    printf("graph_host_memory: OK\n");
    return 0;
}
