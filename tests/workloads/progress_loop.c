/* A long-running app for the durability test: prints its pid, then loops
 * (H2D, kernel, D2H, check) printing one progress line per iteration, until
 * it has done argv[1] iterations (default: effectively forever). The test
 * kills it with SIGKILL midway through a capture. */
#include "hrr_workload.h"

#include <time.h>
#include <unistd.h>

#define N 1024

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 1000000L;
    long sleep_us = argc > 2 ? atol(argv[2]) : 2000L;
    printf("progress_loop: pid=%d\n", (int)getpid());
    fflush(stdout);
    CHECK(hipInit(0));
    hipModule_t mod = hrr_load_module_file("streams.so");
    hipFunction_t fn;
    CHECK(hipModuleGetFunction(&fn, mod, "scale_add"));
    float *d_in, *d_out;
    CHECK(hipMalloc((void **)&d_in, N * sizeof(float)));
    CHECK(hipMalloc((void **)&d_out, N * sizeof(float)));
    static float in[N], out[N];
    for (long it = 0; it < iters; it++) {
        for (int i = 0; i < N; i++) in[i] = (float)((i + it) % 977);
        CHECK(hipMemcpy(d_in, in, sizeof in, hipMemcpyHostToDevice));
        float k = 2.0f, add = (float)(it % 13);
        int n = N;
        void *params[] = {&d_out, &d_in, &k, &add, &n};
        CHECK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
        CHECK(hipMemcpy(out, d_out, sizeof out, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            EXPECT(out[i] == in[i] * k + add, "iteration %ld: out[%d] = %g", it, i, out[i]);
        printf("progress_loop: iteration %ld ok\n", it);
        fflush(stdout);
        if (sleep_us > 0) {
            struct timespec ts = {sleep_us / 1000000L, (sleep_us % 1000000L) * 1000L};
            nanosleep(&ts, NULL);
        }
    }
    CHECK(hipFree(d_in));
    CHECK(hipFree(d_out));
    CHECK(hipModuleUnload(mod));
    printf("progress_loop: OK\n");
    return 0;
}
