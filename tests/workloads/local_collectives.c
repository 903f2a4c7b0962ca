/* NCCL reached only through a library this program loads with RTLD_LOCAL
 * (lib/local_collectives_lib.c, built beside it; its path is the first
 * argument), as Python loads PyTorch's extension and its libnccl: the
 * library's NCCL calls bind to the interposer's exports under hrr-cap,
 * whose real definitions are out of dlsym(RTLD_NEXT)'s reach. The
 * library's one-rank all-reduce is read back and checked here. */
#include "hrr_workload.h"

#include <dlfcn.h>

int main(int argc, char **argv) {
    EXPECT(argc > 1, "usage: local_collectives LIBRARY");
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    EXPECT(h, "dlopen %s: %s", argv[1], dlerror());
    int (*run)(float *) = (int (*)(float *))dlsym(h, "local_allreduce");
    EXPECT(run, "%s has no local_allreduce", argv[1]);
    static float out[1024];
    int n = run(out);
    for (int i = 0; i < n; i++)
        EXPECT(out[i] == (float)(i * 3 + 1), "all_reduce[%d] = %g", i, out[i]);
    printf("local_collectives: %d elements: OK\n", n);
    return 0;
}
