/* CUDA graphs built with the generic node API (linked with -lcuda), as XLA
 * builds its command buffers: cuGraphAddNode of a kernel, a memset, an
 * empty node, a device-to-device copy and a child graph; cuGraphAddNode_v2
 * of a kernel behind a programmatic edge (edge data); cuGraphNodeSetParams
 * before instantiation, cuGraphExecNodeSetParams between two launches. Then
 * a graph holding a conditional node, instantiated. */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

/* The kernel node iota(d, *n). */
static struct node_params kernel(void *f, void **params) {
    struct node_params p;
    memset(&p, 0, sizeof p);
    p.type = NODE_KERNEL;
    p.kernel = (struct kernel_params){f, 1, 1, 1, 32, 1, 1, 0, params, NULL, NULL, NULL};
    return p;
}

/* The stand-in's result in c: d copied, d[i] = i for i < n. */
static int check(const char *what, CUdeviceptr c, int n) {
    float out[64];
    if (cuMemcpyDtoH_v2(out, c, sizeof out)) return 1;
    for (int i = 0; i < 64; i++) {
        float want = i < n ? (float)i : 0.0f;
        if (out[i] != want) {
            printf("WRONG %s: out[%d] = %g\n", what, i, out[i]);
            return 1;
        }
    }
    return 0;
}

int main(void) {
    CUdeviceptr d, z, c;
    void *m, *f, *s = (void *)0x5000;
    CHECK(cuInit(0));
    CHECK(cuMemAlloc_v2(&d, 256));
    CHECK(cuMemAlloc_v2(&z, 16));
    CHECK(cuMemAlloc_v2(&c, 256));
    CHECK(cuModuleLoadData(&m, IOTA_PTX));
    CHECK(cuModuleGetFunction(&f, m, "iota"));

    /* k -> set -> empty -> copy (d to c) -> child graph (a kernel);
     * k -> (programmatic) k2 -> copy. */
    void *g, *child, *k, *set, *e, *k2, *cp, *ck, *cn, *exec;
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphCreate(&child, 0));
    int n = 4, n2 = 6, nc = 2;
    void *params[] = {&d, &n}, *params2[] = {&d, &n2}, *paramsc[] = {&d, &nc};
    struct node_params p = kernel(f, params);
    CHECK(cuGraphAddNode(&k, g, NULL, 0, &p));
    memset(&p, 0, sizeof p);
    p.type = NODE_MEMSET;
    p.memset.m = (struct memset_params){z, 0, 0x3f800000u, 4, 4, 1};
    CHECK(cuGraphAddNode(&set, g, &k, 1, &p));
    memset(&p, 0, sizeof p);
    p.type = NODE_EMPTY;
    CHECK(cuGraphAddNode(&e, g, &set, 1, &p));
    p = kernel(f, params2);
    struct edge_data programmatic = {1, 0, 1, {0}};
    CHECK(cuGraphAddNode_v2(&k2, g, &k, &programmatic, 1, &p));
    memset(&p, 0, sizeof p);
    p.type = NODE_MEMCPY;
    p.memcpy.copy.stype = p.memcpy.copy.dtype = 2; /* device to device */
    p.memcpy.copy.sdev = d;
    p.memcpy.copy.ddev = c;
    p.memcpy.copy.width = 256;
    p.memcpy.copy.height = p.memcpy.copy.depth = 1;
    void *before_copy[] = {e, k2};
    CHECK(cuGraphAddNode(&cp, g, before_copy, 2, &p));
    p = kernel(f, paramsc);
    CHECK(cuGraphAddNode(&ck, child, NULL, 0, &p));
    memset(&p, 0, sizeof p);
    p.type = NODE_GRAPH;
    p.child.graph = child;
    CHECK(cuGraphAddNode(&cn, g, &cp, 1, &p));

    /* Set before instantiation: read back with the graph. */
    n = 8;
    p = kernel(f, params);
    CHECK(cuGraphNodeSetParams(k, &p));
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    if (check("first launch", c, 8)) return 1;
    n = 16;
    CHECK(cuGraphExecNodeSetParams(exec, k, &p));
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    if (check("after cuGraphExecNodeSetParams", c, 16)) return 1;
    CHECK(cuGraphExecDestroy(exec));

    /* A while loop: a conditional node, its body a kernel. */
    void *g3, *cond, *body_k, *exec3;
    unsigned long long h;
    CHECK(cuGraphCreate(&g3, 0));
    CHECK(cuGraphConditionalHandleCreate(&h, g3, NULL, 0, 0));
    memset(&p, 0, sizeof p);
    p.type = NODE_CONDITIONAL;
    p.cond.handle = h;
    p.cond.type = 1; /* CU_GRAPH_COND_TYPE_WHILE */
    p.cond.size = 1;
    CHECK(cuGraphAddNode(&cond, g3, NULL, 0, &p));
    if (!p.cond.out || !p.cond.out[0]) { printf("WRONG: no body graph\n"); return 1; }
    void *body = p.cond.out[0];
    p = kernel(f, params);
    CHECK(cuGraphAddNode(&body_k, body, NULL, 0, &p));
    CHECK(cuGraphInstantiateWithFlags(&exec3, g3, 0));
    CHECK(cuGraphExecDestroy(exec3));
    printf("graph_generic: OK\n");
    return 0;
}
