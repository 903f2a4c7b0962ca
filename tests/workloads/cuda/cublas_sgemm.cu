// cuBLAS from C++: C = A·B (512×512, fp32) with integer-valued inputs, so
// every sum is exact whatever the order. cuBLAS launches its kernels
// through the driver API (its own static runtime): they are recorded at
// the driver layer, the program's cudaMalloc/cudaMemcpy at the runtime's.
// Build: nvcc -cudart shared -arch=sm_90 cublas_sgemm.cu -lcublas
#include <cmath>
#include <vector>
#include <cublas_v2.h>
#include "common.h"

int main() {
    const int n = 512;
    std::vector<float> a(n * n), b(n * n), c(n * n, -1.0f);
    for (int i = 0; i < n * n; ++i) {
        a[i] = (float)(i % 7 - 3);
        b[i] = (float)(i % 5 - 2);
    }
    float *da, *db, *dc;
    CK(cudaMalloc(&da, n * n * sizeof(float)));
    CK(cudaMalloc(&db, n * n * sizeof(float)));
    CK(cudaMalloc(&dc, n * n * sizeof(float)));
    CK(cudaMemcpy(da, a.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return report("cublas_sgemm", false, "cublasCreate");
    const float one = 1.0f, zero = 0.0f;
    // Column-major: C = A * B.
    if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da, n, db, n, &zero, dc, n) !=
        CUBLAS_STATUS_SUCCESS)
        return report("cublas_sgemm", false, "cublasSgemm");
    CK(cudaMemcpy(c.data(), dc, n * n * sizeof(float), cudaMemcpyDeviceToHost));
    double max_err = 0, sum = 0;
    for (int col = 0; col < n; col += 37)
        for (int row = 0; row < n; row += 41) {
            double want = 0;
            for (int k = 0; k < n; ++k) want += (double)a[k * n + row] * b[col * n + k];
            max_err = std::fmax(max_err, std::fabs(c[col * n + row] - want));
        }
    for (float v : c) sum += v;
    cublasDestroy(h);
    CK(cudaFree(da));
    CK(cudaFree(db));
    CK(cudaFree(dc));
    std::printf("cublas_sgemm: checksum %.1f max_err %g\n", sum, max_err);
    return report("cublas_sgemm", max_err == 0, "C == A*B exactly");
}
