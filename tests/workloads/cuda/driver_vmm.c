/* Virtual memory management as PyTorch's expandable segments use it: a
 * large reservation, 2 MiB-granular pieces created and mapped one after
 * the other, a buffer spanning two pieces written, computed on and read
 * back, then everything unmapped and released. Replay must give the
 * reservation one contiguous range, whatever backs the pieces.
 * Build: nvcc -o driver_vmm driver_vmm.c -lcuda */
#include <string.h>
#include "driver_common.h"

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    CKD(cuInit(0));
    CKD(cuDeviceGet(&dev, 0));
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));

    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0;
    CKD(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    const size_t reserve = 64 * gran;
    CUdeviceptr va;
    CKD(cuMemAddressReserve(&va, reserve, 0, 0, 0));
    CUmemGenericAllocationHandle h[2];
    for (int i = 0; i < 2; i++) {
        CKD(cuMemCreate(&h[i], gran, &prop, 0));
        CKD(cuMemMap(va + i * gran, gran, 0, h[i], 0));
    }
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CKD(cuMemSetAccess(va, 2 * gran, &access, 1));

    /* N floats centred on the boundary between the two pieces. */
    enum { N = 1 << 18 };
    static float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i % 777);
    CUdeviceptr at = va + gran - (N / 2) * sizeof(float);
    CKD(cuMemcpyHtoD(at, x, sizeof x));

    CUmodule mod;
    CUfunction f;
    CKD(cuModuleLoadData(&mod, SCALE_BIAS_PTX));
    CKD(cuModuleGetFunction(&f, mod, "scale_bias"));
    CUdeviceptr bias;
    size_t bias_size;
    CKD(cuModuleGetGlobal(&bias, &bias_size, mod, "bias"));
    CKD(cuMemsetD32(bias, 0, 1));
    int n = N;
    float a = 3.0f;
    void *params[] = {&at, &at, &a, &n};
    CKD(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    CKD(cuMemcpyDtoH(y, at, sizeof y));
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= y[i] == 3.0f * x[i];
    /* The second piece alone, read back at its own address. */
    CKD(cuMemcpyDtoH(y, va + gran, (N / 2) * sizeof(float)));
    for (int i = 0; i < N / 2; i++) ok &= y[i] == 3.0f * x[N / 2 + i];
    int rc = report_c("driver_vmm", ok, "a buffer across two mapped pieces");

    CKD(cuMemUnmap(va, 2 * gran));
    for (int i = 0; i < 2; i++) CKD(cuMemRelease(h[i]));
    CKD(cuMemAddressFree(va, reserve));
    CKD(cuModuleUnload(mod));
    CKD(cuDevicePrimaryCtxRelease(dev));
    return rc;
}
