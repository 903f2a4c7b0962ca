/* A stand-in for the NVIDIA driver, libcuda.so.1, for GPU-free tests of the
 * capture library's driver routes: "device" memory is host memory, mapped
 * per allocation and owned by its context; modules remember their image;
 * launches run `iota` and `sample` (below) and the capture library's device
 * hash (its kernels compiled as C, a block at a time). The lookups behave
 * like the real driver's: cuGetProcAddress_v2 returns versioned variants
 * (cuMemAlloc -> cuMemAlloc_v2) and per-thread ones with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, from its own table (never
 * through dlsym, as the real driver does not). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUcontext;

#define OK 0
#define INVALID_VALUE 1
#define OUT_OF_MEMORY 2
#define INVALID_CONTEXT 201
#define NO_BINARY_FOR_GPU 209
#define INVALID_HANDLE 400
#define NOT_FOUND 500
#define LOSSY_QUERY 402
#define ILLEGAL_ADDRESS 700
#define CONTEXT_IS_DESTROYED 709

CUresult cuInit(unsigned flags) { (void)flags; return OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
/* Two devices. A context is a number that names its device: 0xc00 + d is
 * device d's primary context, 0xd00 + d the one cuCtxCreate makes (one per
 * device at a time). Each thread has a current context (device 0's primary
 * one until it sets another) and a stack of pushed ones.
 *
 * A context dies as the real driver's does — destroyed, or a primary one
 * reset or released by its last holder — and takes its memory (unmapped:
 * a stale read faults, as it would on the real pinned memory) and modules
 * with it; its functions are then refused (CUDA_ERROR_INVALID_HANDLE) and
 * work in it too (CUDA_ERROR_CONTEXT_IS_DESTROYED). The next context made
 * gets the same handle value, as a primary context does on the real
 * driver, but a new generation: what the dead one owned stays dead. */
#define DEVICES 2
#define CTX_DEVICE(c) ((int)((uintptr_t)(c) & 0xff))
static __thread CUcontext current_ctx = (CUcontext)0xc00;
static __thread CUcontext ctx_stack[16];
static __thread int ctx_depth;
/* A context's life: alive, its generation (one per life), retains held. */
struct life { int alive; unsigned gen; int refs; };
/* Primary contexts are alive from the start (programs here use device 0's
 * without retaining it); created ones from cuCtxCreate. */
