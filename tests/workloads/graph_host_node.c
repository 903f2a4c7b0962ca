/* A graph with a host node (a host function between two device steps):
 * it runs, but hrr cannot replay a host function. The rest is recorded. */
#include "hrr_workload.h"

static int calls;
static void on_host(void *p) { calls += *(int *)p; }

int main(void) {
    static unsigned char h[4096];
    void *d;
    CHECK(hipMalloc(&d, sizeof h));
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t set, host, down;
    hipMemsetParams ms = {.dst = d, .elementSize = 1, .height = 1, .pitch = 0, .value = 0x5a,
                          .width = sizeof h};
    CHECK(hipGraphAddMemsetNode(&set, g, NULL, 0, &ms));
    int inc = 1;
    hipHostNodeParams hp = {on_host, &inc};
    CHECK(hipGraphAddHostNode(&host, g, &set, 1, &hp));
    CHECK(hipGraphAddMemcpyNode1D(&down, g, &host, 1, h, d, sizeof h, hipMemcpyDeviceToHost));
    hipGraphExec_t ge;
    CHECK(hipGraphInstantiate(&ge, g, NULL, NULL, 0));
    CHECK(hipGraphLaunch(ge, NULL));
    CHECK(hipDeviceSynchronize());
    EXPECT(calls == 1 && h[0] == 0x5a && h[4095] == 0x5a, "calls %d, h[0] %x", calls, h[0]);
    CHECK(hipGraphExecDestroy(ge));
    CHECK(hipGraphDestroy(g));
    printf("graph_host_node: OK\n");
    return 0;
}
