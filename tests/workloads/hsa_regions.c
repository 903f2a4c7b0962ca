/* What the built-in HSA region producer (`hrr-cap --hsa-regions`) must get
 * right, in one run:
 *   - two segments from the GPU agent's coarse-grained pool (A, B), each first
 *     touched by an H2D copy; B is also a D2D destination and a D2H source;
 *   - A freed mid-run, then C allocated (the CPU runtime's first-fit
 *     allocator hands A's address out again): replay must retire A before
 *     it backs C;
 *   - a buffer from the CPU agent's pool: host memory (a copy source), which
 *     is not a segment;
 *   - calls that fail (a zero-byte allocation, an unknown pool, freeing an
 *     address HSA never gave out): their statuses reach the program as the
 *     runtime returned them, and they record nothing.
 * Every status is printed, so stdout can be compared with and without the
 * producer. `hsa_regions kill` stops with SIGKILL while A and B are in use
 * (the producer's crash safety). */
#include <signal.h>

#include "hrr_workload.h"
#include "hsa_segment.h"

#define A_SIZE 65536
#define B_SIZE 131072
#define H_SIZE 4096

static hsa_status_t find_cpu_agent(hsa_agent_t agent, void *data) {
    hsa_device_type_t type;
    hsa_status_t s = hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
    if (s != HSA_STATUS_SUCCESS) return s;
    if (type == HSA_DEVICE_TYPE_CPU) {
        *(hsa_agent_t *)data = agent;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_global_pool(hsa_amd_memory_pool_t pool, void *data) {
    hsa_amd_segment_t segment;
    hsa_status_t s = hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
    if (s != HSA_STATUS_SUCCESS) return s;
    if (segment == HSA_AMD_SEGMENT_GLOBAL) {
        *(hsa_amd_memory_pool_t *)data = pool;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

/* A global pool of the first CPU agent (system memory). */
static hsa_amd_memory_pool_t cpu_pool(void) {
    hsa_agent_t cpu = {0};
    hsa_status_t s = hsa_iterate_agents(find_cpu_agent, &cpu);
    if (s != HSA_STATUS_SUCCESS && s != HSA_STATUS_INFO_BREAK) HSA_CHECK(s);
    hsa_amd_memory_pool_t pool = {0};
    s = hsa_amd_agent_iterate_memory_pools(cpu, find_global_pool, &pool);
    if (s != HSA_STATUS_SUCCESS && s != HSA_STATUS_INFO_BREAK) HSA_CHECK(s);
    if (pool.handle == 0) {
        fprintf(stderr, "no CPU agent with a global pool\n");
        exit(3);
    }
    return pool;
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * seed + 3u);
}

int main(int argc, char **argv) {
    int kill_midway = argc > 1 && strcmp(argv[1], "kill") == 0;
    HSA_CHECK(hsa_init());
    CHECK(hipInit(0));
    CHECK(hipSetDevice(0));

    unsigned char *a = hrr_hsa_alloc_hidden(A_SIZE);
    unsigned char *b = hrr_hsa_alloc_hidden(B_SIZE);
    printf("HRR_SEGMENT base=%p size=%d\n", (void *)a, A_SIZE);
    printf("HRR_SEGMENT base=%p size=%d\n", (void *)b, B_SIZE);

    unsigned char *h = NULL;
    HSA_CHECK(hsa_amd_memory_pool_allocate(cpu_pool(), H_SIZE, 0, (void **)&h));
    fill(h, H_SIZE, 11u);

    /* Failing calls: statuses pass through, nothing is recorded. */
    struct hrr_agents agents = {0};
    HSA_CHECK(hsa_iterate_agents(hrr_collect_agent, &agents));
    hsa_amd_memory_pool_t gpu_pool = {0};
    hsa_amd_agent_iterate_memory_pools(agents.gpu, hrr_find_coarse_pool, &gpu_pool);
    void *none = NULL;
    printf("status allocate(gpu pool, 0 bytes) = %#x\n",
           (unsigned)hsa_amd_memory_pool_allocate(gpu_pool, 0, 0, &none));
    hsa_amd_memory_pool_t bogus = {0x1234};
    printf("status allocate(unknown pool) = %#x\n",
           (unsigned)hsa_amd_memory_pool_allocate(bogus, H_SIZE, 0, &none));
    printf("status free(never allocated) = %#x\n",
           (unsigned)hsa_amd_memory_pool_free((void *)(uintptr_t)0x1000));
    fflush(stdout);

    unsigned char *host = malloc(B_SIZE), *back = malloc(B_SIZE);
    fill(host, B_SIZE, 7u);
    CHECK(hipMemcpy(a, host, A_SIZE, hipMemcpyHostToDevice));         /* A's first touch */
    CHECK(hipMemcpy(a, h, H_SIZE, hipMemcpyHostToDevice));            /* from the CPU pool */
    CHECK(hipMemcpy(b, host, B_SIZE, hipMemcpyHostToDevice));         /* B's first touch */
    CHECK(hipMemcpy(b + A_SIZE, a, A_SIZE, hipMemcpyDeviceToDevice)); /* A -> B */
    CHECK(hipMemcpy(back, b, B_SIZE, hipMemcpyDeviceToHost));
    EXPECT(memcmp(back, host, A_SIZE) == 0, "B's first half");
    EXPECT(memcmp(back + A_SIZE, h, H_SIZE) == 0, "A's CPU-pool bytes in B");
    EXPECT(memcmp(back + A_SIZE + H_SIZE, host + H_SIZE, A_SIZE - H_SIZE) == 0, "A's rest in B");
    printf("hsa_regions: A -> B -> host ok\n");
    fflush(stdout);
    if (kill_midway) raise(SIGKILL);

    printf("status free(A) = %#x\n", (unsigned)hsa_amd_memory_pool_free(a));
    unsigned char *c = hrr_hsa_alloc_hidden(A_SIZE);
    printf("HRR_SEGMENT base=%p size=%d\n", (void *)c, A_SIZE);
    printf("hsa_regions: C %s A's address\n", c == a ? "reuses" : "does not reuse");
    fill(host, A_SIZE, 13u);
    CHECK(hipMemcpy(c, host, A_SIZE, hipMemcpyHostToDevice)); /* C's first touch */
    memset(back, 0, A_SIZE);
    CHECK(hipMemcpy(back, c, A_SIZE, hipMemcpyDeviceToHost));
    EXPECT(memcmp(back, host, A_SIZE) == 0, "C round trip");
    printf("hsa_regions: C round trip ok\n");

    printf("status free(B) = %#x\n", (unsigned)hsa_amd_memory_pool_free(b));
    printf("status free(C) = %#x\n", (unsigned)hsa_amd_memory_pool_free(c));
    printf("status free(CPU pool buffer) = %#x\n", (unsigned)hsa_amd_memory_pool_free(h));
    HSA_CHECK(hsa_shut_down());
    free(host);
    free(back);
    printf("hsa_regions: OK\n");
    return 0;
}