static struct life primary_life[DEVICES] = {{1, 1, 0}, {1, 1, 0}};
static struct life created_life[DEVICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct life *life_of(CUcontext c) {
    uintptr_t v = (uintptr_t)c;
    int d = CTX_DEVICE(c);
    if (d >= DEVICES) return NULL;
    if ((v & ~(uintptr_t)0xff) == 0xc00) return &primary_life[d];
    if ((v & ~(uintptr_t)0xff) == 0xd00) return &created_life[d];
    return NULL;
}
/* Whether `ctx` is alive in generation `gen`. */
static int lives(CUcontext ctx, unsigned gen) {
    struct life *l = life_of(ctx);
    return l && l->alive && l->gen == gen;
}
/* The calling thread's context, when alive (its generation in *gen). */
static CUresult current_life(unsigned *gen) {
    struct life *l = life_of(current_ctx);
    if (!l) return INVALID_CONTEXT;
    if (!l->alive) return CONTEXT_IS_DESTROYED;
    *gen = l->gen;
    return OK;
}
/* Memory: each allocation its own mapping, owned by a context's life. */
struct alloc { uintptr_t base; size_t size; int host; CUcontext ctx; unsigned gen; };
static struct alloc *allocs;
static size_t n_allocs, cap_allocs;
static size_t mapped(size_t n) { return n ? (n + 4095) & ~(size_t)4095 : 4096; }
static CUresult map_new(void **p, size_t n, int host) {
    unsigned gen;
    pthread_mutex_lock(&lock);
    CUresult r = current_life(&gen);
    void *m = MAP_FAILED;
    if (r == OK) {
        m = mmap(NULL, mapped(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) r = OUT_OF_MEMORY;
    }
    if (r == OK && n_allocs == cap_allocs) {
        cap_allocs = cap_allocs ? 2 * cap_allocs : 64;
        allocs = realloc(allocs, cap_allocs * sizeof *allocs);
    }
    if (r == OK) {
        allocs[n_allocs++] = (struct alloc){(uintptr_t)m, n, host, current_ctx, gen};
        *p = m;
    }
    pthread_mutex_unlock(&lock);
    return r;
}
/* The live allocation holding [p, p + n), or NULL (under the lock). */
static struct alloc *holding(uintptr_t p, size_t n) {
    for (size_t i = 0; i < n_allocs; i++) {
        uintptr_t off = p - allocs[i].base;
        if (p >= allocs[i].base && off < (allocs[i].size ? allocs[i].size : 1) &&
            n <= allocs[i].size - off)
            return &allocs[i];
    }
    return NULL;
}
static CUresult unmap_one(uintptr_t p, int host) {
    CUresult r = INVALID_VALUE;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_allocs; i++)
        if (allocs[i].base == p && allocs[i].host == host) {
            munmap((void *)p, mapped(allocs[i].size));
            allocs[i] = allocs[--n_allocs];
            r = OK;
            break;
        }
    pthread_mutex_unlock(&lock);
    return r;
}
/* Whether any context died yet: until then every module lives, which a
 * launch learns with one load (the capture benchmarks count this
 * library's instructions too). */
static int any_died;
/* A context's death (under the lock): its memory goes with it. */
static void die(CUcontext ctx, struct life *l) {
    __atomic_store_n(&any_died, 1, __ATOMIC_RELEASE);
    for (size_t i = 0; i < n_allocs;)
        if (allocs[i].ctx == ctx && allocs[i].gen == l->gen) {
            munmap((void *)allocs[i].base, mapped(allocs[i].size));
            allocs[i] = allocs[--n_allocs];
        } else {
            i++;
        }
    l->alive = 0;
    l->refs = 0;
}
/* A context (re)born: a new generation. */
static void born(struct life *l) {
    l->alive = 1;
    l->gen++;
}
CUresult cuDeviceGetCount(int *n) { *n = DEVICES; return OK; }
CUresult cuDeviceGet(int *dev, int ordinal) {
    if (ordinal < 0 || ordinal >= DEVICES) return 101;
    *dev = ordinal;
    return OK;
}
/* Compute capability 9.0; the multiprocessor count. */
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    if (dev < 0 || dev >= DEVICES) return 101;
    switch (attr) {
    case 16: *v = 132; return OK;
    case 75: *v = 9; return OK;
    case 76: *v = 0; return OK;
    }
    return INVALID_VALUE;
}
CUresult cuCtxGetCurrent(CUcontext *c) { *c = current_ctx; return OK; }
CUresult cuCtxGetDevice(int *d) { *d = CTX_DEVICE(current_ctx); return OK; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, int dev) {
    if (dev < 0 || dev >= DEVICES) return 101;
    pthread_mutex_lock(&lock);
    struct life *l = &primary_life[dev];
    if (!l->alive) born(l);
    l->refs++;
    pthread_mutex_unlock(&lock);
    *c = (CUcontext)(uintptr_t)(0xc00 + dev);
    return OK;
}
/* The last retain released: the primary context dies. */
CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
    if (dev < 0 || dev >= DEVICES) return 101;
    CUresult r = OK;
    pthread_mutex_lock(&lock);
    struct life *l = &primary_life[dev];
    if (!l->alive || l->refs == 0) r = INVALID_CONTEXT;
    else if (--l->refs == 0) die((CUcontext)(uintptr_t)(0xc00 + dev), l);
    pthread_mutex_unlock(&lock);
    return r;
}
/* Destroys the primary context whoever holds it (cudaDeviceReset). */
CUresult cuDevicePrimaryCtxReset_v2(int dev) {
    if (dev < 0 || dev >= DEVICES) return 101;
    pthread_mutex_lock(&lock);
    struct life *l = &primary_life[dev];
    if (l->alive) die((CUcontext)(uintptr_t)(0xc00 + dev), l);
    pthread_mutex_unlock(&lock);
    return OK;
}
CUresult cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active) {
    if (dev < 0 || dev >= DEVICES) return 101;
    pthread_mutex_lock(&lock);
    *flags = 0;
    *active = primary_life[dev].alive;
    pthread_mutex_unlock(&lock);
    return OK;
}
CUresult cuCtxCreate_v2(CUcontext *c, unsigned flags, int dev) {
    (void)flags;
    if (dev < 0 || dev >= DEVICES) return 101;
    pthread_mutex_lock(&lock);
    struct life *l = &created_life[dev];
    if (!l->alive) born(l);
    pthread_mutex_unlock(&lock);
    *c = current_ctx = (CUcontext)(uintptr_t)(0xd00 + dev);
    return OK;
}
/* A context current on the calling thread is popped, as cuCtxPopCurrent. */
CUresult cuCtxDestroy_v2(CUcontext c) {
    struct life *l = life_of(c);
    if (!l || l == &primary_life[CTX_DEVICE(c)]) return INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    CUresult r = l->alive ? OK : CONTEXT_IS_DESTROYED;
    if (r == OK) die(c, l);
    pthread_mutex_unlock(&lock);
    if (r == OK && current_ctx == c) current_ctx = ctx_depth ? ctx_stack[--ctx_depth] : NULL;
    return r;
}
CUresult cuCtxSetCurrent(CUcontext c) {
    if (c) current_ctx = c;
    return OK;
}
CUresult cuCtxPushCurrent_v2(CUcontext c) {
    if (ctx_depth == 16) return 2;
    ctx_stack[ctx_depth++] = current_ctx;
    current_ctx = c;
    return OK;
}
CUresult cuCtxPopCurrent_v2(CUcontext *c) {
    if (ctx_depth == 0) return 201;
    if (c) *c = current_ctx;
    current_ctx = ctx_stack[--ctx_depth];
    return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    void *m;
    CUresult r = map_new(&m, n, 0);
    if (r == OK) *p = (CUdeviceptr)(uintptr_t)m;
    return r;
}
/* The CUDA 3.1 ABI (32-bit sizes), still exported by the real driver. */
CUresult cuMemAlloc(unsigned *p, unsigned n) { (void)p; (void)n; return INVALID_VALUE; }
CUresult cuMemFree_v2(CUdeviceptr p) { return unmap_one((uintptr_t)p, 0); }
/* Pinned host memory: host memory of its context, its own device address. */
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
    (void)flags;
    return map_new(p, n, 1);
}
CUresult cuMemFreeHost(void *p) { return unmap_one((uintptr_t)p, 1); }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
    memcpy((void *)(uintptr_t)d, s, n);
    return OK;
}
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n) { return cuMemcpyHtoD_v2(d, s, n); }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
    memcpy(d, (const void *)(uintptr_t)s, n);
    return OK;
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) {
    unsigned *p = (unsigned *)(uintptr_t)d;
    for (size_t i = 0; i < n; i++) p[i] = v;
    return OK;
}
CUresult cuStreamSynchronize(CUstream s) { (void)s; return OK; }
/* The attributes the capture library asks of allocations; other memory is
 * unknown, as the real driver says for pageable host memory. */
CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
    pthread_mutex_lock(&lock);
    struct alloc *a = holding((uintptr_t)p, 0);
    struct alloc x = a ? *a : (struct alloc){0};
    pthread_mutex_unlock(&lock);
    if (!a) return INVALID_VALUE;
    switch (attr) {
    case 1: *(CUcontext *)data = x.ctx; return OK;                   /* CONTEXT */
    case 2: *(unsigned *)data = x.host ? 1 : 2; return OK;           /* MEMORY_TYPE */
    case 3: *(CUdeviceptr *)data = p; return OK;                     /* DEVICE_POINTER */
    case 4: *(void **)data = (void *)(uintptr_t)p; return x.host ? OK : INVALID_VALUE;
    case 8: *(unsigned *)data = 0; return OK;                        /* IS_MANAGED */
    case 9: *(int *)data = CTX_DEVICE(x.ctx); return OK;             /* DEVICE_ORDINAL */
    case 11: *(CUdeviceptr *)data = x.base; return OK;               /* RANGE_START_ADDR */
    case 12: *(size_t *)data = x.size; return OK;                    /* RANGE_SIZE */
    }
    return INVALID_VALUE;
}

