// saxpy: y = a*x + y over 1M floats, one kernel, synchronous copies.
#include <cmath>
#include <vector>
#include "common.h"

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    const int n = 1 << 20;
    const float a = 3.0f;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = 0.5f * (float)(i % 1000);
        y[i] = 2.0f;
    }
    float *dx = nullptr, *dy = nullptr;
    CK(cudaMalloc(&dx, n * sizeof(float)));
    CK(cudaMalloc(&dy, n * sizeof(float)));
    CK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    saxpy<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
    CK_LAUNCH();
    CK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    double max_err = 0;
    for (int i = 0; i < n; ++i) max_err = std::fmax(max_err, std::fabs(y[i] - (a * x[i] + 2.0f)));
    CK(cudaFree(dx));
    CK(cudaFree(dy));
    std::printf("saxpy: n=%d a=%g max_err=%g\n", n, a, max_err);
    return report("saxpy", max_err <= 1e-3, "y == a*x + y");
}
