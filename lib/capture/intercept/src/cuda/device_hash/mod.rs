//! The device hash: a large D2H copy's source hashed by a BLAKE3 kernel on
//! the device, on the copy's stream just before the copy, so that the host
//! learns the blob's name without reading its bytes (docs/DESIGN.md §7,
//! *A D2H result hashed on the device*).
//!
//! Per context, on its first D2H of [`plan::FROM`] bytes or more:
//! `device_hash.cu` compiled by NVRTC for the device's compute capability
//! (once per capability in the process, [`nvrtc`]), loaded with
//! `cuModuleLoadData`, plus a scratch allocation ([`plan::SCRATCH_BYTES`])
//! and a pinned, device-mapped page for the result. Every driver call here
//! is the real driver's (`libcuda::HashCalls`), never this library's
//! wrappers, so none is recorded. Any failure — no NVRTC, a compile,
//! load, allocation or launch error — leaves the context on the host hash
//! for good, with one `HRR_LOG` line saying why.
//!
//! Taken only when the source is plain device memory of the current
//! context (not managed, the whole range inside one allocation: the kernel
//! reads exactly what the copy reads and cannot fault), no stream of the
//! process is capturing a graph, and no other thread's device hash is in
//! flight in that context (one scratch per context). The first device hash
//! of each context is checked against the host's hash of the bytes that
//! landed; a disagreement turns the device hash off for the process.

pub mod plan;

#[cfg(not(test))]
#[allow(unsafe_code)]
mod nvrtc;

#[cfg(not(test))]
#[allow(unsafe_code)]
mod device;

#[cfg(not(test))]
pub use device::{Pending, before_copy, forget_device};
