/* The library local_collectives.c loads with RTLD_LOCAL, as Python loads
 * PyTorch's extension and with it libnccl: a one-rank all-reduce through
 * the NCCL API. Under hrr-cap its NCCL references bind to the preloaded
 * interposer, and the library defining them (hrr's stand-in, this
 * library's dependency) lies in this library's local scope only. */
#include "hrr_workload.h"
#include "hrr_nccl.h"

#define N 256

int local_allreduce(float *out);

int local_allreduce(float *out) {
    static float x[N];
    for (int i = 0; i < N; i++) x[i] = (float)(i * 3 + 1);
    int version = 0;
    NCCHECK(ncclGetVersion(&version));
    ncclUniqueId id;
    NCCHECK(ncclGetUniqueId(&id));
    ncclComm_t comm;
    NCCHECK(ncclCommInitRank(&comm, 1, id, 0));
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    float *dx, *dy;
    CHECK(hipMalloc((void **)&dx, sizeof x));
    CHECK(hipMalloc((void **)&dy, sizeof x));
    CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
    NCCHECK(ncclAllReduce(dx, dy, N, ncclFloat32, ncclSum, comm, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipMemcpy(out, dy, sizeof x, hipMemcpyDeviceToHost));
    NCCHECK(ncclCommDestroy(comm));
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    CHECK(hipStreamDestroy(s));
    return N;
}
