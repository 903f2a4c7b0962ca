/* The by-value struct layouts abi/ registers (abi_struct!), as gcc lays them
 * out from Debian's real HIP and HSA headers: "NAME SIZE ALIGN" per line.
 * tests/abi/check-c.sh compares them with the numbers in abi/src/lib.rs. */
#include <hip/hip_runtime_api.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>

#define L(t) printf("%s %zu %zu\n", #t, sizeof(t), _Alignof(t))

int main(void) {
    L(dim3);
    L(hsa_agent_t);
    L(hsa_amd_memory_pool_t);
    L(hipDeviceProp_t);
    L(hipPointerAttribute_t);
    L(hipError_t);
    L(hipMemcpyKind);
    L(hipDeviceAttribute_t);
    L(hsa_status_t);
    L(hipExtent);
    L(hipPitchedPtr);
    L(hipIpcMemHandle_t);
    L(hipIpcEventHandle_t);
    L(hipChannelFormatDesc);
    return 0;
}
