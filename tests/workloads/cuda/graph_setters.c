/* Executable-graph changes that are not node parameters, through the
 * driver (linked with -lcuda, no runtime): a graph of a kernel node
 * (y = 2*x + bias) and a child graph node after it (a kernel, z = 0.5*y +
 * bias), launched; the first kernel disabled by cuGraphNodeSetEnabled (y
 * cleared first: the launch must leave it cleared, and the child reads
 * zeros), enabled again; then the child graph node set by
 * cuGraphExecChildGraphNodeSetParams to a graph of the same shape whose
 * kernel scales by 3. Each launch's y and z read back and checked.
 *
 * Build: nvcc -o graph_setters graph_setters.c -lcuda */
#include <string.h>
#include "driver_common.h"

enum { N = 1 << 14 };

static CUDA_KERNEL_NODE_PARAMS kernel(CUfunction f, void **args) {
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = N / 256;
    p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 256;
    p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args;
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
    static float hx[N], hy[N], hz[N];
    for (int i = 0; i < N; i++) hx[i] = (float)(i % 1000) * 0.5f;
    CUdeviceptr dx, dy, dz;
    CKD(cuMemAlloc(&dx, bytes));
    CKD(cuMemAlloc(&dy, bytes));
    CKD(cuMemAlloc(&dz, bytes));
    CKD(cuMemcpyHtoD(dx, hx, bytes));

    int n = N;
    float a1 = 2.0f, a2 = 0.5f, a3 = 3.0f;
    void *p1[] = {&dy, &dx, &a1, &n};
    void *p2[] = {&dz, &dy, &a2, &n};
    void *p3[] = {&dz, &dy, &a3, &n};
    CUgraph g, child, child2;
    CUgraphNode k, ck, ck2, c;
    CKD(cuGraphCreate(&g, 0));
    CKD(cuGraphCreate(&child, 0));
    CKD(cuGraphCreate(&child2, 0));
    CUDA_KERNEL_NODE_PARAMS kp = kernel(f, p1);
    CKD(cuGraphAddKernelNode(&k, g, NULL, 0, &kp));
    kp = kernel(f, p2);
    CKD(cuGraphAddKernelNode(&ck, child, NULL, 0, &kp));
    kp = kernel(f, p3);
    CKD(cuGraphAddKernelNode(&ck2, child2, NULL, 0, &kp));
    CKD(cuGraphAddChildGraphNode(&c, g, &k, 1, child));
    CUgraphExec exec;
    CKD(cuGraphInstantiate(&exec, g, 0));

    int rc = 0;
    /* Each step: what y's and z's scales are (0 for y: the kernel is off). */
    const struct { const char *what; float ay, az; } steps[] = {
        {"as instantiated", 2.0f, 0.5f},
        {"the first kernel disabled", 0.0f, 0.5f},
        {"the first kernel enabled again", 2.0f, 0.5f},
        {"the child graph set", 2.0f, 3.0f},
    };
    for (int it = 0; it < 4; it++) {
        if (it == 1) {
            CKD(cuMemsetD32(dy, 0, N));
            CKD(cuCtxSynchronize());
            CKD(cuGraphNodeSetEnabled(exec, k, 0));
            unsigned on = 1;
            CKD(cuGraphNodeGetEnabled(exec, k, &on));
            if (on) rc |= report_c("graph_setters", 0, "cuGraphNodeGetEnabled says disabled");
        } else if (it == 2) {
            CKD(cuGraphNodeSetEnabled(exec, k, 1));
        } else if (it == 3) {
            CKD(cuGraphExecChildGraphNodeSetParams(exec, c, child2));
        }
        CKD(cuGraphLaunch(exec, s));
        CKD(cuStreamSynchronize(s));
        CKD(cuMemcpyDtoH(hy, dy, bytes));
        CKD(cuMemcpyDtoH(hz, dz, bytes));
        int ok = 1;
        for (int i = 0; i < N && ok; i++) {
            float y = steps[it].ay == 0.0f ? 0.0f : steps[it].ay * hx[i] + b;
            ok = hy[i] == y && hz[i] == steps[it].az * y + b;
        }
        rc |= report_c("graph_setters", ok, steps[it].what);
    }
    CKD(cuGraphExecDestroy(exec));
    CKD(cuGraphDestroy(g));
    CKD(cuGraphDestroy(child));
    CKD(cuGraphDestroy(child2));
    return rc;
}
