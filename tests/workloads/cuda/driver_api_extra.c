/* Driver-API calls real programs make beyond allocations, copies and
 * launches, on one GPU: NCCL's handle handling (cuMemRetainAllocationHandle
 * of a mapped pointer, released twice around the unmap; an allocation
 * exported as a file descriptor and imported again, mapped a second
 * time), host functions and stream callbacks between kernels on a
 * stream (one writing mapped pinned memory the next kernel reads), and
 * peer copies from device 0 to device 0. Every result is read back. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "driver_common.h"

#define N 4096

static float *hx;
static int ran;

static void CUDA_CB write_x(void *data) {
    int k = *(int *)data;
    for (int i = 0; i < N; i++) hx[i] = (float)(i * k) + 0.25f;
    ran++;
}

static void CUDA_CB callback(CUstream s, CUresult status, void *data) {
    (void)s;
    (void)data;
    if (status == CUDA_SUCCESS) ran++;
}

int main(void) {
    CKD(cuInit(0));
    CUdevice dev;
    CKD(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CKD(cuDevicePrimaryCtxRetain(&ctx, dev));
    CKD(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CUfunction f;
    CKD(cuModuleLoadData(&mod, SCALE_BIAS_PTX));
    CKD(cuModuleGetFunction(&f, mod, "scale_bias"));
    CUdeviceptr bias;
    size_t bias_size;
    CKD(cuModuleGetGlobal(&bias, &bias_size, mod, "bias"));
    CKD(cuMemsetD32(bias, 0, 1));

    /* Virtual memory handles. */
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t g;
    CKD(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUdeviceptr va;
    CKD(cuMemAddressReserve(&va, 4 * g, 0, 0, 0));
    CUmemGenericAllocationHandle h, again, imported;
    CKD(cuMemCreate(&h, g, &prop, 0));
    CKD(cuMemMap(va, g, 0, h, 0));
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = 0;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CKD(cuMemSetAccess(va, g, &acc, 1));
    static float in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (float)i;
    CKD(cuMemcpyHtoD(va, in, sizeof in));
    CKD(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(va + 64)));
    CKD(cuMemRelease(again));
    int fd = -1;
    CKD(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CKD(cuMemImportFromShareableHandle(&imported, (void *)(uintptr_t)fd,
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CKD(cuMemMap(va + g, g, 0, imported, 0));
    CKD(cuMemSetAccess(va + g, g, &acc, 1));
    CKD(cuMemcpyDtoH(out, va + g, sizeof out));
    if (memcmp(in, out, sizeof in)) { printf("WRONG imported mapping\n"); return 1; }

    /* Host functions between kernels; peer copies on device 0. */
    CUstream s;
    CKD(cuStreamCreate(&s, 0));
    CUdeviceptr dx, dy, dz;
    CKD(cuMemHostAlloc((void **)&hx, N * sizeof(float), CU_MEMHOSTALLOC_DEVICEMAP));
    CKD(cuMemHostGetDevicePointer(&dx, hx, 0));
    CKD(cuMemAlloc(&dy, N * sizeof(float)));
    CKD(cuMemAlloc(&dz, N * sizeof(float)));
    static int ks[4];
    for (int k = 1; k <= 3; k++) {
        ks[k] = k;
        CKD(cuLaunchHostFunc(s, write_x, &ks[k]));
        float a = 2.0f;
        int n = N;
        void *params[] = {&dy, &dx, &a, &n};
        CKD(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
        CKD(cuStreamAddCallback(s, callback, NULL, 0));
        CKD(cuMemcpyPeerAsync(dz, ctx, dy, ctx, N * sizeof(float), s));
        CKD(cuStreamSynchronize(s));
        CKD(cuMemcpyPeer(dy, ctx, dz, ctx, N * sizeof(float)));
        CKD(cuMemcpyDtoH(out, dy, sizeof out));
        for (int i = 0; i < N; i++)
            if (out[i] != 2.0f * ((float)(i * k) + 0.25f)) {
                printf("WRONG round %d: y[%d] = %g\n", k, i, out[i]);
                return 1;
            }
    }
    if (ran != 6) { printf("WRONG: %d host functions ran\n", ran); return 1; }

    /* NCCL's free, for both mappings. */
    CUdeviceptr at[] = {va, va + g};
    for (int k = 0; k < 2; k++) {
        CUmemGenericAllocationHandle mine;
        CKD(cuMemRetainAllocationHandle(&mine, (void *)(uintptr_t)at[k]));
        CKD(cuMemRelease(mine));
        CKD(cuMemUnmap(at[k], g));
        CKD(cuMemRelease(mine));
    }
    CKD(cuMemAddressFree(va, 4 * g));
    CKD(cuStreamDestroy(s));
    printf("driver_api_extra: OK\n");
    return 0;
}
