/* Device memory that never crosses the HIP API: a buffer from the GPU agent's
 * global coarse-grained HSA pool, access granted to every agent (the DMA
 * engine that services copies faults on an unshared coarse-grained buffer). */
#ifndef HRR_HSA_SEGMENT_H
#define HRR_HSA_SEGMENT_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define HSA_CHECK(call)                                                                  \
    do {                                                                                 \
        hsa_status_t s_ = (call);                                                        \
        if (s_ != HSA_STATUS_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s failed: hsa_status_t %#x\n", __FILE__, __LINE__,  \
                    #call, (unsigned)s_);                                                \
            exit(3);                                                                     \
        }                                                                                \
    } while (0)

#define HRR_MAX_AGENTS 64

struct hrr_agents {
    hsa_agent_t all[HRR_MAX_AGENTS];
    uint32_t count;
    hsa_agent_t gpu;
    bool have_gpu;
};

static hsa_status_t hrr_collect_agent(hsa_agent_t agent, void *data) {
    struct hrr_agents *a = data;
    if (a->count < HRR_MAX_AGENTS) a->all[a->count++] = agent;
    hsa_device_type_t type;
    hsa_status_t s = hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
    if (s != HSA_STATUS_SUCCESS) return s;
    if (type == HSA_DEVICE_TYPE_GPU && !a->have_gpu) {
        a->gpu = agent;
        a->have_gpu = true;
    }
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t hrr_find_coarse_pool(hsa_amd_memory_pool_t pool, void *data) {
    hsa_amd_segment_t segment;
    hsa_status_t s = hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
    if (s != HSA_STATUS_SUCCESS) return s;
    if (segment != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
    uint32_t flags = 0;
    s = hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
    if (s != HSA_STATUS_SUCCESS) return s;
    bool alloc_ok = false;
    s = hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                                     &alloc_ok);
    if (s != HSA_STATUS_SUCCESS) return s;
    if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && alloc_ok) {
        *(hsa_amd_memory_pool_t *)data = pool;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

/* hsa_init must have been called. Returns a buffer of `size` bytes that every
 * agent may access; the caller frees it with hsa_amd_memory_pool_free. */
static void *hrr_hsa_alloc_hidden(size_t size) {
    static struct hrr_agents agents;
    agents.count = 0;
    agents.have_gpu = false;
    HSA_CHECK(hsa_iterate_agents(hrr_collect_agent, &agents));
    if (!agents.have_gpu) {
        fprintf(stderr, "no HSA GPU agent among %u agents\n", agents.count);
        exit(3);
    }
    hsa_amd_memory_pool_t pool = {0};
    hsa_status_t s = hsa_amd_agent_iterate_memory_pools(agents.gpu, hrr_find_coarse_pool, &pool);
    if (s != HSA_STATUS_SUCCESS && s != HSA_STATUS_INFO_BREAK) HSA_CHECK(s);
    if (pool.handle == 0) {
        fprintf(stderr, "the GPU agent has no global coarse-grained pool\n");
        exit(3);
    }
    void *p = NULL;
    HSA_CHECK(hsa_amd_memory_pool_allocate(pool, size, 0, &p));
    HSA_CHECK(hsa_amd_agents_allow_access(agents.count, agents.all, NULL, p));
    return p;
}

#endif
