//! hrr-backend-cuda: the CUDA driver API loaded at run time (`libcuda.so.1`, through
//! libloading) and the CUDA replay backend [`CudaDevice`].
//!
//! Nothing links against CUDA: a machine without the NVIDIA driver builds and
//! tests this crate, and `CudaDriver::get()` then fails with
//! `cannot load libcuda.so.1: …` instead of crashing.
//!
//! * [`ffi`]: entry-point types and the symbol table (exact exported names).
//! * [`CudaDriver`]: the loaded library; error naming; parameter layouts
//!   (`cuFuncGetParamInfo` / `cuKernelGetParamInfo`) for the capture library.
//! * [`CudaDevice`]: [`hrr_replay::device::Device`] on a device's primary context.
//! * [`kernarg`]: the `extra` parameter buffer of `cuLaunchKernel`.
//! * `launcher`: the launch itself, on the replay thread or the launch thread
//!   ([`hrr_replay::launch_thread`]).
//! * [`staging`]: large pageable copies through pinned buffers, in parallel.
//! * [`pinned`]: page-locked host buffers for the engine, copied without staging.
//!
//! # Decisions
//!
//! * Symbols by their exported, versioned names (`cuMemAlloc_v2`, ...) via
//!   `dlsym`, not `cuGetProcAddress_v2`: the name pins the ABI declared in
//!   [`ffi`]. Legacy-stream variants only (no `_ptsz`/`_ptds`), as replay
//!   serialises on the streams the archive names.
//! * Launches pass the recorded parameter bytes through `extra`
//!   (`CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END` = 1/2/0), packed at the
//!   recorded offsets; a kernel without parameters gets neither array.
//! * Allocations are zero-filled (`cuMemsetD8_v2`; host ones on the host).
//! * `event_elapsed_ms` uses `cuEventElapsedTime_v2` when exported (CUDA 13's
//!   `cuda.h` maps `cuEventElapsedTime` to it; same signature).
//!
//! # Verified on the H200 (CUDA 13.0, driver 580.159.04)
//!
//! `tests/gpu.rs` passes there: every symbol resolves (including the three
//! optional ones), the `CUresult` table matches `cuGetErrorName`, `target()`
//! is `sm_90`, nvcc's fat binary (0xBA55ED50, uncompressed by default,
//! flags 0x11) and cubin load through `cuModuleLoadData`, `cuFuncGetParamInfo`
//! gives `(offset, size)` per parameter and `CUDA_ERROR_INVALID_VALUE` past the
//! last, staged copies are exact and ordered. 100k launches through the
//! backend: 4.0-4.2 µs each (the app's own `<<<>>>` loop: 3.7 µs).
//!
//! For the capture side (`lib/capture/intercept`, CUDA family), measured on the
//! H200 with a preloaded probe (now the interposer itself: `HRR_LOG=1`) and
//! CUDA 13's headers:
//! * `crt/host_runtime.h` + `crt/device_functions.h` declare
//!   `void** __cudaRegisterFatBinary(void *fatCubin)`,
//!   `void __cudaRegisterFatBinaryEnd(void **h)`, `void __cudaUnregisterFatBinary(void **h)`,
//!   `void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun,
//!   const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
//!   dim3 *gDim, int *wSize)`, `cudaError_t __cudaGetKernel(cudaKernel_t *, const void *hostFun)`,
//!   `cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3 grid, dim3 block, void **args,
//!   size_t sharedMem, cudaStream_t)` and `__cudaLaunchKernel_ptsz` (same), plus
//!   `unsigned __cudaPushCallConfiguration(dim3, dim3, size_t, CUstream_st*)` /
//!   `cudaError_t __cudaPopCallConfiguration(dim3*, dim3*, size_t*, void *stream)`.
//! * A `<<<>>>` stub calls `__cudaPushCallConfiguration`, then (first launch
//!   only, cached in a static) `__cudaGetKernel(&h, hostFun)`, then
//!   `__cudaPopCallConfiguration` and `__cudaLaunchKernel(h, ...)`; with
//!   `--default-stream per-thread`, `__cudaLaunchKernel_ptsz`. `cudaLaunchKernel`
//!   only with `-D__NV_LEGACY_LAUNCH` or when the app calls it itself.
//! * Registration runs in a constructor before `main`: `__cudaRegisterFatBinary`
//!   (wrapper: magic 0x466243B1, version 1, data -> fat binary, filename 0),
//!   then `__cudaRegisterFunction` per kernel (deviceFun = deviceName = mangled
//!   name, thread_limit -1), then `__cudaRegisterFatBinaryEnd`. The fat binary
//!   spans 16 + header's u64 body size bytes (4528 for saxpy, = `nvcc -fatbin`).
//! * The `cudaKernel_t` from `__cudaGetKernel` is a `CUkernel`:
//!   `cuKernelGetParamInfo` on it gives the layout (saxpy `(int, float,
//!   const float*, float*)`: (0,4) (4,4) (8,8) (16,8); a 56-byte struct: (0,56)),
//!   [`CudaDriver::kernel_param_layout`]. `args[i]` points at parameter i.
//!   `cudaFuncGetParamInfo(hostFun, i, &off, &size)` is also exported by
//!   libcudart 13 (no `*GetParamCount` in either library).
//! * libcudart's exports are versioned (`__cudaLaunchKernel@@libcudart.so.13`);
//!   unversioned definitions in an `LD_PRELOAD`ed library interpose them, and
//!   `dlsym(RTLD_NEXT, name)` finds the real ones.
//! * nvcc links cudart statically by default (`__cudaLaunchKernel` is then
//!   defined in the executable): such apps, and cuBLAS-style driver-API work
//!   (`cuMemAlloc`, `cuLaunchKernel`), are recorded at the driver layer
//!   (`lib/capture/intercept/src/cuda/driver`), which this backend replays: VMM
//!   (`cuMemAddressReserve`/`cuMemCreate`/`cuMemMap`), module globals
//!   (`cuModuleGetGlobal_v2`), launch attributes (`cuLaunchKernelEx`) and
//!   dynamic shared memory past 48 KiB (`cuFuncSetAttribute`, derived from
//!   the launch) through optional entry points.

mod arrays;
pub mod device;
pub mod driver;
pub mod error;
pub mod ffi;
mod graphs;
pub mod kernarg;
mod launcher;
pub mod pinned;
mod placement;
mod rect_pools;
pub mod staging;

pub use device::{CudaDevice, sm_target};
pub use driver::{CudaDriver, LIBCUDA};
pub use error::CudaError;
pub use placement::{GRANULARITY, RESERVATION_ALIGNMENT};
