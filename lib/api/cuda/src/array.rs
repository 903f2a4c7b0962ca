//! The driver's arrays and texture and surface objects: the array
//! descriptors `cuArrayCreate_v2` and `cuArray3DCreate_v2` read, and the
//! sizes of the descriptions `cuTexObjectCreate` and `cuSurfObjectCreate`
//! read (recorded and replayed as bytes: only the resource's type and the
//! array or pointer it names are looked at, by the replay engine).

use core::ffi::{c_int, c_uint};

/// `CUDA_ARRAY_DESCRIPTOR` (`_v2`: `cuArrayCreate_v2`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUDA_ARRAY_DESCRIPTOR {
    pub width: usize,
    pub height: usize,
    /// `CUarray_format`.
    pub format: c_int,
    pub num_channels: c_uint,
}

/// `CUDA_ARRAY3D_DESCRIPTOR` (`_v2`: `cuArray3DCreate_v2`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUDA_ARRAY3D_DESCRIPTOR {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    /// `CUarray_format`.
    pub format: c_int,
    pub num_channels: c_uint,
    pub flags: c_uint,
}

/// `sizeof(CUDA_RESOURCE_DESC)`: the type (4 bytes, padded to 8), a
/// 128-byte union whose first 8 bytes are the array or device pointer, the
/// flags (padded).
pub const RESOURCE_DESC_BYTES: usize = 144;
/// `sizeof(CUDA_TEXTURE_DESC)`.
pub const TEXTURE_DESC_BYTES: usize = 104;
/// `sizeof(CUDA_RESOURCE_VIEW_DESC)`.
pub const RESOURCE_VIEW_DESC_BYTES: usize = 112;

// x86_64 layouts of CUDA 13.0's cuda.h.
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<CUDA_ARRAY_DESCRIPTOR>() == 24);
    assert!(offset_of!(CUDA_ARRAY_DESCRIPTOR, format) == 16);
    assert!(size_of::<CUDA_ARRAY3D_DESCRIPTOR>() == 40);
    assert!(offset_of!(CUDA_ARRAY3D_DESCRIPTOR, format) == 24);
    assert!(offset_of!(CUDA_ARRAY3D_DESCRIPTOR, flags) == 32);
};
