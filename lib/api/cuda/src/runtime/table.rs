// The CUDA runtime's signature table: every runtime entry point hrr
// declares, one line each, in the `api-table` crate's shape (see there): the
// `cuda*` entry points the capture library exports (its cuda/exports
// module says what each records), the compiler ABI `nvcc` emits calls to
// (`__cudaRegisterFatBinary*`, `__cudaRegisterFunction`, `__cudaGetKernel`,
// `__cudaLaunchKernel`), the driver lookups the runtime offers
// (`cudaGetDriverEntryPoint*`), and the runtime calls the recorder makes on
// its own behalf (`cudaPeekAtLastError`, `cudaGetLastError`,
// `cudaPointerGetAttributes`, `cudaStreamSynchronize`,
// `cudaGetSymbolAddress`).
//
// Written by hand from CUDA 13.0's headers: `cuda_runtime_api.h` for the
// `cuda*` functions, `crt/host_runtime.h` and `crt/device_functions.h` for
// the compiler ABI. Names are the exported symbols: the `_ptds`
// (synchronous) and `_ptsz` (stream-ordered) variants are what the header's
// macros map the plain names to under `CUDA_API_PER_THREAD_DEFAULT_STREAM`
// (`nvcc --default-stream per-thread`), and get a line of their own.
// Parameter names are hrr's (shared by an entry and its variants); type
// names are `runtime::types`', spelled as the headers spell them.
//
// To extend: add the line (copy the header's prototype, C types mapped as
// `cuda-c-decls` maps them back: `T *` is `*mut T`, `const T *` is
// `*const T`, `size_t` is `usize`, `unsigned int` is `c_uint`, a C type name
// that is not yet in `runtime::types` is added there) and the name to
// `cudart_fns!`. `scripts/abi-check.sh` redeclares every line in C after
// the headers (`cargo run -p cuda-api --bin cuda-c-decls`), so a line that
// differs from CUDA's prototype fails to compile there.
// 63 entry points.

