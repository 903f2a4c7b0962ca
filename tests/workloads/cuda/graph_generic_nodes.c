/* A CUDA graph built with the generic node API through the driver (linked
 * with -lcuda, no runtime), as XLA builds its command buffers: every node
 * added by cuGraphAddNode_v2 (what cuda.h's cuGraphAddNode names from CUDA
 * 12.3): an H2D copy node from page-locked host memory, a memset node, a
 * kernel node depending on both, a second kernel behind a programmatic edge
 * (edge data: it may start before the first ends, and reads only x), an
 * empty node joining them, a third kernel, two D2H copy nodes into
 * page-locked host memory, and a host node (CU_GRAPH_NODE_TYPE_HOST) after
 * the second D2H that checks the bytes it wrote and overwrites them, as
 * NVIDIA's simpleCudaGraphs does: the program sees the overwritten bytes,
 * the capture must record the copied ones (replay runs no host function).
 * Launched three times with the host input refilled each time; between
 * launches cuGraphExecNodeSetParams changes the first kernel's scale
 * argument, then the copy node's source buffer.
 *
 *   y = a*x + bias (a: 2, then 3); z = 0.5*y + bias; w = 4*x + bias;
 *   bias = 0.25
 *
 * Build: nvcc -o graph_generic_nodes graph_generic_nodes.c -lcuda */
#include <string.h>
#include "driver_common.h"

enum { N = 1 << 16 };

static CUgraphNodeParams copy_node(CUcontext ctx, CUmemorytype dt, void *dh, CUdeviceptr dd,
                                   CUmemorytype st, const void *sh, CUdeviceptr sd, size_t bytes) {
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    p.memcpy.copyCtx = ctx;
    CUDA_MEMCPY3D *c = &p.memcpy.copyParams;
    c->srcMemoryType = st;
    c->srcHost = sh;
    c->srcDevice = sd;
    c->srcPitch = bytes;
    c->srcHeight = 1;
    c->dstMemoryType = dt;
    c->dstHost = dh;
    c->dstDevice = dd;
    c->dstPitch = bytes;
    c->dstHeight = 1;
    c->WidthInBytes = bytes;
    c->Height = 1;
    c->Depth = 1;
    return p;
}

/* What the host node checks and overwrites: w as the D2H node wrote it. */
struct scrub {
    float *w;
    const float *in;
    int ok, runs;
};

static void scrub_w(void *p) {
    struct scrub *s = p;
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= s->w[i] == 4.0f * s->in[i] + 0.25f;
    s->ok = ok;
    s->runs++;
    memset(s->w, 0xff, N * sizeof(float));
}

