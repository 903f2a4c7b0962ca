// Pointers stored in device memory, which replay's translation cannot see:
// (a) a table of device pointers copied host-to-device, read by a kernel;
// (b) a table a kernel builds, read by a second kernel; the program reads
//     the table back (its pointers are output), reverses it on the host,
//     writes it to a second table and a kernel reads through that.
// Replay is right only when every allocation is at its recorded address
// (placement). The buffers are small: cudaMalloc packs them into shared
// 2 MiB granules, which placement must map once for all of them.
#include <vector>
#include "common.h"

constexpr int N = 300;
constexpr int T = 3;

__global__ void gather(const float* const* table, float* out, int tables, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int t = 0; t < tables; ++t) out[t * n + i] = (float)(t + 1) * table[t][i];
}

__global__ void build_table(float** table, float* base, int tables, int stride) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < tables) table[t] = base + (size_t)t * stride;
}

static int wrong(const std::vector<float>& out, const std::vector<float>& host, const int* order) {
    int bad = 0;
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < N; ++i)
            if (out[t * N + i] != (float)(t + 1) * host[order[t] * N + i]) ++bad;
    return bad;
}

int main() {
    std::vector<float> host(T * N), out(T * N);
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < N; ++i) host[t * N + i] = (float)(t * 1000 + i);
    const int ident[T] = {0, 1, 2}, reversed[T] = {2, 1, 0};
    int bad = 0;

    // (a) a table copied to the device
    float* src[T];
    for (int t = 0; t < T; ++t) {
        CK(cudaMalloc(&src[t], N * sizeof(float)));
        CK(cudaMemcpy(src[t], &host[t * N], N * sizeof(float), cudaMemcpyHostToDevice));
    }
    float **table, *dout;
    CK(cudaMalloc(&table, sizeof src));
    CK(cudaMalloc(&dout, T * N * sizeof(float)));
    CK(cudaMemcpy(table, src, sizeof src, cudaMemcpyHostToDevice));
    gather<<<(N + 63) / 64, 64>>>(table, dout, T, N);
    CK_LAUNCH();
    CK(cudaMemcpy(out.data(), dout, T * N * sizeof(float), cudaMemcpyDeviceToHost));
    int bad_a = wrong(out, host, ident);

    // (b) a table a kernel builds; read back, reversed, written, read
    float *base, **table2, **table3;
    CK(cudaMalloc(&base, T * N * sizeof(float)));
    CK(cudaMemcpy(base, host.data(), T * N * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&table2, T * sizeof(float*)));
    build_table<<<1, 32>>>(table2, base, T, N);
    CK_LAUNCH();
    gather<<<(N + 63) / 64, 64>>>(table2, dout, T, N);
    CK_LAUNCH();
    CK(cudaMemcpy(out.data(), dout, T * N * sizeof(float), cudaMemcpyDeviceToHost));
    int bad_b = wrong(out, host, ident);
    float *ptrs[T], *rev[T];
    CK(cudaMemcpy(ptrs, table2, sizeof ptrs, cudaMemcpyDeviceToHost));
    for (int t = 0; t < T; ++t) {
        if (ptrs[t] != base + (size_t)t * N) ++bad_b;
        rev[t] = ptrs[T - 1 - t];
    }
    CK(cudaMalloc(&table3, sizeof rev));
    CK(cudaMemcpy(table3, rev, sizeof rev, cudaMemcpyHostToDevice));
    gather<<<(N + 63) / 64, 64>>>(table3, dout, T, N);
    CK_LAUNCH();
    CK(cudaMemcpy(out.data(), dout, T * N * sizeof(float), cudaMemcpyDeviceToHost));
    bad_b += wrong(out, host, reversed);
    bad = bad_a + bad_b;

    for (int t = 0; t < T; ++t) CK(cudaFree(src[t]));
    CK(cudaFree(table));
    CK(cudaFree(dout));
    CK(cudaFree(base));
    CK(cudaFree(table2));
    CK(cudaFree(table3));
    std::printf("ptr_table: copied table %d wrong, kernel-built table %d wrong\n", bad_a, bad_b);
    return report("ptr_table", bad == 0, "pointer tables in device memory");
}
