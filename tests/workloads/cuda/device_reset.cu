// Two "tests" with cudaDeviceReset between them, as test suites reset the
// device between test cases: the first allocates 8 MiB, fills it with a
// kernel and downloads it (large enough for the capture's device hash);
// cudaDeviceReset (cuDevicePrimaryCtxReset through the runtime's driver
// lookup) frees everything; the second allocates the same size again (the
// driver may hand the same address back: printed, not required), computes
// something else, downloads it. Every value is checked here: exit 1 on a
// wrong one, 2 on a failed call.
#include "common.h"

#define N (2 << 20)

__global__ void affine(float* y, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * (float)i + b;
}

__global__ void square_plus(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i] + 1.0f;
}

int main() {
    static float out[N];
    int bad = 0;

    float* a;
    CK(cudaMalloc((void**)&a, sizeof out));
    affine<<<N / 256, 256>>>(a, 2.0f, 1.0f, N);
    CK_LAUNCH();
    CK(cudaMemcpy(out, a, sizeof out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        if (out[i] != 2.0f * (float)i + 1.0f) ++bad;

    CK(cudaDeviceReset());

    float *b, *x;
    CK(cudaMalloc((void**)&b, sizeof out));
    CK(cudaMalloc((void**)&x, sizeof out));
    affine<<<N / 256, 256>>>(x, 0.5f, -3.0f, N);
    CK_LAUNCH();
    square_plus<<<N / 256, 256>>>(b, x, N);
    CK_LAUNCH();
    CK(cudaMemcpy(out, b, sizeof out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        float v = 0.5f * (float)i - 3.0f;
        if (out[i] != v * v + 1.0f) ++bad;
    }
    CK(cudaFree(x));
    CK(cudaFree(b));
    std::printf("device_reset: the allocation after the reset %s the one before, %d wrong\n",
                b == a ? "reuses" : "differs from", bad);
    return report("device_reset", bad == 0, "allocate, kernel, D2H, cudaDeviceReset, again");
}
