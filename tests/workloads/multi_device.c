/* Two devices (run with HRR_CPU_DEVICES=2): saxpy computed on device 1,
 * its result peer-copied to device 0 (synchronously, and half of it on a
 * stream of device 0), and read back from device 0. Each device's
 * allocations say which device they belong to; a kernel launches on a
 * stream of the current device only. */
#include "hrr_workload.h"

#define N 4096

int main(void) {
    CHECK(hipInit(0));
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    EXPECT(count >= 2, "needs two devices (HRR_CPU_DEVICES=2), has %d", count);
    int can = 0;
    CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
    EXPECT(can == 1, "device 0 cannot access device 1");

    static float x[N], y[N], out[N], half[N / 2];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i * 0.25f;
        y[i] = (float)(N - i);
    }

    /* Device 0: where the result goes, and a stream of its own. */
    CHECK(hipSetDevice(0));
    float *res, *res_half;
    CHECK(hipMalloc((void **)&res, sizeof out));
    CHECK(hipMalloc((void **)&res_half, sizeof half));
    hipStream_t s0;
    CHECK(hipStreamCreate(&s0));

    /* Device 1: the inputs and the kernel. */
    CHECK(hipSetDevice(1));
    int cur = -1;
    CHECK(hipGetDevice(&cur));
    EXPECT(cur == 1, "current device %d", cur);
    CHECK(hipDeviceEnablePeerAccess(0, 0));
    float *dx, *dy;
    CHECK(hipMalloc((void **)&dx, sizeof x));
    CHECK(hipMalloc((void **)&dy, sizeof y));
    hipPointerAttribute_t attr;
    CHECK(hipPointerGetAttributes(&attr, dy));
    EXPECT(attr.device == 1, "device 1's allocation says device %d", attr.device);
    CHECK(hipPointerGetAttributes(&attr, res));
    EXPECT(attr.device == 0, "device 0's allocation says device %d", attr.device);
    CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dy, y, sizeof y, hipMemcpyHostToDevice));
    hipModule_t mod = hrr_load_module_data("saxpy.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "saxpy"));
    float a = 2.0f;
    int n = N;
    void *params[] = {&a, &dx, &dy, &n};
    /* On a stream of device 1 (device 0's is refused: a kernel runs on the
     * current device). */
    hipStream_t s1;
    CHECK(hipStreamCreate(&s1));
    EXPECT(hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s0, params, NULL) ==
               hipErrorInvalidHandle,
           "a launch on device 0's stream from device 1");
    CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, s1, params, NULL));
    CHECK(hipDeviceSynchronize());

    /* Back on device 0: the result copied over from device 1, read back. */
    CHECK(hipSetDevice(0));
    CHECK(hipMemcpyPeer(res, 0, dy, 1, sizeof out));
    CHECK(hipMemcpyPeerAsync(res_half, 0, dy + N / 2, 1, sizeof half, s0));
    CHECK(hipStreamSynchronize(s0));
    CHECK(hipMemcpy(out, res, sizeof out, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(half, res_half, sizeof half, hipMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        EXPECT(out[i] == 2.0f * x[i] + y[i], "y[%d] = %g, want %g", i, out[i],
               2.0f * x[i] + y[i]);
    for (int i = 0; i < N / 2; i++)
        EXPECT(half[i] == out[N / 2 + i], "half[%d] = %g", i, half[i]);
    printf("multi_device: saxpy on device 1, read from device 0: %d elements ok\n", N);

    CHECK(hipStreamDestroy(s0));
    CHECK(hipFree(res));
    CHECK(hipFree(res_half));
    CHECK(hipSetDevice(1));
    CHECK(hipStreamDestroy(s1));
    CHECK(hipModuleUnload(mod));
    CHECK(hipFree(dx));
    CHECK(hipFree(dy));
    printf("multi_device: OK\n");
    return 0;
}
