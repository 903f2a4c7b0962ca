/* Prints every value and layout hsa-sys transcribes, as Debian's ROCm headers
 * define them: one "NAME VALUE" line each. tests/c_layout.rs compiles this
 * with the system compiler and compares each line with src/raw.rs. */
#include <stddef.h>
#include <stdio.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#define V(x) printf("%s %llu\n", #x, (unsigned long long)(x))
#define SIZE(t) printf("sizeof(%s) %zu\nalignof(%s) %zu\n", #t, sizeof(t), #t, _Alignof(t))
/* A C enum's underlying type: 1 when unsigned, 0 when signed. */
#define ENUM_UNSIGNED(t) printf("unsigned(%s) %d\n", #t, (t)-1 > 0)

/* The function types hsa-sys's PFN_* transcribe, checked at compile time
 * (no reference to the functions is emitted, so nothing links against HSA). */
#define SAME_TYPE(fn, ty) _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), ty), #fn " differs from " #ty)
SAME_TYPE(hsa_init, hsa_status_t (*)(void));
SAME_TYPE(hsa_shut_down, hsa_status_t (*)(void));
SAME_TYPE(hsa_status_string, hsa_status_t (*)(hsa_status_t, const char **));
SAME_TYPE(hsa_iterate_agents, hsa_status_t (*)(hsa_status_t (*)(hsa_agent_t, void *), void *));
SAME_TYPE(hsa_agent_get_info, hsa_status_t (*)(hsa_agent_t, hsa_agent_info_t, void *));
SAME_TYPE(hsa_amd_agent_iterate_memory_pools,
          hsa_status_t (*)(hsa_agent_t, hsa_status_t (*)(hsa_amd_memory_pool_t, void *), void *));
SAME_TYPE(hsa_amd_memory_pool_get_info, hsa_status_t (*)(hsa_amd_memory_pool_t, hsa_amd_memory_pool_info_t, void *));
SAME_TYPE(hsa_amd_memory_pool_allocate, hsa_status_t (*)(hsa_amd_memory_pool_t, size_t, uint32_t, void **));
SAME_TYPE(hsa_amd_memory_pool_free, hsa_status_t (*)(void *));
SAME_TYPE(hsa_amd_agents_allow_access, hsa_status_t (*)(uint32_t, const hsa_agent_t *, const uint32_t *, const void *));
/* A wrong transcription must fail: this is the check's own check. */
_Static_assert(!__builtin_types_compatible_p(__typeof__(&hsa_amd_memory_pool_allocate),
                                             hsa_status_t (*)(hsa_amd_memory_pool_t, size_t, int32_t, void **)),
               "type check is not discriminating");

int main(void) {
    V(HSA_STATUS_SUCCESS);
    V(HSA_STATUS_INFO_BREAK);
    V(HSA_STATUS_ERROR);
    V(HSA_STATUS_ERROR_INVALID_ARGUMENT);
    V(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
    V(HSA_STATUS_ERROR_INVALID_ALLOCATION);
    V(HSA_STATUS_ERROR_INVALID_AGENT);
    V(HSA_STATUS_ERROR_INVALID_REGION);
    V(HSA_STATUS_ERROR_INVALID_SIGNAL);
    V(HSA_STATUS_ERROR_INVALID_QUEUE);
    V(HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    V(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT);
    V(HSA_STATUS_ERROR_RESOURCE_FREE);
    V(HSA_STATUS_ERROR_NOT_INITIALIZED);
    V(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW);
    V(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);

    V(HSA_AGENT_INFO_NAME);
    V(HSA_AGENT_INFO_VENDOR_NAME);
    V(HSA_AGENT_INFO_NODE);
    V(HSA_AGENT_INFO_DEVICE);

    V(HSA_DEVICE_TYPE_CPU);
    V(HSA_DEVICE_TYPE_GPU);
    V(HSA_DEVICE_TYPE_DSP);

    V(HSA_AMD_SEGMENT_GLOBAL);
    V(HSA_AMD_SEGMENT_READONLY);
    V(HSA_AMD_SEGMENT_PRIVATE);
    V(HSA_AMD_SEGMENT_GROUP);

    V(HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT);
    V(HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
    V(HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);

    V(HSA_AMD_MEMORY_POOL_INFO_SEGMENT);
    V(HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS);
    V(HSA_AMD_MEMORY_POOL_INFO_SIZE);
    V(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED);
    V(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE);
    V(HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT);
    V(HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL);
    V(HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE);

    SIZE(hsa_status_t);
    SIZE(hsa_agent_t);
    SIZE(hsa_amd_memory_pool_t);
    SIZE(hsa_agent_info_t);
    SIZE(hsa_device_type_t);
    SIZE(hsa_amd_segment_t);
    SIZE(hsa_amd_memory_pool_info_t);
    SIZE(hsa_amd_memory_pool_global_flag_t);
    SIZE(bool);
    SIZE(size_t);
    printf("offsetof(hsa_agent_t.handle) %zu\n", offsetof(hsa_agent_t, handle));
    printf("offsetof(hsa_amd_memory_pool_t.handle) %zu\n", offsetof(hsa_amd_memory_pool_t, handle));
    printf("sizeof(hsa_agent_t.handle) %zu\n", sizeof(((hsa_agent_t *)0)->handle));
    printf("sizeof(hsa_amd_memory_pool_t.handle) %zu\n", sizeof(((hsa_amd_memory_pool_t *)0)->handle));

    ENUM_UNSIGNED(hsa_status_t);
    ENUM_UNSIGNED(hsa_agent_info_t);
    ENUM_UNSIGNED(hsa_device_type_t);
    ENUM_UNSIGNED(hsa_amd_segment_t);
    ENUM_UNSIGNED(hsa_amd_memory_pool_info_t);
    ENUM_UNSIGNED(hsa_amd_memory_pool_global_flag_t);

    printf("function_types_checked 10\n");
    return 0;
}
