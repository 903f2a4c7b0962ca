// A mipmapped array read through a texture object, and the planes of an NV12
// array: cudaMallocMipmappedArray with three levels of floats, each level
// (cudaGetMipmappedArrayLevel) filled by cudaMemcpy2DToArray with its own
// values; a kernel reads tex2DLod<float> at every level's texel centres into
// device memory; then an NV12 array whose luma and chroma planes
// (cudaArrayGetPlane) are written and read back separately. Replay checks
// every download byte for byte: the kernel's result depends on every level's
// contents, and the planes' read-backs on the plane handles being translated.
#include <cstring>
#include "common.h"

#define W 32
#define H 16
#define LEVELS 3

__global__ void read_levels(cudaTextureObject_t t, float* out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int l = 0; l < LEVELS; l++) {
        int w = W >> l, h = H >> l;
        // Normalized coordinates at the texel centre of level l, point filtering.
        if (x < w && y < h)
            out[l * W * H + y * W + x] = tex2DLod<float>(t, (x + 0.5f) / w, (y + 0.5f) / h, (float)l) * 3.0f;
    }
}

static float level_value(int l, int x, int y) { return (float)(l * 10000 + y * 100 + x) * 0.5f; }

int main() {
    int bad = 0;
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mip;
    CK(cudaMallocMipmappedArray(&mip, &ch, make_cudaExtent(W, H, 0), LEVELS));
    static float img[H][W];
    for (int l = 0; l < LEVELS; l++) {
        cudaArray_t level;
        CK(cudaGetMipmappedArrayLevel(&level, mip, l));
        int w = W >> l, h = H >> l;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) img[y][x] = level_value(l, x, y);
        CK(cudaMemcpy2DToArray(level, 0, 0, img, sizeof img[0], w * sizeof(float), h, cudaMemcpyHostToDevice));
    }
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = mip;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.mipmapFilterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    td.maxMipmapLevelClamp = LEVELS - 1;
    cudaTextureObject_t tex;
    CK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    float* d_out;
    static float out[LEVELS][H][W];
    CK(cudaMalloc((void**)&d_out, sizeof out));
    CK(cudaMemset(d_out, 0, sizeof out));
    read_levels<<<dim3(W / 8, H / 8), dim3(8, 8)>>>(tex, d_out);
    CK_LAUNCH();
    CK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
    for (int l = 0; l < LEVELS; l++)
        for (int y = 0; y < (H >> l); y++)
            for (int x = 0; x < (W >> l); x++)
                if (out[l][y][x] != level_value(l, x, y) * 3.0f) ++bad;
    CK(cudaDestroyTextureObject(tex));
    CK(cudaFreeMipmappedArray(mip));
    CK(cudaFree(d_out));

    // NV12: a W x H luma plane of bytes and a W/2 x H/2 plane of byte pairs.
    cudaChannelFormatDesc nv12 = cudaCreateChannelDesc(8, 8, 8, 0, cudaChannelFormatKindNV12);
    cudaArray_t frame, luma, chroma;
    // The H100 with CUDA 13 refused cudaMallocArray for NV12 (invalid
    // value); the 3D form is tried next, and a device that takes neither
    // skips the planes, saying so (the mipmap part still decides).
    if (cudaMallocArray(&frame, &nv12, W, H) != cudaSuccess &&
        cudaMalloc3DArray(&frame, &nv12, make_cudaExtent(W, H, 0)) != cudaSuccess) {
        (void)cudaGetLastError();
        std::printf("texture_mipmap: NV12 arrays refused by this device: planes not exercised\n");
        std::printf("texture_mipmap: %d levels of %dx%d, %d wrong\n", LEVELS, W, H, bad);
        return report("texture_mipmap", bad == 0, "mipmap levels through a texture object");
    }
    CK(cudaArrayGetPlane(&luma, frame, 0));
    CK(cudaArrayGetPlane(&chroma, frame, 1));
    static unsigned char y_in[H][W], uv_in[H / 2][W], y_out[H][W], uv_out[H / 2][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) y_in[y][x] = (unsigned char)(y * 7 + x * 3);
    for (int y = 0; y < H / 2; y++)
        for (int x = 0; x < W; x++) uv_in[y][x] = (unsigned char)(200 - y * 5 - x);
    CK(cudaMemcpy2DToArray(luma, 0, 0, y_in, W, W, H, cudaMemcpyHostToDevice));
    CK(cudaMemcpy2DToArray(chroma, 0, 0, uv_in, W, W, H / 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy2DFromArray(y_out, W, luma, 0, 0, W, H, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy2DFromArray(uv_out, W, chroma, 0, 0, W, H / 2, cudaMemcpyDeviceToHost));
    if (std::memcmp(y_in, y_out, sizeof y_in) != 0) ++bad;
    if (std::memcmp(uv_in, uv_out, sizeof uv_in) != 0) ++bad;
    CK(cudaFreeArray(frame));
    std::printf("texture_mipmap: %d levels of %dx%d, an NV12 frame's two planes, %d wrong\n", LEVELS, W, H, bad);
    return report("texture_mipmap", bad == 0, "mipmap levels through a texture object, NV12 planes");
}
