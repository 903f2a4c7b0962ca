/* A kernel node of an executable graph reaching pinned host memory
 * (cuMemHostAlloc, linked with -lcuda): before each of two launches the host
 * changes the memory, and the stand-in's kernel (iota: out[i] = i for
 * i < n) writes its first floats, which the host reads after a stream
 * synchronisation. */
#include <stdio.h>

int cuInit(unsigned);
int cuMemHostAlloc(void **, size_t, unsigned);
int cuMemFreeHost(void *);
int cuModuleLoadData(void **, const void *);
int cuModuleGetFunction(void **, void *, const char *);
int cuStreamSynchronize(void *);
int cuGraphCreate(void **, unsigned);
struct kernel_params {
    void *func;
    unsigned gx, gy, gz, bx, by, bz, shmem;
    void **params, **extra;
    void *kern, *ctx;
};
int cuGraphAddKernelNode_v2(void **, void *, void *const *, size_t, const struct kernel_params *);
int cuGraphInstantiateWithFlags(void **, void *, unsigned long long);
int cuGraphLaunch(void *, void *);
int cuGraphExecDestroy(void *);
int cuGraphDestroy(void *);

static const char PTX[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry iota(.param .u64 iota_param_0, .param .u32 iota_param_1)\n"
                          "{\n    ret;\n}\n";

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int e_ = (x);                                                                              \
        if (e_) {                                                                                  \
            printf("WRONG %s = %d\n", #x, e_);                                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void) {
    enum { N = 64 };
    float *h;
    void *m, *f, *g, *k, *exec, *s = (void *)0x5000;
    CHECK(cuInit(0));
    CHECK(cuMemHostAlloc((void **)&h, N * sizeof(float), 2 /* CU_MEMHOSTALLOC_DEVICEMAP */));
    CHECK(cuModuleLoadData(&m, PTX));
    CHECK(cuModuleGetFunction(&f, m, "iota"));
    int n = 8;
    void *params[] = {&h, &n};
    struct kernel_params p = {f, 1, 1, 1, 32, 1, 1, 0, params, NULL, NULL, NULL};
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddKernelNode_v2(&k, g, NULL, 0, &p));
    CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
    for (int it = 0; it < 2; it++) {
        h[1] = -1.0f;
        h[N - 1] = 100.0f + it;
        CHECK(cuGraphLaunch(exec, s));
        CHECK(cuStreamSynchronize(s));
        if (h[1] != 1.0f || h[N - 1] != 100.0f + it) {
            printf("WRONG launch %d: h[1] = %g, h[%d] = %g\n", it, h[1], N - 1, h[N - 1]);
            return 1;
        }
    }
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(g));
    CHECK(cuMemFreeHost(h));
    printf("graph_host_memory: OK\n");
    return 0;
}
