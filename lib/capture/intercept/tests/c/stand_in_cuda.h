/* What the CUDA test programs of the stand-in driver (fake_cuda/) share:
 * the driver functions they call, declared as they call them (these
 * programs do not include cuda.h: the stand-in has none), the check that
 * ends a program on the first error, and the PTX of the `iota` kernel. */
#ifndef HRR_STAND_IN_CUDA_H
#define HRR_STAND_IN_CUDA_H

#include <stddef.h>
#include <stdio.h>

typedef unsigned long long CUdeviceptr;
int cuInit(unsigned);
int cuMemAlloc_v2(CUdeviceptr *, size_t);
int cuMemFree_v2(CUdeviceptr);
int cuMemHostAlloc(void **, size_t, unsigned);
int cuMemFreeHost(void *);
int cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
int cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
int cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, void *);
int cuMemcpyDtoHAsync_v2(void *, CUdeviceptr, size_t, void *);
int cuMemsetD32_v2(CUdeviceptr, unsigned, size_t);
int cuMemsetD32Async(CUdeviceptr, unsigned, size_t, void *);
int cuMemAddressReserve(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
int cuMemAddressFree(CUdeviceptr, size_t);
int cuMemCreate(unsigned long long *, size_t, const void *, unsigned long long);
int cuMemRelease(unsigned long long);
int cuMemMap(CUdeviceptr, size_t, size_t, unsigned long long, unsigned long long);
int cuMemUnmap(CUdeviceptr, size_t);
int cuMemSetAccess(CUdeviceptr, size_t, const void *, size_t);
int cuModuleLoadData(void **, const void *);
int cuModuleGetFunction(void **, void *, const char *);
int cuModuleGetGlobal_v2(CUdeviceptr *, size_t *, void *, const char *);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   void *, void **, void **);
int cuLaunchHostFunc(void *, void (*)(void *), void *);
int cuStreamSynchronize(void *);
int cuStreamBeginCapture_v2(void *, int);
int cuStreamEndCapture(void *, void **);

/* CUDA_KERNEL_NODE_PARAMS (v2). */
struct kernel_params {
    void *func;
    unsigned gx, gy, gz, bx, by, bz, shmem;
    void **params, **extra;
    void *kern, *ctx;
};
/* CUDA_MEMCPY3D, CUDA_MEMSET_NODE_PARAMS and CUgraphNodeParams (with the
 * members the programs fill in), and CUgraphEdgeData. */
struct memcpy3d {
    size_t sx, sy, sz, slod;
    unsigned stype;
    const void *shost;
    CUdeviceptr sdev;
    void *sarray, *r0;
    size_t spitch, sheight;
    size_t dx, dy, dz, dlod;
    unsigned dtype;
    void *dhost;
    CUdeviceptr ddev;
    void *darray, *r1;
    size_t dpitch, dheight;
    size_t width, height, depth;
};
struct memset_params {
    CUdeviceptr dst;
    size_t pitch;
    unsigned value, elem;
    size_t width, height;
};
enum { NODE_KERNEL = 0, NODE_MEMCPY = 1, NODE_MEMSET = 2, NODE_HOST = 3, NODE_GRAPH = 4, NODE_EMPTY = 5, NODE_CONDITIONAL = 13 };
struct host_params { void (*fn)(void *); void *data; };
struct node_params {
    int type, reserved0[3];
    union {
        long long reserved1[29];
        struct kernel_params kernel;
        struct { int flags, reserved; void *ctx; struct memcpy3d copy; } memcpy;
        struct { struct memset_params m; void *ctx; } memset;
        struct { void *graph; int ownership; } child;
        struct { unsigned long long handle; int type; unsigned size; void **out; void *ctx; } cond;
        struct host_params host;
    };
    long long reserved2;
};
struct edge_data { unsigned char from_port, to_port, type, reserved[5]; };
int cuGraphAddNode(void **, void *, void *const *, size_t, struct node_params *);
int cuGraphAddNode_v2(void **, void *, void *const *, const struct edge_data *, size_t,
                      struct node_params *);
int cuGraphNodeSetParams(void *, struct node_params *);
int cuGraphExecNodeSetParams(void *, void *, struct node_params *);
int cuGraphConditionalHandleCreate(unsigned long long *, void *, void *, unsigned, unsigned);
int cuGraphCreate(void **, unsigned);
int cuGraphAddKernelNode_v2(void **, void *, void *const *, size_t, const struct kernel_params *);
int cuGraphAddEmptyNode(void **, void *, void *const *, size_t);
int cuGraphAddChildGraphNode(void **, void *, void *const *, size_t, void *);
int cuGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cuGraphExecKernelNodeSetParams_v2(void *, void *, const struct kernel_params *);
int cuGraphLaunch(void *, void *);
int cuGraphExecDestroy(void *);
int cuGraphDestroy(void *);

/* Ends main() with "WRONG <call> = <error>" (the tests look for it). */
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int e_ = (x);                                                                              \
        if (e_) {                                                                                  \
            printf("WRONG %s = %d\n", #x, e_);                                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* The stand-in driver runs `iota` (out[i] = i for i < n) whatever the
 * image says; this PTX names it for the recorder. */
#define IOTA_PTX                                                                                   \
    ".version 8.0\n.target sm_90\n.address_size 64\n"                                              \
    ".visible .entry iota(.param .u64 iota_param_0, .param .u32 iota_param_1)\n"                   \
    "{\n    ret;\n}\n"

#endif
