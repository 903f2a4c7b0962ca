/* A graph's device-to-host result that a host node after it rewrites, as
 * NVIDIA's simpleCudaGraphs does (linked with -lcuda): a kernel (iota over
 * 2 floats of d) → a copy of those 8 bytes into pinned host memory → a
 * host node that checks them and sets them to 0. Built node by node
 * (cuGraphAddHostNode), by stream capture (cuLaunchHostFunc into the
 * capturing stream) and with the generic cuGraphAddNode (a host node of
 * CU_GRAPH_NODE_TYPE_HOST); each graph launched twice, the third once more
 * after cuGraphExecNodeSetParams gave its host node another function. */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

int cuGraphAddMemcpyNode(void **, void *, void *const *, size_t, const struct memcpy3d *, void *);
int cuGraphAddHostNode(void **, void *, void *const *, size_t, const struct host_params *);

static int seen, wrong, seen_again;

/* What the host node does: the copy's result checked, then reset. */
static void take_result(void *p) {
    float *r = p;
    if (r[0] != 0.0f || r[1] != 1.0f) wrong++;
    seen++;
    r[0] = r[1] = 0.0f;
}

/* The host node's function after cuGraphExecNodeSetParams. */
static void take_result_again(void *p) {
    seen_again++;
    take_result(p);
}

int main(void) {
    CUdeviceptr d;
    void *m, *f, *s = (void *)0x5000, *g, *g2, *k, *copy, *host, *exec, *exec2;
    float *result, *result2, *result3;
    void *g3, *k3, *copy3, *host3, *exec3;
    int n = 2;
    CHECK(cuInit(0));
    CHECK(cuMemAlloc_v2(&d, 16));
    CHECK(cuMemHostAlloc((void **)&result, 8, 0));
    CHECK(cuMemHostAlloc((void **)&result2, 8, 0));
    CHECK(cuMemHostAlloc((void **)&result3, 8, 0));
    CHECK(cuModuleLoadData(&m, IOTA_PTX));
    CHECK(cuModuleGetFunction(&f, m, "iota"));
    printf("result=%p result2=%p\n", (void *)result, (void *)result2);

    void *params[] = {&d, &n};
    struct kernel_params p = {f, 1, 1, 1, 32, 1, 1, 0, params, NULL, NULL, NULL};
    struct memcpy3d c;
    memset(&c, 0, sizeof c);
    c.stype = 2, c.sdev = d;
    c.dtype = 1, c.dhost = result;
    c.width = 8, c.height = c.depth = 1;
    struct host_params h = {take_result, result};
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddKernelNode_v2(&k, g, NULL, 0, &p));
    CHECK(cuGraphAddMemcpyNode(&copy, g, &k, 1, &c, NULL));
    CHECK(cuGraphAddHostNode(&host, g, &copy, 1, &h));
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));

    CHECK(cuStreamBeginCapture_v2(s, 0));
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
    CHECK(cuMemcpyDtoHAsync_v2(result2, d, 8, s));
    CHECK(cuLaunchHostFunc(s, take_result, result2));
    CHECK(cuStreamEndCapture(s, &g2));
    CHECK(cuGraphInstantiateWithFlags(&exec2, g2, 0));

    struct node_params hp;
    memset(&hp, 0, sizeof hp);
    hp.type = NODE_HOST;
    hp.host = (struct host_params){take_result, result3};
    struct memcpy3d c3 = c;
    c3.dhost = result3;
    CHECK(cuGraphCreate(&g3, 0));
    CHECK(cuGraphAddKernelNode_v2(&k3, g3, NULL, 0, &p));
    CHECK(cuGraphAddMemcpyNode(&copy3, g3, &k3, 1, &c3, NULL));
    CHECK(cuGraphAddNode(&host3, g3, &copy3, 1, &hp));
    CHECK(cuGraphInstantiateWithFlags(&exec3, g3, 0));

    for (int i = 0; i < 2; i++) {
        CHECK(cuGraphLaunch(exec, s));
        CHECK(cuStreamSynchronize(s));
        CHECK(cuGraphLaunch(exec2, s));
        CHECK(cuStreamSynchronize(s));
        CHECK(cuGraphLaunch(exec3, s));
        CHECK(cuStreamSynchronize(s));
    }
    hp.host = (struct host_params){take_result_again, result3};
    CHECK(cuGraphExecNodeSetParams(exec3, host3, &hp));
    CHECK(cuGraphLaunch(exec3, s));
    CHECK(cuStreamSynchronize(s));
    if (seen != 7 || seen_again != 1 || wrong || result[0] != 0.0f || result2[1] != 0.0f ||
        result3[1] != 0.0f) {
        printf("WRONG: %d host node runs (%d after the set), %d wrong\n", seen, seen_again, wrong);
        return 1;
    }
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphExecDestroy(exec2));
    CHECK(cuGraphExecDestroy(exec3));
    printf("graph_host_d2h: OK\n");
    return 0;
}
