//! The CUDA family of `libhrr_intercept.so`: the CUDA runtime's entry points
//! for applications linked with the shared runtime (`nvcc -cudart shared`,
//! PyTorch's own libcudart; HIP sources built for NVIDIA land here too), and
//! the driver's (`cu*`, [`driver`]), which every CUDA program reaches: the
//! static runtime, cuBLAS, Triton and driver-API programs are recorded there.
//!
//! libcudart 13 exports versioned names (`cudaMalloc@@libcudart.so.13`); the
//! unversioned definitions here interpose them all the same, and
//! `dlsym(RTLD_NEXT)` finds the real ones. Events use the archive's op
//! vocabulary (DESIGN.md §4) with the exact CUDA entry point in `api`, failed
//! calls included with their `ret`.
//!
//! The runtime's C signatures are declared once, in `cuda-api`'s runtime
//! table (`cuda_api::cudart_fn!`), the driver's in its driver table
//! (`cuda_api::cuda_fn!`); the wrappers are generated from them.
//!
//! Layout:
//! - `exports` — the runtime's C entry points (FFI), generated from the
//!   runtime table as the HIP family's `exports` are (`cudart_exports!`
//!   names them), with their handlers (`memory`, `sync`, `launch`);
//! - [`driver`] — the driver layer: its exports, the `dlsym` and
//!   `cuGetProcAddress` routes, driver-level modules and functions;
//! - [`ffi`] — their shared wrapper, the runtime/driver queries the recorder
//!   makes (kept out of the application's `cudaGetLastError`), the switch to
//!   `platform:"nvidia"`;
//! - `window` — the capture window's triggers and its reach of the device;
//! - [`registry`] — fat binaries and kernels: lazy code blobs, layouts;
//! - [`layout`], [`dir`], [`types`], [`log`] — safe, GPU-free logic and C
//!   definitions (unit-tested in CI).
//!
//! Like `exports`, the FFI modules are left out of unit tests.

pub mod device_hash;
pub mod dir;
pub mod driver;
pub mod layout;
pub mod log;
pub mod registry;
pub mod types;
// The capture window's side of the family: profiler triggers, launches
// counted, the device reached through the driver.
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod window;

// FFI: the runtime's C entry points, reading the application's arguments.
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod exports;
// FFI: the runtime calls the recorder makes on its own behalf.
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod ffi;

/// The runtime table's entries this library exports (`cuda::exports`), as
/// a list macro of the table's shape: `cudart_exports!(CB, [EXTRA…])` is
/// `CB! { EXTRA… NAME … }`. Together with [`OWN_CALLS_ONLY`] it is the
/// whole table (unit-tested): a new table line must be exported or named
/// there.
macro_rules! cudart_exports {
    ($cb:path, [$($x:tt)*]) => {
        $cb! {
            $($x)*
            cudaMalloc cudaMallocHost cudaHostAlloc cudaMallocManaged cudaMallocAsync
            cudaMallocAsync_ptsz cudaFree cudaFreeHost cudaFreeAsync cudaFreeAsync_ptsz
            cudaHostRegister cudaHostUnregister cudaMemcpy cudaMemcpy_ptds cudaMemcpyAsync
            cudaMemcpyAsync_ptsz cudaMemset cudaMemset_ptds cudaMemsetAsync cudaMemsetAsync_ptsz
            cudaMemcpyToSymbol cudaMemcpyToSymbol_ptds cudaMemcpyToSymbolAsync cudaMemcpyToSymbolAsync_ptsz
            cudaMemcpyFromSymbol cudaMemcpyFromSymbol_ptds cudaMemcpyFromSymbolAsync
            cudaMemcpyFromSymbolAsync_ptsz
            cudaStreamCreate cudaStreamCreateWithFlags cudaStreamCreateWithPriority
            cudaStreamDestroy cudaStreamSynchronize cudaStreamSynchronize_ptsz
            cudaStreamWaitEvent cudaStreamWaitEvent_ptsz cudaEventCreate cudaEventCreateWithFlags
            cudaEventDestroy cudaEventRecord cudaEventRecord_ptsz cudaEventRecordWithFlags
            cudaEventRecordWithFlags_ptsz cudaEventSynchronize cudaDeviceSynchronize cudaSetDevice
            cudaProfilerStart cudaProfilerStop
            cudaLaunchKernel cudaLaunchKernel_ptsz cudaLaunchKernelExC cudaLaunchKernelExC_ptsz
            cudaGetDriverEntryPoint cudaGetDriverEntryPointByVersion
            __cudaRegisterFatBinary __cudaRegisterFatBinaryEnd __cudaUnregisterFatBinary
            __cudaRegisterFunction __cudaGetKernel __cudaLaunchKernel __cudaLaunchKernel_ptsz
        }
    };
}
#[allow(unused_imports)] // used by `exports`, which unit tests leave out
pub(crate) use cudart_exports;

/// Runtime table entries the recorder only calls, on its own behalf
/// (`ffi::quietly`, `ffi::pointer_type`, the symbol copies' lookup): interposing them would put this
/// library between the application and its own error state.
pub const OWN_CALLS_ONLY: &[&str] = &[
    "cudaPeekAtLastError",
    "cudaGetLastError",
    "cudaPointerGetAttributes",
    "cudaGetSymbolAddress",
];

#[cfg(test)]
mod tests {
    macro_rules! names {
        ($($name:ident)*) => {
            const EXPORTED: &[&str] = &[$(stringify!($name)),*];
        };
    }
    cudart_exports!(names, []);

    #[test]
    fn every_runtime_table_entry_is_exported_or_an_own_call() {
        let mut ours: Vec<&str> = EXPORTED
            .iter()
            .chain(super::OWN_CALLS_ONLY)
            .copied()
            .collect();
        ours.sort_unstable();
        let n = ours.len();
        ours.dedup();
        assert_eq!(
            ours.len(),
            n,
            "a name is both exported and an own call, or listed twice"
        );
        let mut table = cuda_api::runtime::CUDART_FNS.to_vec();
        table.sort_unstable();
        assert_eq!(ours, table);
    }
}
