//! Every C type name the signature table ([`crate::cuda_fn!`]) uses, spelled
//! as `cuda.h` spells it, so that a table line reads like the header.
//! Consumers that expand table entries glob-import this module.
//!
//! C enums are `c_int` aliases named as the header names them; opaque
//! handles `*mut c_void` aliases; structs passed by pointer that a consumer
//! reads have their real layout (asserted in the crate root), the others are
//! opaque `#[repr(C)]` structs that only travel behind a pointer. Every
//! parameter type of the table is a C type name, so the table can be
//! redeclared in C after `#include <cuda.h>` (`cuda-c-decls`).
#![allow(non_camel_case_types)]

pub use core::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};

pub use crate::array::{CUDA_ARRAY_DESCRIPTOR, CUDA_ARRAY3D_DESCRIPTOR};
pub use crate::graph::{
    CUDA_GRAPH_INSTANTIATE_PARAMS, CUDA_HOST_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS,
    CUDA_MEMSET_NODE_PARAMS, CUgraph, CUgraphEdgeData, CUgraphExecUpdateResultInfo, CUgraphNode,
    CUgraphNodeParams, CUgraphNodeType, CUstreamCaptureStatus,
};
pub use crate::{
    CUcontext, CUdevice, CUdeviceptr, CUevent, CUfunction, CUkernel, CUlaunchAttribute,
    CUlaunchConfig, CUlibrary, CUmemAccessDesc, CUmemAllocationProp, CUmemGenericAllocationHandle,
    CUmemoryPool, CUmodule, CUresult, CUstream, cuuint64_t,
};

/// `CUdriverProcAddressQueryResult` (a C enum).
pub type CUdriverProcAddressQueryResult = c_int;

/// `CUdevice_attribute` (a C enum).
pub type CUdevice_attribute = c_int;
/// `CUpointer_attribute` (a C enum).
pub type CUpointer_attribute = c_int;
/// `CUfunction_attribute` (a C enum).
pub type CUfunction_attribute = c_int;
/// `CUmemAllocationGranularity_flags` (a C enum).
pub type CUmemAllocationGranularity_flags = c_int;
/// `CUjit_option` (a C enum).
pub type CUjit_option = c_int;
/// `CUlibraryOption` (a C enum).
pub type CUlibraryOption = c_int;
/// `CUstreamCaptureMode` (a C enum).
pub type CUstreamCaptureMode = c_int;
/// `CUmemPool_attribute` (a C enum).
pub type CUmemPool_attribute = c_int;
/// `CUarray` (an opaque handle).
pub type CUarray = *mut c_void;
/// `CUmipmappedArray` (an opaque handle).
pub type CUmipmappedArray = *mut c_void;
/// `CUtexObject`: a 64-bit number.
pub type CUtexObject = c_ulonglong;
/// `CUsurfObject`: a 64-bit number.
pub type CUsurfObject = c_ulonglong;
/// `CUgraphExec` (an opaque handle).
pub type CUgraphExec = *mut c_void;
/// `CUhostFn`: `void (*)(void *userData)`, nullable.
pub type CUhostFn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;
/// `CUstreamCallback`: `void (*)(CUstream, CUresult, void *userData)`, nullable.
pub type CUstreamCallback =
    Option<unsafe extern "C" fn(stream: CUstream, status: CUresult, user_data: *mut c_void)>;
/// `CUmemAllocationHandleType` (a C enum).
pub type CUmemAllocationHandleType = c_int;

/// Declares structs the table only passes by pointer: opaque here.
macro_rules! opaque {
    ($($(#[$m:meta])* $name:ident;)*) => {$(
        $(#[$m])*
        #[repr(C)]
        pub struct $name {
            _opaque: [u8; 0],
        }
    )*};
}
opaque! {
    /// `CUDA_MEMCPY2D` (`CUDA_MEMCPY2D_v2`), only passed on.
    CUDA_MEMCPY2D;
    /// `CUDA_MEMCPY3D` (`CUDA_MEMCPY3D_v2`), only passed on.
    CUDA_MEMCPY3D;
    /// `CUmemPoolProps`, only passed on.
    CUmemPoolProps;
    /// `CUexecAffinityParam`, only passed on.
    CUexecAffinityParam;
    /// `CUctxCreateParams`, only passed on.
    CUctxCreateParams;
    /// `CUDA_RESOURCE_DESC`, only passed on (`array::RESOURCE_DESC_BYTES`).
    CUDA_RESOURCE_DESC;
    /// `CUDA_TEXTURE_DESC`, only passed on (`array::TEXTURE_DESC_BYTES`).
    CUDA_TEXTURE_DESC;
    /// `CUDA_RESOURCE_VIEW_DESC`, only passed on.
    CUDA_RESOURCE_VIEW_DESC;
    /// `CUuuid` (`struct CUuuid_st { char bytes[16]; }`), only passed on.
    CUuuid;
}