/// The CUDA runtime table's lookup: `cudart_fn!(NAME, CALLBACK, [EXTRA…])`
/// expands to `CALLBACK! { EXTRA… NAME(PARAM: TYPE, …) -> RET }` (no `->`
/// part for a `void` function). Type names resolve where the callback
/// expands: `use cuda_api::runtime::types::*;`.
#[macro_export]
macro_rules! cudart_fn {
    (cudaMalloc, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMalloc(ptr: *mut *mut c_void, size: usize) -> cudaError_t } };
    (cudaMallocHost, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> cudaError_t } };
    (cudaHostAlloc, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaHostAlloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> cudaError_t } };
    (cudaMallocManaged, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMallocManaged(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> cudaError_t } };
    (cudaMallocAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMallocAsync(ptr: *mut *mut c_void, size: usize, stream: cudaStream_t) -> cudaError_t } };
    (cudaMallocAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMallocAsync_ptsz(ptr: *mut *mut c_void, size: usize, stream: cudaStream_t) -> cudaError_t } };
    (cudaFree, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaFree(ptr: *mut c_void) -> cudaError_t } };
    (cudaFreeHost, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaFreeHost(ptr: *mut c_void) -> cudaError_t } };
    (cudaFreeAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaFreeAsync(ptr: *mut c_void, stream: cudaStream_t) -> cudaError_t } };
    (cudaFreeAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaFreeAsync_ptsz(ptr: *mut c_void, stream: cudaStream_t) -> cudaError_t } };
    (cudaHostRegister, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaHostRegister(ptr: *mut c_void, size: usize, flags: c_uint) -> cudaError_t } };
    (cudaHostUnregister, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaHostUnregister(ptr: *mut c_void) -> cudaError_t } };
    (cudaMemcpy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: cudaMemcpyKind) -> cudaError_t } };
    (cudaMemcpy_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpy_ptds(dst: *mut c_void, src: *const c_void, size: usize, kind: cudaMemcpyKind) -> cudaError_t } };
    (cudaMemcpyAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyAsync(dst: *mut c_void, src: *const c_void, size: usize, kind: cudaMemcpyKind, stream: cudaStream_t) -> cudaError_t } };
    (cudaMemcpyAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyAsync_ptsz(dst: *mut c_void, src: *const c_void, size: usize, kind: cudaMemcpyKind, stream: cudaStream_t) -> cudaError_t } };
    (cudaMemset, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemset(dst: *mut c_void, value: c_int, size: usize) -> cudaError_t } };
    (cudaMemset_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemset_ptds(dst: *mut c_void, value: c_int, size: usize) -> cudaError_t } };
    (cudaMemsetAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemsetAsync(dst: *mut c_void, value: c_int, size: usize, stream: cudaStream_t) -> cudaError_t } };
    (cudaMemsetAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemsetAsync_ptsz(dst: *mut c_void, value: c_int, size: usize, stream: cudaStream_t) -> cudaError_t } };
    (cudaMemcpyToSymbol, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyToSymbol(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: cudaMemcpyKind) -> cudaError_t } };
    (cudaMemcpyToSymbol_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyToSymbol_ptds(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: cudaMemcpyKind) -> cudaError_t } };
    (cudaMemcpyToSymbolAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyToSymbolAsync(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: cudaMemcpyKind, stream: cudaStream_t) -> cudaError_t } };
    (cudaMemcpyToSymbolAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyToSymbolAsync_ptsz(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: cudaMemcpyKind, stream: cudaStream_t) -> cudaError_t } };
    (cudaMemcpyFromSymbol, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyFromSymbol(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: cudaMemcpyKind) -> cudaError_t } };
    (cudaMemcpyFromSymbol_ptds, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyFromSymbol_ptds(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: cudaMemcpyKind) -> cudaError_t } };
    (cudaMemcpyFromSymbolAsync, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyFromSymbolAsync(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: cudaMemcpyKind, stream: cudaStream_t) -> cudaError_t } };
    (cudaMemcpyFromSymbolAsync_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaMemcpyFromSymbolAsync_ptsz(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: cudaMemcpyKind, stream: cudaStream_t) -> cudaError_t } };
    (cudaGetSymbolAddress, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaGetSymbolAddress(dev_ptr: *mut *mut c_void, symbol: *const c_void) -> cudaError_t } };
    (cudaPointerGetAttributes, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaPointerGetAttributes(attributes: *mut cudaPointerAttributes, ptr: *const c_void) -> cudaError_t } };
    (cudaStreamCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaStreamCreate(stream: *mut cudaStream_t) -> cudaError_t } };
    (cudaStreamCreateWithFlags, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaStreamCreateWithFlags(stream: *mut cudaStream_t, flags: c_uint) -> cudaError_t } };
    (cudaStreamCreateWithPriority, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaStreamCreateWithPriority(stream: *mut cudaStream_t, flags: c_uint, priority: c_int) -> cudaError_t } };
    (cudaStreamDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaStreamDestroy(stream: cudaStream_t) -> cudaError_t } };
    (cudaStreamSynchronize, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaStreamSynchronize(stream: cudaStream_t) -> cudaError_t } };
    (cudaStreamSynchronize_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaStreamSynchronize_ptsz(stream: cudaStream_t) -> cudaError_t } };
    (cudaStreamWaitEvent, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaStreamWaitEvent(stream: cudaStream_t, event: cudaEvent_t, flags: c_uint) -> cudaError_t } };
    (cudaStreamWaitEvent_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaStreamWaitEvent_ptsz(stream: cudaStream_t, event: cudaEvent_t, flags: c_uint) -> cudaError_t } };
    (cudaEventCreate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaEventCreate(event: *mut cudaEvent_t) -> cudaError_t } };
    (cudaEventCreateWithFlags, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaEventCreateWithFlags(event: *mut cudaEvent_t, flags: c_uint) -> cudaError_t } };
    (cudaEventDestroy, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaEventDestroy(event: cudaEvent_t) -> cudaError_t } };
    (cudaEventRecord, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaEventRecord(event: cudaEvent_t, stream: cudaStream_t) -> cudaError_t } };
    (cudaEventRecord_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaEventRecord_ptsz(event: cudaEvent_t, stream: cudaStream_t) -> cudaError_t } };
    (cudaEventRecordWithFlags, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaEventRecordWithFlags(event: cudaEvent_t, stream: cudaStream_t, flags: c_uint) -> cudaError_t } };
    (cudaEventRecordWithFlags_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaEventRecordWithFlags_ptsz(event: cudaEvent_t, stream: cudaStream_t, flags: c_uint) -> cudaError_t } };
    (cudaEventSynchronize, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaEventSynchronize(event: cudaEvent_t) -> cudaError_t } };
    (cudaDeviceSynchronize, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaDeviceSynchronize() -> cudaError_t } };
    (cudaSetDevice, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaSetDevice(device: c_int) -> cudaError_t } };
    (cudaProfilerStart, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaProfilerStart() -> cudaError_t } };
    (cudaProfilerStop, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaProfilerStop() -> cudaError_t } };
    (cudaPeekAtLastError, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaPeekAtLastError() -> cudaError_t } };
    (cudaGetLastError, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaGetLastError() -> cudaError_t } };
    (cudaLaunchKernel, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaLaunchKernel(func: *const c_void, grid: dim3, block: dim3, args: *mut *mut c_void, shmem: usize, stream: cudaStream_t) -> cudaError_t } };
    (cudaLaunchKernel_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaLaunchKernel_ptsz(func: *const c_void, grid: dim3, block: dim3, args: *mut *mut c_void, shmem: usize, stream: cudaStream_t) -> cudaError_t } };
    (cudaLaunchKernelExC, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaLaunchKernelExC(config: *const cudaLaunchConfig_t, func: *const c_void, args: *mut *mut c_void) -> cudaError_t } };
    (cudaLaunchKernelExC_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaLaunchKernelExC_ptsz(config: *const cudaLaunchConfig_t, func: *const c_void, args: *mut *mut c_void) -> cudaError_t } };
    (cudaGetDriverEntryPoint, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaGetDriverEntryPoint(symbol: *const c_char, func: *mut *mut c_void, flags: c_ulonglong, status: *mut cudaDriverEntryPointQueryResult) -> cudaError_t } };
    (cudaGetDriverEntryPointByVersion, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* cudaGetDriverEntryPointByVersion(symbol: *const c_char, func: *mut *mut c_void, cuda_version: c_uint, flags: c_ulonglong, status: *mut cudaDriverEntryPointQueryResult) -> cudaError_t } };
    (__cudaRegisterFatBinary, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* __cudaRegisterFatBinary(fat_cubin: *mut c_void) -> *mut *mut c_void } };
    (__cudaRegisterFatBinaryEnd, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* __cudaRegisterFatBinaryEnd(handle: *mut *mut c_void) } };
    (__cudaUnregisterFatBinary, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* __cudaUnregisterFatBinary(handle: *mut *mut c_void) } };
    (__cudaRegisterFunction, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* __cudaRegisterFunction(handle: *mut *mut c_void, host_fun: *const c_char, device_fun: *mut c_char, device_name: *const c_char, thread_limit: c_int, tid: *mut uint3, bid: *mut uint3, block_dim: *mut dim3, grid_dim: *mut dim3, w_size: *mut c_int) } };
    (__cudaGetKernel, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* __cudaGetKernel(kernel: *mut cudaKernel_t, host_fun: *const c_void) -> cudaError_t } };
    (__cudaLaunchKernel, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* __cudaLaunchKernel(kernel: cudaKernel_t, grid: dim3, block: dim3, args: *mut *mut c_void, shmem: usize, stream: cudaStream_t) -> cudaError_t } };
    (__cudaLaunchKernel_ptsz, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* __cudaLaunchKernel_ptsz(kernel: cudaKernel_t, grid: dim3, block: dim3, args: *mut *mut c_void, shmem: usize, stream: cudaStream_t) -> cudaError_t } };
}

