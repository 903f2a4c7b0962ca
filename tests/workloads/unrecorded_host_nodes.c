/* A workload that calls an entry point the capture library forwards but
 * does not record: two host nodes added to a graph that is never
 * instantiated (checked here). The rest is recorded and replays: a plain
 * copy round trip, checked by replay as usual. */
#include "hrr_workload.h"

static void on_host(void *p) { (void)p; }

int main(void) {
    static unsigned char plain[4096], plain_back[4096];
    for (int i = 0; i < 4096; i++) plain[i] = (unsigned char)(i ^ 0x5A);

    /* unrecorded: two host nodes */
    hipGraph_t g;
    CHECK(hipGraphCreate(&g, 0));
    hipGraphNode_t n1, n2;
    hipHostNodeParams hp = {on_host, NULL};
    CHECK(hipGraphAddHostNode(&n1, g, NULL, 0, &hp));
    CHECK(hipGraphAddHostNode(&n2, g, &n1, 1, &hp));
    EXPECT(n1 != NULL && n2 != NULL && n1 != n2, "two host nodes");
    CHECK(hipGraphDestroy(g));

    /* recorded */
    void *flat;
    CHECK(hipMalloc(&flat, sizeof plain));
    CHECK(hipMemcpy(flat, plain, sizeof plain, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(plain_back, flat, sizeof plain, hipMemcpyDeviceToHost));
    EXPECT(memcmp(plain, plain_back, sizeof plain) == 0, "flat round trip differs");
    CHECK(hipFree(flat));
    printf("unrecorded_host_nodes: OK\n");
    return 0;
}
