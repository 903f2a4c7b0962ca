// A large D2H copy on each side of cudaDeviceReset, for the capture's device
// hash: the reset destroys the primary context with the hash's module,
// scratch and result page, and the context the runtime makes next often has
// the same handle, so the capture must load the hash there anew instead of
// launching the dead one (docs/DESIGN.md §7, *A D2H result hashed on the
// device*). 64 MiB filled by a kernel, copied back and checked, the device
// reset, then the same with other content. Prints the number of copies
// for the pass (HRR_DEVICE_HASH=check: one stderr line per copy).
#include <vector>
#include "common.h"

static const size_t WORDS = (64u << 20) / sizeof(unsigned);

__device__ __host__ static unsigned word_at(size_t i, unsigned seed) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ ((unsigned long long)seed << 32 | seed);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned)x;
}

__global__ void fill(unsigned* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = word_at(i, seed);
}

// Fills fresh device memory with `seed`'s words, copies it back into `h`
// (pageable: the reset frees pinned memory too), checks every word.
static bool one_copy(unsigned seed, std::vector<unsigned>& h) {
    unsigned* d;
    CK(cudaMalloc(&d, WORDS * sizeof(unsigned)));
    fill<<<1024, 256>>>(d, WORDS, seed);
    CK_LAUNCH();
    CK(cudaMemcpy(h.data(), d, WORDS * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    for (size_t i = 0; i < WORDS; ++i)
        if (h[i] != word_at(i, seed)) {
            std::printf("device_hash_reset: copy of seed %u: word %zu WRONG\n", seed, i);
            return false;
        }
    return true;
}

int main() {
    std::vector<unsigned> h(WORDS);
    bool ok = one_copy(1, h);
    CK(cudaDeviceReset());
    ok = one_copy(2, h) && ok;
    std::printf("HRR_DEVICE_HASH_COPIES=2\n");
    return report("device_hash_reset", ok, "both copies' bytes");
}
