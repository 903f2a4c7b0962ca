// The CUDA driver's signature table: every driver entry point hrr declares,
// one line each, in the `api-table` crate's shape (see there): the entry
// points the capture library interposes (lib/capture/intercept/src/cuda/driver/api.rs
// says what each records), the lookups themselves, and the queries and
// management calls the recorder and the replay backend make. Written by
// hand from CUDA 13.0's cuda.h: the exported, versioned name (`cuda.h`'s
// macros map `cuMemAlloc` to `cuMemAlloc_v2`, and to `_ptds`/`_ptsz` under
// per-thread default streams); parameter names are hrr's (the header's
// where short). Type names are `types`', the header's C names, so that
// `cuda-c-decls` can redeclare every line in C after `cuda.h`:
// `scripts/abi-check.sh` compiles that against CUDA 13.0's headers, and a
// line whose signature differs from the prototype fails there.
// 229 entry points.

/// The CUDA driver table's lookup: `cuda_fn!(NAME, CALLBACK, [EXTRA…])`
/// expands to `CALLBACK! { EXTRA… NAME(PARAM: TYPE, …) -> CUresult }`.
/// Type names resolve where the callback expands: `use cuda_api::types::*;`.
#[macro_export]
macro_rules! cuda_fn {
    (cuDevicePrimaryCtxRetain, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) -> CUresult } };
    (cuDevicePrimaryCtxRelease_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> CUresult } };
    (cuDevicePrimaryCtxRelease, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDevicePrimaryCtxRelease(dev: CUdevice) -> CUresult } };
    (cuDevicePrimaryCtxReset_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDevicePrimaryCtxReset_v2(dev: CUdevice) -> CUresult } };
    (cuDevicePrimaryCtxReset, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDevicePrimaryCtxReset(dev: CUdevice) -> CUresult } };
    (cuCtxCreate_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CUresult } };
    (cuCtxCreate_v3, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxCreate_v3(pctx: *mut CUcontext, params: *mut CUexecAffinityParam, num_params: c_int, flags: c_uint, dev: CUdevice) -> CUresult } };
    (cuCtxCreate_v4, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxCreate_v4(pctx: *mut CUcontext, params: *mut CUctxCreateParams, flags: c_uint, dev: CUdevice) -> CUresult } };
    (cuCtxDestroy_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxDestroy_v2(ctx: CUcontext) -> CUresult } };
    (cuCtxSetCurrent, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxSetCurrent(ctx: CUcontext) -> CUresult } };
    (cuCtxPushCurrent_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxPushCurrent_v2(ctx: CUcontext) -> CUresult } };
    (cuCtxPopCurrent_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxPopCurrent_v2(pctx: *mut CUcontext) -> CUresult } };
    (cuCtxSynchronize, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxSynchronize() -> CUresult } };
    (cuCtxSynchronize_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxSynchronize_v2(ctx: CUcontext) -> CUresult } };
    (cuProfilerStart, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuProfilerStart() -> CUresult } };
    (cuProfilerStop, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuProfilerStop() -> CUresult } };
    (cuMemAlloc_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAlloc_v2(dptr: *mut CUdeviceptr, size: usize) -> CUresult } };
    (cuMemAllocPitch_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAllocPitch_v2(dptr: *mut CUdeviceptr, pitch: *mut usize, width: usize, height: usize, elem: c_uint) -> CUresult } };
    (cuMemAllocManaged, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAllocManaged(dptr: *mut CUdeviceptr, size: usize, flags: c_uint) -> CUresult } };
    (cuMemAllocAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAllocAsync(dptr: *mut CUdeviceptr, size: usize, stream: CUstream) -> CUresult } };
    (cuMemAllocAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAllocAsync_ptsz(dptr: *mut CUdeviceptr, size: usize, stream: CUstream) -> CUresult } };
    (cuMemAllocFromPoolAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAllocFromPoolAsync(dptr: *mut CUdeviceptr, size: usize, pool: CUmemoryPool, stream: CUstream) -> CUresult } };
    (cuMemAllocFromPoolAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAllocFromPoolAsync_ptsz(dptr: *mut CUdeviceptr, size: usize, pool: CUmemoryPool, stream: CUstream) -> CUresult } };
    (cuMemFree_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemFree_v2(dptr: CUdeviceptr) -> CUresult } };
    (cuMemFreeAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemFreeAsync(dptr: CUdeviceptr, stream: CUstream) -> CUresult } };
    (cuMemFreeAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemFreeAsync_ptsz(dptr: CUdeviceptr, stream: CUstream) -> CUresult } };
    (cuMemAllocHost_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAllocHost_v2(pp: *mut *mut c_void, size: usize) -> CUresult } };
    (cuMemHostAlloc, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemHostAlloc(pp: *mut *mut c_void, size: usize, flags: c_uint) -> CUresult } };
    (cuMemFreeHost, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemFreeHost(p: *mut c_void) -> CUresult } };
    (cuMemHostRegister_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemHostRegister_v2(p: *mut c_void, size: usize, flags: c_uint) -> CUresult } };
    (cuMemHostUnregister, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemHostUnregister(p: *mut c_void) -> CUresult } };
    (cuMemAddressReserve, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAddressReserve(ptr: *mut CUdeviceptr, size: usize, align: usize, addr: CUdeviceptr, flags: c_ulonglong) -> CUresult } };
    (cuMemAddressFree, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemAddressFree(ptr: CUdeviceptr, size: usize) -> CUresult } };
    (cuMemCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemCreate(handle: *mut CUmemGenericAllocationHandle, size: usize, prop: *const CUmemAllocationProp, flags: c_ulonglong) -> CUresult } };
    (cuMemRelease, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemRelease(handle: CUmemGenericAllocationHandle) -> CUresult } };
    (cuMemRetainAllocationHandle, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemRetainAllocationHandle(handle: *mut CUmemGenericAllocationHandle, addr: *mut c_void) -> CUresult } };
    (cuMemExportToShareableHandle, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemExportToShareableHandle(shareable: *mut c_void, handle: CUmemGenericAllocationHandle, kind: CUmemAllocationHandleType, flags: c_ulonglong) -> CUresult } };
    (cuMemImportFromShareableHandle, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemImportFromShareableHandle(handle: *mut CUmemGenericAllocationHandle, os_handle: *mut c_void, kind: CUmemAllocationHandleType) -> CUresult } };
    (cuMemMap, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemMap(ptr: CUdeviceptr, size: usize, offset: usize, handle: CUmemGenericAllocationHandle, flags: c_ulonglong) -> CUresult } };
    (cuMemUnmap, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemUnmap(ptr: CUdeviceptr, size: usize) -> CUresult } };
    (cuMemSetAccess, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemSetAccess(ptr: CUdeviceptr, size: usize, desc: *const CUmemAccessDesc, count: usize) -> CUresult } };
    (cuMemcpyHtoD_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult } };
    (cuMemcpyHtoD_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyHtoD_v2_ptds(dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult } };
    (cuMemcpyDtoH_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult } };
    (cuMemcpyDtoH_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoH_v2_ptds(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult } };
    (cuMemcpyDtoD_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult } };
    (cuMemcpyDtoD_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoD_v2_ptds(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult } };
    (cuMemcpy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult } };
    (cuMemcpy_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy_ptds(dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CUresult } };
    (cuMemcpyPeer, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyPeer(dst: CUdeviceptr, dst_ctx: CUcontext, src: CUdeviceptr, src_ctx: CUcontext, n: usize) -> CUresult } };
    (cuMemcpyPeer_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyPeer_ptds(dst: CUdeviceptr, dst_ctx: CUcontext, src: CUdeviceptr, src_ctx: CUcontext, n: usize) -> CUresult } };
    (cuMemcpyHtoDAsync_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyHtoDAsync_v2_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyHtoDAsync_v2_ptsz(dst: CUdeviceptr, src: *const c_void, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyDtoHAsync_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyDtoHAsync_v2_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoHAsync_v2_ptsz(dst: *mut c_void, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyDtoDAsync_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyDtoDAsync_v2_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoDAsync_v2_ptsz(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAsync_ptsz(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyPeerAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyPeerAsync(dst: CUdeviceptr, dst_ctx: CUcontext, src: CUdeviceptr, src_ctx: CUcontext, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyPeerAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyPeerAsync_ptsz(dst: CUdeviceptr, dst_ctx: CUcontext, src: CUdeviceptr, src_ctx: CUcontext, n: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD8_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD8_v2(dst: CUdeviceptr, v: u8, n: usize) -> CUresult } };
    (cuMemsetD8_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD8_v2_ptds(dst: CUdeviceptr, v: u8, n: usize) -> CUresult } };
    (cuMemsetD16_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD16_v2(dst: CUdeviceptr, v: u16, n: usize) -> CUresult } };
    (cuMemsetD16_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD16_v2_ptds(dst: CUdeviceptr, v: u16, n: usize) -> CUresult } };
    (cuMemsetD32_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD32_v2(dst: CUdeviceptr, v: c_uint, n: usize) -> CUresult } };
    (cuMemsetD32_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD32_v2_ptds(dst: CUdeviceptr, v: c_uint, n: usize) -> CUresult } };
    (cuMemsetD8Async, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD8Async(dst: CUdeviceptr, v: u8, n: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD8Async_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD8Async_ptsz(dst: CUdeviceptr, v: u8, n: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD16Async, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD16Async(dst: CUdeviceptr, v: u16, n: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD16Async_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD16Async_ptsz(dst: CUdeviceptr, v: u16, n: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD32Async, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD32Async(dst: CUdeviceptr, v: c_uint, n: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD32Async_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD32Async_ptsz(dst: CUdeviceptr, v: c_uint, n: usize, stream: CUstream) -> CUresult } };
    (cuModuleLoad, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuModuleLoad(module: *mut CUmodule, fname: *const c_char) -> CUresult } };
    (cuModuleLoadData, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuModuleLoadData(module: *mut CUmodule, image: *const c_void) -> CUresult } };
    (cuModuleLoadFatBinary, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuModuleLoadFatBinary(module: *mut CUmodule, image: *const c_void) -> CUresult } };
    (cuModuleLoadDataEx, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuModuleLoadDataEx(module: *mut CUmodule, image: *const c_void, n: c_uint, options: *mut CUjit_option, values: *mut *mut c_void) -> CUresult } };
    (cuLibraryLoadData, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLibraryLoadData(lib: *mut CUlibrary, code: *const c_void, jit_options: *mut CUjit_option, jit_values: *mut *mut c_void, n_jit: c_uint, lib_options: *mut CUlibraryOption, lib_values: *mut *mut c_void, n_lib: c_uint) -> CUresult } };
    (cuLibraryLoadFromFile, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLibraryLoadFromFile(lib: *mut CUlibrary, fname: *const c_char, jit_options: *mut CUjit_option, jit_values: *mut *mut c_void, n_jit: c_uint, lib_options: *mut CUlibraryOption, lib_values: *mut *mut c_void, n_lib: c_uint) -> CUresult } };
    (cuModuleUnload, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuModuleUnload(module: CUmodule) -> CUresult } };
    (cuLibraryUnload, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLibraryUnload(module: CUlibrary) -> CUresult } };
    (cuModuleGetFunction, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuModuleGetFunction(func: *mut CUfunction, module: CUmodule, name: *const c_char) -> CUresult } };
    (cuLibraryGetKernel, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLibraryGetKernel(kernel: *mut CUkernel, lib: CUlibrary, name: *const c_char) -> CUresult } };
    (cuKernelGetFunction, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuKernelGetFunction(func: *mut CUfunction, kernel: CUkernel) -> CUresult } };
    (cuLibraryGetModule, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLibraryGetModule(module: *mut CUmodule, lib: CUlibrary) -> CUresult } };
    (cuModuleGetGlobal_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuModuleGetGlobal_v2(dptr: *mut CUdeviceptr, bytes: *mut usize, module: CUmodule, name: *const c_char) -> CUresult } };
    (cuLibraryGetGlobal, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLibraryGetGlobal(dptr: *mut CUdeviceptr, bytes: *mut usize, lib: CUlibrary, name: *const c_char) -> CUresult } };
    (cuLaunchKernel, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLaunchKernel(f: CUfunction, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shmem: c_uint, stream: CUstream, params: *mut *mut c_void, extra: *mut *mut c_void) -> CUresult } };
    (cuLaunchKernel_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLaunchKernel_ptsz(f: CUfunction, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shmem: c_uint, stream: CUstream, params: *mut *mut c_void, extra: *mut *mut c_void) -> CUresult } };
    (cuLaunchKernelEx, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLaunchKernelEx(config: *const CUlaunchConfig, f: CUfunction, params: *mut *mut c_void, extra: *mut *mut c_void) -> CUresult } };
    (cuLaunchKernelEx_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLaunchKernelEx_ptsz(config: *const CUlaunchConfig, f: CUfunction, params: *mut *mut c_void, extra: *mut *mut c_void) -> CUresult } };
    (cuLaunchCooperativeKernel, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLaunchCooperativeKernel(f: CUfunction, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shmem: c_uint, stream: CUstream, params: *mut *mut c_void) -> CUresult } };
    (cuLaunchCooperativeKernel_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLaunchCooperativeKernel_ptsz(f: CUfunction, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shmem: c_uint, stream: CUstream, params: *mut *mut c_void) -> CUresult } };
    (cuStreamCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamCreate(stream: *mut CUstream, flags: c_uint) -> CUresult } };
    (cuStreamCreateWithPriority, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamCreateWithPriority(stream: *mut CUstream, flags: c_uint, priority: c_int) -> CUresult } };
    (cuStreamDestroy_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamDestroy_v2(stream: CUstream) -> CUresult } };
    (cuStreamSynchronize, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamSynchronize(stream: CUstream) -> CUresult } };
    (cuStreamSynchronize_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamSynchronize_ptsz(stream: CUstream) -> CUresult } };
    (cuStreamWaitEvent, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint) -> CUresult } };
    (cuStreamWaitEvent_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamWaitEvent_ptsz(stream: CUstream, event: CUevent, flags: c_uint) -> CUresult } };
    (cuEventCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventCreate(event: *mut CUevent, flags: c_uint) -> CUresult } };
    (cuEventDestroy_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventDestroy_v2(event: CUevent) -> CUresult } };
    (cuEventRecord, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventRecord(event: CUevent, stream: CUstream) -> CUresult } };
    (cuEventRecord_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventRecord_ptsz(event: CUevent, stream: CUstream) -> CUresult } };
    (cuEventRecordWithFlags, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventRecordWithFlags(event: CUevent, stream: CUstream, flags: c_uint) -> CUresult } };
    (cuEventRecordWithFlags_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventRecordWithFlags_ptsz(event: CUevent, stream: CUstream, flags: c_uint) -> CUresult } };
    (cuEventSynchronize, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventSynchronize(event: CUevent) -> CUresult } };
    (cuGetExportTable, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGetExportTable(table: *mut *const c_void, id: *const CUuuid) -> CUresult } };
    (cuMemcpy2D_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy2D_v2(copy: *const CUDA_MEMCPY2D) -> CUresult } };
    (cuMemcpy2D_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy2D_v2_ptds(copy: *const CUDA_MEMCPY2D) -> CUresult } };
    (cuMemcpy2DUnaligned_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy2DUnaligned_v2(copy: *const CUDA_MEMCPY2D) -> CUresult } };
    (cuMemcpy2DUnaligned_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy2DUnaligned_v2_ptds(copy: *const CUDA_MEMCPY2D) -> CUresult } };
    (cuMemcpy3D_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy3D_v2(copy: *const CUDA_MEMCPY3D) -> CUresult } };
    (cuMemcpy3D_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy3D_v2_ptds(copy: *const CUDA_MEMCPY3D) -> CUresult } };
    (cuMemcpy2DAsync_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy2DAsync_v2(copy: *const CUDA_MEMCPY2D, stream: CUstream) -> CUresult } };
    (cuMemcpy2DAsync_v2_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy2DAsync_v2_ptsz(copy: *const CUDA_MEMCPY2D, stream: CUstream) -> CUresult } };
    (cuMemcpy3DAsync_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy3DAsync_v2(copy: *const CUDA_MEMCPY3D, stream: CUstream) -> CUresult } };
    (cuMemcpy3DAsync_v2_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpy3DAsync_v2_ptsz(copy: *const CUDA_MEMCPY3D, stream: CUstream) -> CUresult } };
    (cuMemsetD2D8_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D8_v2(dst: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize) -> CUresult } };
    (cuMemsetD2D8_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D8_v2_ptds(dst: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize) -> CUresult } };
    (cuMemsetD2D16_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D16_v2(dst: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize) -> CUresult } };
    (cuMemsetD2D16_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D16_v2_ptds(dst: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize) -> CUresult } };
    (cuMemsetD2D32_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D32_v2(dst: CUdeviceptr, pitch: usize, v: c_uint, w: usize, h: usize) -> CUresult } };
    (cuMemsetD2D32_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D32_v2_ptds(dst: CUdeviceptr, pitch: usize, v: c_uint, w: usize, h: usize) -> CUresult } };
    (cuMemsetD2D8Async, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D8Async(dst: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD2D8Async_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D8Async_ptsz(dst: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD2D16Async, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D16Async(dst: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD2D16Async_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D16Async_ptsz(dst: CUdeviceptr, pitch: usize, v: u16, w: usize, h: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD2D32Async, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D32Async(dst: CUdeviceptr, pitch: usize, v: c_uint, w: usize, h: usize, stream: CUstream) -> CUresult } };
    (cuMemsetD2D32Async_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemsetD2D32Async_ptsz(dst: CUdeviceptr, pitch: usize, v: c_uint, w: usize, h: usize, stream: CUstream) -> CUresult } };
    (cuArrayCreate_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuArrayCreate_v2(handle: *mut CUarray, desc: *const CUDA_ARRAY_DESCRIPTOR) -> CUresult } };
    (cuArray3DCreate_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuArray3DCreate_v2(handle: *mut CUarray, desc: *const CUDA_ARRAY3D_DESCRIPTOR) -> CUresult } };
    (cuArrayDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuArrayDestroy(array: CUarray) -> CUresult } };
    (cuArrayGetPlane, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuArrayGetPlane(plane: *mut CUarray, array: CUarray, index: c_uint) -> CUresult } };
    (cuMipmappedArrayCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMipmappedArrayCreate(handle: *mut CUmipmappedArray, desc: *const CUDA_ARRAY3D_DESCRIPTOR, levels: c_uint) -> CUresult } };
    (cuMipmappedArrayGetLevel, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMipmappedArrayGetLevel(level_array: *mut CUarray, mipmap: CUmipmappedArray, level: c_uint) -> CUresult } };
    (cuMipmappedArrayDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMipmappedArrayDestroy(mipmap: CUmipmappedArray) -> CUresult } };
    (cuMemcpyHtoA_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyHtoA_v2(dst: CUarray, dst_offset: usize, src: *const c_void, n: usize) -> CUresult } };
    (cuMemcpyHtoA_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyHtoA_v2_ptds(dst: CUarray, dst_offset: usize, src: *const c_void, n: usize) -> CUresult } };
    (cuMemcpyAtoH_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAtoH_v2(dst: *mut c_void, src: CUarray, src_offset: usize, n: usize) -> CUresult } };
    (cuMemcpyAtoH_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAtoH_v2_ptds(dst: *mut c_void, src: CUarray, src_offset: usize, n: usize) -> CUresult } };
    (cuMemcpyHtoAAsync_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyHtoAAsync_v2(dst: CUarray, dst_offset: usize, src: *const c_void, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyHtoAAsync_v2_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyHtoAAsync_v2_ptsz(dst: CUarray, dst_offset: usize, src: *const c_void, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyAtoHAsync_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAtoHAsync_v2(dst: *mut c_void, src: CUarray, src_offset: usize, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyAtoHAsync_v2_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAtoHAsync_v2_ptsz(dst: *mut c_void, src: CUarray, src_offset: usize, n: usize, stream: CUstream) -> CUresult } };
    (cuMemcpyDtoA_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoA_v2(dst: CUarray, dst_offset: usize, src: CUdeviceptr, n: usize) -> CUresult } };
    (cuMemcpyDtoA_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyDtoA_v2_ptds(dst: CUarray, dst_offset: usize, src: CUdeviceptr, n: usize) -> CUresult } };
    (cuMemcpyAtoD_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAtoD_v2(dst: CUdeviceptr, src: CUarray, src_offset: usize, n: usize) -> CUresult } };
    (cuMemcpyAtoD_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAtoD_v2_ptds(dst: CUdeviceptr, src: CUarray, src_offset: usize, n: usize) -> CUresult } };
    (cuMemcpyAtoA_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAtoA_v2(dst: CUarray, dst_offset: usize, src: CUarray, src_offset: usize, n: usize) -> CUresult } };
    (cuMemcpyAtoA_v2_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemcpyAtoA_v2_ptds(dst: CUarray, dst_offset: usize, src: CUarray, src_offset: usize, n: usize) -> CUresult } };
    (cuTexObjectCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuTexObjectCreate(obj: *mut CUtexObject, res: *const CUDA_RESOURCE_DESC, tex: *const CUDA_TEXTURE_DESC, view: *const CUDA_RESOURCE_VIEW_DESC) -> CUresult } };
    (cuTexObjectDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuTexObjectDestroy(obj: CUtexObject) -> CUresult } };
    (cuSurfObjectCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuSurfObjectCreate(obj: *mut CUsurfObject, res: *const CUDA_RESOURCE_DESC) -> CUresult } };
    (cuSurfObjectDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuSurfObjectDestroy(obj: CUsurfObject) -> CUresult } };
    (cuMemPoolCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemPoolCreate(pool: *mut CUmemoryPool, props: *const CUmemPoolProps) -> CUresult } };
    (cuMemPoolDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemPoolDestroy(pool: CUmemoryPool) -> CUresult } };
    (cuMemPoolTrimTo, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemPoolTrimTo(pool: CUmemoryPool, keep: usize) -> CUresult } };
    (cuMemPoolSetAttribute, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemPoolSetAttribute(pool: CUmemoryPool, attr: CUmemPool_attribute, value: *mut c_void) -> CUresult } };
    (cuDeviceSetMemPool, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDeviceSetMemPool(dev: CUdevice, pool: CUmemoryPool) -> CUresult } };
    (cuGraphLaunch, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphLaunch(exec: CUgraphExec, stream: CUstream) -> CUresult } };
    (cuGraphLaunch_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphLaunch_ptsz(exec: CUgraphExec, stream: CUstream) -> CUresult } };
    (cuStreamBeginCapture_v2_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamBeginCapture_v2_ptsz(stream: CUstream, mode: CUstreamCaptureMode) -> CUresult } };
    (cuStreamBeginCaptureToGraph, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamBeginCaptureToGraph(stream: CUstream, graph: CUgraph, deps: *const CUgraphNode, edges: *const CUgraphEdgeData, n: usize, mode: CUstreamCaptureMode) -> CUresult } };
    (cuStreamBeginCaptureToGraph_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamBeginCaptureToGraph_ptsz(stream: CUstream, graph: CUgraph, deps: *const CUgraphNode, edges: *const CUgraphEdgeData, n: usize, mode: CUstreamCaptureMode) -> CUresult } };
    (cuStreamEndCapture, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamEndCapture(stream: CUstream, graph: *mut CUgraph) -> CUresult } };
    (cuStreamEndCapture_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamEndCapture_ptsz(stream: CUstream, graph: *mut CUgraph) -> CUresult } };
    (cuStreamIsCapturing, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamIsCapturing(stream: CUstream, status: *mut CUstreamCaptureStatus) -> CUresult } };
    (cuGraphInstantiateWithFlags, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphInstantiateWithFlags(exec: *mut CUgraphExec, graph: CUgraph, flags: c_ulonglong) -> CUresult } };
    (cuGraphInstantiateWithParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphInstantiateWithParams(exec: *mut CUgraphExec, graph: CUgraph, params: *mut CUDA_GRAPH_INSTANTIATE_PARAMS) -> CUresult } };
    (cuGraphInstantiateWithParams_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphInstantiateWithParams_ptsz(exec: *mut CUgraphExec, graph: CUgraph, params: *mut CUDA_GRAPH_INSTANTIATE_PARAMS) -> CUresult } };
    (cuGraphInstantiate_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphInstantiate_v2(exec: *mut CUgraphExec, graph: CUgraph, error_node: *mut CUgraphNode, log: *mut c_char, log_size: usize) -> CUresult } };
    (cuGraphExecUpdate_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphExecUpdate_v2(exec: CUgraphExec, graph: CUgraph, info: *mut CUgraphExecUpdateResultInfo) -> CUresult } };
    (cuGraphExecKernelNodeSetParams_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphExecKernelNodeSetParams_v2(exec: CUgraphExec, node: CUgraphNode, params: *const CUDA_KERNEL_NODE_PARAMS) -> CUresult } };
    (cuGraphExecMemcpyNodeSetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphExecMemcpyNodeSetParams(exec: CUgraphExec, node: CUgraphNode, copy: *const CUDA_MEMCPY3D, ctx: CUcontext) -> CUresult } };
    (cuGraphExecMemsetNodeSetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphExecMemsetNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const CUDA_MEMSET_NODE_PARAMS, ctx: CUcontext) -> CUresult } };
    (cuGraphExecChildGraphNodeSetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphExecChildGraphNodeSetParams(exec: CUgraphExec, node: CUgraphNode, child: CUgraph) -> CUresult } };
    (cuGraphNodeSetEnabled, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphNodeSetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: c_uint) -> CUresult } };
    (cuGraphExecNodeSetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphExecNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *mut CUgraphNodeParams) -> CUresult } };
    (cuGraphNodeSetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphNodeSetParams(node: CUgraphNode, params: *mut CUgraphNodeParams) -> CUresult } };
    (cuGraphHostNodeSetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphHostNodeSetParams(node: CUgraphNode, params: *const CUDA_HOST_NODE_PARAMS) -> CUresult } };
    (cuGraphExecHostNodeSetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphExecHostNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const CUDA_HOST_NODE_PARAMS) -> CUresult } };
    (cuGraphExecDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphExecDestroy(exec: CUgraphExec) -> CUresult } };
    (cuGraphCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphCreate(graph: *mut CUgraph, flags: c_uint) -> CUresult } };
    (cuGraphDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphDestroy(graph: CUgraph) -> CUresult } };
    (cuGraphAddKernelNode_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddKernelNode_v2(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const CUDA_KERNEL_NODE_PARAMS) -> CUresult } };
    (cuGraphAddMemcpyNode, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddMemcpyNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, copy: *const CUDA_MEMCPY3D, ctx: CUcontext) -> CUresult } };
    (cuGraphAddHostNode, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddHostNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const CUDA_HOST_NODE_PARAMS) -> CUresult } };
    (cuGraphAddMemsetNode, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddMemsetNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const CUDA_MEMSET_NODE_PARAMS, ctx: CUcontext) -> CUresult } };
    (cuGraphAddEmptyNode, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddEmptyNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize) -> CUresult } };
    (cuGraphAddEventRecordNode, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddEventRecordNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, event: CUevent) -> CUresult } };
    (cuGraphAddEventWaitNode, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddEventWaitNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, event: CUevent) -> CUresult } };
    (cuGraphAddNode, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *mut CUgraphNodeParams) -> CUresult } };
    (cuGraphAddNode_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphAddNode_v2(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, edges: *const CUgraphEdgeData, n: usize, params: *mut CUgraphNodeParams) -> CUresult } };
    (cuGraphGetNodes, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphGetNodes(graph: CUgraph, nodes: *mut CUgraphNode, n: *mut usize) -> CUresult } };
    (cuGraphNodeGetType, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphNodeGetType(node: CUgraphNode, ty: *mut CUgraphNodeType) -> CUresult } };
    (cuGraphNodeGetDependencies_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphNodeGetDependencies_v2(node: CUgraphNode, deps: *mut CUgraphNode, edges: *mut CUgraphEdgeData, n: *mut usize) -> CUresult } };
    (cuGraphKernelNodeGetParams_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphKernelNodeGetParams_v2(node: CUgraphNode, params: *mut CUDA_KERNEL_NODE_PARAMS) -> CUresult } };
    (cuGraphMemcpyNodeGetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphMemcpyNodeGetParams(node: CUgraphNode, copy: *mut CUDA_MEMCPY3D) -> CUresult } };
    (cuGraphHostNodeGetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphHostNodeGetParams(node: CUgraphNode, params: *mut CUDA_HOST_NODE_PARAMS) -> CUresult } };
    (cuGraphMemsetNodeGetParams, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphMemsetNodeGetParams(node: CUgraphNode, params: *mut CUDA_MEMSET_NODE_PARAMS) -> CUresult } };
    (cuGraphChildGraphNodeGetGraph, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphChildGraphNodeGetGraph(node: CUgraphNode, graph: *mut CUgraph) -> CUresult } };
    (cuGraphEventRecordNodeGetEvent, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphEventRecordNodeGetEvent(node: CUgraphNode, event: *mut CUevent) -> CUresult } };
    (cuGraphEventWaitNodeGetEvent, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGraphEventWaitNodeGetEvent(node: CUgraphNode, event: *mut CUevent) -> CUresult } };
    (cuLaunchHostFunc_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLaunchHostFunc_ptsz(stream: CUstream, func: CUhostFn, data: *mut c_void) -> CUresult } };
    (cuStreamAddCallback, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamAddCallback(stream: CUstream, callback: CUstreamCallback, data: *mut c_void, flags: c_uint) -> CUresult } };
    (cuStreamAddCallback_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamAddCallback_ptsz(stream: CUstream, callback: CUstreamCallback, data: *mut c_void, flags: c_uint) -> CUresult } };
    (cuDeviceCanAccessPeer, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDeviceCanAccessPeer(can: *mut c_int, dev: CUdevice, peer: CUdevice) -> CUresult } };
    (cuCtxEnablePeerAccess, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) -> CUresult } };
    (cuLaunchHostFunc, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuLaunchHostFunc(stream: CUstream, func: CUhostFn, data: *mut c_void) -> CUresult } };
    (cuStreamBeginCapture_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuStreamBeginCapture_v2(stream: CUstream, mode: CUstreamCaptureMode) -> CUresult } };
    (cuGetProcAddress, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGetProcAddress(symbol: *const c_char, pfn: *mut *mut c_void, cuda_version: c_int, flags: cuuint64_t) -> CUresult } };
    (cuGetProcAddress_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGetProcAddress_v2(symbol: *const c_char, pfn: *mut *mut c_void, cuda_version: c_int, flags: cuuint64_t, status: *mut CUdriverProcAddressQueryResult) -> CUresult } };
    (cuInit, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuInit(flags: c_uint) -> CUresult } };
    (cuDriverGetVersion, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDriverGetVersion(version: *mut c_int) -> CUresult } };
    (cuGetErrorString, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGetErrorString(error: CUresult, pstr: *mut *const c_char) -> CUresult } };
    (cuGetErrorName, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuGetErrorName(error: CUresult, pstr: *mut *const c_char) -> CUresult } };
    (cuDeviceGetCount, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDeviceGetCount(count: *mut c_int) -> CUresult } };
    (cuDeviceGet, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CUresult } };
    (cuDeviceGetName, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult } };
    (cuDeviceGetAttribute, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuDeviceGetAttribute(pi: *mut c_int, attrib: CUdevice_attribute, dev: CUdevice) -> CUresult } };
    (cuCtxGetCurrent, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxGetCurrent(pctx: *mut CUcontext) -> CUresult } };
    (cuCtxGetDevice, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuCtxGetDevice(device: *mut CUdevice) -> CUresult } };
    (cuPointerGetAttribute, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuPointerGetAttribute(data: *mut c_void, attribute: CUpointer_attribute, ptr: CUdeviceptr) -> CUresult } };
    (cuMemGetAddressRange_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemGetAddressRange_v2(pbase: *mut CUdeviceptr, psize: *mut usize, dptr: CUdeviceptr) -> CUresult } };
    (cuMemGetAllocationGranularity, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuMemGetAllocationGranularity(granularity: *mut usize, prop: *const CUmemAllocationProp, option: CUmemAllocationGranularity_flags) -> CUresult } };
    (cuFuncGetParamInfo, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuFuncGetParamInfo(func: CUfunction, index: usize, offset: *mut usize, size: *mut usize) -> CUresult } };
    (cuKernelGetParamInfo, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuKernelGetParamInfo(kernel: CUkernel, index: usize, offset: *mut usize, size: *mut usize) -> CUresult } };
    (cuFuncGetName, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuFuncGetName(name: *mut *const c_char, func: CUfunction) -> CUresult } };
    (cuKernelGetName, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuKernelGetName(name: *mut *const c_char, kernel: CUkernel) -> CUresult } };
    (cuFuncGetModule, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuFuncGetModule(module: *mut CUmodule, func: CUfunction) -> CUresult } };
    (cuKernelGetLibrary, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuKernelGetLibrary(lib: *mut CUlibrary, kernel: CUkernel) -> CUresult } };
    (cuFuncSetAttribute, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuFuncSetAttribute(func: CUfunction, attrib: CUfunction_attribute, value: c_int) -> CUresult } };
    (cuEventElapsedTime, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult } };
    (cuEventElapsedTime_v2, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent) -> CUresult } };
}

