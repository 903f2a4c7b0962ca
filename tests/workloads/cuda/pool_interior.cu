// A pool: one cudaMalloc carved into sub-buffers that are only ever used
// through interior pointers (copies, memset, D2D, kernel arguments).
#include <cstdint>
#include <vector>
#include "common.h"

__global__ void add(int* c, const int* a, const int* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const size_t pool_bytes = 4 << 20;
    const int n = 64 * 1024;
    const size_t bytes = n * sizeof(int);
    char* pool = nullptr;
    CK(cudaMalloc(&pool, pool_bytes));
    // Sub-buffers at 256-byte aligned interior offsets.
    int* a = (int*)(pool + 256);
    int* b = (int*)(pool + (1 << 20) + 512);
    int* c = (int*)(pool + (2 << 20) + 768);
    int* d = (int*)(pool + (3 << 20) + 1024);
    std::vector<int> ha(n), hb(n), hc(n, -1), hd(n, -1);
    for (int i = 0; i < n; ++i) {
        ha[i] = i;
        hb[i] = 3 * i + 7;
    }
    CK(cudaMemcpy(a, ha.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(c, 0xff, bytes));
    add<<<(n + 255) / 256, 256>>>(c, a, b, n);
    CK_LAUNCH();
    CK(cudaMemcpy(d, c, bytes, cudaMemcpyDeviceToDevice));
    // Overwrite the second half of d through an interior pointer of an interior pointer.
    CK(cudaMemset(d + n / 2, 0, bytes / 2));
    CK(cudaMemcpy(hc.data(), c, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hd.data(), d, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        if (hc[i] != 4 * i + 7) ++bad;
        if (hd[i] != (i < n / 2 ? 4 * i + 7 : 0)) ++bad;
    }
    CK(cudaFree(pool));
    std::printf("pool_interior: pool %zu bytes, 4 sub-buffers, %d wrong\n", pool_bytes, bad);
    return report("pool_interior", bad == 0, "add/D2D/memset through interior pointers");
}
