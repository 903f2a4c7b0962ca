/* A program that reaches the driver the way the CUDA runtime does: dlopen,
 * dlsym(handle, "cuGetProcAddress_v2"), then cuGetProcAddress for
 * cuGetProcAddress itself and for everything else (routes b and c). Prints
 * what it was handed; the test compares with the archive. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int (*gpa_t)(const char *, void **, int, uint64_t, int *);
typedef int (*gpa1_t)(const char *, void **, int, uint64_t);
typedef int (*alloc_t)(unsigned long long *, size_t);
typedef int (*h2d_t)(unsigned long long, const void *, size_t);
typedef int (*d2h_t)(void *, unsigned long long, size_t);
typedef int (*count_t)(int *);
typedef int (*peer_t)(const void *);

static const char *object_of(void *p) {
    Dl_info i;
    if (!dladdr(p, &i) || !i.dli_fname) return "?";
    const char *s = strrchr(i.dli_fname, '/');
    return s ? s + 1 : i.dli_fname;
}

int main(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("WRONG dlopen: %s\n", dlerror());
        return 1;
    }
    gpa_t first = (gpa_t)dlsym(h, "cuGetProcAddress_v2");
    gpa_t gpa = NULL;
    gpa1_t v1 = NULL;
    if (!first || first("cuGetProcAddress", (void **)&gpa, 12000, 0, NULL) ||
        first("cuGetProcAddress", (void **)&v1, 11030, 0, NULL)) {
        printf("WRONG cuGetProcAddress\n");
        return 1;
    }
    printf("first=%s gpa=%s v1=%s\n", object_of((void *)first), object_of((void *)gpa),
           object_of((void *)v1));
    alloc_t alloc;
    h2d_t h2d;
    count_t count;
    peer_t peer;
    if (gpa("cuMemAlloc", (void **)&alloc, 12000, 0, NULL) ||
        gpa("cuMemcpyHtoD", (void **)&h2d, 12000, 2 /* per-thread default stream */, NULL) ||
        v1("cuDeviceGetCount", (void **)&count, 12000, 0) ||
        gpa("cuMemcpy3DPeer", (void **)&peer, 12000, 0, NULL)) {
        printf("WRONG lookups\n");
        return 1;
    }
    d2h_t d2h = (d2h_t)dlsym(h, "cuMemcpyDtoH_v2");
    printf("alloc=%s h2d=%s d2h=%s count=%s peer=%s\n", object_of((void *)alloc),
           object_of((void *)h2d), object_of((void *)d2h), object_of((void *)count),
           object_of((void *)peer));
    unsigned long long d;
    unsigned char up[32], down[32];
    for (int i = 0; i < 32; i++) up[i] = (unsigned char)(3 * i + 1);
    int n = 0;
    if (alloc(&d, sizeof up) || h2d(d, up, sizeof up) || d2h(down, d, sizeof down) || count(&n) ||
        peer(NULL) || peer(NULL) || memcmp(up, down, sizeof up)) {
        printf("WRONG calls\n");
        return 1;
    }
    /* The pseudo-handles still search relative to this program. */
    void *next = dlsym(RTLD_NEXT, "strlen");
    printf("next_ok=%d devices=%d\n", next == (void *)strlen, n);
    return 0;
}
