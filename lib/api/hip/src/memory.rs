//! Copies, memory kinds and pointer queries.

use core::ffi::{c_int, c_uint, c_void};

/// `hipMemcpyKind`.
pub type HipMemcpyKind = c_int;
pub const MEMCPY_HOST_TO_HOST: HipMemcpyKind = 0;
pub const MEMCPY_HOST_TO_DEVICE: HipMemcpyKind = 1;
pub const MEMCPY_DEVICE_TO_HOST: HipMemcpyKind = 2;
pub const MEMCPY_DEVICE_TO_DEVICE: HipMemcpyKind = 3;
pub const MEMCPY_DEFAULT: HipMemcpyKind = 4;

/// `hipMemoryType`.
pub type HipMemoryType = c_int;
pub const MEMORY_TYPE_HOST: HipMemoryType = 0;
pub const MEMORY_TYPE_DEVICE: HipMemoryType = 1;
/// `hipMemoryTypeArray` (arrays are not linear memory; not recorded).
pub const MEMORY_TYPE_ARRAY: HipMemoryType = 2;
/// `hipMemoryTypeUnified`.
pub const MEMORY_TYPE_UNIFIED: HipMemoryType = 3;

/// `hipHostMallocDefault`.
pub const HOST_MALLOC_DEFAULT: c_uint = 0;
/// `hipMemAttachGlobal` / `hipMemAttachHost`.
pub const MEM_ATTACH_GLOBAL: c_uint = 1;
pub const MEM_ATTACH_HOST: c_uint = 2;

/// `hipPointerAttribute_t` of HIP 5.2.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HipPointerAttribute {
    pub memory_type: HipMemoryType,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub is_managed: c_int,
    pub allocation_flags: c_uint,
}

/// What a query that fails leaves behind: unregistered host memory.
impl Default for HipPointerAttribute {
    fn default() -> Self {
        HipPointerAttribute {
            memory_type: MEMORY_TYPE_HOST,
            device: 0,
            device_pointer: core::ptr::null_mut(),
            host_pointer: core::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
        }
    }
}

// Measured with gcc on Debian's hip_runtime_api.h (x86_64).
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<HipPointerAttribute>() == 32);
    assert!(offset_of!(HipPointerAttribute, device_pointer) == 8);
    assert!(offset_of!(HipPointerAttribute, is_managed) == 24);
    assert!(offset_of!(HipPointerAttribute, allocation_flags) == 28);
};