/// The CUDA driver table's list: `cuda_fns!(CALLBACK, [EXTRA…])` expands to
/// `CALLBACK! { EXTRA… NAME NAME … }`, every entry in table order.
#[macro_export]
macro_rules! cuda_fns {
    ($cb:path, [$($x:tt)*]) => {
        $cb! {
            $($x)*
            cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRelease_v2 cuDevicePrimaryCtxRelease cuDevicePrimaryCtxReset_v2 cuDevicePrimaryCtxReset cuCtxCreate_v2 cuCtxCreate_v3 cuCtxCreate_v4 cuCtxDestroy_v2
            cuCtxSetCurrent cuCtxPushCurrent_v2 cuCtxPopCurrent_v2 cuCtxSynchronize cuCtxSynchronize_v2 cuProfilerStart cuProfilerStop cuMemAlloc_v2 cuMemAllocPitch_v2
            cuMemAllocManaged cuMemAllocAsync cuMemAllocAsync_ptsz cuMemAllocFromPoolAsync cuMemAllocFromPoolAsync_ptsz cuMemFree_v2
            cuMemFreeAsync cuMemFreeAsync_ptsz cuMemAllocHost_v2 cuMemHostAlloc cuMemFreeHost cuMemHostRegister_v2
            cuMemHostUnregister cuMemAddressReserve cuMemAddressFree cuMemCreate cuMemRelease cuMemRetainAllocationHandle cuMemExportToShareableHandle cuMemImportFromShareableHandle cuMemMap
            cuMemUnmap cuMemSetAccess cuMemcpyHtoD_v2 cuMemcpyHtoD_v2_ptds cuMemcpyDtoH_v2 cuMemcpyDtoH_v2_ptds
            cuMemcpyDtoD_v2 cuMemcpyDtoD_v2_ptds cuMemcpy cuMemcpy_ptds cuMemcpyPeer cuMemcpyPeer_ptds
            cuMemcpyHtoDAsync_v2 cuMemcpyHtoDAsync_v2_ptsz cuMemcpyDtoHAsync_v2 cuMemcpyDtoHAsync_v2_ptsz cuMemcpyDtoDAsync_v2 cuMemcpyDtoDAsync_v2_ptsz
            cuMemcpyAsync cuMemcpyAsync_ptsz cuMemcpyPeerAsync cuMemcpyPeerAsync_ptsz cuMemsetD8_v2 cuMemsetD8_v2_ptds
            cuMemsetD16_v2 cuMemsetD16_v2_ptds cuMemsetD32_v2 cuMemsetD32_v2_ptds cuMemsetD8Async cuMemsetD8Async_ptsz
            cuMemsetD16Async cuMemsetD16Async_ptsz cuMemsetD32Async cuMemsetD32Async_ptsz cuModuleLoad cuModuleLoadData
            cuModuleLoadFatBinary cuModuleLoadDataEx cuLibraryLoadData cuLibraryLoadFromFile cuModuleUnload cuLibraryUnload
            cuModuleGetFunction cuLibraryGetKernel cuKernelGetFunction cuLibraryGetModule cuModuleGetGlobal_v2 cuLibraryGetGlobal
            cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz
            cuStreamCreate cuStreamCreateWithPriority cuStreamDestroy_v2 cuStreamSynchronize cuStreamSynchronize_ptsz cuStreamWaitEvent
            cuStreamWaitEvent_ptsz cuEventCreate cuEventDestroy_v2 cuEventRecord cuEventRecord_ptsz cuEventRecordWithFlags
            cuEventRecordWithFlags_ptsz cuEventSynchronize cuGetExportTable cuMemcpy2D_v2 cuMemcpy2D_v2_ptds cuMemcpy2DUnaligned_v2 cuMemcpy2DUnaligned_v2_ptds cuMemcpy3D_v2 cuMemcpy3D_v2_ptds
            cuMemcpy2DAsync_v2 cuMemcpy2DAsync_v2_ptsz cuMemcpy3DAsync_v2 cuMemcpy3DAsync_v2_ptsz cuMemsetD2D8_v2 cuMemsetD2D8_v2_ptds cuMemsetD2D16_v2 cuMemsetD2D16_v2_ptds cuMemsetD2D32_v2 cuMemsetD2D32_v2_ptds cuMemsetD2D8Async cuMemsetD2D8Async_ptsz cuMemsetD2D16Async cuMemsetD2D16Async_ptsz
            cuMemsetD2D32Async cuMemsetD2D32Async_ptsz cuArrayCreate_v2 cuArray3DCreate_v2 cuArrayDestroy cuArrayGetPlane cuMipmappedArrayCreate cuMipmappedArrayGetLevel cuMipmappedArrayDestroy cuMemcpyHtoA_v2 cuMemcpyHtoA_v2_ptds cuMemcpyAtoH_v2 cuMemcpyAtoH_v2_ptds cuMemcpyHtoAAsync_v2 cuMemcpyHtoAAsync_v2_ptsz cuMemcpyAtoHAsync_v2 cuMemcpyAtoHAsync_v2_ptsz cuMemcpyDtoA_v2 cuMemcpyDtoA_v2_ptds cuMemcpyAtoD_v2 cuMemcpyAtoD_v2_ptds cuMemcpyAtoA_v2 cuMemcpyAtoA_v2_ptds cuTexObjectCreate cuTexObjectDestroy cuSurfObjectCreate cuSurfObjectDestroy
            cuMemPoolCreate cuMemPoolDestroy cuMemPoolTrimTo cuMemPoolSetAttribute cuDeviceSetMemPool cuGraphLaunch cuGraphLaunch_ptsz cuStreamBeginCapture_v2_ptsz cuStreamBeginCaptureToGraph cuStreamBeginCaptureToGraph_ptsz cuStreamEndCapture cuStreamEndCapture_ptsz cuStreamIsCapturing
            cuGraphInstantiateWithFlags cuGraphInstantiateWithParams cuGraphInstantiateWithParams_ptsz cuGraphInstantiate_v2 cuGraphExecUpdate_v2
            cuGraphExecKernelNodeSetParams_v2 cuGraphExecMemcpyNodeSetParams cuGraphExecMemsetNodeSetParams cuGraphExecChildGraphNodeSetParams cuGraphNodeSetEnabled cuGraphExecNodeSetParams cuGraphNodeSetParams cuGraphHostNodeSetParams cuGraphExecHostNodeSetParams cuGraphExecDestroy cuGraphCreate cuGraphDestroy
            cuGraphAddKernelNode_v2 cuGraphAddMemcpyNode cuGraphAddHostNode cuGraphAddMemsetNode cuGraphAddEmptyNode cuGraphAddEventRecordNode cuGraphAddEventWaitNode cuGraphAddNode cuGraphAddNode_v2
            cuGraphGetNodes cuGraphNodeGetType cuGraphNodeGetDependencies_v2 cuGraphKernelNodeGetParams_v2 cuGraphMemcpyNodeGetParams cuGraphHostNodeGetParams cuGraphMemsetNodeGetParams
            cuGraphChildGraphNodeGetGraph cuGraphEventRecordNodeGetEvent cuGraphEventWaitNodeGetEvent
            cuLaunchHostFunc cuLaunchHostFunc_ptsz cuStreamAddCallback cuStreamAddCallback_ptsz cuDeviceCanAccessPeer cuCtxEnablePeerAccess
            cuStreamBeginCapture_v2 cuGetProcAddress cuGetProcAddress_v2 cuInit cuDriverGetVersion cuGetErrorString
            cuGetErrorName cuDeviceGetCount cuDeviceGet cuDeviceGetName cuDeviceGetAttribute cuCtxGetCurrent
            cuCtxGetDevice cuPointerGetAttribute cuMemGetAddressRange_v2 cuMemGetAllocationGranularity cuFuncGetParamInfo cuKernelGetParamInfo cuFuncGetName cuKernelGetName
            cuFuncGetModule cuKernelGetLibrary cuFuncSetAttribute cuEventElapsedTime cuEventElapsedTime_v2
        }
    };
}
