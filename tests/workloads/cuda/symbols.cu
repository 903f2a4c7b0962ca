// Module globals through the runtime's symbol calls: cudaMemcpyToSymbol
// (and its Async form, at an offset), a kernel that updates `table` and
// writes `counter`, cudaMemcpyFromSymbol (and Async, at an offset), and
// cudaGetSymbolAddress + a plain cudaMemcpy. Checked here and printed;
// replay checks every download byte for byte.
#include "common.h"

__device__ int table[16];
__device__ int counter;

__global__ void bump(int k) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    int sum = 0;
    for (int i = 0; i < 16; i++) {
        table[i] += k;
        sum += table[i];
    }
    counter = sum;
}

int main() {
    int init[16], got[16], sum = 0, c = 0, bad = 0;
    for (int i = 0; i < 16; i++) init[i] = i * i;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    CK(cudaMemcpyToSymbol(table, init, 8 * sizeof(int), 0, cudaMemcpyHostToDevice));
    CK(cudaMemcpyToSymbolAsync(table, init + 8, 8 * sizeof(int), 8 * sizeof(int),
                               cudaMemcpyHostToDevice, s));
    CK(cudaStreamSynchronize(s));
    bump<<<1, 32>>>(3);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpyFromSymbol(&c, counter, sizeof c, 0, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 16; i++) sum += init[i] + 3;
    if (c != sum) ++bad;
    CK(cudaMemcpyFromSymbolAsync(got, table, 4 * sizeof(int), 12 * sizeof(int),
                                 cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (int i = 0; i < 4; i++)
        if (got[i] != init[12 + i] + 3) ++bad;
    void* addr = nullptr;
    size_t size = 0;
    CK(cudaGetSymbolAddress(&addr, table));
    CK(cudaGetSymbolSize(&size, table));
    if (size != sizeof init) ++bad;
    CK(cudaMemcpy(got, addr, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 16; i++)
        if (got[i] != init[i] + 3) ++bad;
    CK(cudaStreamDestroy(s));
    std::printf("symbols: counter %d (want %d), %d wrong\n", c, sum, bad);
    return report("symbols", bad == 0, "symbol copies and a kernel on module globals");
}
