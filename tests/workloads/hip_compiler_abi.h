/* The compiler path's ABI, as hipcc's generated host code uses it: the
 * registration entry points (not declared by the public headers; these are
 * the prototypes in hip_platform.cpp of ROCm's clr) and the HIPF wrapper
 * around a clang offload bundle that __hipRegisterFatBinary takes. */
#ifndef HRR_HIP_COMPILER_ABI_H
#define HRR_HIP_COMPILER_ABI_H

#include <hip/hip_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

extern void **__hipRegisterFatBinary(const void *data);
extern void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                                  const char *deviceName, unsigned int threadLimit, void *tid,
                                  void *bid, dim3 *blockDim, dim3 *gridDim, int *wSize);
extern void __hipRegisterVar(void **modules, void *var, char *hostVar, char *deviceVar, int ext,
                             size_t size, int constant, int global);
extern void __hipUnregisterFatBinary(void **modules);

/* `magic` is HIP_FATBIN_MAGIC ("HIPF"), `version` 1, `binary` the bundle. */
#define HIP_FATBIN_MAGIC 0x48495046u
struct hip_fatbin_wrapper {
    uint32_t magic;
    uint32_t version;
    const void *binary;
    void *dummy1;
};

/* The body hipcc gives the host stub of a kernel: it pops the launch
 * configuration its call site pushed and launches the kernel whose key is
 * the stub's own address, with `args` (one pointer per argument). */
static inline void hip_stub_launch(const void *stub, void **args) {
    dim3 grid, block;
    size_t shmem;
    hipStream_t stream;
    if (__hipPopCallConfiguration(&grid, &block, &shmem, &stream) != hipSuccess) return;
    (void)hipLaunchKernel(stub, grid, block, args, shmem, stream);
}

#endif
