//! Every C type name the runtime table ([`crate::cudart_fn!`]) uses, spelled
//! as CUDA 13.0's `driver_types.h` / `vector_types.h` spell them, so that a
//! table line reads like the header. Consumers that expand table entries
//! glob-import this module.
//!
//! C enums are `c_int` aliases named by their tag (`enum cudaMemcpyKind`
//! is `cudaMemcpyKind`; `cuda-c-decls` writes the `enum` back); handles are
//! `*mut c_void` aliases; structs have their x86_64 layout, asserted below.
#![allow(non_camel_case_types)]

pub use core::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};

/// `cudaError_t` (`enum cudaError`).
pub type cudaError_t = c_int;
/// `cudaStream_t` (`struct CUstream_st *`).
pub type cudaStream_t = *mut c_void;
/// `cudaEvent_t` (`struct CUevent_st *`).
pub type cudaEvent_t = *mut c_void;
/// `cudaKernel_t` (`struct CUkern_st *`, the driver's `CUkernel`).
pub type cudaKernel_t = *mut c_void;
/// `enum cudaMemcpyKind`.
pub type cudaMemcpyKind = c_int;
/// `enum cudaDriverEntryPointQueryResult`.
pub type cudaDriverEntryPointQueryResult = c_int;

/// `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

impl dim3 {
    /// `[x, y, z]`.
    pub fn to_array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

/// `uint3` (`__cudaRegisterFunction`'s thread and block index slots).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct uint3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

/// `cudaLaunchConfig_t` (`struct cudaLaunchConfig_st`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaLaunchConfig_t {
    pub grid_dim: dim3,
    pub block_dim: dim3,
    pub dynamic_smem_bytes: usize,
    pub stream: cudaStream_t,
    /// `cudaLaunchAttribute *` (laid out as the driver's `CUlaunchAttribute`).
    pub attrs: *mut c_void,
    pub num_attrs: c_uint,
}

/// `struct cudaPointerAttributes` as CUDA 11–13 lay it out:
/// `{ enum cudaMemoryType type; int device; void *devicePointer; void *hostPointer; }`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cudaPointerAttributes {
    pub memory_type: c_int,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
}

// x86_64 System V layouts of CUDA 13.0's headers.
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    assert!(size_of::<dim3>() == 12 && align_of::<dim3>() == 4);
    assert!(size_of::<uint3>() == 12 && align_of::<uint3>() == 4);
    assert!(size_of::<cudaPointerAttributes>() == 24);
    assert!(offset_of!(cudaPointerAttributes, device_pointer) == 8);
    assert!(offset_of!(cudaLaunchConfig_t, grid_dim) == 0);
    assert!(offset_of!(cudaLaunchConfig_t, block_dim) == 12);
    assert!(offset_of!(cudaLaunchConfig_t, dynamic_smem_bytes) == 24);
    assert!(offset_of!(cudaLaunchConfig_t, stream) == 32);
    assert!(offset_of!(cudaLaunchConfig_t, attrs) == 40);
    assert!(offset_of!(cudaLaunchConfig_t, num_attrs) == 48);
    assert!(size_of::<cudaLaunchConfig_t>() == 56);
};
