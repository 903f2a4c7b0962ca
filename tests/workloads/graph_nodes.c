/* A graph built node by node: memset y and upload x (both roots), saxpy
 * depending on both, a child graph downloading y, an empty node, an event
 * record and a wait on it; launched, then its kernel node's `a` changed
 * with hipGraphExecKernelNodeSetParams and launched again. */
#include "hrr_workload.h"

#define N 1024

int main(void) {
    static float hx[N], hy[N];
    float *dx, *dy;
    CHECK(hipMalloc((void **)&dx, sizeof hx));
    CHECK(hipMalloc((void **)&dy, sizeof hy));
    hipModule_t mod = hrr_load_module_data("saxpy.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "saxpy"));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    hipEvent_t ev;
    CHECK(hipEventCreate(&ev));
    for (int i = 0; i < N; i++) hx[i] = (float)i;

    hipGraph_t g, child;
    CHECK(hipGraphCreate(&g, 0));
    CHECK(hipGraphCreate(&child, 0));
    hipGraphNode_t set, up, k, sub, empty, rec, wait, down;
    /* y = 1.0f everywhere (the bits of 1.0f, 4 bytes at a time) */
    hipMemsetParams ms = {.dst = dy, .elementSize = 4, .height = 1, .pitch = 0,
                          .value = 0x3f800000u, .width = N};
    CHECK(hipGraphAddMemsetNode(&set, g, NULL, 0, &ms));
    CHECK(hipGraphAddMemcpyNode1D(&up, g, NULL, 0, dx, hx, sizeof hx, hipMemcpyHostToDevice));
    float a = 3.0f;
    int n = N;
    void *params[] = {&a, &dx, &dy, &n};
    hipKernelNodeParams kp = {.blockDim = {128, 1, 1}, .extra = NULL, .func = (void *)fn,
                              .gridDim = {N / 128, 1, 1}, .kernelParams = params,
                              .sharedMemBytes = 0};
    hipGraphNode_t roots[] = {set, up};
    CHECK(hipGraphAddKernelNode(&k, g, roots, 2, &kp));
    CHECK(hipGraphAddMemcpyNode1D(&down, child, NULL, 0, hy, dy, sizeof hy, hipMemcpyDeviceToHost));
    CHECK(hipGraphAddChildGraphNode(&sub, g, &k, 1, child));
    CHECK(hipGraphAddEmptyNode(&empty, g, &sub, 1));
    CHECK(hipGraphAddEventRecordNode(&rec, g, &empty, 1, ev));
    CHECK(hipGraphAddEventWaitNode(&wait, g, &rec, 1, ev));
    hipGraphExec_t ge;
    CHECK(hipGraphInstantiateWithFlags(&ge, g, 0));

    CHECK(hipGraphLaunch(ge, s));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        EXPECT(hy[i] == 3.0f * hx[i] + 1.0f, "launch 1: y[%d] = %g", i, hy[i]);
    printf("graph_nodes: launch 1: y[2] = %g\n", hy[2]);

    float a2 = -0.5f;
    void *params2[] = {&a2, &dx, &dy, &n};
    kp.kernelParams = params2;
    CHECK(hipGraphExecKernelNodeSetParams(ge, k, &kp));
    CHECK(hipGraphLaunch(ge, s));
    CHECK(hipEventSynchronize(ev));
    CHECK(hipStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        EXPECT(hy[i] == -0.5f * hx[i] + 1.0f, "launch 2: y[%d] = %g", i, hy[i]);
    printf("graph_nodes: launch 2: y[2] = %g\n", hy[2]);

    CHECK(hipGraphExecDestroy(ge));
    CHECK(hipGraphDestroy(g));
    CHECK(hipGraphDestroy(child));
    CHECK(hipEventDestroy(ev));
    CHECK(hipStreamDestroy(s));
    printf("graph_nodes: OK\n");
    return 0;
}