struct node;
/* CUDA_KERNEL_NODE_PARAMS (_v2), as cuda.h lays it out. */
struct kernel_params {
    CUfunction func;
    unsigned gx, gy, gz, bx, by, bz, shmem;
    void **params, **extra;
    void *kern, *ctx;
};
/* A module belongs to the context it was loaded in, for that life. */
struct module { const char *image; CUcontext ctx; unsigned gen; };
struct function { struct module *m; char name[64]; };
static int module_lives(const struct module *m) {
    if (!__atomic_load_n(&any_died, __ATOMIC_ACQUIRE)) return 1;
    pthread_mutex_lock(&lock);
    int alive = lives(m->ctx, m->gen);
    pthread_mutex_unlock(&lock);
    return alive;
}

/* The stand-in NVRTC's images (fake_cuda/libnvrtc.c) start with this line
 * and name the virtual architecture they were compiled for. */
#define NVRTC_IMAGE "// hrr stand-in NVRTC image\n"
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
    unsigned gen;
    pthread_mutex_lock(&lock);
    CUresult r = current_life(&gen);
    pthread_mutex_unlock(&lock);
    if (r) return r;
    if (!strncmp(image, NVRTC_IMAGE, strlen(NVRTC_IMAGE)) && !strstr(image, "\n.target compute_90\n"))
        return NO_BINARY_FOR_GPU;
    struct module *x = malloc(sizeof *x);
    x->image = image;
    x->ctx = current_ctx;
    x->gen = gen;
    *m = x;
    return OK;
}
CUresult cuModuleUnload(CUmodule m) { free(m); return OK; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    struct module *x = m;
    if (!module_lives(x)) return INVALID_HANDLE;
    if (!strstr(x->image, name)) return NOT_FOUND;
    struct function *fn = calloc(1, sizeof *fn);
    fn->m = x;
    strncpy(fn->name, name, sizeof fn->name - 1);
    *f = fn;
    return OK;
}
/* Every kernel here is `k(float *out, int n)`, but `sample(CUtexObject
 * tex, float *out, int n)` (see the arrays below). */
CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size) {
    if (!strcmp(((struct function *)f)->name, "sample")) {
        if (i > 2) return INVALID_VALUE;
        *off = 8 * i;
        *size = i == 2 ? 4 : 8;
        return OK;
    }
    if (i == 0) { *off = 0; *size = 8; return OK; }
    if (i == 1) { *off = 8; *size = 4; return OK; }
    return INVALID_VALUE;
}
CUresult cuFuncGetName(const char **name, CUfunction f) {
    *name = ((struct function *)f)->name;
    return OK;
}
/* The capture library's device hash (src/cuda/device_hash.cu), its kernels
 * run a block at a time by the same code as C. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../../../src/cuda/device_hash.cu"
#pragma GCC diagnostic pop
/* Launches of the hash's kernels, for the programs to print. */
static unsigned long long hash_launches;
unsigned long long fake_hash_launches(void) { return hash_launches; }
/* Whether [p, p + n) lies in one live allocation (a kernel reading or
 * writing outside one faults). */
static int addressable(uintptr_t p, size_t n) {
    pthread_mutex_lock(&lock);
    int ok = holding(p, n) != NULL;
    pthread_mutex_unlock(&lock);
    return ok;
}
/* hrr_blake3_chunks(in, len, out) and hrr_blake3_parents(in, n, out), one
 * block after another. FAKE_CUDA_WRONG_HASH set: the last launch (one
 * block, the hash itself) gets one bit wrong, a kernel the capture library
 * must not trust. */
static CUresult hash_kernel(int chunks, unsigned grid, unsigned block, void **params) {
    if (!params || block != HRR_B3_GROUP || grid == 0) return INVALID_VALUE;
    hrr_u64 in = *(hrr_u64 *)params[0], n = *(hrr_u64 *)params[1], out = *(hrr_u64 *)params[2];
    size_t read = chunks ? n : 32 * n;
    if (!addressable(in, read) || !addressable(out, 32 * (size_t)grid)) return ILLEGAL_ADDRESS;
    for (unsigned b = 0; b < grid; b++) {
        if (chunks)
            hrr_blake3_chunks_block((const hrr_u8 *)(uintptr_t)in, n, (hrr_u32 *)(uintptr_t)out, b, grid);
        else
            hrr_blake3_parents_block((const hrr_u32 *)(uintptr_t)in, n, (hrr_u32 *)(uintptr_t)out, b, grid);
    }
    if (grid == 1 && getenv("FAKE_CUDA_WRONG_HASH")) *(hrr_u32 *)(uintptr_t)out ^= 1;
    __atomic_fetch_add(&hash_launches, 1, __ATOMIC_RELAXED);
    return OK;
}
/* "Runs" k: out[i] = i for i < n; `sample`: out[i] = the i-th float of
 * its texture's array; the device hash's kernels. A function of a context
 * that died is refused. */
static struct node *captured(CUstream s, int type);
static CUresult sample(void **params);
static void set_kernel(struct node *x, const struct kernel_params *p);
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                        void **extra) {
    struct node *x = captured(s, 0);
    if (x) {
        struct kernel_params p = {f, gx, gy, gz, bx, by, bz, shmem, params, NULL, NULL, NULL};
        set_kernel(x, &p);
        return OK;
    }
    const struct function *fn = f;
    if (!module_lives(fn->m)) return INVALID_HANDLE;
    if (!strcmp(fn->name, "hrr_blake3_chunks")) return hash_kernel(1, gx, bx, params);
    if (!strcmp(fn->name, "hrr_blake3_parents")) return hash_kernel(0, gx, bx, params);
    if (!strcmp(fn->name, "sample")) return params ? sample(params) : INVALID_VALUE;
    float *out;
    int n;
    if (params) {
        out = *(float **)params[0];
        n = *(int *)params[1];
    } else {
        /* extra: {BUFFER_POINTER (1), buf, BUFFER_SIZE (2), &size, END (0)},
         * the buffer packed as k's parameters: out at 0, n at 8. */
        if (!extra || extra[0] != (void *)1 || extra[2] != (void *)2 || *(size_t *)extra[3] < 12)
            return INVALID_VALUE;
        const unsigned char *b = extra[1];
        memcpy(&out, b, sizeof out);
        memcpy(&n, b + 8, sizeof n);
    }
    for (int i = 0; i < n; i++) out[i] = (float)i;
    return OK;
}
/* Virtual memory: a reservation is PROT_NONE address space; mapping makes
 * the range read-write (the handle's own memory is not modelled). */
CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                             unsigned long long flags) {
    (void)align; (void)addr; (void)flags;
    void *m = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return 2;
    *p = (CUdeviceptr)(uintptr_t)m;
    return OK;
}
CUresult cuMemAddressFree(CUdeviceptr p, size_t size) {
    return munmap((void *)(uintptr_t)p, size) ? INVALID_VALUE : OK;
}
CUresult cuMemCreate(unsigned long long *h, size_t size, const void *prop, unsigned long long f) {
    (void)prop; (void)f;
    static unsigned long long next = 0x100;
    *h = next++ * 0x10 + (size >> 20);
    return OK;
}
CUresult cuMemRelease(unsigned long long h) { (void)h; return OK; }
CUresult cuMemMap(CUdeviceptr p, size_t size, size_t off, unsigned long long h, unsigned long long f) {
    (void)off; (void)h; (void)f;
    return mprotect((void *)(uintptr_t)p, size, PROT_READ | PROT_WRITE) ? INVALID_VALUE : OK;
}
CUresult cuMemUnmap(CUdeviceptr p, size_t size) {
    return mprotect((void *)(uintptr_t)p, size, PROT_NONE) ? INVALID_VALUE : OK;
}
CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const void *desc, size_t n) {
    (void)p; (void)size; (void)desc; (void)n;
    return OK;
}
/* Every module has one global, `table`, of 256 bytes. */
static unsigned char TABLE_GLOBAL[256];
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name) {
    (void)m;
    if (strcmp(name, "table")) return NOT_FOUND;
    if (p) *p = (CUdeviceptr)(uintptr_t)TABLE_GLOBAL;
    if (bytes) *bytes = sizeof TABLE_GLOBAL;
    return OK;
}
/* cuLaunchKernelEx's configuration, as cuda.h lays it out. */
struct launch_attr { unsigned id; char pad[4]; unsigned char value[64]; };
struct launch_config {
    unsigned gx, gy, gz, bx, by, bz, shmem;
    CUstream stream;
    struct launch_attr *attrs;
    unsigned n_attrs;
};
CUresult cuLaunchKernelEx(const struct launch_config *c, CUfunction f, void **params, void **extra) {
    return cuLaunchKernel(f, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->shmem, c->stream, params,
                          extra);
}
/* Stream capture and graphs, enough for the recorder's reading of them:
 * one capture at a time, each captured call a node depending on the
 * previous one; graphs built node by node; an executable graph runs its
 * graph's nodes in creation order (which is a dependency order here). */
struct memcpy3d {
    size_t sx, sy, sz, slod;
    unsigned stype;
    const void *shost;
    CUdeviceptr sdev;
    void *sarray, *r0;
    size_t spitch, sheight;
    size_t dx, dy, dz, dlod;
    unsigned dtype;
    void *dhost;
    CUdeviceptr ddev;
    void *darray, *r1;
    size_t dpitch, dheight;
    size_t width, height, depth;
};
struct memset_params {
    CUdeviceptr dst;
    size_t pitch;
    unsigned value, elem;
    size_t width, height;
};
enum { KERNEL = 0, MEMCPY = 1, MEMSET = 2, HOST = 3, CHILD = 4, EMPTY = 5, CONDITIONAL = 13 };
struct graph;
struct host_params { void (*fn)(void *); void *data; };
/* CUgraphNodeParams (cuGraphAddNode), as cuda.h lays it out: the members
 * this driver understands. */
struct node_params {
    int type, reserved0[3];
    union {
        long long reserved1[29];
        struct kernel_params kernel;
        struct { int flags, reserved; void *ctx; struct memcpy3d copy; } memcpy;
        struct { struct memset_params m; void *ctx; } memset;
        struct { struct graph *graph; int ownership; } child;
        struct { unsigned long long handle; int type; unsigned size; struct graph **out; void *ctx; } cond;
        struct host_params host;
    };
    long long reserved2;
};
struct node {
    int type;
    struct node *deps[8];
    unsigned long long edges[8]; /* CUgraphEdgeData of each dependency */
    size_t ndeps;
    struct kernel_params k;
    float *out; /* the kernel's arguments, kept by the node */
    int n;
    void *args[2];
    struct memcpy3d c;
    struct memset_params m;
    struct graph *child;
    struct graph *body[1]; /* a conditional node's (never run here) */
    int disabled;          /* cuGraphNodeSetEnabled */
    struct host_params host;
};
struct graph { struct node *nodes[64]; size_t n; };
struct exec { struct graph *g; };

static struct graph *capture_graph;
static CUstream capture_stream;
static struct node *capture_last;

static struct node *add_node(struct graph *g, int type, const struct node *const *deps, size_t nd) {
    struct node *x = calloc(1, sizeof *x);
    x->type = type;
    for (size_t i = 0; i < nd && i < 8; i++) x->deps[x->ndeps++] = (struct node *)deps[i];
    g->nodes[g->n++] = x;
    return x;
}
/* A node of the capture on `s`, or NULL when `s` is not capturing. */
static struct node *captured(CUstream s, int type) {
    if (!capture_graph || s != capture_stream) return NULL;
    const struct node *d = capture_last;
    capture_last = add_node(capture_graph, type, capture_last ? &d : NULL, capture_last ? 1 : 0);
    return capture_last;
}
static void set_kernel(struct node *x, const struct kernel_params *p) {
    x->k = *p;
    x->out = *(float **)p->params[0];
    x->n = *(int *)p->params[1];
    x->args[0] = &x->out;
    x->args[1] = &x->n;
    x->k.params = x->args;
}
static void host_or_device(struct memcpy3d *c, int dst_host, void *dst, int src_host, const void *src,
                           size_t n) {
    memset(c, 0, sizeof *c);
    c->dtype = dst_host ? 1 : 2;
    if (dst_host) c->dhost = dst; else c->ddev = (CUdeviceptr)(uintptr_t)dst;
    c->stype = src_host ? 1 : 2;
    if (src_host) c->shost = src; else c->sdev = (CUdeviceptr)(uintptr_t)src;
    c->width = n;
    c->height = c->depth = 1;
}
static void run_graph(struct graph *g);
CUresult cuMemcpy3D_v2(const struct memcpy3d *c);
static void run_node(struct node *x) {
    if (x->disabled) return;
    switch (x->type) {
    case KERNEL:
        for (int i = 0; i < x->n; i++) x->out[i] = (float)i;
        break;
    case MEMCPY:
        cuMemcpy3D_v2(&x->c); /* linear or naming an array */
        break;
    case MEMSET: {
        unsigned *p = (unsigned *)(uintptr_t)x->m.dst;
        for (size_t i = 0; i < x->m.width; i++) p[i] = x->m.value;
        break;
    }
    case CHILD:
        run_graph(x->child);
        break;
    case HOST:
        x->host.fn(x->host.data);
        break;
    }
}
static void run_graph(struct graph *g) {
    for (size_t i = 0; i < g->n; i++) run_node(g->nodes[i]);
}

