//! C types and constants of the CUDA runtime API (CUDA 13.0,
//! `cuda_runtime_api.h` / `driver_types.h` / `vector_types.h`) and the few
//! driver API ones (`cuda.h`) that the CUDA wrappers take, pass on or query.
//! Enums are C `int`s; handles are opaque pointers. The types of the
//! runtime's signatures are `cuda-api`'s (`cuda_api::runtime::types`), named
//! here as the wrappers have always named them. Layouts are asserted at
//! compile time.

#![deny(unsafe_code)]

use std::ffi::c_int;

/// `cudaError_t`.
pub type CudaError = cuda_api::runtime::types::cudaError_t;
/// `cudaSuccess`.
pub const SUCCESS: CudaError = 0;
/// `cudaErrorInvalidValue`.
pub const ERROR_INVALID_VALUE: CudaError = 1;
/// `cudaErrorNotSupported`: what a wrapper answers when no later library
/// defines the entry point.
pub const ERROR_NOT_SUPPORTED: CudaError = 801;

/// `cudaStream_t`.
pub type CudaStream = cuda_api::runtime::types::cudaStream_t;
/// `cudaEvent_t`.
pub type CudaEvent = cuda_api::runtime::types::cudaEvent_t;
/// `cudaKernel_t` (= the driver's `CUkernel`).
pub type CudaKernel = cuda_api::runtime::types::cudaKernel_t;

/// `cudaStreamLegacy`: a special handle that names the legacy default
/// stream.
pub const STREAM_LEGACY: u64 = 0x1;
/// `cudaStreamPerThread`: a special handle that names the calling thread's
/// default stream.
pub const STREAM_PER_THREAD: u64 = 0x2;

/// A stream handle as the archive records it: every default stream (null,
/// `cudaStreamLegacy`, `cudaStreamPerThread`) is `0x0` (DESIGN.md §4: "0x0 for
/// the default stream"); replay has one thread and one default stream.
pub fn stream_id(s: u64) -> u64 {
    if s == STREAM_LEGACY || s == STREAM_PER_THREAD {
        0
    } else {
        s
    }
}

/// `cudaMemcpyKind`.
pub type MemcpyKind = cuda_api::runtime::types::cudaMemcpyKind;
/// `cudaMemcpyHostToHost`.
pub const MEMCPY_HOST_TO_HOST: MemcpyKind = 0;
/// `cudaMemcpyHostToDevice`.
pub const MEMCPY_HOST_TO_DEVICE: MemcpyKind = 1;
/// `cudaMemcpyDeviceToHost`.
pub const MEMCPY_DEVICE_TO_HOST: MemcpyKind = 2;
/// `cudaMemcpyDeviceToDevice`.
pub const MEMCPY_DEVICE_TO_DEVICE: MemcpyKind = 3;
/// `cudaMemcpyDefault`: the runtime infers the direction from the pointers.
pub const MEMCPY_DEFAULT: MemcpyKind = 4;

/// `cudaMemoryTypeUnregistered` (the `type` field of
/// `cudaPointerAttributes`, CUDA ≥ 11): pageable host memory.
pub const MEMORY_TYPE_UNREGISTERED: c_int = 0;
/// `cudaMemoryTypeHost`: pinned or registered host memory.
pub const MEMORY_TYPE_HOST: c_int = 1;
/// `cudaMemoryTypeDevice`.
pub const MEMORY_TYPE_DEVICE: c_int = 2;
/// `cudaMemoryTypeManaged`.
pub const MEMORY_TYPE_MANAGED: c_int = 3;

/// Whether memory of this `cudaMemoryType` is device-side for a copy's
/// direction: device and managed memory are, registered/pinned host memory
/// and unregistered (pageable) memory are not. `None`: a value this code
/// does not know.
pub fn memory_type_is_device(t: c_int) -> Option<bool> {
    match t {
        MEMORY_TYPE_UNREGISTERED | MEMORY_TYPE_HOST => Some(false),
        MEMORY_TYPE_DEVICE | MEMORY_TYPE_MANAGED => Some(true),
        _ => None,
    }
}

/// `cudaPointerAttributes` (`cuda-api`'s runtime types). The runtime is
/// handed a larger zeroed buffer ([`PointerAttributesBuf`]) so that fields
/// a later version appends cannot overrun it.
pub type PointerAttributes = cuda_api::runtime::types::cudaPointerAttributes;

/// Zeroed, 8-aligned storage for a `cudaPointerAttributes` (256 bytes, room
/// for any reserved tail).
#[repr(C, align(8))]
pub struct PointerAttributesBuf(pub [u8; 256]);

impl Default for PointerAttributesBuf {
    fn default() -> Self {
        PointerAttributesBuf([0; 256])
    }
}

impl PointerAttributesBuf {
    /// The `type` field (offset 0).
    pub fn memory_type(&self) -> c_int {
        c_int::from_le_bytes(self.0[..4].try_into().expect("4 bytes"))
    }
}

/// `dim3`, as the runtime table declares it.
pub type Dim3 = cuda_api::runtime::types::dim3;
/// `cudaLaunchConfig_t`, as the runtime table declares it.
pub type LaunchConfig = cuda_api::runtime::types::cudaLaunchConfig_t;

/// `CUresult` (driver API).
pub type CuResult = c_int;
/// `CUDA_SUCCESS`.
pub const CUDA_SUCCESS: CuResult = 0;
/// `CUDA_ERROR_INVALID_VALUE`: what `cuKernelGetParamInfo` answers past the
/// last parameter.
pub const CUDA_ERROR_INVALID_VALUE: CuResult = 1;

// x86_64 System V layouts of the CUDA 13 headers.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<Dim3>() == 12 && align_of::<Dim3>() == 4);
    assert!(size_of::<PointerAttributes>() == 24);
    assert!(offset_of!(PointerAttributes, device_pointer) == 8);
    assert!(size_of::<PointerAttributesBuf>() >= size_of::<PointerAttributes>());
    assert!(offset_of!(LaunchConfig, grid_dim) == 0);
    assert!(offset_of!(LaunchConfig, block_dim) == 12);
    assert!(offset_of!(LaunchConfig, dynamic_smem_bytes) == 24);
    assert!(offset_of!(LaunchConfig, stream) == 32);
    assert!(offset_of!(LaunchConfig, attrs) == 40);
    assert!(offset_of!(LaunchConfig, num_attrs) == 48);
    assert!(size_of::<LaunchConfig>() == 56);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_streams_record_as_null() {
        assert_eq!(stream_id(0), 0);
        assert_eq!(stream_id(STREAM_LEGACY), 0);
        assert_eq!(stream_id(STREAM_PER_THREAD), 0);
        assert_eq!(stream_id(0x5555_0000_1230), 0x5555_0000_1230);
    }

    #[test]
    fn memory_types() {
        assert_eq!(memory_type_is_device(MEMORY_TYPE_UNREGISTERED), Some(false));
        assert_eq!(memory_type_is_device(MEMORY_TYPE_HOST), Some(false));
        assert_eq!(memory_type_is_device(MEMORY_TYPE_DEVICE), Some(true));
        assert_eq!(memory_type_is_device(MEMORY_TYPE_MANAGED), Some(true));
        assert_eq!(memory_type_is_device(7), None);
        let mut b = PointerAttributesBuf::default();
        b.0[0] = 2;
        assert_eq!(b.memory_type(), MEMORY_TYPE_DEVICE);
    }
}
