// Shared helpers of the CUDA workloads: every runtime call is checked, and a
// failed check exits with status 2 after naming the call (1 = wrong result).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(call)                                                                    \
    do {                                                                            \
        cudaError_t e_ = (call);                                                    \
        if (e_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, \
                         #call, cudaGetErrorString(e_), cudaGetErrorName(e_));      \
            std::exit(2);                                                           \
        }                                                                           \
    } while (0)

// Checks the launch just made (configuration errors surface here).
#define CK_LAUNCH() CK(cudaGetLastError())

static inline int report(const char* name, bool ok, const char* what) {
    std::printf("%s: %s: %s\n", name, what, ok ? "OK" : "WRONG");
    std::fflush(stdout);
    return ok ? 0 : 1;
}