CUresult cuStreamBeginCapture_v2(CUstream s, int mode) {
    (void)mode;
    if (capture_graph) return INVALID_VALUE;
    capture_graph = calloc(1, sizeof *capture_graph);
    capture_stream = s;
    capture_last = NULL;
    return OK;
}
CUresult cuStreamIsCapturing(CUstream s, int *status) {
    *status = capture_graph && s == capture_stream;
    return OK;
}
CUresult cuStreamEndCapture(CUstream s, void **graph) {
    if (!capture_graph || s != capture_stream) return INVALID_VALUE;
    *graph = capture_graph;
    capture_graph = NULL;
    return OK;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *src, size_t n, CUstream s) {
    struct node *x = captured(s, MEMCPY);
    if (x) host_or_device(&x->c, 0, (void *)(uintptr_t)d, 1, src, n);
    else memcpy((void *)(uintptr_t)d, src, n);
    return OK;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
    struct node *x = captured(s, MEMCPY);
    if (x) host_or_device(&x->c, 1, dst, 0, (const void *)(uintptr_t)src, n);
    else memcpy(dst, (const void *)(uintptr_t)src, n);
    return OK;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) {
    struct node *x = captured(s, MEMSET);
    if (!x) return cuMemsetD32_v2(d, v, n);
    x->m = (struct memset_params){d, 0, v, 4, n, 1};
    return OK;
}
CUresult cuGraphCreate(void **g, unsigned flags) {
    (void)flags;
    *g = calloc(1, sizeof(struct graph));
    return OK;
}
CUresult cuGraphAddKernelNode_v2(void **node, void *g, const void *const *deps, size_t nd,
                                 const struct kernel_params *p) {
    struct node *x = add_node(g, KERNEL, (const struct node *const *)deps, nd);
    set_kernel(x, p);
    *node = x;
    return OK;
}
CUresult cuGraphAddMemcpyNode(void **node, void *g, const void *const *deps, size_t nd,
                              const struct memcpy3d *c, void *ctx) {
    (void)ctx;
    struct node *x = add_node(g, MEMCPY, (const struct node *const *)deps, nd);
    x->c = *c;
    *node = x;
    return OK;
}
CUresult cuGraphAddHostNode(void **node, void *g, const void *const *deps, size_t nd,
                            const struct host_params *p) {
    struct node *x = add_node(g, HOST, (const struct node *const *)deps, nd);
    x->host = *p;
    *node = x;
    return OK;
}
CUresult cuGraphHostNodeGetParams(void *node, struct host_params *p) {
    *p = ((struct node *)node)->host;
    return OK;
}
CUresult cuGraphExecMemcpyNodeSetParams(void *exec, void *node, const struct memcpy3d *c, void *ctx) {
    (void)exec; (void)ctx;
    struct node *x = node;
    if (x->type != MEMCPY) return INVALID_VALUE;
    x->c = *c;
    return OK;
}
CUresult cuGraphAddEmptyNode(void **node, void *g, const void *const *deps, size_t nd) {
    *node = add_node(g, EMPTY, (const struct node *const *)deps, nd);
    return OK;
}
CUresult cuGraphAddChildGraphNode(void **node, void *g, const void *const *deps, size_t nd,
                                  void *child) {
    struct node *x = add_node(g, CHILD, (const struct node *const *)deps, nd);
    x->child = child;
    *node = x;
    return OK;
}
/* The generic node API: the typed calls' nodes, and conditional ones. */
static CUresult set_params(struct node *x, const struct node_params *p) {
    switch (p->type) {
    case KERNEL: set_kernel(x, &p->kernel); break;
    case MEMCPY: x->c = p->memcpy.copy; break;
    case MEMSET: x->m = p->memset.m; break;
    case CHILD: x->child = p->child.graph; break;
    case HOST: x->host = p->host; break;
    case EMPTY: break;
    default: return INVALID_VALUE;
    }
    return OK;
}
CUresult cuGraphAddNode_v2(void **node, void *g, const void *const *deps, const unsigned long long *edges,
                           size_t nd, struct node_params *p) {
    struct node *x = add_node(g, p->type, (const struct node *const *)deps, nd);
    for (size_t i = 0; edges && i < x->ndeps; i++) x->edges[i] = edges[i];
    *node = x;
    if (p->type == CONDITIONAL) {
        x->body[0] = calloc(1, sizeof(struct graph));
        p->cond.out = x->body;
        return OK;
    }
    return set_params(x, p);
}
CUresult cuGraphAddNode(void **node, void *g, const void *const *deps, size_t nd, struct node_params *p) {
    return cuGraphAddNode_v2(node, g, deps, NULL, nd, p);
}
CUresult cuGraphNodeSetParams(void *node, struct node_params *p) {
    struct node *x = node;
    return x->type == p->type ? set_params(x, p) : INVALID_VALUE;
}
/* The executable graph runs its graph's nodes: setting one sets that. */
CUresult cuGraphExecNodeSetParams(void *exec, void *node, struct node_params *p) {
    (void)exec;
    return cuGraphNodeSetParams(node, p);
}
CUresult cuGraphConditionalHandleCreate(unsigned long long *h, void *g, void *ctx, unsigned value,
                                        unsigned flags) {
    (void)g; (void)ctx; (void)value; (void)flags;
    static unsigned long long next = 0x1000;
    *h = next++;
    return OK;
}
CUresult cuGraphGetNodes(void *g, void **nodes, size_t *n) {
    struct graph *x = g;
    if (nodes && *n == 0) return 1; /* as cuGraphNodeGetDependencies_v2 */
    if (nodes)
        for (size_t i = 0; i < *n && i < x->n; i++) nodes[i] = x->nodes[i];
    *n = x->n;
    return OK;
}
CUresult cuGraphNodeGetType(void *node, int *type) {
    *type = ((struct node *)node)->type;
    return OK;
}
CUresult cuGraphNodeGetDependencies_v2(void *node, void **deps, unsigned long long *edges, size_t *n) {
    struct node *x = node;
    /* As CUDA 13.0's driver: an array with a count of 0 is refused; edge
     * data not asked for where an edge has some is a lossy query. */
    if (deps && *n == 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
    if (edges && !deps) return 1;
    for (size_t i = 0; deps && !edges && i < x->ndeps; i++)
        if (x->edges[i]) return LOSSY_QUERY;
    if (deps)
        for (size_t i = 0; i < *n && i < x->ndeps; i++) {
            deps[i] = x->deps[i];
            if (edges) edges[i] = x->edges[i];
        }
    *n = x->ndeps;
    return OK;
}
CUresult cuGraphKernelNodeGetParams_v2(void *node, struct kernel_params *p) {
    *p = ((struct node *)node)->k;
    return OK;
}
CUresult cuGraphMemcpyNodeGetParams(void *node, struct memcpy3d *c) {
    *c = ((struct node *)node)->c;
    return OK;
}
CUresult cuGraphMemsetNodeGetParams(void *node, struct memset_params *m) {
    *m = ((struct node *)node)->m;
    return OK;
}
CUresult cuGraphChildGraphNodeGetGraph(void *node, void **g) {
    *g = ((struct node *)node)->child;
    return OK;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *g, unsigned long long flags) {
    (void)flags;
    struct exec *e = malloc(sizeof *e);
    e->g = g;
    *exec = e;
    return OK;
}
CUresult cuGraphExecKernelNodeSetParams_v2(void *exec, void *node, const struct kernel_params *p) {
    (void)exec;
    set_kernel(node, p);
    return OK;
}
/* The executable graph's nodes are its graph's: enabling or setting one
 * changes that. */
CUresult cuGraphNodeSetEnabled(void *exec, void *node, unsigned enabled) {
    (void)exec;
    ((struct node *)node)->disabled = !enabled;
    return OK;
}
CUresult cuGraphNodeGetEnabled(void *exec, void *node, unsigned *enabled) {
    (void)exec;
    *enabled = !((struct node *)node)->disabled;
    return OK;
}
CUresult cuGraphExecChildGraphNodeSetParams(void *exec, void *node, void *child) {
    (void)exec;
    struct node *x = node;
    if (x->type != CHILD || ((struct graph *)child)->n != x->child->n) return INVALID_VALUE;
    x->child = child;
    return OK;
}
CUresult cuGraphLaunch(void *exec, CUstream s) {
    (void)s;
    run_graph(((struct exec *)exec)->g);
    return OK;
}
CUresult cuGraphExecDestroy(void *exec) { free(exec); return OK; }
CUresult cuGraphDestroy(void *g) { (void)g; return OK; }

/* Host functions: run at once. The function last handed over is kept for
 * the program to compare with its own (the capture library's trampoline
 * stands in for it); a function, not a variable: -Bsymbolic would give the
 * program a copy of its own. */
static void (*last_host_fn)(void *);
void *fake_last_host_fn(void) { return (void *)last_host_fn; }
CUresult cuLaunchHostFunc(CUstream s, void (*fn)(void *), void *data) {
    struct node *x = captured(s, HOST);
    if (x) {
        x->host = (struct host_params){fn, data};
        return OK;
    }
    last_host_fn = fn;
    fn(data);
    return OK;
}

/* Arrays: plain memory, rows of width × element bytes back to back.
 * Copies take CUDA_MEMCPY3D (CUDA_MEMCPY2D is converted); a side is host,
 * device (both plain pointers here) or an array. Texture and surface
 * objects are small integers from 1, as the real driver's, each keeping
 * its CUDA_RESOURCE_DESC (the type at 0, the array at 8). */
struct array_desc { size_t w, h; int format; unsigned channels; };
struct array3d_desc { size_t w, h, d; int format; unsigned channels, flags; };
struct array { struct array3d_desc d; size_t row; unsigned char *mem; };
struct memcpy2d {
    size_t sx, sy;
    unsigned stype;
    const void *shost;
    CUdeviceptr sdev;
    void *sarray;
    size_t spitch;
    size_t dx, dy;
    unsigned dtype;
    void *dhost;
    CUdeviceptr ddev;
    void *darray;
    size_t dpitch;
    size_t width, height;
};
static size_t format_bytes(int f) {
    switch (f) {
    case 0x01: case 0x08: return 1;
    case 0x02: case 0x09: case 0x10: return 2;
    case 0x03: case 0x0a: case 0x20: return 4;
    case 0xb0: return 1; /* NV12: 8-bit luma, then chroma pairs */
    }
    return 0;
}
CUresult cuArray3DCreate_v2(void **out, const struct array3d_desc *d) {
    int nv12 = d->format == 0xb0;
    size_t e = format_bytes(d->format) * (nv12 ? 1 : d->channels);
    if (!e || !d->w) return INVALID_VALUE;
    struct array *a = calloc(1, sizeof *a);
    a->d = *d;
    a->row = d->w * e;
    size_t bytes = a->row * (d->h ? d->h : 1) * (d->d ? d->d : 1);
    a->mem = calloc(1, nv12 ? bytes + bytes / 2 : bytes);
    *out = a;
    return OK;
}
CUresult cuArrayCreate_v2(void **out, const struct array_desc *d) {
    struct array3d_desc d3 = {d->w, d->h, 0, d->format, d->channels, 0};
    return cuArray3DCreate_v2(out, &d3);
}
CUresult cuArrayGetDescriptor_v2(struct array_desc *d, void *array) {
    struct array *a = array;
    *d = (struct array_desc){a->d.w, a->d.h, a->d.format, a->d.channels};
    return OK;
}
/* Mipmapped arrays: an array per level, each of half the last's extent. */
struct mipmap { unsigned n; void *levels[16]; };
CUresult cuMipmappedArrayCreate(void **out, const struct array3d_desc *d, unsigned levels) {
    if (!levels || levels > 16) return INVALID_VALUE;
    struct mipmap *m = calloc(1, sizeof *m);
    struct array3d_desc l = *d;
    for (m->n = 0; m->n < levels; m->n++) {
        CUresult r = cuArray3DCreate_v2(&m->levels[m->n], &l);
        if (r) return r;
        l.w = l.w > 1 ? l.w / 2 : 1;
        l.h = l.h > 1 ? l.h / 2 : l.h;
        l.d = l.d > 1 ? l.d / 2 : l.d;
    }
    *out = m;
    return OK;
}
CUresult cuMipmappedArrayGetLevel(void **out, void *mipmap, unsigned level) {
    struct mipmap *m = mipmap;
    if (level >= m->n) return INVALID_VALUE;
    *out = m->levels[level];
    return OK;
}
CUresult cuArrayDestroy(void *array);
CUresult cuMipmappedArrayDestroy(void *mipmap) {
    struct mipmap *m = mipmap;
    for (unsigned i = 0; i < m->n; i++) cuArrayDestroy(m->levels[i]);
    free(m);
    return OK;
}
/* An NV12 array's planes: the luma plane (its rows), then the chroma plane
 * (pairs at half the width and height), arrays over the parent's memory. */
CUresult cuArrayGetPlane(void **out, void *array, unsigned index) {
    struct array *a = array;
    if (a->d.format != 0xb0 || index > 1) return INVALID_VALUE;
    struct array *p = calloc(1, sizeof *p);
    p->d = (struct array3d_desc){index ? a->d.w / 2 : a->d.w, index ? a->d.h / 2 : a->d.h, 0, 0x01,
                                 index ? 2 : 1, 0};
    p->row = a->row;
    p->mem = a->mem + (index ? a->row * a->d.h : 0);
    *out = p;
    return OK;
}
CUresult cuArrayDestroy(void *array) {
    struct array *a = array;
    free(a->mem);
    free(a);
    return OK;
}
/* A side's first byte and its row and slice pitches. */
static unsigned char *copy_side(unsigned type, const void *host, CUdeviceptr dev, void *array,
                                size_t x, size_t y, size_t z, size_t pitch, size_t height,
                                size_t *row, size_t *slice) {
    if (type == 3) {
        struct array *a = array;
        *row = a->row;
        *slice = a->row * (a->d.h ? a->d.h : 1);
        return a->mem + x + y * *row + z * *slice;
    }
    unsigned char *base = type == 1 ? (unsigned char *)host : (unsigned char *)(uintptr_t)dev;
    *row = pitch;
    *slice = pitch * height;
    return base + x + y * *row + z * *slice;
}
CUresult cuMemcpy3D_v2(const struct memcpy3d *c) {
    size_t srow, sslice, drow, dslice;
    const unsigned char *s = copy_side(c->stype, c->shost, c->sdev, c->sarray, c->sx, c->sy, c->sz,
                                       c->spitch, c->sheight, &srow, &sslice);
    unsigned char *d = copy_side(c->dtype, c->dhost, c->ddev, c->darray, c->dx, c->dy, c->dz,
                                 c->dpitch, c->dheight, &drow, &dslice);
    for (size_t z = 0; z < c->depth; z++)
        for (size_t y = 0; y < c->height; y++)
            memcpy(d + z * dslice + y * drow, s + z * sslice + y * srow, c->width);
    return OK;
}
CUresult cuMemcpy2D_v2(const struct memcpy2d *c) {
    struct memcpy3d c3 = {
        .sx = c->sx, .sy = c->sy, .stype = c->stype, .shost = c->shost, .sdev = c->sdev,
        .sarray = c->sarray, .spitch = c->spitch, .sheight = c->height,
        .dx = c->dx, .dy = c->dy, .dtype = c->dtype, .dhost = c->dhost, .ddev = c->ddev,
        .darray = c->darray, .dpitch = c->dpitch, .dheight = c->height,
        .width = c->width, .height = c->height, .depth = 1,
    };
    return cuMemcpy3D_v2(&c3);
}
CUresult cuMemcpyHtoA_v2(void *dst, size_t off, const void *src, size_t n) {
    memcpy(((struct array *)dst)->mem + off, src, n);
    return OK;
}
CUresult cuMemcpyAtoH_v2(void *dst, void *src, size_t off, size_t n) {
    memcpy(dst, ((struct array *)src)->mem + off, n);
    return OK;
}
/* The per-thread default stream forms: one stream here, so the same copies. */
CUresult cuMemcpy3D_v2_ptds(const struct memcpy3d *c) { return cuMemcpy3D_v2(c); }
CUresult cuMemcpy2D_v2_ptds(const struct memcpy2d *c) { return cuMemcpy2D_v2(c); }
CUresult cuMemcpy3DAsync_v2(const struct memcpy3d *c, CUstream s) {
    struct node *x = captured(s, MEMCPY);
    if (x) {
        x->c = *c;
        return OK;
    }
    return cuMemcpy3D_v2(c);
}
CUresult cuMemcpy3DAsync_v2_ptsz(const struct memcpy3d *c, CUstream s) { (void)s; return cuMemcpy3D_v2(c); }
CUresult cuMemcpyHtoA_v2_ptds(void *dst, size_t off, const void *src, size_t n) {
    return cuMemcpyHtoA_v2(dst, off, src, n);
}
CUresult cuMemcpyAtoH_v2_ptds(void *dst, void *src, size_t off, size_t n) {
    return cuMemcpyAtoH_v2(dst, src, off, n);
}
CUresult cuMemcpyAtoHAsync_v2(void *dst, void *src, size_t off, size_t n, CUstream s) {
    (void)s;
    return cuMemcpyAtoH_v2(dst, src, off, n);
}
CUresult cuMemcpyAtoHAsync_v2_ptsz(void *dst, void *src, size_t off, size_t n, CUstream s) {
    (void)s;
    return cuMemcpyAtoH_v2(dst, src, off, n);
}
static unsigned char objects[16][144];
static int objects_live[16];
static CUresult object_create(unsigned long long *obj, const void *res) {
    for (int i = 0; i < 16; i++)
        if (!objects_live[i]) {
            objects_live[i] = 1;
            memcpy(objects[i], res, sizeof objects[i]);
            *obj = (unsigned long long)i + 1;
            return OK;
        }
    return INVALID_VALUE;
}
static CUresult object_destroy(unsigned long long obj) {
    if (obj == 0 || obj > 16 || !objects_live[obj - 1]) return INVALID_VALUE;
    objects_live[obj - 1] = 0;
    return OK;
}
CUresult cuTexObjectCreate(unsigned long long *obj, const void *res, const void *tex, const void *view) {
    (void)tex; (void)view;
    return object_create(obj, res);
}
CUresult cuTexObjectDestroy(unsigned long long obj) { return object_destroy(obj); }
CUresult cuSurfObjectCreate(unsigned long long *obj, const void *res) { return object_create(obj, res); }
CUresult cuSurfObjectDestroy(unsigned long long obj) { return object_destroy(obj); }
static CUresult sample(void **params) {
    unsigned long long t = *(unsigned long long *)params[0];
    float *out = *(float **)params[1];
    int n = *(int *)params[2];
    if (t == 0 || t > 16 || !objects_live[t - 1]) return INVALID_VALUE;
    struct array *a;
    memcpy(&a, objects[t - 1] + 8, sizeof a);
    memcpy(out, a->mem, (size_t)n * sizeof *out);
    return OK;
}

/* A driver function the capture library does not wrap, with effects. */
CUresult cuMemcpy3DPeer(const void *p) { (void)p; return OK; }

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                             int *status);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags) {
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}

