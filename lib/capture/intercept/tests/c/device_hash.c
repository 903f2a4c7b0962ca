/* D2H copies large enough for the capture library's device hash, on the
 * stand-in driver (which runs the hash's kernels on the CPU), in the
 * context lives `argv[1]` names:
 *   primary  two copies of different content in device 0's primary context;
 *   destroy  a copy in a created context, destroyed; another created (the
 *            same handle value), a copy there;
 *   reset    a copy in the retained primary context; cudaDeviceReset (the
 *            stand-in runtime resets it through the driver function it
 *            looked up); retained again, a copy;
 *   release  as reset, but the primary context released by its only holder.
 * Each copy's source is uploaded first, word i of copy k being
 * (i + 1) * 0x9E3779B1 ^ k * 0x85EBCA6B; each landed copy is checked. Prints
 * `same=1` when the second context has the first one's handle value, and
 * the hash kernels the stand-in driver ran (`hash_launches=N`). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stand_in_cuda.h"

int cuDevicePrimaryCtxRetain(void **, int);
int cuDevicePrimaryCtxRelease_v2(int);
int cuCtxCreate_v2(void **, unsigned, int);
int cuCtxDestroy_v2(void *);
int cuCtxSetCurrent(void *);
int cudaDeviceReset(void);
unsigned long long fake_hash_launches(void);

#define BYTES (8u << 20)

/* Copy k: its source uploaded into a fresh allocation, brought back, checked.
 * The allocation is left to its context (which may die with it). */
static int copy(unsigned k, unsigned *host) {
    CUdeviceptr d;
    size_t n = BYTES / 4;
    for (size_t i = 0; i < n; i++) host[i] = (unsigned)(i + 1) * 0x9E3779B1u ^ k * 0x85EBCA6Bu;
    CHECK(cuMemAlloc_v2(&d, BYTES));
    CHECK(cuMemcpyHtoD_v2(d, host, BYTES));
    memset(host, 0, BYTES);
    CHECK(cuMemcpyDtoH_v2(host, d, BYTES));
    for (size_t i = 0; i < n; i++)
        if (host[i] != ((unsigned)(i + 1) * 0x9E3779B1u ^ k * 0x85EBCA6Bu)) {
            printf("WRONG copy %u: word %zu\n", k, i);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "primary";
    unsigned *host = malloc(BYTES);
    void *first = NULL, *second = NULL;
    CHECK(cuInit(0));
    if (!strcmp(mode, "primary")) {
        CHECK(copy(1, host));
        CHECK(copy(2, host));
    } else if (!strcmp(mode, "destroy")) {
        CHECK(cuCtxCreate_v2(&first, 0, 0));
        CHECK(copy(1, host));
        CHECK(cuCtxDestroy_v2(first));
        CHECK(cuCtxCreate_v2(&second, 0, 0));
        CHECK(copy(2, host));
        CHECK(cuCtxDestroy_v2(second));
    } else if (!strcmp(mode, "reset") || !strcmp(mode, "release")) {
        CHECK(cuDevicePrimaryCtxRetain(&first, 0));
        CHECK(cuCtxSetCurrent(first));
        CHECK(copy(1, host));
        if (!strcmp(mode, "reset"))
            CHECK(cudaDeviceReset());
        else
            CHECK(cuDevicePrimaryCtxRelease_v2(0));
        CHECK(cuDevicePrimaryCtxRetain(&second, 0));
        CHECK(cuCtxSetCurrent(second));
        CHECK(copy(2, host));
    } else {
        printf("WRONG mode %s\n", mode);
        return 1;
    }
    printf("same=%d hash_launches=%llu\n", first && first == second, fake_hash_launches());
    printf("device_hash: OK\n");
    free(host);
    return 0;
}
