/* Host nodes that overwrite the device-to-host result they depend on, as
 * NVIDIA's simpleCudaGraphs does: one added with hipGraphAddHostNode, one
 * made by stream capture from hipLaunchHostFunc. Each host function checks
 * the bytes the copy wrote and overwrites them with 0xEE; the program
 * checks that it sees the overwritten bytes after each launch. The bytes
 * the copies wrote (0x5a, then 0x33) are what replay reproduces. */
#include <dlfcn.h>

#include "hrr_workload.h"

typedef hipError_t (*launch_host_func_t)(hipStream_t, hipHostFn_t, void *);

#define N 4096

struct target {
    unsigned char *host;
    unsigned char want;
    int calls;
};

static void overwrite(void *p) {
    struct target *t = p;
    for (int i = 0; i < N; i++)
        EXPECT(t->host[i] == t->want, "host node: byte %d is %#x, want %#x", i, t->host[i],
               t->want);
    memset(t->host, 0xEE, N);
    t->calls++;
}

static void expect_overwritten(const unsigned char *h, const char *what) {
    for (int i = 0; i < N; i++) EXPECT(h[i] == 0xEE, "%s: byte %d is %#x", what, i, h[i]);
}

int main(void) {
    CHECK(hipInit(0));
    static unsigned char h1[N], h2[N];
    void *d1, *d2;
    CHECK(hipMalloc(&d1, N));
    CHECK(hipMalloc(&d2, N));

    /* Built node by node: memset, D2H, host node after the D2H. */
    struct target t1 = {h1, 0x5a, 0};
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t set, down, host;
    hipMemsetParams ms = {.dst = d1, .elementSize = 1, .height = 1, .pitch = 0, .value = 0x5a,
                          .width = N};
    CHECK(hipGraphAddMemsetNode(&set, g, NULL, 0, &ms));
    CHECK(hipGraphAddMemcpyNode1D(&down, g, &set, 1, h1, d1, N, hipMemcpyDeviceToHost));
    hipHostNodeParams hp = {overwrite, &t1};
    CHECK(hipGraphAddHostNode(&host, g, &down, 1, &hp));
    hipGraphExec_t ge;
    CHECK(hipGraphInstantiate(&ge, g, NULL, NULL, 0));
    for (int round = 1; round <= 2; round++) {
        CHECK(hipGraphLaunch(ge, NULL));
        CHECK(hipDeviceSynchronize());
        expect_overwritten(h1, "node-built graph");
    }
    EXPECT(t1.calls == 2, "node-built graph: host node ran %d times", t1.calls);

    /* Captured: hipLaunchHostFunc into a capturing stream is a host node. */
    launch_host_func_t launch_host_func =
        (launch_host_func_t)dlsym(RTLD_DEFAULT, "hipLaunchHostFunc");
    EXPECT(launch_host_func != NULL, "hipLaunchHostFunc: not in this HIP runtime");
    struct target t2 = {h2, 0x33, 0};
    hipStream_t s;
    CHECK(hipStreamCreate(&s));
    CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    CHECK(hipMemsetAsync(d2, 0x33, N, s));
    CHECK(hipMemcpyAsync(h2, d2, N, hipMemcpyDeviceToHost, s));
    CHECK(launch_host_func(s, overwrite, &t2));
    hipGraph_t cg;
    CHECK(hipStreamEndCapture(s, &cg));
    hipGraphExec_t cge;
    CHECK(hipGraphInstantiate(&cge, cg, NULL, NULL, 0));
    CHECK(hipGraphLaunch(cge, s));
    CHECK(hipStreamSynchronize(s));
    expect_overwritten(h2, "captured graph");
    EXPECT(t2.calls == 1, "captured graph: host node ran %d times", t2.calls);

    CHECK(hipGraphExecDestroy(ge));
    CHECK(hipGraphExecDestroy(cge));
    CHECK(hipGraphDestroy(g));
    CHECK(hipGraphDestroy(cg));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(d1));
    CHECK(hipFree(d2));
    printf("graph_host_overwrite: OK\n");
    return 0;
}
