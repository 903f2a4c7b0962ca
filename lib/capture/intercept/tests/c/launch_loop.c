/* Launch-rate benchmark: LAUNCHES launches of an empty kernel with four
 * arguments (two pointers into live allocations, two scalars) through
 * hipModuleLaunchKernel on the CPU runtime, synchronising every BATCH.
 * Usage: launch_loop KERNELS.so [LAUNCHES]
 * Prints the per-launch time (ns), median of 10 rounds. */
#include "bench_clock.h"
#include "common.h"


#define BATCH 1000

int main(int argc, char **argv) {
    long launches = argc > 2 ? atol(argv[2]) : 100000;
    hipModule_t m;
    CHECK(hipModuleLoad(&m, argv[1]));
    hipFunction_t nop;
    CHECK(hipModuleGetFunction(&nop, m, "nop"));
    uint32_t *a, *b;
    CHECK(hipMalloc((void **)&a, 4096));
    CHECK(hipMalloc((void **)&b, 4096));
    uint64_t x = 12345;
    uint32_t y = 7;
    void *kp[] = {&a, &b, &x, &y};
    double rounds[10];
    for (int r = 0; r < 10; r++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < launches / 10; i++) {
            CHECK(hipModuleLaunchKernel(nop, 1, 1, 1, 1, 1, 1, 0, NULL, kp, NULL));
            if ((i + 1) % BATCH == 0) CHECK(hipDeviceSynchronize());
        }
        CHECK(hipDeviceSynchronize());
        rounds[r] = (double)(now_ns() - t0) / (double)(launches / 10);
    }
    qsort(rounds, 10, sizeof rounds[0], cmp);
    printf("launch_loop: %ld launches, %.1f ns/launch (median of 10 rounds; min %.1f, max %.1f)\n",
           launches, (rounds[4] + rounds[5]) / 2, rounds[0], rounds[9]);
    return 0;
}
