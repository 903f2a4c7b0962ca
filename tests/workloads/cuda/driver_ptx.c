/* A driver-API program (linked with -lcuda, no runtime): PTX loaded with
 * cuModuleLoadData, a module global set through cuModuleGetGlobal, and the
 * same kernel launched three ways: kernelParams, the `extra` parameter
 * buffer, and cuLaunchKernelEx with a cluster attribute and 64 KiB of
 * dynamic shared memory (opted in with cuFuncSetAttribute, which replay
 * must redo on its own).
 * Build: nvcc -o driver_ptx driver_ptx.c -lcuda */
#include <string.h>
#include "driver_common.h"

int main(void) {
    enum { N = 1 << 16 };
    CUdevice dev;
    CUcontext ctx;
    CKD(cuInit(0));
    CKD(cuDeviceGet(&dev, 0));
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));

    CUmodule mod;
    CUfunction f;
    CKD(cuModuleLoadData(&mod, SCALE_BIAS_PTX));
    CKD(cuModuleGetFunction(&f, mod, "scale_bias"));
    CUdeviceptr bias;
    size_t bias_size;
    CKD(cuModuleGetGlobal(&bias, &bias_size, mod, "bias"));
    float b = 0.25f;
    CKD(cuMemcpyHtoD(bias, &b, sizeof b));

    static float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i % 1000) * 0.5f;
    CUdeviceptr dx, dy;
    CKD(cuMemAlloc(&dx, sizeof x));
    CKD(cuMemAlloc(&dy, sizeof y));
    CKD(cuMemcpyHtoD(dx, x, sizeof x));
    CKD(cuMemsetD32(dy, 0x7fc00000u, N)); /* NaN until written */

    int n = N;
    float a = 2.0f;
    void *params[] = {&dy, &dx, &a, &n};
    CKD(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    CKD(cuMemcpyDtoH(y, dy, sizeof y));
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= y[i] == 2.0f * x[i] + 0.25f;
    int rc = report_c("driver_ptx", ok, "kernelParams launch");

    /* The packed parameter buffer: y, x, a, n at their offsets. */
    struct { CUdeviceptr y, x; float a; int n; } buf = {dy, dx, 3.0f, N};
    size_t size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    CKD(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
    CKD(cuMemcpyDtoH(y, dy, sizeof y));
    ok = 1;
    for (int i = 0; i < N; i++) ok &= y[i] == 3.0f * x[i] + 0.25f;
    rc |= report_c("driver_ptx", ok, "extra-buffer launch");

    /* cuLaunchKernelEx: a cluster of one block, 64 KiB of dynamic shared memory. */
    CKD(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = 1;
    attr.value.clusterDim.y = 1;
    attr.value.clusterDim.z = 1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = N / 256;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 256;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = 65536;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    a = 4.0f;
    CKD(cuLaunchKernelEx(&cfg, f, params, NULL));
    CKD(cuMemcpyDtoH(y, dy, sizeof y));
    ok = 1;
    for (int i = 0; i < N; i++) ok &= y[i] == 4.0f * x[i] + 0.25f;
    rc |= report_c("driver_ptx", ok, "cuLaunchKernelEx launch");

    CKD(cuMemFree(dx));
    CKD(cuMemFree(dy));
    CKD(cuModuleUnload(mod));
    CKD(cuDevicePrimaryCtxRelease(dev));
    return rc;
}