static const struct { const char *name; void *fn; void *ptds; } TABLE[] = {
    {"cuInit", (void *)cuInit, NULL},
    {"cuDriverGetVersion", (void *)cuDriverGetVersion, NULL},
    {"cuDeviceGetCount", (void *)cuDeviceGetCount, NULL},
    {"cuCtxGetCurrent", (void *)cuCtxGetCurrent, NULL},
    {"cuCtxGetDevice", (void *)cuCtxGetDevice, NULL},
    {"cuMemAlloc", (void *)cuMemAlloc_v2, NULL},
    {"cuMemFree", (void *)cuMemFree_v2, NULL},
    {"cuMemcpyHtoD", (void *)cuMemcpyHtoD_v2, (void *)cuMemcpyHtoD_v2_ptds},
    {"cuMemcpyDtoH", (void *)cuMemcpyDtoH_v2, NULL},
    {"cuMemsetD32", (void *)cuMemsetD32_v2, NULL},
    {"cuStreamSynchronize", (void *)cuStreamSynchronize, NULL},
    {"cuPointerGetAttribute", (void *)cuPointerGetAttribute, NULL},
    {"cuModuleLoadData", (void *)cuModuleLoadData, NULL},
    {"cuModuleUnload", (void *)cuModuleUnload, NULL},
    {"cuModuleGetFunction", (void *)cuModuleGetFunction, NULL},
    {"cuFuncGetParamInfo", (void *)cuFuncGetParamInfo, NULL},
    {"cuFuncGetName", (void *)cuFuncGetName, NULL},
    {"cuLaunchKernel", (void *)cuLaunchKernel, NULL},
    {"cuMemcpy3DPeer", (void *)cuMemcpy3DPeer, NULL},
    {"cuArrayGetDescriptor", (void *)cuArrayGetDescriptor_v2, NULL},
    {"cuTexObjectCreate", (void *)cuTexObjectCreate, NULL},
    {"cuMemcpy2D", (void *)cuMemcpy2D_v2, (void *)cuMemcpy2D_v2_ptds},
    {"cuMemcpy3D", (void *)cuMemcpy3D_v2, (void *)cuMemcpy3D_v2_ptds},
    {"cuMemcpy3DAsync", (void *)cuMemcpy3DAsync_v2, (void *)cuMemcpy3DAsync_v2_ptsz},
    {"cuMemcpyHtoA", (void *)cuMemcpyHtoA_v2, (void *)cuMemcpyHtoA_v2_ptds},
    {"cuMemcpyAtoH", (void *)cuMemcpyAtoH_v2, (void *)cuMemcpyAtoH_v2_ptds},
    {"cuMemcpyAtoHAsync", (void *)cuMemcpyAtoHAsync_v2, (void *)cuMemcpyAtoHAsync_v2_ptsz},
    {"cuGetProcAddress", (void *)cuGetProcAddress, NULL},
    {"cuDeviceGet", (void *)cuDeviceGet, NULL},
    {"cuDeviceGetAttribute", (void *)cuDeviceGetAttribute, NULL},
    {"cuDevicePrimaryCtxRetain", (void *)cuDevicePrimaryCtxRetain, NULL},
    {"cuDevicePrimaryCtxRelease", (void *)cuDevicePrimaryCtxRelease_v2, NULL},
    {"cuDevicePrimaryCtxReset", (void *)cuDevicePrimaryCtxReset_v2, NULL},
    {"cuDevicePrimaryCtxGetState", (void *)cuDevicePrimaryCtxGetState, NULL},
    {"cuCtxSetCurrent", (void *)cuCtxSetCurrent, NULL},
};

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                             int *status) {
    if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    if (!symbol || !pfn) return INVALID_VALUE;
    *pfn = NULL;
    if (!strcmp(symbol, "cuGetProcAddress")) {
        /* v1 for CUDA 11.3-11.x, _v2 from 12.0, as the real driver. */
        *pfn = version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    } else {
        for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++) {
            if (!strcmp(TABLE[i].name, symbol)) {
                *pfn = (flags & 2) && TABLE[i].ptds ? TABLE[i].ptds : TABLE[i].fn;
            }
        }
    }
    if (!*pfn) return NOT_FOUND;
    if (status) *status = 0;
    return OK;
}
