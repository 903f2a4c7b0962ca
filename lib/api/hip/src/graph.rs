#![allow(non_camel_case_types, non_snake_case)]
//! The layouts of the structs HIP's graph API passes by pointer
//! (`hipKernelNodeParams`, `hipMemcpy3DParms`, `hipMemsetParams`,
//! `hipHostNodeParams`), as Debian's ROCm 5.2 `hip_runtime_api.h` and
//! `driver_types.h` declare them, and the graph enums' values.

use core::ffi::{c_uint, c_void};

use crate::Dim3;
use crate::types::{hipArray_t, hipExtent, hipMemcpyKind, hipPitchedPtr};

/// `hipPos`: a 3D position (x in bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipPos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// `hipMemcpy3DParms`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemcpy3DParms {
    pub srcArray: hipArray_t,
    pub srcPos: hipPos,
    pub srcPtr: hipPitchedPtr,
    pub dstArray: hipArray_t,
    pub dstPos: hipPos,
    pub dstPtr: hipPitchedPtr,
    pub extent: hipExtent,
    pub kind: hipMemcpyKind,
}

/// `hipKernelNodeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipKernelNodeParams {
    pub blockDim: Dim3,
    pub extra: *mut *mut c_void,
    pub func: *mut c_void,
    pub gridDim: Dim3,
    pub kernelParams: *mut *mut c_void,
    pub sharedMemBytes: c_uint,
}

/// `hipMemsetParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipMemsetParams {
    pub dst: *mut c_void,
    pub elementSize: c_uint,
    pub height: usize,
    pub pitch: usize,
    pub value: c_uint,
    pub width: usize,
}

/// A host function's type, `void (*)(void* userData)` (never null).
pub type HostFn = unsafe extern "C" fn(*mut c_void);

/// `hipHostFn_t`: a nullable [`HostFn`].
pub type hipHostFn_t = Option<HostFn>;

/// `hipHostNodeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipHostNodeParams {
    pub fn_: hipHostFn_t,
    pub userData: *mut c_void,
}

/// `hipGraphNodeType` values (ROCm 5.2 numbers them from 1).
pub mod node_type {
    use core::ffi::c_int;
    pub const KERNEL: c_int = 1;
    pub const MEMCPY: c_int = 2;
    pub const MEMSET: c_int = 3;
    pub const HOST: c_int = 4;
    pub const GRAPH: c_int = 5;
    pub const EMPTY: c_int = 6;
    pub const WAIT_EVENT: c_int = 7;
    pub const EVENT_RECORD: c_int = 8;
    pub const MEMCPY_1D: c_int = 9;
    pub const MEMCPY_FROM_SYMBOL: c_int = 10;
    pub const MEMCPY_TO_SYMBOL: c_int = 11;
}

/// `hipStreamCaptureStatus` values.
pub mod capture_status {
    use core::ffi::c_int;
    pub const NONE: c_int = 0;
    pub const ACTIVE: c_int = 1;
    pub const INVALIDATED: c_int = 2;
}

/// `hipGraphExecUpdateResult` values hrr uses.
pub mod update_result {
    use core::ffi::c_int;
    pub const SUCCESS: c_int = 0;
    pub const ERROR: c_int = 1;
    pub const TOPOLOGY_CHANGED: c_int = 2;
    pub const NODE_TYPE_CHANGED: c_int = 3;
}

// Sizes as gcc lays out the C types on x86_64.
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    assert!(size_of::<hipPos>() == 24);
    assert!(size_of::<hipMemcpy3DParms>() == 160 && align_of::<hipMemcpy3DParms>() == 8);
    assert!(offset_of!(hipMemcpy3DParms, dstArray) == 64);
    assert!(offset_of!(hipMemcpy3DParms, kind) == 152);
    assert!(size_of::<hipKernelNodeParams>() == 64);
    assert!(offset_of!(hipKernelNodeParams, extra) == 16);
    assert!(offset_of!(hipKernelNodeParams, gridDim) == 32);
    assert!(offset_of!(hipKernelNodeParams, kernelParams) == 48);
    assert!(size_of::<hipMemsetParams>() == 48);
    assert!(offset_of!(hipMemsetParams, value) == 32);
    assert!(size_of::<hipHostNodeParams>() == 16);
};
