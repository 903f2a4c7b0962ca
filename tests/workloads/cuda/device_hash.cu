// D2H copies of many sizes, of fresh pseudo-random device data each, for the
// capture's device hash (HRR_DEVICE_HASH=check: each copy hashed on the
// device and on the host, one line each on stderr). Sizes around BLAKE3's
// block, chunk and group edges, 1 MiB + 7, 17 MiB and 256 MiB; synchronous
// and stream-ordered copies, an unaligned source, a repeated one. Checks
// every byte that lands; prints the number of copies for the pass.
#include <cstring>
#include <vector>
#include "common.h"

__device__ __host__ static unsigned char byte_at(size_t i, unsigned seed) {
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ ((unsigned long long)seed << 32 | seed);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned char)x;
}

__global__ void fill(unsigned char* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = byte_at(i, seed);
}

int main() {
    const size_t sizes[] = {0, 1, 63, 64, 65, 1023, 1024, 1025, 2048, 2049, 3 * 1024 + 5,
                            (1u << 20) + 7, 17u << 20, 256u << 20};
    const size_t most = 256u << 20;
    unsigned char *d, *h;
    CK(cudaMalloc(&d, most + 64));
    CK(cudaMallocHost(&h, most + 64));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    int copies = 0, bad = 0;
    unsigned seed = 1;
    auto check = [&](const unsigned char* got, size_t n, size_t from, unsigned sd, const char* how) {
        for (size_t i = 0; i < n; ++i)
            if (got[i] != byte_at(from + i, sd)) {
                std::printf("device_hash: %s copy of %zu bytes: byte %zu WRONG\n", how, n, i);
                ++bad;
                return;
            }
    };
    for (size_t n : sizes) {
        // Synchronous, then stream-ordered, each of fresh content.
        fill<<<1024, 256>>>(d, n + 8, seed);
        CK_LAUNCH();
        CK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
        check(h, n, 0, seed, "synchronous");
        ++copies, ++seed;
        fill<<<1024, 256, 0, s>>>(d, n + 8, seed);
        CK_LAUNCH();
        CK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        check(h, n, 0, seed, "stream-ordered");
        ++copies, ++seed;
    }
    // A source 3 bytes into the allocation (the kernel's unaligned loads).
    const size_t odd = (17u << 20) + 5;
    fill<<<1024, 256>>>(d, odd + 3, seed);
    CK_LAUNCH();
    CK(cudaMemcpy(h, d + 3, odd, cudaMemcpyDeviceToHost));
    check(h, odd, 3, seed, "unaligned");
    ++copies;
    // The same bytes again: a blob the archive has already.
    CK(cudaMemcpy(h, d + 3, odd, cudaMemcpyDeviceToHost));
    check(h, odd, 3, seed, "repeated");
    ++copies;
    CK(cudaStreamDestroy(s));
    CK(cudaFreeHost(h));
    CK(cudaFree(d));
    std::printf("HRR_DEVICE_HASH_COPIES=%d\n", copies);
    return report("device_hash", bad == 0, "every copy's bytes");
}
