/* A stand-in for the shared CUDA runtime: cudaMalloc and cudaMemcpy reach
 * the driver the way libcudart does, through dlopen("libcuda.so.1"),
 * dlsym(handle, "cuGetProcAddress_v2"), then cuGetProcAddress for
 * cuGetProcAddress itself and everything else. Under capture, the
 * runtime's event stands for the driver call it makes: one event each. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

typedef int (*gpa_t)(const char *, void **, int, uint64_t, int *);
typedef int (*alloc_t)(unsigned long long *, size_t);
typedef int (*h2d_t)(unsigned long long, const void *, size_t);
typedef int (*d2h_t)(void *, unsigned long long, size_t);

static gpa_t gpa;

static void *driver(const char *name) {
    if (!gpa) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        gpa_t first = h ? (gpa_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
        if (!first || first("cuGetProcAddress", (void **)&gpa, 12000, 0, NULL) != 0) return NULL;
    }
    void *f = NULL;
    gpa(name, &f, 13000, 0, NULL);
    return f;
}

int cudaMalloc(void **p, size_t n) {
    alloc_t f = (alloc_t)driver("cuMemAlloc");
    return f ? f((unsigned long long *)p, n) : 35;
}

int cudaMemcpy(void *dst, const void *src, size_t n, int kind) {
    if (kind == 1) {
        h2d_t f = (h2d_t)driver("cuMemcpyHtoD");
        return f ? f((unsigned long long)(uintptr_t)dst, src, n) : 35;
    }
    d2h_t f = (d2h_t)driver("cuMemcpyDtoH");
    return f ? f(dst, (unsigned long long)(uintptr_t)src, n) : 35;
}
