//! One declaration of HIP's C ABI types and constants, as ROCm 5.2's
//! `hip/hip_runtime_api.h` (Debian's) lays them out.
//!
//! Three crates speak that ABI: the HIP replay backend (`hrr-backend-hip`, calling a
//! loaded runtime), the CPU runtime (`hrr-runtime-cpu`, exporting it) and the
//! interposer (`hrr-capture`, exporting and forwarding it). Declaring the
//! types here once keeps them from drifting apart; `abi/` proves them against
//! bindgen of the real headers. Only what one of them uses is declared.
//!
//! `no_std` and dependency-free: plain data, nothing to link.
#![no_std]
#![forbid(unsafe_code)]
// A transcription of the C header: each item is the header's, under its C
// name, and documented there.
#![allow(missing_docs)]

pub mod attr;
mod device_prop;
pub mod err;
mod handles;
mod launch;
mod memory;

pub use device_prop::HipDeviceProp;
pub use err::HipError;
pub use handles::*;
pub use launch::*;
pub use memory::*;

/// `HIP_VERSION` of Debian's 5.2 headers (5.2.21153).
pub const HIP_VERSION: core::ffi::c_int = 50_221_153;
