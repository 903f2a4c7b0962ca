/* Every name given must resolve through hipGetProcAddress to the symbol the
 * process itself binds (the interposer's wrapper when preloaded). */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>

typedef hipError_t (*get_proc_address_t)(const char *symbol, void **pfn, int hipVersion,
                                         uint64_t flags, int *symbolStatus);
/* Looked up, not linked: the CPU runtime (like ROCm 5) does not define it;
 * under capture the interposer does. */
static hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                                    int *symbolStatus) {
    get_proc_address_t f = (get_proc_address_t)dlsym(RTLD_DEFAULT, "hipGetProcAddress");
    if (!f) return hipErrorNotSupported;
    return f(symbol, pfn, hipVersion, flags, symbolStatus);
}

int main(int argc, char **argv) {
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        void *p = NULL;
        int st = -1;
        hipError_t e = hipGetProcAddress(argv[i], &p, 0, 0, &st);
        void *want = dlsym(RTLD_DEFAULT, argv[i]);
        if (e != hipSuccess || p != want || st != 0) {
            printf("MISMATCH %s: ret %d status %d got %p want %p\n", argv[i], (int)e, st, p, want);
            bad++;
        }
    }
    void *p = (void *)1;
    hipError_t e = hipGetProcAddress("hipNoSuchFunction", &p, 0, 0, NULL);
    printf("missing: ret %d ptr %p\n", (int)e, p);
    printf("checked %d names, %d bad\n", argc - 1, bad);
    return bad != 0;
}
