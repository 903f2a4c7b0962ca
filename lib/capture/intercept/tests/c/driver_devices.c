/* Two contexts on two devices (the stand-in driver has two): every call
 * made while a context is current ran on its device. Device 1's primary
 * context is made current, then a context created on device 0 (current
 * at once), then device 1's pushed and popped again. */
#include <stdint.h>
#include <string.h>

#include "stand_in_cuda.h"

int cuDeviceGet(int *, int);
int cuDevicePrimaryCtxRetain(void **, int);
int cuCtxCreate_v2(void **, unsigned, int);
int cuCtxSetCurrent(void *);
int cuCtxPushCurrent_v2(void *);
int cuCtxPopCurrent_v2(void **);

int main(void) {
    CHECK(cuInit(0));
    int d1;
    CHECK(cuDeviceGet(&d1, 1));
    void *primary1, *own0, *popped;
    CHECK(cuDevicePrimaryCtxRetain(&primary1, d1));
    CHECK(cuCtxSetCurrent(primary1));
    CUdeviceptr on1, on0, pushed;
    CHECK(cuMemAlloc_v2(&on1, 64));
    CHECK(cuMemsetD32_v2(on1, 7, 16));
    CHECK(cuCtxCreate_v2(&own0, 0, 0));
    CHECK(cuMemAlloc_v2(&on0, 64));
    CHECK(cuCtxPushCurrent_v2(primary1));
    CHECK(cuMemAlloc_v2(&pushed, 64));
    CHECK(cuCtxPopCurrent_v2(&popped));
    unsigned back[16];
    CHECK(cuMemcpyDtoH_v2(back, on1, sizeof back));
    CHECK(cuMemFree_v2(on0));
    printf("driver_devices: OK\n");
    return 0;
}
