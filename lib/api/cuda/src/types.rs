//! Every C type name the signature table ([`crate::cuda_fn!`]) uses, spelled
//! as `cuda.h` spells it, so that a table line reads like the header.
//! Consumers that expand table entries glob-import this module.
//!
//! C enums are `c_int`; opaque handles `*mut c_void`; structs passed by
//! pointer that a consumer reads have their real layout (asserted in the
//! crate root), the others are passed as `*mut c_void` / `*const c_void` in
//! the table.
#![allow(non_camel_case_types)]

pub use core::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};

pub use crate::{
    CUcontext, CUdevice, CUdeviceptr, CUevent, CUfunction, CUkernel, CUlaunchAttribute,
    CUlaunchConfig, CUlibrary, CUmemAccessDesc, CUmemAllocationProp, CUmemGenericAllocationHandle,
    CUmemoryPool, CUmodule, CUresult, CUstream, cuuint64_t,
};

/// `CUdriverProcAddressQueryResult` (a C enum).
pub type CUdriverProcAddressQueryResult = c_int;
