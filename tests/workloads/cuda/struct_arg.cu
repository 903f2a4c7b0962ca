// A kernel taking a struct by value that carries device pointers (at offsets
// 0, 8 and, nested, 32), plus scalars between them.
#include <vector>
#include "common.h"

struct Inner {
    int bias;
    float* out2;  // offset 8 inside Inner
};

struct Args {
    const float* a;  // 0
    const float* b;  // 8
    float* out;      // 16
    int n;           // 24
    Inner inner;     // 32: { bias @32, out2 @40 }
    float scale;     // 48
};

__global__ void axpby(Args p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) {
        p.out[i] = p.scale * p.a[i] + p.b[i];
        p.inner.out2[i] = p.a[i] - p.b[i] + (float)p.inner.bias;
    }
}

int main() {
    static_assert(sizeof(Args) == 56, "layout the replay test expects");
    const int n = 100000;
    const size_t bytes = n * sizeof(float);
    std::vector<float> ha(n), hb(n), ho(n), ho2(n);
    for (int i = 0; i < n; ++i) {
        ha[i] = (float)(i % 100);
        hb[i] = (float)(i % 7);
    }
    float *a, *b, *o, *o2;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&o, bytes));
    CK(cudaMalloc(&o2, bytes));
    CK(cudaMemcpy(a, ha.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice));
    Args p{a, b, o, n, {5, o2}, 2.0f};
    axpby<<<(n + 127) / 128, 128>>>(p);
    CK_LAUNCH();
    CK(cudaMemcpy(ho.data(), o, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ho2.data(), o2, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        if (ho[i] != 2.0f * ha[i] + hb[i]) ++bad;
        if (ho2[i] != ha[i] - hb[i] + 5.0f) ++bad;
    }
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFree(o));
    CK(cudaFree(o2));
    std::printf("struct_arg: sizeof(Args)=%zu, n=%d, %d wrong\n", sizeof(Args), n, bad);
    return report("struct_arg", bad == 0, "pointers inside a by-value struct");
}
