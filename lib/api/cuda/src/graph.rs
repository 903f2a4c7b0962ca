//! The driver's graph types that hrr reads or builds (CUDA 13.0's `cuda.h`
//! layouts on x86_64): kernel and memset node parameters, the generic
//! node parameters of `cuGraphAddNode`, edge data, node types and stream
//! capture statuses. Copy nodes take `CUDA_MEMCPY3D` (`rect`).

use core::ffi::{c_int, c_uint, c_void};

use crate::rect::CUDA_MEMCPY3D;
use crate::{CUcontext, CUdeviceptr, CUevent, CUfunction, CUkernel};

/// `CUgraph` (an opaque handle).
pub type CUgraph = *mut c_void;
/// `CUgraphNode` (an opaque handle).
pub type CUgraphNode = *mut c_void;
/// `CUgraphNodeType` (a C enum).
pub type CUgraphNodeType = core::ffi::c_int;
/// `CUstreamCaptureStatus` (a C enum).
pub type CUstreamCaptureStatus = core::ffi::c_int;

/// `CUgraphNodeType` values.
pub mod node_type {
    pub const KERNEL: i32 = 0;
    pub const MEMCPY: i32 = 1;
    pub const MEMSET: i32 = 2;
    pub const HOST: i32 = 3;
    pub const GRAPH: i32 = 4;
    pub const EMPTY: i32 = 5;
    pub const WAIT_EVENT: i32 = 6;
    pub const EVENT_RECORD: i32 = 7;
    pub const EXT_SEMAS_SIGNAL: i32 = 8;
    pub const EXT_SEMAS_WAIT: i32 = 9;
    pub const MEM_ALLOC: i32 = 10;
    pub const MEM_FREE: i32 = 11;
    pub const BATCH_MEM_OP: i32 = 12;
    pub const CONDITIONAL: i32 = 13;
}

/// `CUstreamCaptureStatus` values.
pub mod capture_status {
    pub const NONE: i32 = 0;
    pub const ACTIVE: i32 = 1;
    pub const INVALIDATED: i32 = 2;
}

/// `CUDA_KERNEL_NODE_PARAMS` (`_v2`: what `cuGraphAddKernelNode_v2`,
/// `cuGraphKernelNodeGetParams_v2` and `cuGraphExecKernelNodeSetParams_v2`
/// take). `func` names the kernel; when it is null, `kern` (a `CUkernel`)
/// does, in `ctx`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_KERNEL_NODE_PARAMS {
    pub func: CUfunction,
    pub grid_dim_x: c_uint,
    pub grid_dim_y: c_uint,
    pub grid_dim_z: c_uint,
    pub block_dim_x: c_uint,
    pub block_dim_y: c_uint,
    pub block_dim_z: c_uint,
    pub shared_mem_bytes: c_uint,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kern: CUkernel,
    pub ctx: CUcontext,
}

impl Default for CUDA_KERNEL_NODE_PARAMS {
    fn default() -> Self {
        CUDA_KERNEL_NODE_PARAMS {
            func: core::ptr::null_mut(),
            grid_dim_x: 0,
            grid_dim_y: 0,
            grid_dim_z: 0,
            block_dim_x: 0,
            block_dim_y: 0,
            block_dim_z: 0,
            shared_mem_bytes: 0,
            kernel_params: core::ptr::null_mut(),
            extra: core::ptr::null_mut(),
            kern: core::ptr::null_mut(),
            ctx: core::ptr::null_mut(),
        }
    }
}

/// `CUDA_MEMSET_NODE_PARAMS`: `height` rows of `width` elements of
/// `element_size` bytes (1, 2 or 4), rows `pitch` bytes apart.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUDA_MEMSET_NODE_PARAMS {
    pub dst: CUdeviceptr,
    pub pitch: usize,
    pub value: c_uint,
    pub element_size: c_uint,
    pub width: usize,
    pub height: usize,
}

/// `CUDA_MEMSET_NODE_PARAMS_v2` (in [`CUgraphNodeParams`]): the v1 fields
/// and the node's context.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMSET_NODE_PARAMS_v2 {
    pub params: CUDA_MEMSET_NODE_PARAMS,
    pub ctx: CUcontext,
}

