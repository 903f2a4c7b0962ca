/* Many small device allocations live at once, as a program with a large
 * tensor cache has: N hipMalloc(4096) (N = argv[1], default 70000, more
 * than the kernel's default limit of 65530 mappings per process), the
 * first and the last written and read back, a table of two of their
 * pointers read back through a device copy, then all freed. */
#include "hrr_workload.h"

#define SIZE 4096

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 70000;
    EXPECT(n >= 2, "need at least 2 allocations, not %ld", n);
    CHECK(hipInit(0));
    void **p = calloc((size_t)n, sizeof *p);
    EXPECT(p != NULL, "calloc of %ld pointers", n);
    for (long i = 0; i < n; i++) CHECK(hipMalloc(&p[i], SIZE));
    unsigned char buf[SIZE];
    CHECK(hipMemset(p[0], 0x11, SIZE));
    CHECK(hipMemset(p[n - 1], 0x22, SIZE));
    /* A pointer table in device memory: right at replay only when placed. */
    void *table[2] = {p[0], p[n - 1]};
    CHECK(hipMemcpy(p[1], table, sizeof table, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(buf, p[n - 1], SIZE, hipMemcpyDeviceToHost));
    EXPECT(buf[0] == 0x22 && buf[SIZE - 1] == 0x22, "last allocation reads %#x", buf[0]);
    void *back[2];
    CHECK(hipMemcpy(back, p[1], sizeof back, hipMemcpyDeviceToHost));
    EXPECT(back[0] == p[0] && back[1] == p[n - 1], "table reads %p %p", back[0], back[1]);
    CHECK(hipMemcpy(buf, p[0], SIZE, hipMemcpyDeviceToHost));
    EXPECT(buf[0] == 0x11, "first allocation reads %#x", buf[0]);
    for (long i = 0; i < n; i++) CHECK(hipFree(p[i]));
    free(p);
    printf("many_allocs: %ld allocations: OK\n", n);
    return 0;
}
