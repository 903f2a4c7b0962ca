// Device variables of every registration kind, compiled for the host only by
// tests/abi/check-c.sh: the declarations clang emits for
// __hipRegisterVar / __hipRegisterManagedVar / __hipRegisterTexture /
// __hipRegisterSurface are checked against abi/src/reference.rs (from which
// the HIP signature table takes them).
#include <hip/hip_runtime.h>

__device__ int counter;
__constant__ float coeffs[4];
__attribute__((managed)) __device__ int managed_total;
texture<float, 1, hipReadModeElementType> tex;

__global__ void read_all(int *out) {
    out[0] = counter + managed_total + (int)coeffs[0] + (int)tex1Dfetch(tex, 0);
}

int main() { return 0; }