static CUgraphNodeParams kernel_node(CUfunction f, void **args) {
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_KERNEL;
    p.kernel.func = f;
    p.kernel.gridDimX = N / 256;
    p.kernel.gridDimY = p.kernel.gridDimZ = 1;
    p.kernel.blockDimX = 256;
    p.kernel.blockDimY = p.kernel.blockDimZ = 1;
    p.kernel.kernelParams = args;
    return p;
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    CKD(cuInit(0));
    CKD(cuDeviceGet(&dev, 0));
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));
    CUstream s;
    CKD(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    CUmodule mod;
    CUfunction f;
    CKD(cuModuleLoadData(&mod, SCALE_BIAS_PTX));
    CKD(cuModuleGetFunction(&f, mod, "scale_bias"));
    CUdeviceptr bias;
    size_t bias_size;
    CKD(cuModuleGetGlobal(&bias, &bias_size, mod, "bias"));
    float b = 0.25f;
    CKD(cuMemcpyHtoD(bias, &b, sizeof b));

    const size_t bytes = N * sizeof(float);
    float *hx, *hx2, *hz, *hw;
    CKD(cuMemAllocHost((void **)&hx, bytes));
    CKD(cuMemAllocHost((void **)&hx2, bytes));
    CKD(cuMemAllocHost((void **)&hz, bytes));
    CKD(cuMemAllocHost((void **)&hw, bytes));
    CUdeviceptr dx, dy, dz, dw;
    CKD(cuMemAlloc(&dx, bytes));
    CKD(cuMemAlloc(&dy, bytes));
    CKD(cuMemAlloc(&dz, bytes));
    CKD(cuMemAlloc(&dw, bytes));

    CUgraph g;
    CKD(cuGraphCreate(&g, 0));
    CUgraphNode up, clear, k1, k3, join, k2, down, down_w, host;
    CUgraphNodeParams p = copy_node(ctx, CU_MEMORYTYPE_DEVICE, NULL, dx, CU_MEMORYTYPE_HOST, hx, 0, bytes);
    CKD(cuGraphAddNode_v2(&up, g, NULL, NULL, 0, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEMSET;
    p.memset.dst = dy;
    p.memset.value = 0x7fc00000u; /* NaN until the kernel writes */
    p.memset.elementSize = 4;
    p.memset.width = N;
    p.memset.height = 1;
    p.memset.ctx = ctx;
    CKD(cuGraphAddNode_v2(&clear, g, NULL, NULL, 0, &p));

    int n = N;
    float a1 = 2.0f, a2 = 0.5f, a3 = 4.0f;
    void *p1[] = {&dy, &dx, &a1, &n};
    void *p2[] = {&dz, &dy, &a2, &n};
    void *p3[] = {&dw, &dx, &a3, &n};
    CUgraphNode before_k1[] = {up, clear};
    p = kernel_node(f, p1);
    CKD(cuGraphAddNode_v2(&k1, g, before_k1, NULL, 2, &p));
    /* k3 needs x (an ordinary edge from the upload) and not y: its edge
     * from k1 is programmatic, so it may start while k1 runs. */
    CUgraphNode before_k3[] = {up, k1};
    CUgraphEdgeData edges[2];
    memset(edges, 0, sizeof edges);
    edges[1].from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
    edges[1].type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    p = kernel_node(f, p3);
    CKD(cuGraphAddNode_v2(&k3, g, before_k3, edges, 2, &p));
    CUgraphNode before_join[] = {k1, k3};
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_EMPTY;
    CKD(cuGraphAddNode_v2(&join, g, before_join, NULL, 2, &p));
    p = kernel_node(f, p2);
    CKD(cuGraphAddNode_v2(&k2, g, &join, NULL, 1, &p));
    p = copy_node(ctx, CU_MEMORYTYPE_HOST, hz, 0, CU_MEMORYTYPE_DEVICE, NULL, dz, bytes);
    CKD(cuGraphAddNode_v2(&down, g, &k2, NULL, 1, &p));
    p = copy_node(ctx, CU_MEMORYTYPE_HOST, hw, 0, CU_MEMORYTYPE_DEVICE, NULL, dw, bytes);
    CKD(cuGraphAddNode_v2(&down_w, g, &join, NULL, 1, &p));
    struct scrub sc = {hw, hx, 0, 0};
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_HOST;
    p.host.fn = scrub_w;
    p.host.userData = &sc;
    CKD(cuGraphAddNode_v2(&host, g, &down_w, NULL, 1, &p));

    CUgraphExec exec;
    CKD(cuGraphInstantiate(&exec, g, 0));
    int rc = 0;
    for (int it = 0; it < 3; it++) {
        float *in = it == 2 ? hx2 : hx;
        for (int i = 0; i < N; i++) in[i] = (float)((i * 3 + it * 7) % 1000) * 0.5f;
        if (it == 1) {
            /* The first kernel's scale, in the executable graph only. */
            a1 = 3.0f;
            p = kernel_node(f, p1);
            CKD(cuGraphExecNodeSetParams(exec, k1, &p));
        }
        if (it == 2) {
            /* The upload reads the second host buffer from now on. */
            p = copy_node(ctx, CU_MEMORYTYPE_DEVICE, NULL, dx, CU_MEMORYTYPE_HOST, hx2, 0, bytes);
            CKD(cuGraphExecNodeSetParams(exec, up, &p));
        }
        sc.in = in;
        CKD(cuGraphLaunch(exec, s));
        CKD(cuStreamSynchronize(s));
        float a = it == 0 ? 2.0f : 3.0f;
        /* w as copied, checked by the host node, which then overwrote it. */
        int ok = sc.ok && sc.runs == it + 1;
        for (int i = 0; i < N; i++) {
            ok &= hz[i] == 0.5f * (a * in[i] + 0.25f) + 0.25f;
            ok &= ((const unsigned char *)hw)[i] == 0xff;
        }
        char what[64];
        snprintf(what, sizeof what, "graph launch %d", it);
        rc |= report_c("graph_generic_nodes", ok, what);
    }
    CKD(cuGraphExecDestroy(exec));
    CKD(cuGraphDestroy(g));
    CKD(cuMemFree(dx));
    CKD(cuMemFree(dy));
    CKD(cuMemFree(dz));
    CKD(cuMemFree(dw));
    CKD(cuMemFreeHost(hx));
    CKD(cuMemFreeHost(hx2));
    CKD(cuMemFreeHost(hz));
    CKD(cuMemFreeHost(hw));
    CKD(cuStreamDestroy(s));
    return rc;
}
