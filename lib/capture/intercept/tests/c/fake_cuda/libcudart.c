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

/* As libcudart: the current device's primary context reset through the
 * driver function it looked up (cuDevicePrimaryCtxReset); the next runtime
 * call would retain it again. */
typedef int (*ctx_device_t)(int *);
typedef int (*reset_t)(int);
int cudaDeviceReset(void) {
    ctx_device_t device = (ctx_device_t)driver("cuCtxGetDevice");
    reset_t reset = (reset_t)driver("cuDevicePrimaryCtxReset");
    int d = 0;
    if (!device || !reset || device(&d)) return 35;
    return reset(d);
}

/* ------------------------------------------------------------------
 * The runtime calls tests/c/runtime_calls.c makes: host memory for device
 * memory, a table of the "device" allocations (what
 * cudaPointerGetAttributes knows), and CUDA's per-thread last error,
 * which failed calls set and successful ones leave alone. */
#include <stdlib.h>
#include <string.h>

enum { SUCCESS = 0, INVALID_VALUE = 1, INVALID_DEVICE = 101 };

static __thread int last_error;
static int fail(int e) { last_error = e; return e; }

#define MAX_DEV 16
static void *dev[MAX_DEV];
static size_t dev_size[MAX_DEV];

static int device_alloc(void **p, size_t n) {
    for (int i = 0; i < MAX_DEV; i++) {
        if (!dev[i]) {
            dev[i] = *p = calloc(1, n);
            dev_size[i] = n;
            return SUCCESS;
        }
    }
    return fail(2);
}
static int device_free(void *p) {
    for (int i = 0; i < MAX_DEV; i++) {
        if (p && dev[i] == p) {
            free(p);
            dev[i] = NULL;
            return SUCCESS;
        }
    }
    return fail(INVALID_VALUE);
}
static int is_device(const void *p) {
    for (int i = 0; i < MAX_DEV; i++) {
        if (dev[i] && (const char *)p >= (const char *)dev[i] &&
            (const char *)p < (const char *)dev[i] + dev_size[i])
            return 1;
    }
    return 0;
}

/* The last stream cudaStreamSynchronize waited for (what the recorder's
 * sync before reading a D2H result passed). */
static void *synced = (void *)-1;
void *fake_last_sync(void) { return synced; }

int cudaPeekAtLastError(void) { return last_error; }
int cudaGetLastError(void) { int e = last_error; last_error = SUCCESS; return e; }

/* Pre-CUDA-11 behaviour for memory it does not know: an error, which
 * becomes the thread's last error. */
struct attrs { int type; int device; void *dptr; void *hptr; };
int cudaPointerGetAttributes(struct attrs *a, const void *p) {
    if (!is_device(p)) return fail(INVALID_VALUE);
    a->type = 2;
    a->device = 0;
    a->dptr = (void *)p;
    a->hptr = NULL;
    return SUCCESS;
}

int cudaMallocHost(void **p, size_t n) { *p = calloc(1, n); return *p ? SUCCESS : fail(2); }
int cudaFreeHost(void *p) { free(p); return SUCCESS; }
int cudaMallocAsync(void **p, size_t n, void *s) { (void)s; return device_alloc(p, n); }
int cudaFreeAsync(void *p, void *s) { (void)s; return device_free(p); }
int cudaMemsetAsync_ptsz(void *d, int v, size_t n, void *s) {
    (void)s;
    if (!is_device(d)) return fail(INVALID_VALUE);
    memset(d, v, n);
    return SUCCESS;
}
int cudaMemcpyAsync_ptsz(void *d, const void *s, size_t n, int kind, void *st) {
    (void)kind; (void)st;
    memcpy(d, s, n);
    return SUCCESS;
}
int cudaMemcpy_ptds(void *d, const void *s, size_t n, int kind) {
    (void)kind;
    memcpy(d, s, n);
    return SUCCESS;
}
int cudaStreamCreate(void **s) { static char streams[4]; static int next; *s = &streams[next++ % 4]; return SUCCESS; }
int cudaStreamDestroy(void *s) { (void)s; return SUCCESS; }
int cudaStreamSynchronize(void *s) { synced = s; return SUCCESS; }
int cudaStreamSynchronize_ptsz(void *s) { synced = s; return SUCCESS; }
int cudaStreamWaitEvent(void *s, void *e, unsigned f) { (void)s; (void)e; (void)f; return SUCCESS; }
int cudaEventCreateWithFlags(void **e, unsigned f) { static char events[4]; static int next; (void)f; *e = &events[next++ % 4]; return SUCCESS; }
int cudaEventDestroy(void *e) { (void)e; return SUCCESS; }
int cudaEventRecord(void *e, void *s) { (void)e; (void)s; return SUCCESS; }
int cudaEventSynchronize(void *e) { (void)e; return SUCCESS; }
int cudaDeviceSynchronize(void) { return SUCCESS; }
int cudaSetDevice(int d) { return d == 0 ? SUCCESS : fail(INVALID_DEVICE); }
