/* A CUDA graph built node by node through the driver API (linked with
 * -lcuda, no runtime): an H2D copy node from page-locked host memory, a
 * memset node, a kernel node depending on both (edges added with
 * cuGraphAddDependencies), an empty node, a child graph holding a second
 * kernel, and a D2H copy node into page-locked host memory. Launched three
 * times with the host input refilled each time; between launches the first
 * kernel node's scale changes (cuGraphExecKernelNodeSetParams) and then the
 * copy node's source buffer (cuGraphExecMemcpyNodeSetParams).
 *
 *   y = a*x + bias (a: 2, then 3); z = 0.5*y + bias; bias = 0.25
 *
 * Build: nvcc -o graph_nodes_driver graph_nodes_driver.c -lcuda */
#include <string.h>
#include "driver_common.h"

enum { N = 1 << 16 };

static CUDA_MEMCPY3D linear(CUmemorytype dt, void *dh, CUdeviceptr dd, CUmemorytype st,
                            const void *sh, CUdeviceptr sd, size_t bytes) {
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = st;
    c.srcHost = sh;
    c.srcDevice = sd;
    c.srcPitch = bytes;
    c.srcHeight = 1;
    c.dstMemoryType = dt;
    c.dstHost = dh;
    c.dstDevice = dd;
    c.dstPitch = bytes;
    c.dstHeight = 1;
    c.WidthInBytes = bytes;
    c.Height = 1;
    c.Depth = 1;
    return c;
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
    float *hx, *hx2, *hz;
    CKD(cuMemAllocHost((void **)&hx, bytes));
    CKD(cuMemAllocHost((void **)&hx2, bytes));
    CKD(cuMemAllocHost((void **)&hz, bytes));
    CUdeviceptr dx, dy, dz;
    CKD(cuMemAlloc(&dx, bytes));
    CKD(cuMemAlloc(&dy, bytes));
    CKD(cuMemAlloc(&dz, bytes));

    CUgraph g, child;
    CKD(cuGraphCreate(&g, 0));
    CKD(cuGraphCreate(&child, 0));
    CUgraphNode up, clear, k1, join, sub, k2, down;
    CUDA_MEMCPY3D c_up = linear(CU_MEMORYTYPE_DEVICE, NULL, dx, CU_MEMORYTYPE_HOST, hx, 0, bytes);
    CKD(cuGraphAddMemcpyNode(&up, g, NULL, 0, &c_up, ctx));
    CUDA_MEMSET_NODE_PARAMS ms;
    memset(&ms, 0, sizeof ms);
    ms.dst = dy;
    ms.value = 0x7fc00000u; /* NaN until the kernel writes */
    ms.elementSize = 4;
    ms.width = N;
    ms.height = 1;
    CKD(cuGraphAddMemsetNode(&clear, g, NULL, 0, &ms, ctx));

    int n = N;
    float a1 = 2.0f, a2 = 0.5f;
    void *p1[] = {&dy, &dx, &a1, &n};
    void *p2[] = {&dz, &dy, &a2, &n};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = f;
    kp.gridDimX = N / 256;
    kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = 256;
    kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = p1;
    CKD(cuGraphAddKernelNode(&k1, g, NULL, 0, &kp));
    CUgraphNode from[] = {up, clear}, to[] = {k1, k1};
    CKD(cuGraphAddDependencies(g, from, to, NULL, 2));
    CKD(cuGraphAddEmptyNode(&join, g, &k1, 1));
    kp.kernelParams = p2;
    CKD(cuGraphAddKernelNode(&k2, child, NULL, 0, &kp));
    CKD(cuGraphAddChildGraphNode(&sub, g, &join, 1, child));
    CUDA_MEMCPY3D c_down = linear(CU_MEMORYTYPE_HOST, hz, 0, CU_MEMORYTYPE_DEVICE, NULL, dz, bytes);
    CKD(cuGraphAddMemcpyNode(&down, g, &sub, 1, &c_down, ctx));

    CUgraphExec exec;
    CKD(cuGraphInstantiate(&exec, g, 0));
    int rc = 0;
    for (int it = 0; it < 3; it++) {
        float *in = it == 2 ? hx2 : hx;
        for (int i = 0; i < N; i++) in[i] = (float)((i * 3 + it * 7) % 1000) * 0.5f;
        if (it == 1) {
            /* The first kernel's scale, in the executable graph only. */
            a1 = 3.0f;
            kp.kernelParams = p1;
            CKD(cuGraphExecKernelNodeSetParams(exec, k1, &kp));
        }
        if (it == 2) {
            /* The upload reads the second host buffer from now on. */
            CUDA_MEMCPY3D c2 = linear(CU_MEMORYTYPE_DEVICE, NULL, dx, CU_MEMORYTYPE_HOST, hx2, 0, bytes);
            CKD(cuGraphExecMemcpyNodeSetParams(exec, up, &c2, ctx));
        }
        CKD(cuGraphLaunch(exec, s));
        CKD(cuStreamSynchronize(s));
        float a = it == 0 ? 2.0f : 3.0f;
        int ok = 1;
        for (int i = 0; i < N; i++) ok &= hz[i] == 0.5f * (a * in[i] + 0.25f) + 0.25f;
        char what[64];
        snprintf(what, sizeof what, "graph launch %d", it);
        rc |= report_c("graph_nodes_driver", ok, what);
    }
    CKD(cuGraphExecDestroy(exec));
    CKD(cuGraphDestroy(g));
    CKD(cuGraphDestroy(child));
    CKD(cuMemFree(dx));
    CKD(cuMemFree(dy));
    CKD(cuMemFree(dz));
    CKD(cuMemFreeHost(hx));
    CKD(cuMemFreeHost(hx2));
    CKD(cuMemFreeHost(hz));
    CKD(cuStreamDestroy(s));
    return rc;
}