/// The CUDA runtime table's list: `cudart_fns!(CALLBACK, [EXTRA…])` expands
/// to `CALLBACK! { EXTRA… NAME NAME … }`, every entry in table order.
#[macro_export]
macro_rules! cudart_fns {
    ($cb:path, [$($x:tt)*]) => {
        $cb! {
            $($x)*
            cudaMalloc cudaMallocHost cudaHostAlloc cudaMallocManaged cudaMallocAsync cudaMallocAsync_ptsz
            cudaFree cudaFreeHost cudaFreeAsync cudaFreeAsync_ptsz cudaHostRegister cudaHostUnregister
            cudaMemcpy cudaMemcpy_ptds cudaMemcpyAsync cudaMemcpyAsync_ptsz cudaMemset cudaMemset_ptds
            cudaMemsetAsync cudaMemsetAsync_ptsz cudaMemcpyToSymbol cudaMemcpyToSymbol_ptds cudaMemcpyToSymbolAsync
            cudaMemcpyToSymbolAsync_ptsz cudaMemcpyFromSymbol cudaMemcpyFromSymbol_ptds cudaMemcpyFromSymbolAsync cudaMemcpyFromSymbolAsync_ptsz
            cudaGetSymbolAddress cudaPointerGetAttributes cudaStreamCreate cudaStreamCreateWithFlags cudaStreamCreateWithPriority
            cudaStreamDestroy cudaStreamSynchronize cudaStreamSynchronize_ptsz cudaStreamWaitEvent cudaStreamWaitEvent_ptsz cudaEventCreate
            cudaEventCreateWithFlags cudaEventDestroy cudaEventRecord cudaEventRecord_ptsz cudaEventRecordWithFlags cudaEventRecordWithFlags_ptsz
            cudaEventSynchronize cudaDeviceSynchronize cudaSetDevice cudaProfilerStart cudaProfilerStop cudaPeekAtLastError cudaGetLastError cudaLaunchKernel
            cudaLaunchKernel_ptsz cudaLaunchKernelExC cudaLaunchKernelExC_ptsz cudaGetDriverEntryPoint cudaGetDriverEntryPointByVersion __cudaRegisterFatBinary
            __cudaRegisterFatBinaryEnd __cudaUnregisterFatBinary __cudaRegisterFunction __cudaGetKernel __cudaLaunchKernel __cudaLaunchKernel_ptsz
        }
    };
}
