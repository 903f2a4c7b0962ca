/* Loads the HIP runtime and asks it questions only (hipGetDeviceCount,
 * hipDriverGetVersion), or with `none`, makes no HIP call at all: a capture
 * records nothing, and hrr-cap says why. */
#include "hrr_workload.h"

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "none") == 0) {
        printf("queries_only: no call: OK\n");
        return 0;
    }
    int n = 0, v = 0;
    CHECK(hipGetDeviceCount(&n));
    CHECK(hipDriverGetVersion(&v));
    printf("queries_only: %d device(s), driver %d: OK\n", n, v);
    return 0;
}
