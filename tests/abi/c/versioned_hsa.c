/* Linked against Debian's real libhsa-runtime64.so.1, whose symbols are all
 * versioned ROCR_1, so this executable references
 * hsa_amd_memory_pool_allocate@ROCR_1 and hsa_amd_memory_pool_free@ROCR_1.
 * It prints which object the dynamic linker bound each one to (dladdr of the
 * address the executable's GOT holds), then calls them as an application
 * would before hsa_init: ROCr answers HSA_STATUS_ERROR_NOT_INITIALIZED
 * whether or not a GPU is present. Exits 0 either way. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>

static void bound(const char *name, void *addr) {
    Dl_info info;
    if (dladdr(addr, &info) && info.dli_fname)
        printf("%s bound in %s\n", name, info.dli_fname);
    else
        printf("%s bound in ?\n", name);
}

int main(void) {
    bound("hsa_amd_memory_pool_allocate", (void *)&hsa_amd_memory_pool_allocate);
    bound("hsa_amd_memory_pool_free", (void *)&hsa_amd_memory_pool_free);
    hsa_amd_memory_pool_t pool = {0};
    void *p = NULL;
    printf("hsa_amd_memory_pool_allocate = %#x\n",
           (unsigned)hsa_amd_memory_pool_allocate(pool, 4096, 0, &p));
    printf("hsa_amd_memory_pool_free = %#x\n", (unsigned)hsa_amd_memory_pool_free(p));
    printf("versioned_hsa: done\n");
    return 0;
}
