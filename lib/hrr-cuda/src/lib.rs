//! hrr-cuda: the CUDA driver API loaded at run time (`libcuda.so.1`, through
//! libloading) and the CUDA replay backend [`CudaDevice`].
//!
//! Nothing links against CUDA: a machine without the NVIDIA driver builds and
//! tests this crate, and `CudaDriver::get()` then fails with
//! `cannot load libcuda.so.1: …` instead of crashing.
//!
//! * [`ffi`]: entry-point types and the symbol table (exact exported names).
//! * [`CudaDriver`]: the loaded library; error naming; parameter layouts
//!   (`cuFuncGetParamInfo` / `cuKernelGetParamInfo`) for the capture library.
//! * [`CudaDevice`]: [`hrr_core::device::Device`] on a device's primary context.
//! * [`kernarg`]: the `extra` parameter buffer of `cuLaunchKernel`.

pub mod device;
pub mod driver;
pub mod error;
pub mod ffi;
pub mod kernarg;

pub use device::{CudaDevice, sm_target};
pub use driver::{CudaDriver, LIBCUDA};
pub use error::CudaError;
