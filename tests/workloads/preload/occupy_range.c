/* A preload library for tests: before the program runs, it maps the range
 * HRR_TEST_OCCUPY="HEXADDR:SIZE" (inaccessible, never replacing anything),
 * as another library of the process could have. Exits 99 when it cannot. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((constructor)) static void occupy_range(void) {
    const char *s = getenv("HRR_TEST_OCCUPY");
    if (!s) return;
    char *end;
    unsigned long long addr = strtoull(s, &end, 16);
    if (*end != ':') _exit(99);
    size_t size = strtoull(end + 1, NULL, 10);
    void *p = mmap((void *)addr, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *)addr) {
        fprintf(stderr, "occupy_range: cannot map %#llx+%zu\n", addr, size);
        _exit(99);
    }
}
