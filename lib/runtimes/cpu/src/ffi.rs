//! C ABI types of the HIP 5.2 runtime API (`hip/hip_runtime_api.h`, declared
//! once in the `hip-api` crate and re-exported here), plus what only this
//! runtime needs: its CPU kernel ABI, the fat-binary wrapper it registers, and
//! the HSA subset (`hsa/hsa.h`, `hsa/hsa_ext_amd.h`).
//!
//! Layouts were checked against Debian's headers with a C program (sizes are
//! also asserted at compile time, here and in `hip-api`).
#![forbid(unsafe_code)]
// Each item is a C header's, under its C name, and documented there.
#![allow(missing_docs)]

use std::ffi::c_void;

pub use hip_api::*;

/// The launch descriptor passed to every CPU kernel (`hrr_cpu_launch` in
/// `tests/workloads/include/hrr_cpu_kernel.h`; its `hrr_dim3` is [`Dim3`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CpuLaunch {
    pub grid_dim: Dim3,
    pub block_dim: Dim3,
    pub block_idx: Dim3,
    pub shared: *mut c_void,
}

/// A CPU kernel entry point: `void NAME(const hrr_cpu_launch *l, const void *kernarg)`.
pub type CpuKernelFn = unsafe extern "C" fn(*const CpuLaunch, *const c_void);

const _: () = assert!(std::mem::size_of::<CpuLaunch>() == 48);

/// HIPF fat-binary wrapper handed to `__hipRegisterFatBinary`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HipFatbinWrapper {
    pub magic: u32,
    pub version: u32,
    pub binary: *const c_void,
    pub unused: *mut c_void,
}
/// "HIPF" as a little-endian u32.
pub use hrr_codeobj::hipf::MAGIC as HIPF_MAGIC;

// ---------------------------------------------------------------- HSA

/// `hsa_status_t`, and the other HSA types: hsa-sys's, the table's.
pub use hsa_sys::raw::{
    hsa_agent_t as HsaAgent, hsa_amd_memory_pool_t as HsaMemoryPool, hsa_status_t as HsaStatus,
};
pub mod hsa_status {
    use super::HsaStatus;
    pub const SUCCESS: HsaStatus = 0;
    pub const INFO_BREAK: HsaStatus = 1;
    pub const ERROR: HsaStatus = 0x1000;
    pub const ERROR_INVALID_ARGUMENT: HsaStatus = 0x1001;
    pub const ERROR_INVALID_ALLOCATION: HsaStatus = 0x1003;
    pub const ERROR_INVALID_AGENT: HsaStatus = 0x1004;
    pub const ERROR_OUT_OF_RESOURCES: HsaStatus = 0x1008;
    pub const ERROR_NOT_INITIALIZED: HsaStatus = 0x100B;
    pub const ERROR_INVALID_MEMORY_POOL: HsaStatus = 40;
}

/// `hsa_agent_info_t` values answered.
pub mod hsa_agent_info {
    pub const NAME: u32 = 0;
    pub const VENDOR_NAME: u32 = 1;
    pub const NODE: u32 = 16;
    pub const DEVICE: u32 = 17;
}
/// `hsa_device_type_t`.
pub const HSA_DEVICE_TYPE_CPU: u32 = 0;
pub const HSA_DEVICE_TYPE_GPU: u32 = 1;

/// `hsa_amd_memory_pool_info_t` values answered.
pub mod hsa_pool_info {
    pub const SEGMENT: u32 = 0;
    pub const GLOBAL_FLAGS: u32 = 1;
    pub const SIZE: u32 = 2;
    pub const RUNTIME_ALLOC_ALLOWED: u32 = 5;
    pub const RUNTIME_ALLOC_GRANULE: u32 = 6;
    pub const RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
    pub const ACCESSIBLE_BY_ALL: u32 = 15;
    pub const ALLOC_MAX_SIZE: u32 = 16;
}
/// `HSA_AMD_SEGMENT_GLOBAL`.
pub const HSA_AMD_SEGMENT_GLOBAL: u32 = 0;
/// `hsa_amd_memory_pool_global_flag_t`.
pub const HSA_POOL_FLAG_KERNARG_INIT: u32 = 1;
pub const HSA_POOL_FLAG_FINE_GRAINED: u32 = 2;
pub const HSA_POOL_FLAG_COARSE_GRAINED: u32 = 4;