/// `CUDA_HOST_NODE_PARAMS`: a host node's function and its data.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_HOST_NODE_PARAMS {
    pub fn_: crate::types::CUhostFn,
    pub user_data: *mut c_void,
}

/// `CUDA_MEMCPY_NODE_PARAMS` (in [`CUgraphNodeParams`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY_NODE_PARAMS {
    pub flags: c_int,
    pub reserved: c_int,
    pub copy_ctx: CUcontext,
    pub copy_params: CUDA_MEMCPY3D,
}

/// `CUDA_CHILD_GRAPH_NODE_PARAMS` (in [`CUgraphNodeParams`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_CHILD_GRAPH_NODE_PARAMS {
    pub graph: CUgraph,
    pub ownership: c_int,
}

/// The parameters of [`CUgraphNodeParams`], by its `type_` (`cuda.h`'s
/// anonymous union; the members hrr reads). `CUDA_KERNEL_NODE_PARAMS_v3`
/// has the `_v2` layout; an event record or wait node's parameters are its
/// event.
#[repr(C)]
#[derive(Clone, Copy)]
pub union CUgraphNodeParamsUnion {
    pub reserved1: [i64; 29],
    pub kernel: CUDA_KERNEL_NODE_PARAMS,
    pub memcpy: CUDA_MEMCPY_NODE_PARAMS,
    pub memset: CUDA_MEMSET_NODE_PARAMS_v2,
    pub graph: CUDA_CHILD_GRAPH_NODE_PARAMS,
    pub event: CUevent,
    /// `CUDA_HOST_NODE_PARAMS_v2`, whose first members (the function and
    /// its data) are these; what follows them is left as it is.
    pub host: CUDA_HOST_NODE_PARAMS,
}

/// `CUgraphNodeParams`: what `cuGraphAddNode`, `cuGraphNodeSetParams` and
/// `cuGraphExecNodeSetParams` take: a node type and its parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CUgraphNodeParams {
    pub type_: CUgraphNodeType,
    pub reserved0: [c_int; 3],
    pub params: CUgraphNodeParamsUnion,
    pub reserved2: i64,
}

/// `CUgraphEdgeData`: how a dependency is triggered (all zero: an ordinary
/// one, the upstream node complete).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUgraphEdgeData {
    pub from_port: u8,
    pub to_port: u8,
    pub type_: u8,
    pub reserved: [u8; 5],
}

/// Only passed on: `CUDA_GRAPH_INSTANTIATE_PARAMS`,
/// `CUgraphExecUpdateResultInfo`.
macro_rules! opaque {
    ($($name:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "`, only passed on.")]
        #[repr(C)]
        pub struct $name {
            _opaque: [u8; 0],
        }
    )*};
}
opaque!(CUDA_GRAPH_INSTANTIATE_PARAMS, CUgraphExecUpdateResultInfo);

// x86_64 layouts of CUDA 13.0's cuda.h.
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(offset_of!(CUDA_KERNEL_NODE_PARAMS, shared_mem_bytes) == 32);
    assert!(offset_of!(CUDA_KERNEL_NODE_PARAMS, kernel_params) == 40);
    assert!(offset_of!(CUDA_KERNEL_NODE_PARAMS, kern) == 56);
    assert!(size_of::<CUDA_KERNEL_NODE_PARAMS>() == 72);
    assert!(offset_of!(CUDA_MEMSET_NODE_PARAMS, value) == 16);
    assert!(offset_of!(CUDA_MEMSET_NODE_PARAMS, width) == 24);
    assert!(size_of::<CUDA_MEMSET_NODE_PARAMS>() == 40);
    assert!(offset_of!(CUDA_MEMSET_NODE_PARAMS_v2, ctx) == 40);
    assert!(offset_of!(CUDA_MEMCPY_NODE_PARAMS, copy_params) == 16);
    assert!(size_of::<CUDA_MEMCPY_NODE_PARAMS>() == 16 + 200);
    assert!(offset_of!(CUgraphNodeParams, params) == 16);
    assert!(offset_of!(CUgraphNodeParams, reserved2) == 248);
    assert!(size_of::<CUgraphNodeParams>() == 256);
    assert!(size_of::<CUgraphEdgeData>() == 8);
};
