//! C types and constants of the HIP runtime API that the exported wrappers
//! take and pass on: HIP 5.2's from the shared `hip-api` crate, plus the one
//! ROCm 6 type the interposer answers for (`hipGetProcAddress`).

use std::ffi::c_int;

pub use ::hip_api::*;

/// ROCm 6's `hipDriverProcAddressQueryResult` (a C enum).
pub type ProcAddressQueryResult = c_int;
/// `HIP_GET_PROC_ADDRESS_SUCCESS`: the symbol was found.
pub const PROC_ADDRESS_SUCCESS: ProcAddressQueryResult = 0;
/// `HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND`.
pub const PROC_ADDRESS_SYMBOL_NOT_FOUND: ProcAddressQueryResult = 1;
