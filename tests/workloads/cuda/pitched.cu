// Pitched memory: cudaMallocPitch, 2D copies host→device, device→device
// (async) and device→host, cudaMemset2D of a window, a kernel over the
// pitched rows; cudaMalloc3D with a 3D upload at an offset, cudaMemset3D of
// one slice, and the whole volume downloaded. Every result is checked here
// and printed; replay checks every download byte for byte.
#include <cstdint>
#include <cstring>
#include "common.h"

#define W 40  // floats per row
#define H 12
#define X 24  // 3D: bytes per row
#define Y 5
#define Z 3

__global__ void scale_rows(float* base, size_t pitch, int width, int height, float k) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float* row = (float*)((char*)base + y * pitch);
        row[x] = k * row[x] + (float)y;
    }
}

int main() {
    static float host[H][W], back[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) host[y][x] = (float)(y * 100 + x);
    float *a, *b;
    size_t pa, pb;
    CK(cudaMallocPitch((void**)&a, &pa, W * sizeof(float), H));
    CK(cudaMallocPitch((void**)&b, &pb, W * sizeof(float), H));
    CK(cudaMemset(a, 0x7f, pa * H));
    CK(cudaMemcpy2D(a, pa, host, sizeof host[0], W * sizeof(float), H, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    CK(cudaMemcpy2DAsync(b, pb, a, pa, W * sizeof(float), H, cudaMemcpyDeviceToDevice, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy2D(back, sizeof back[0], b, pb, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    int bad = std::memcmp(host, back, sizeof host) != 0;

    CK(cudaMemset2D((char*)a + 2 * pa + 8, pa, 0, 16, 4));
    scale_rows<<<dim3(W / 8, H / 4), dim3(8, 4)>>>(a, pa, W, H, 2.0f);
    CK_LAUNCH();
    CK(cudaMemcpy2DAsync(back, sizeof back[0], a, pa, W * sizeof(float), H, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            bool zeroed = y >= 2 && y < 6 && x >= 2 && x < 6;
            if (back[y][x] != 2.0f * (zeroed ? 0.0f : host[y][x]) + (float)y) ++bad;
        }

    cudaPitchedPtr v;
    CK(cudaMalloc3D(&v, make_cudaExtent(X, Y, Z)));
    CK(cudaMemset(v.ptr, 0, v.pitch * Y * Z));
    static unsigned char cube[Z][Y][X], cube_back[Z][Y][X];
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++) cube[z][y][x] = (unsigned char)(z * 50 + y * 7 + x);
    cudaMemcpy3DParms q;
    std::memset(&q, 0, sizeof q);
    q.srcPtr = make_cudaPitchedPtr(cube, X, X, Y);
    q.srcPos = make_cudaPos(4, 1, 0);
    q.dstPtr = v;
    q.dstPos = make_cudaPos(4, 1, 1);
    q.extent = make_cudaExtent(X - 4, Y - 1, Z - 1);
    q.kind = cudaMemcpyHostToDevice;
    CK(cudaMemcpy3D(&q));
    CK(cudaMemset3D(make_cudaPitchedPtr((char*)v.ptr + 2 * v.pitch * Y, v.pitch, X, Y), 0xee,
                    make_cudaExtent(2, Y, 1)));
    std::memset(&q, 0, sizeof q);
    q.srcPtr = v;
    q.dstPtr = make_cudaPitchedPtr(cube_back, X, X, Y);
    q.extent = make_cudaExtent(X, Y, Z);
    q.kind = cudaMemcpyDeviceToHost;
    CK(cudaMemcpy3DAsync(&q, s));
    CK(cudaStreamSynchronize(s));
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++) {
                unsigned char want = 0;
                if (z >= 1 && y >= 1 && x >= 4) want = cube[z - 1][y][x];
                if (z == 2 && x < 2) want = 0xee;
                if (cube_back[z][y][x] != want) ++bad;
            }
    CK(cudaFree(v.ptr));
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaStreamDestroy(s));
    std::printf("pitched: pitch %zu, volume pitch %zu, %d wrong\n", pa, v.pitch, bad);
    return report("pitched", bad == 0, "2D/3D copies, 2D/3D memsets, a kernel over pitched rows");
}
