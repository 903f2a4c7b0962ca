// Array copies inside a CUDA graph: a stream capture of
// cudaMemcpy2DToArrayAsync (a padded pinned host image → a float array), a
// kernel reading the array through a texture object into device memory, and
// cudaMemcpy2DFromArrayAsync (a window of the array → pinned host); then a
// node added by cudaGraphAddMemcpyNode (the whole array → device memory,
// read back after each launch). Launched three times with a new image each
// time; before the third launch cudaGraphExecMemcpyNodeSetParams moves the
// window. Every download checked; replay checks each graph launch's
// device-to-host node bytes.
#include <cstring>
#include "common.h"

#define W 24
#define H 16
#define HOST_PITCH (W + 4)  // floats per host row: padded
#define WW 8                // window: WW x WH texels
#define WH 4

__global__ void read_texture(cudaTextureObject_t t, float* out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) out[y * W + x] = 3.0f * tex2D<float>(t, x + 0.5f, y + 0.5f) - 1.0f;
}

static cudaMemcpy3DParms window_copy(cudaArray_t arr, float* win, int wx, int wy) {
    cudaMemcpy3DParms p;
    std::memset(&p, 0, sizeof p);
    p.srcArray = arr;
    p.srcPos = make_cudaPos(wx * sizeof(float), wy, 0);
    p.dstPtr = make_cudaPitchedPtr(win, WW * sizeof(float), WW, WH);
    p.extent = make_cudaExtent(WW * sizeof(float), WH, 1);
    p.kind = cudaMemcpyDeviceToHost;
    return p;
}

int main() {
    float *img, *win;
    CK(cudaMallocHost((void**)&img, sizeof(float) * H * HOST_PITCH));
    CK(cudaMallocHost((void**)&win, sizeof(float) * WH * WW));
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CK(cudaMallocArray(&arr, &ch, W, H));
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex;
    CK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    float *d_out, *d_copy;
    CK(cudaMalloc((void**)&d_out, sizeof(float) * W * H));
    CK(cudaMalloc((void**)&d_copy, sizeof(float) * W * H));

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemcpy2DToArrayAsync(arr, 0, 0, img, HOST_PITCH * sizeof(float), W * sizeof(float), H,
                                cudaMemcpyHostToDevice, s));
    read_texture<<<dim3(W / 8, H / 8), dim3(8, 8), 0, s>>>(tex, d_out);
    CK(cudaMemcpy2DFromArrayAsync(win, WW * sizeof(float), arr, 2 * sizeof(float), 3, WW * sizeof(float), WH,
                                  cudaMemcpyDeviceToHost, s));
    CK(cudaStreamEndCapture(s, &g));
    // A node of its own: the whole array to device memory, after every
    // captured node.
    size_t n = 0;
    CK(cudaGraphGetNodes(g, nullptr, &n));
    cudaGraphNode_t leaves[8], copy_node;
    CK(cudaGraphGetNodes(g, leaves, &n));
    cudaMemcpy3DParms whole;
    std::memset(&whole, 0, sizeof whole);
    whole.srcArray = arr;
    whole.dstPtr = make_cudaPitchedPtr(d_copy, W * sizeof(float), W, H);
    whole.extent = make_cudaExtent(W * sizeof(float), H, 1);
    whole.kind = cudaMemcpyDeviceToDevice;
    CK(cudaGraphAddMemcpyNode(&copy_node, g, leaves, n, &whole));
    // The captured window node, to move it later.
    cudaGraphNode_t nodes[16], win_node = nullptr;
    size_t count = 16;
    CK(cudaGraphGetNodes(g, nodes, &count));
    for (size_t i = 0; i < count; i++) {
        cudaGraphNodeType t;
        CK(cudaGraphNodeGetType(nodes[i], &t));
        if (t != cudaGraphNodeTypeMemcpy) continue;
        cudaMemcpy3DParms p;
        CK(cudaGraphMemcpyNodeGetParams(nodes[i], &p));
        if (p.dstPtr.ptr == win) win_node = nodes[i];
    }
    if (!win_node) {
        std::printf("graph_arrays: the window node not found\n");
        return 1;
    }
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, g, 0));

    static float out[H][W], copied[H][W];
    int bad = 0, wx = 2, wy = 3;
    for (int k = 0; k < 3; k++) {
        for (int y = 0; y < H; y++)
            for (int x = 0; x < HOST_PITCH; x++) img[y * HOST_PITCH + x] = x < W ? (float)(k * 10000 + y * 100 + x) : -7.0f;
        if (k == 2) {
            wx = 5, wy = 10;
            cudaMemcpy3DParms p = window_copy(arr, win, wx, wy);
            CK(cudaGraphExecMemcpyNodeSetParams(exec, win_node, &p));
        }
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(copied, d_copy, sizeof copied, cudaMemcpyDeviceToHost));
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float v = img[y * HOST_PITCH + x];
                if (out[y][x] != 3.0f * v - 1.0f || copied[y][x] != v) ++bad;
            }
        for (int y = 0; y < WH; y++)
            for (int x = 0; x < WW; x++)
                if (win[y * WW + x] != img[(wy + y) * HOST_PITCH + wx + x]) ++bad;
    }
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(s));
    CK(cudaDestroyTextureObject(tex));
    CK(cudaFreeArray(arr));
    CK(cudaFree(d_out));
    CK(cudaFree(d_copy));
    CK(cudaFreeHost(img));
    CK(cudaFreeHost(win));
    std::printf("graph_arrays: 3 launches, %d wrong\n", bad);
    return report("graph_arrays", bad == 0, "array copies captured and added as graph nodes, a copy node set");
}
