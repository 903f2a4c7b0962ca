// A CUDA array read through a texture object: cudaMallocArray of floats,
// filled by cudaMemcpy2DToArray from a padded host image, a texture object
// over it (point filtering, unnormalized coordinates, clamped), a kernel
// reading tex2D<float> at each texel's centre into device memory, the
// result copied back and checked; the array copied back with
// cudaMemcpy2DFromArray, to the host and to pitched device memory, and
// checked. The driver layer records the array, the copies and the object;
// replay checks every download byte for byte, the kernel's included.
#include <cstring>
#include "common.h"

#define W 37  // texels per row
#define H 23
#define HOST_PITCH (W + 3)  // floats per host row: padded, so pitches differ

__global__ void read_texture(cudaTextureObject_t t, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    // Point filtering returns texel (floor(u), floor(v)): the centre is exact.
    if (x < width && y < height) out[y * width + x] = 2.0f * tex2D<float>(t, x + 0.5f, y + 0.5f) + 1.0f;
}

int main() {
    static float img[H][HOST_PITCH], out[H][W], back[H][W], back_dev[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < HOST_PITCH; x++) img[y][x] = x < W ? (float)(y * 1000 + x) * 0.25f : -1.0f;

    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CK(cudaMallocArray(&arr, &ch, W, H));
    CK(cudaMemcpy2DToArray(arr, 0, 0, img, sizeof img[0], W * sizeof(float), H, cudaMemcpyHostToDevice));

    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex;
    CK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

    float* d_out;
    CK(cudaMalloc((void**)&d_out, sizeof out));
    CK(cudaMemset(d_out, 0, sizeof out));
    read_texture<<<dim3((W + 7) / 8, (H + 7) / 8), dim3(8, 8)>>>(tex, d_out, W, H);
    CK_LAUNCH();
    CK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (out[y][x] != 2.0f * img[y][x] + 1.0f) ++bad;

    CK(cudaMemcpy2DFromArray(back, sizeof back[0], arr, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    float* d_pitched;
    size_t pitch;
    CK(cudaMallocPitch((void**)&d_pitched, &pitch, W * sizeof(float), H));
    CK(cudaMemcpy2DFromArray(d_pitched, pitch, arr, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy2D(back_dev, sizeof back_dev[0], d_pitched, pitch, W * sizeof(float), H,
                    cudaMemcpyDeviceToHost));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            if (back[y][x] != img[y][x]) ++bad;
            if (back_dev[y][x] != img[y][x]) ++bad;
        }

    CK(cudaDestroyTextureObject(tex));
    CK(cudaFreeArray(arr));
    CK(cudaFree(d_out));
    CK(cudaFree(d_pitched));
    std::printf("texture2d: %dx%d texels, texture object %llu, %d wrong\n", W, H, (unsigned long long)tex, bad);
    return report("texture2d", bad == 0, "an array through a texture object, 2D copies to and from it");
}
