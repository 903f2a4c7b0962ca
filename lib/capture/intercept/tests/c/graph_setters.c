/* Executable-graph changes that are not node parameters (linked with
 * -lcuda): a graph of a kernel node (iota over 8 floats of d) and a child
 * graph node after it (a kernel, iota over 4 floats of d2), launched; the
 * kernel node disabled by cuGraphNodeSetEnabled (d reset: the launch must
 * leave it), asked about by cuGraphNodeGetEnabled, enabled again; then the
 * child graph node set by cuGraphExecChildGraphNodeSetParams to a graph of
 * the same shape whose kernel covers 6 floats. Each launch checked. */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

int cuGraphNodeSetEnabled(void *, void *, unsigned);
int cuGraphNodeGetEnabled(void *, void *, unsigned *);
int cuGraphExecChildGraphNodeSetParams(void *, void *, void *);

static int check(const char *what, CUdeviceptr d, int n, float fill) {
    float out[16];
    if (cuMemcpyDtoH_v2(out, d, sizeof out)) return 1;
    for (int i = 0; i < 16; i++) {
        float want = i < n ? (float)i : fill;
        if (out[i] != want) {
            printf("WRONG %s: [%d] = %g, want %g\n", what, i, out[i], want);
            return 1;
        }
    }
    return 0;
}

int main(void) {
    const unsigned minus_one = 0xbf800000u; /* -1.0f */
    CUdeviceptr d, d2;
    void *m, *f, *s = (void *)0x5000;
    CHECK(cuInit(0));
    CHECK(cuMemAlloc_v2(&d, 16 * sizeof(float)));
    CHECK(cuMemAlloc_v2(&d2, 16 * sizeof(float)));
    CHECK(cuMemsetD32_v2(d, minus_one, 16));
    CHECK(cuMemsetD32_v2(d2, minus_one, 16));
    CHECK(cuModuleLoadData(&m, IOTA_PTX));
    CHECK(cuModuleGetFunction(&f, m, "iota"));

    void *g, *child, *child2, *k, *ck, *ck2, *c, *exec;
    int n = 8, n_child = 4, n_child2 = 6;
    void *params[] = {&d, &n};
    void *child_params[] = {&d2, &n_child};
    void *child2_params[] = {&d2, &n_child2};
    struct kernel_params p = {f, 1, 1, 1, 32, 1, 1, 0, params, NULL, NULL, NULL};
    struct kernel_params cp = {f, 1, 1, 1, 32, 1, 1, 0, child_params, NULL, NULL, NULL};
    struct kernel_params cp2 = {f, 1, 1, 1, 32, 1, 1, 0, child2_params, NULL, NULL, NULL};
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphCreate(&child, 0));
    CHECK(cuGraphCreate(&child2, 0));
    CHECK(cuGraphAddKernelNode_v2(&k, g, NULL, 0, &p));
    CHECK(cuGraphAddKernelNode_v2(&ck, child, NULL, 0, &cp));
    CHECK(cuGraphAddKernelNode_v2(&ck2, child2, NULL, 0, &cp2));
    CHECK(cuGraphAddChildGraphNode(&c, g, &k, 1, child));
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    if (check("first launch", d, 8, -1.0f) || check("first launch's child", d2, 4, -1.0f)) return 1;

    CHECK(cuMemsetD32_v2(d, minus_one, 16));
    CHECK(cuGraphNodeSetEnabled(exec, k, 0));
    unsigned enabled = 1;
    CHECK(cuGraphNodeGetEnabled(exec, k, &enabled));
    if (enabled) { printf("WRONG: the node is still enabled\n"); return 1; }
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    if (check("a disabled node", d, 0, -1.0f)) return 1;

    CHECK(cuGraphNodeSetEnabled(exec, k, 1));
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    if (check("the node enabled again", d, 8, -1.0f)) return 1;

    CHECK(cuGraphExecChildGraphNodeSetParams(exec, c, child2));
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    if (check("the child graph set", d2, 6, -1.0f)) return 1;
    CHECK(cuGraphExecDestroy(exec));
    printf("graph_setters: OK\n");
    return 0;
}
