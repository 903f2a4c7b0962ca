// Kernels that read and write host memory directly, as the host changes it
// between launches: mapped pinned memory (cudaHostAlloc, device pointer from
// cudaHostGetDevicePointer), managed memory (cudaMallocManaged) written by
// the host and by kernels in turn, registered memory (cudaHostRegister), and
// a kernel writing pinned memory the host reads after a synchronisation.
// Each part checks its results; the capture must hold host_write and
// host_read events, and replay checks them like D2H results.
#include <cstdlib>
#include <cstring>
#include "common.h"

__global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void fill(float* p, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v;
}

int main() {
    const int n = 1 << 16;
    const size_t bytes = n * sizeof(float);
    const int blocks = (n + 255) / 256;
    int bad = 0;

    // Mapped pinned x, changed by the host before each launch.
    float *hx, *dx, *dy, *out;
    CK(cudaHostAlloc(&hx, bytes, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&dx, hx, 0));
    CK(cudaMalloc(&dy, bytes));
    out = static_cast<float*>(std::malloc(bytes));
    for (int k = 1; k <= 3; ++k) {
        for (int i = 0; i < n; ++i)
            if (k == 1 || i < 1024) hx[i] = float(i * k);
        CK(cudaMemset(dy, 0, bytes));
        axpy<<<blocks, 256>>>(1.0f, dx, dy, n);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(out, dy, bytes, cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; ++i) bad += out[i] != hx[i];
    }
    std::printf("mapped: 3 launches reading host-changed pinned memory, %d wrong\n", bad);

    // Managed x and y, written by host and kernel in turn.
    float *mx, *my;
    CK(cudaMallocManaged(&mx, bytes));
    CK(cudaMallocManaged(&my, bytes));
    float* want = static_cast<float*>(std::calloc(n, sizeof(float)));
    std::memset(my, 0, bytes);
    for (int k = 1; k <= 3; ++k) {
        for (int i = 0; i < n; ++i) {
            mx[i] = float(i + k);
            my[i] += 1.0f;
            want[i] = 2.0f * mx[i] + want[i] + 1.0f;
        }
        axpy<<<blocks, 256>>>(2.0f, mx, my, n);
        CK_LAUNCH();
        CK(cudaDeviceSynchronize());
        for (int i = 0; i < n; ++i) bad += my[i] != want[i];
    }
    CK(cudaMemcpy(out, my, bytes, cudaMemcpyDeviceToHost));
    std::printf("managed: 3 rounds host/kernel, %d wrong so far\n", bad);

    // Registered memory read by a kernel.
    float* rx = static_cast<float*>(std::malloc(bytes));
    for (int i = 0; i < n; ++i) rx[i] = float(i) * 0.25f;
    CK(cudaHostRegister(rx, bytes, cudaHostRegisterMapped));
    float* drx;
    CK(cudaHostGetDevicePointer(&drx, rx, 0));
    CK(cudaMemset(dy, 0, bytes));
    axpy<<<blocks, 256>>>(4.0f, drx, dy, n);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out, dy, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) bad += out[i] != 4.0f * rx[i];
    CK(cudaHostUnregister(rx));
    std::printf("registered: %d wrong so far\n", bad);

    // A kernel writes pinned memory; the host reads it after a sync.
    std::memset(hx, 0, bytes);
    fill<<<blocks, 256>>>(dx, 2.5f, n / 2);
    CK_LAUNCH();
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < n; ++i) bad += hx[i] != (i < n / 2 ? 2.5f : 0.0f);
    std::printf("devwrite: %d wrong in total\n", bad);

    CK(cudaFreeHost(hx));
    CK(cudaFree(dy));
    CK(cudaFree(mx));
    CK(cudaFree(my));
    std::free(rx);
    std::free(out);
    std::free(want);
    return report("host_memory", bad == 0, "kernels reading and writing pinned, managed and registered host memory");
}
