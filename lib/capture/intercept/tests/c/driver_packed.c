/* Repeated cuLaunchKernel calls whose arguments come packed in `extra`
 * (linked with -lcuda): the recorder keeps their line and repeats it, so
 * each change of the packed bytes (the count, then the buffer) must end the
 * repeat. Prints each launch's pointer and count for the test to compare
 * with the recorded arguments. */
#include <stdio.h>
#include <string.h>

#include "stand_in_cuda.h"

static void *f;

static void launch(CUdeviceptr out, int n) {
    unsigned char buf[16] = {0};
    memcpy(buf, &out, sizeof out);
    memcpy(buf + 8, &n, sizeof n);
    size_t size = 12;
    void *extra[] = {(void *)1, buf, (void *)2, &size, (void *)0};
    CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra));
    printf("launch 0x%llx %d\n", out, n);
}

int main(void) {
    CUdeviceptr a, b;
    void *m;
    CHECK(cuInit(0));
    CHECK(cuMemAlloc_v2(&a, 256));
    CHECK(cuMemAlloc_v2(&b, 256));
    CHECK(cuModuleLoadData(&m, IOTA_PTX));
    CHECK(cuModuleGetFunction(&f, m, "iota"));
    for (int i = 0; i < 4; i++) launch(a, 10);
    for (int i = 0; i < 4; i++) launch(a, 20);
    for (int i = 0; i < 4; i++) launch(b, 20);
    launch(a, 10);
    float got[20];
    CHECK(cuMemcpyDtoH_v2(got, b, sizeof got));
    for (int i = 0; i < 20; i++)
        if (got[i] != (float)i) {
            printf("WRONG got[%d] = %f\n", i, got[i]);
            return 1;
        }
    printf("driver_packed: OK\n");
    return 0;
}
