/* Graphs on libhrr_hip_cpu.so: a stream-captured graph (H2D from a host
 * buffer the program changes between launches, a kernel, a memset, a D2H)
 * launched twice; a graph built node by node (kernel, 1D copies, memset,
 * empty, child graph, event record/wait, dependencies) launched, its kernel
 * node's argument changed with hipGraphExecKernelNodeSetParams, launched
 * again; the query API a recorder walks graphs with; hipGraphExecUpdate; a
 * host node, and a 3D-described copy node after it. argv[1]: the kernels .so
 * (saxpy). */
#include <hip/hip_runtime_api.h>
#include "common.h"

enum { N = 1000 };

static int host_calls;
static void host_fn(void *p) { host_calls += *(int *)p; }

static int all_eq(const float *v, int n, float want) {
    for (int i = 0; i < n; i++)
        if (v[i] != want) {
            printf("mismatch at %d: %f vs %f\n", i, v[i], want);
            return 0;
        }
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    hipModule_t m;
    hipFunction_t saxpy;
    OK(hipModuleLoad(&m, argv[1]));
    OK(hipModuleGetFunction(&saxpy, m, "saxpy"));
    float *dx, *dy;
    OK(hipMalloc((void **)&dx, N * sizeof(float)));
    OK(hipMalloc((void **)&dy, N * sizeof(float)));
    static float hx[N], hy[N];
    float a = 2.0f;
    uint32_t n = N;
    hipStream_t s;
    OK(hipStreamCreate(&s));

    /* 1. stream capture: y = 0 (memset); x <- hx; y = a*x + y; hy <- y */
    hipStreamCaptureStatus st = hipStreamCaptureStatusActive;
    OK(hipStreamIsCapturing(s, &st));
    CHECK(st == hipStreamCaptureStatusNone);
    OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    OK(hipStreamIsCapturing(s, &st));
    CHECK(st == hipStreamCaptureStatusActive);
    unsigned long long cid = 0;
    OK(hipStreamGetCaptureInfo(s, &st, &cid));
    CHECK(st == hipStreamCaptureStatusActive && cid != 0);
    for (int i = 0; i < N; i++) hx[i] = 1.0f;
    OK(hipMemsetAsync(dy, 0, N * sizeof(float), s));
    OK(hipMemcpyAsync(dx, hx, sizeof hx, hipMemcpyHostToDevice, s));
    void *params[] = {&dy, &dx, &a, &n};
    OK(hipModuleLaunchKernel(saxpy, (N + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
    OK(hipMemcpyAsync(hy, dy, sizeof hy, hipMemcpyDeviceToHost, s));
    /* nothing ran: the work is in the graph */
    EXPECT(hipStreamSynchronize(s), hipErrorStreamCaptureUnsupported);
    CHECK(hy[0] == 0.0f);
    hipGraph_t g;
    OK(hipStreamEndCapture(s, &g));
    OK(hipStreamIsCapturing(s, &st));
    CHECK(st == hipStreamCaptureStatusNone);
    EXPECT(hipStreamEndCapture(s, &g), hipErrorStreamCaptureUnmatched);

    size_t count = 0;
    OK(hipGraphGetNodes(g, NULL, &count));
    CHECK(count == 4);
    hipGraphNode_t nodes[4];
    OK(hipGraphGetNodes(g, nodes, &count));
    hipGraphNodeType t;
    OK(hipGraphNodeGetType(nodes[0], &t));
    CHECK(t == hipGraphNodeTypeMemset);
    OK(hipGraphNodeGetType(nodes[1], &t));
    CHECK(t == hipGraphNodeTypeMemcpy);
    OK(hipGraphNodeGetType(nodes[2], &t));
    CHECK(t == hipGraphNodeTypeKernel);
    size_t nd = 0;
    hipGraphNode_t dep = NULL;
    OK(hipGraphNodeGetDependencies(nodes[2], NULL, &nd));
    CHECK(nd == 1);
    OK(hipGraphNodeGetDependencies(nodes[2], &dep, &nd));
    CHECK(dep == nodes[1]);
    hipKernelNodeParams kp;
    OK(hipGraphKernelNodeGetParams(nodes[2], &kp));
    CHECK(kp.func == (void *)saxpy && kp.gridDim.x == 4 && kp.blockDim.x == 256);
    CHECK(kp.kernelParams && *(float **)kp.kernelParams[0] == dy && *(float *)kp.kernelParams[2] == a);
    hipMemcpy3DParms cp;
    OK(hipGraphMemcpyNodeGetParams(nodes[1], &cp));
    CHECK(cp.dstPtr.ptr == dx && cp.srcPtr.ptr == hx && cp.extent.width == sizeof hx);
    hipMemsetParams mp;
    OK(hipGraphMemsetNodeGetParams(nodes[0], &mp));
    CHECK(mp.dst == dy && mp.elementSize == 1 && mp.width == N * sizeof(float));
    EXPECT(hipGraphMemsetNodeGetParams(nodes[2], &mp), hipErrorInvalidValue);

    hipGraphExec_t ge;
    OK(hipGraphInstantiate(&ge, g, NULL, NULL, 0));
    OK(hipGraphLaunch(ge, s));
    OK(hipStreamSynchronize(s));
    CHECK(all_eq(hy, N, 2.0f));
    for (int i = 0; i < N; i++) hx[i] = 3.0f; /* read again at the next launch */
    OK(hipGraphLaunch(ge, s));
    OK(hipStreamSynchronize(s));
    CHECK(all_eq(hy, N, 6.0f));

    /* 2. nodes: memset y; H2D x; (deps both) kernel; child{D2H}; empty; event record; wait */
    hipGraph_t g2, child;
    OK(hipGraphCreate(&g2, 0));
    OK(hipGraphCreate(&child, 0));
    hipGraphNode_t n_set, n_h2d, n_k, n_child, n_empty, n_rec, n_wait, n_d2h;
    hipMemsetParams ms = {.dst = dy, .elementSize = 4, .height = 1, .pitch = 0, .value = 0x3f800000u, .width = N};
    OK(hipGraphAddMemsetNode(&n_set, g2, NULL, 0, &ms));
    for (int i = 0; i < N; i++) hx[i] = 1.0f;
    OK(hipGraphAddMemcpyNode1D(&n_h2d, g2, NULL, 0, dx, hx, sizeof hx, hipMemcpyHostToDevice));
    hipGraphNode_t both[] = {n_set, n_h2d};
    hipKernelNodeParams k = {.blockDim = {256, 1, 1}, .extra = NULL, .func = (void *)saxpy,
                             .gridDim = {4, 1, 1}, .kernelParams = params, .sharedMemBytes = 0};
    OK(hipGraphAddKernelNode(&n_k, g2, both, 2, &k));
    OK(hipGraphAddMemcpyNode1D(&n_d2h, child, NULL, 0, hy, dy, sizeof hy, hipMemcpyDeviceToHost));
    OK(hipGraphAddChildGraphNode(&n_child, g2, &n_k, 1, child));
    OK(hipGraphAddEmptyNode(&n_empty, g2, &n_child, 1));
    hipEvent_t ev;
    OK(hipEventCreate(&ev));
    OK(hipGraphAddEventRecordNode(&n_rec, g2, &n_empty, 1, ev));
    OK(hipGraphAddEventWaitNode(&n_wait, g2, &n_rec, 1, ev));
    EXPECT(hipGraphAddEmptyNode(&n_empty, g2, (hipGraphNode_t *)&ev, 1), hipErrorInvalidValue);
    hipGraph_t got;
    OK(hipGraphChildGraphNodeGetGraph(n_child, &got));
    count = 0;
    OK(hipGraphGetNodes(got, NULL, &count));
    CHECK(count == 1);
    hipEvent_t ev_got;
    OK(hipGraphEventRecordNodeGetEvent(n_rec, &ev_got));
    CHECK(ev_got == ev);
    OK(hipGraphEventWaitNodeGetEvent(n_wait, &ev_got));
    CHECK(ev_got == ev);
    OK(hipGraphGetRootNodes(g2, NULL, &count));
    CHECK(count == 2);

    hipGraphExec_t ge2;
    OK(hipGraphInstantiateWithFlags(&ge2, g2, 0));
    OK(hipGraphLaunch(ge2, s));
    OK(hipStreamSynchronize(s));
    CHECK(all_eq(hy, N, 3.0f)); /* 2*1 + 1 */
    float a2 = 5.0f;
    void *params2[] = {&dy, &dx, &a2, &n};
    k.kernelParams = params2;
    OK(hipGraphExecKernelNodeSetParams(ge2, n_k, &k));
    OK(hipGraphLaunch(ge2, s));
    OK(hipStreamSynchronize(s));
    CHECK(all_eq(hy, N, 6.0f)); /* 5*1 + 1 */
    /* the graph itself kept its parameters: a new instance computes 3 again */
    hipGraphExec_t ge3;
    OK(hipGraphInstantiate(&ge3, g2, NULL, NULL, 0));
    OK(hipGraphLaunch(ge3, NULL));
    OK(hipDeviceSynchronize());
    CHECK(all_eq(hy, N, 3.0f));
    /* hipGraphExecUpdate: same shape, new parameters */
    OK(hipGraphKernelNodeSetParams(n_k, &k));
    hipGraphExecUpdateResult ur = hipGraphExecUpdateError;
    hipGraphNode_t err_node;
    OK(hipGraphExecUpdate(ge3, g2, &err_node, &ur));
    CHECK(ur == hipGraphExecUpdateSuccess);
    OK(hipGraphLaunch(ge3, s));
    OK(hipStreamSynchronize(s));
    CHECK(all_eq(hy, N, 6.0f));
    EXPECT(hipGraphExecUpdate(ge3, g, &err_node, &ur), hipErrorGraphExecUpdateFailure);
    CHECK(ur == hipGraphExecUpdateErrorTopologyChanged);

    /* 3. a host node runs, in order, on the stream */
    hipGraph_t g3;
    hipGraphNode_t n_host;
    OK(hipGraphCreate(&g3, 0));
    int inc = 7;
    hipHostNodeParams hp = {host_fn, &inc};
    OK(hipGraphAddHostNode(&n_host, g3, NULL, 0, &hp));
    OK(hipGraphNodeGetType(n_host, &t));
    CHECK(t == hipGraphNodeTypeHost);
    hipHostNodeParams hp_got = {NULL, NULL};
    OK(hipGraphHostNodeGetParams(n_host, &hp_got));
    CHECK(hp_got.fn == host_fn && hp_got.userData == &inc);
    EXPECT(hipGraphHostNodeGetParams(n_k, &hp_got), hipErrorInvalidValue);
    /* a 3D-described copy node after it: the captured H2D's parameters */
    hipGraphNode_t n_cp;
    OK(hipGraphAddMemcpyNode(&n_cp, g3, &n_host, 1, &cp));
    hipMemcpy3DParms cp_got;
    OK(hipGraphMemcpyNodeGetParams(n_cp, &cp_got));
    CHECK(cp_got.dstPtr.ptr == dx && cp_got.srcPtr.ptr == hx && cp_got.extent.width == sizeof hx);
    EXPECT(hipGraphAddMemcpyNode(&n_cp, g3, NULL, 0, NULL), hipErrorInvalidValue);
    EXPECT(hipGraphMemcpyNodeGetParams(n_host, &cp_got), hipErrorInvalidValue);
    hipGraphExec_t ge4;
    OK(hipGraphInstantiate(&ge4, g3, NULL, NULL, 0));
    OK(hipGraphLaunch(ge4, s));
    OK(hipGraphLaunch(ge4, s));
    OK(hipStreamSynchronize(s));
    CHECK(host_calls == 14);

    OK(hipGraphExecDestroy(ge));
    OK(hipGraphExecDestroy(ge2));
    OK(hipGraphExecDestroy(ge3));
    OK(hipGraphExecDestroy(ge4));
    EXPECT(hipGraphExecDestroy(ge4), hipErrorInvalidValue);
    OK(hipGraphDestroy(g));
    OK(hipGraphDestroy(g2));
    OK(hipGraphDestroy(child));
    OK(hipGraphDestroy(g3));
    EXPECT(hipGraphNodeGetType(n_k, &t), hipErrorInvalidValue);
    OK(hipStreamDestroy(s));
    return finish("graph");
}
