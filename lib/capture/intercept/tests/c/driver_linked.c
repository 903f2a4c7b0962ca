/* A driver-API program linked with -lcuda: every call binds to the
 * interposer's exports (route a). PTX from a heap buffer freed right after
 * its module is made: the recorder must have copied it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stand_in_cuda.h"

int main(void) {
    enum { N = 64 };
    float host[N];
    CUdeviceptr d;
    CHECK(cuInit(0));
    CHECK(cuMemAlloc_v2(&d, sizeof host));
    for (int i = 0; i < N; i++) host[i] = -1.0f;
    CHECK(cuMemcpyHtoD_v2(d, host, sizeof host));
    CHECK(cuMemsetD32_v2(d + 4 * (N - 4), 0x7fc00000u, 4));
    char *ptx = strdup(IOTA_PTX);
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
