/* A driver-API program linked with -lcuda: every call binds to the
 * interposer's exports (route a). PTX from a heap buffer freed right after
 * its module is made: the recorder must have copied it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long CUdeviceptr;
int cuInit(unsigned);
int cuMemAlloc_v2(CUdeviceptr *, size_t);
int cuMemFree_v2(CUdeviceptr);
int cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
int cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
int cuMemsetD32_v2(CUdeviceptr, unsigned, size_t);
int cuModuleLoadData(void **, const void *);
int cuModuleGetFunction(void **, void *, const char *);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   void *, void **, void **);

static const char PTX[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry iota(.param .u64 iota_param_0, .param .u32 iota_param_1)\n"
                          "{\n    ret;\n}\n";

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int e_ = (x);                                                                              \
        if (e_) {                                                                                  \
            printf("WRONG %s = %d\n", #x, e_);                                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void) {
    enum { N = 64 };
    float host[N];
    CUdeviceptr d;
    CHECK(cuInit(0));
    CHECK(cuMemAlloc_v2(&d, sizeof host));
    for (int i = 0; i < N; i++) host[i] = -1.0f;
    CHECK(cuMemcpyHtoD_v2(d, host, sizeof host));
    CHECK(cuMemsetD32_v2(d + 4 * (N - 4), 0x7fc00000u, 4));
    char *ptx = strdup(PTX);
    void *m, *f;
    CHECK(cuModuleLoadData(&m, ptx));
    CHECK(cuModuleGetFunction(&f, m, "iota"));
    memset(ptx, 'x', strlen(ptx));
    free(ptx);
    int n = N - 4;
    void *params[] = {&d, &n};
    CHECK(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
    CHECK(cuMemcpyDtoH_v2(host, d, sizeof host));
    for (int i = 0; i < N - 4; i++)
        if (host[i] != (float)i) {
            printf("WRONG host[%d] = %f\n", i, host[i]);
            return 1;
        }
    CHECK(cuMemFree_v2(d));
    printf("driver_linked: OK d=0x%llx\n", d);
    return 0;
}
