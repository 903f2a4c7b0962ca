//! C types and constants of the HIP 5.2 runtime API
//! (`hip/hip_runtime_api.h` as Debian ships it) that the exported wrappers
//! take and pass on. Layouts are asserted at compile time.

use std::ffi::{c_int, c_uint, c_void};

/// `hipError_t`.
pub type HipError = c_int;
pub const SUCCESS: HipError = 0;
pub const ERROR_NOT_FOUND: HipError = 500;
pub const ERROR_NOT_SUPPORTED: HipError = 801;

/// `hipStream_t`, `hipEvent_t`, `hipModule_t`, `hipFunction_t`,
/// `hipDeviceptr_t`: opaque pointers.
pub type HipStream = *mut c_void;
pub type HipEvent = *mut c_void;
pub type HipModule = *mut c_void;
pub type HipFunction = *mut c_void;
pub type HipDevicePtr = *mut c_void;

/// `hipMemcpyKind`.
pub type MemcpyKind = c_int;
pub const MEMCPY_HOST_TO_HOST: MemcpyKind = 0;
pub const MEMCPY_HOST_TO_DEVICE: MemcpyKind = 1;
pub const MEMCPY_DEVICE_TO_HOST: MemcpyKind = 2;
pub const MEMCPY_DEVICE_TO_DEVICE: MemcpyKind = 3;

/// `hipMemoryType`: `hipMemoryTypeHost`.
pub const MEMORY_TYPE_HOST: c_int = 0;

/// `HIP_LAUNCH_PARAM_*` markers of the `extra` array.
pub const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
pub const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
pub const LAUNCH_PARAM_END: usize = 3;

/// `hipJitOption` (a C enum).
pub type JitOption = c_int;

/// ROCm 6's `hipDriverProcAddressQueryResult` (a C enum).
pub type ProcAddressQueryResult = c_int;
pub const PROC_ADDRESS_SUCCESS: ProcAddressQueryResult = 0;
pub const PROC_ADDRESS_SYMBOL_NOT_FOUND: ProcAddressQueryResult = 1;

/// `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub fn to_array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

/// `hipPointerAttribute_t` (HIP 5.2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PointerAttribute {
    pub memory_type: c_int,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub is_managed: c_int,
    pub allocation_flags: c_uint,
}

impl Default for PointerAttribute {
    fn default() -> Self {
        PointerAttribute {
            memory_type: MEMORY_TYPE_HOST,
            device: 0,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
        }
    }
}

// Measured with gcc on Debian's hip_runtime_api.h (x86_64).
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<Dim3>() == 12);
    assert!(size_of::<PointerAttribute>() == 32);
    assert!(offset_of!(PointerAttribute, device_pointer) == 8);
    assert!(offset_of!(PointerAttribute, is_managed) == 24);
};
