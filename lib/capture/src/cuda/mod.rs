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
//! Layout:
//! - [`exports_memory`], [`exports_sync`], [`exports_launch`] — the runtime's
//!   C entry points (FFI), in the shape of the HIP family's `exports`;
//! - [`driver`] — the driver layer: its exports, the `dlsym` and
//!   `cuGetProcAddress` routes, driver-level modules and functions;
//! - [`ffi`] — their shared wrapper, the runtime/driver queries the recorder
//!   makes (kept out of the application's `cudaGetLastError`), the switch to
//!   `platform:"nvidia"`;
//! - [`registry`] — fat binaries and kernels: lazy code blobs, layouts;
//! - [`layout`], [`dir`], [`types`], [`log`] — safe, GPU-free logic and C
//!   definitions (unit-tested in CI).
//!
//! Like `exports`, the FFI modules are left out of unit tests and of the
//! `bench` feature.

pub mod dir;
pub mod driver;
pub mod layout;
pub mod log;
pub mod registry;
pub mod types;

#[cfg(not(any(test, feature = "bench")))]
pub mod exports_launch;
#[cfg(not(any(test, feature = "bench")))]
pub mod exports_memory;
#[cfg(not(any(test, feature = "bench")))]
pub mod exports_symbols;
#[cfg(not(any(test, feature = "bench")))]
pub mod exports_sync;
#[cfg(not(any(test, feature = "bench")))]
pub mod ffi;
