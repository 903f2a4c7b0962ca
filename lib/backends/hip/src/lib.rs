//! hrr-backend-hip: loads a HIP runtime at run time (ROCm's `libamdhip64.so`, or hrr's
//! CPU runtime `libhrr_hip_cpu.so`) and replays archives onto it.
//!
//! Loading goes through libloading so that `hrr-play --info` and machines
//! without ROCm never need the library at link time.

mod arrays;
mod ffi;
mod graphs;
mod hip_device;
mod host_buffer;
mod launcher;
mod placement;
mod rect_pools;
mod runtime;

pub use ffi::MissingSymbol;
pub use hip_device::HipDevice;
pub use host_buffer::HipHostBuffer;
pub use runtime::{HipRuntime, RuntimeError, RuntimeLocation};
