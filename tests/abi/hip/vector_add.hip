// A HIP C++ workload for AMD GPUs, compiled and linked here with Debian's
// hipcc for gfx90a (it cannot run without an AMD GPU). Exercises both launch
// paths the interposer records: the compiler path (<<<>>> → __hipPushCallConfiguration,
// __hipRegisterFatBinary/Function, hipLaunchKernel) and a struct argument with
// an embedded device pointer. On an AMD machine:
//   hrr-cap -o cap.hrr -- ./vector_add && hrr-play cap.hrr -o replay.hrr && hrr-diff cap.hrr replay.hrr
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                    \
    do {                                                                            \
        hipError_t e_ = (x);                                                        \
        if (e_ != hipSuccess) {                                                     \
            std::fprintf(stderr, "%s:%d: %s = %s\n", __FILE__, __LINE__, #x,        \
                         hipGetErrorString(e_));                                    \
            std::exit(1);                                                           \
        }                                                                           \
    } while (0)

struct Scale {
    const float *bias;  // device pointer embedded in a by-value argument
    float factor;
    int n;
};

__global__ void vector_add(const float *a, const float *b, float *c, Scale s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < s.n) c[i] = (a[i] + b[i]) * s.factor + s.bias[i % 4];
}

int main() {
    const int n = 1 << 16;
    std::vector<float> a(n), b(n), c(n), bias = {1.f, 2.f, 3.f, 4.f};
    for (int i = 0; i < n; i++) {
        a[i] = float(i);
        b[i] = float(2 * i);
    }
    float *da, *db, *dc, *dbias;
    CHECK(hipMalloc(&da, n * sizeof(float)));
    CHECK(hipMalloc(&db, n * sizeof(float)));
    CHECK(hipMalloc(&dc, n * sizeof(float)));
    CHECK(hipMalloc(&dbias, 4 * sizeof(float)));
    CHECK(hipMemcpy(da, a.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dbias, bias.data(), 4 * sizeof(float), hipMemcpyHostToDevice));
    vector_add<<<(n + 255) / 256, 256>>>(da, db, dc, Scale{dbias, 0.5f, n});
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(c.data(), dc, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        float want = (a[i] + b[i]) * 0.5f + bias[i % 4];
        if (c[i] != want) {
            std::fprintf(stderr, "c[%d] = %f, want %f\n", i, c[i], want);
            return 1;
        }
    }
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    CHECK(hipFree(dbias));
    std::printf("vector_add: OK (%d elements)\n", n);
    return 0;
}
