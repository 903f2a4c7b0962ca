// runtime_probe.c: an LD_PRELOAD shim that logs what the CUDA runtime's
// compiler path calls (fat-binary registration, __cudaGetKernel,
// __cudaLaunchKernel / _ptsz) and asks the driver for each launched
// kernel's parameter layout through cuKernelGetParamInfo on the
// cudaKernel_t the runtime hands out. Research aid for the interposer's CUDA
// family; not part of the pipeline. On the GPU machine:
//   gcc -shared -fPIC -O1 -o runtime_probe.so runtime_probe.c -ldl
//   nvcc -cudart shared -arch=sm_90 -o saxpy ../saxpy.cu
//   LD_PRELOAD=$PWD/runtime_probe.so ./saxpy
// Verified on the H200 (CUDA 13.0, driver 580): see lib/hrr-cuda/src/lib.rs.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
typedef struct { unsigned x, y, z; } dim3;
typedef int cudaError_t;
typedef int (*kpi_t)(void*, size_t, size_t*, size_t*);
static void* rt(const char* n) { void* p = dlsym(RTLD_NEXT, n); if (!p) fprintf(stderr, "probe: no %s\n", n); return p; }
void** __cudaRegisterFatBinary(void* w) {
    static void** (*real)(void*);
    if (!real) real = (void** (*)(void*))rt("__cudaRegisterFatBinary");
    const uint32_t* ww = (const uint32_t*)w;
    const uint64_t* wq = (const uint64_t*)w;
    const uint32_t* fb = (const uint32_t*)(uintptr_t)wq[1];
    fprintf(stderr, "probe: __cudaRegisterFatBinary(%p) wrapper magic=%#x version=%u data=%p fn=%#llx | fatbin magic=%#x ver/hdr=%#x body=%llu\n",
            w, ww[0], ww[1], (void*)fb, (unsigned long long)wq[2], fb[0], fb[1], (unsigned long long)((const uint64_t*)fb)[1]);
    void** h = real(w);
    fprintf(stderr, "probe:   -> handle %p\n", (void*)h);
    return h;
}
void __cudaRegisterFatBinaryEnd(void** h) {
    static void (*real)(void**);
    if (!real) real = (void (*)(void**))rt("__cudaRegisterFatBinaryEnd");
    fprintf(stderr, "probe: __cudaRegisterFatBinaryEnd(%p)\n", (void*)h);
    real(h);
}
void __cudaRegisterFunction(void** h, const char* hostFun, char* devFun, const char* devName, int tl, void* tid, void* bid,
                            void* bDim, void* gDim, int* wSize) {
    static void (*real)(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*);
    if (!real) real = (void (*)(void**, const char*, char*, const char*, int, void*, void*, void*, void*, int*))rt("__cudaRegisterFunction");
    fprintf(stderr, "probe: __cudaRegisterFunction(handle=%p hostFun=%p deviceFun=%s deviceName=%s thread_limit=%d)\n", (void*)h,
            (const void*)hostFun, devFun, devName, tl);
    real(h, hostFun, devFun, devName, tl, tid, bid, bDim, gDim, wSize);
}
cudaError_t __cudaGetKernel(void** k, const void* hostFun) {
    static cudaError_t (*real)(void**, const void*);
    if (!real) real = (cudaError_t (*)(void**, const void*))rt("__cudaGetKernel");
    cudaError_t r = real(k, hostFun);
    fprintf(stderr, "probe: __cudaGetKernel(hostFun=%p) -> %d, kernel %p\n", hostFun, r, *k);
    return r;
}
static void layout(const char* who, void* k, void** args) {
    static kpi_t kpi;
    if (!kpi) {
        void* cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        kpi = cu ? (kpi_t)dlsym(cu, "cuKernelGetParamInfo") : 0;
    }
    for (size_t i = 0; kpi && i < 64; ++i) {
        size_t o = 0, s = 0;
        int r = kpi(k, i, &o, &s);
        if (r) { fprintf(stderr, "probe:   %s cuKernelGetParamInfo(%zu) -> %d (end)\n", who, i, r); break; }
        unsigned long long v = s >= 8 ? *(unsigned long long*)args[i] : (unsigned long long)*(unsigned*)args[i];
        fprintf(stderr, "probe:   param %zu offset %zu size %zu first bytes %#llx\n", i, o, s, v);
    }
}
cudaError_t __cudaLaunchKernel(void* k, dim3 g, dim3 b, void** args, size_t shmem, void* stream) {
    static cudaError_t (*real)(void*, dim3, dim3, void**, size_t, void*);
    if (!real) real = (cudaError_t (*)(void*, dim3, dim3, void**, size_t, void*))rt("__cudaLaunchKernel");
    static int n;
    if (n++ < 2) {
        fprintf(stderr, "probe: __cudaLaunchKernel(kernel=%p grid=%u,%u,%u block=%u,%u,%u shmem=%zu stream=%p)\n", k, g.x, g.y, g.z, b.x, b.y, b.z, shmem, stream);
        layout("__cudaLaunchKernel", k, args);
    }
    return real(k, g, b, args, shmem, stream);
}
cudaError_t __cudaLaunchKernel_ptsz(void* k, dim3 g, dim3 b, void** args, size_t shmem, void* stream) {
    static cudaError_t (*real)(void*, dim3, dim3, void**, size_t, void*);
    if (!real) real = (cudaError_t (*)(void*, dim3, dim3, void**, size_t, void*))rt("__cudaLaunchKernel_ptsz");
    static int n;
    if (n++ < 2) {
        fprintf(stderr, "probe: __cudaLaunchKernel_ptsz(kernel=%p grid=%u,%u,%u stream=%p)\n", k, g.x, g.y, g.z, stream);
        layout("_ptsz", k, args);
    }
    return real(k, g, b, args, shmem, stream);
}
