//! Arrays, textures and surfaces: the descriptors HIP's array calls take
//! (their layouts as Debian's ROCm 5.2 `driver_types.h` declares them),
//! the channel-format conversions, the sizes of the texture calls' structs
//! (recorded as bytes), and the geometry of copies that name an array,
//! decoded once for the CPU runtime and the capture library.

use core::ffi::{c_int, c_uint};

use crate::HipMemcpyKind;
use crate::memory::{
    MEMCPY_DEFAULT, MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE,
    MEMCPY_HOST_TO_HOST, MEMORY_TYPE_ARRAY, MEMORY_TYPE_DEVICE, MEMORY_TYPE_HOST,
    MEMORY_TYPE_UNIFIED,
};
use crate::rect::RectError;
use crate::types::{hip_Memcpy2D, hipArray, hipChannelFormatDesc, hipMemcpy3DParms};

/// `HIP_ARRAY_DESCRIPTOR` (`hipArrayCreate`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArrayDescriptor {
    pub width: usize,
    pub height: usize,
    pub format: c_int,
    pub channels: c_uint,
}

/// `HIP_ARRAY3D_DESCRIPTOR` (`hipArray3DCreate`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Array3DDescriptor {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub format: c_int,
    pub channels: c_uint,
    pub flags: c_uint,
}

/// ROCm 5.2's `struct hipArray`, which its headers make public (a program
/// may read `data` or the extent): the CPU runtime's arrays have this
/// layout.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ArrayHeader {
    pub data: *mut core::ffi::c_void,
    pub desc: hipChannelFormatDesc,
    pub type_: c_uint,
    pub width: c_uint,
    pub height: c_uint,
    pub depth: c_uint,
    pub format: c_int,
    pub channels: c_uint,
    pub is_drv: bool,
    pub texture_type: c_uint,
}

/// `sizeof(hipResourceDesc)`: a resource type (4 bytes, padded to 8), then
/// the union whose first word is the array or device pointer viewed.
pub const RESOURCE_DESC_BYTES: usize = 64;
/// `sizeof(hipTextureDesc)`.
pub const TEXTURE_DESC_BYTES: usize = 64;
/// `sizeof(struct hipResourceViewDesc)`.
pub const RESOURCE_VIEW_DESC_BYTES: usize = 48;

/// `hipResourceType`.
pub const RESOURCE_TYPE_ARRAY: c_int = 0;
pub const RESOURCE_TYPE_MIPMAPPED_ARRAY: c_int = 1;
pub const RESOURCE_TYPE_LINEAR: c_int = 2;
pub const RESOURCE_TYPE_PITCH2D: c_int = 3;

/// `hipArray_Format` values.
pub const FORMAT_UNSIGNED_INT8: c_int = 0x01;
pub const FORMAT_UNSIGNED_INT16: c_int = 0x02;
pub const FORMAT_UNSIGNED_INT32: c_int = 0x03;
pub const FORMAT_SIGNED_INT8: c_int = 0x08;
pub const FORMAT_SIGNED_INT16: c_int = 0x09;
pub const FORMAT_SIGNED_INT32: c_int = 0x0a;
pub const FORMAT_HALF: c_int = 0x10;
pub const FORMAT_FLOAT: c_int = 0x20;

/// `hipChannelFormatKind` values.
const KIND_SIGNED: c_int = 0;
const KIND_UNSIGNED: c_int = 1;
const KIND_FLOAT: c_int = 2;

/// Bytes per element of `channels` channels of `format`; `None` for what
/// HIP does not define.
pub fn element_bytes(format: c_int, channels: c_uint) -> Option<usize> {
    let channel = match format {
        FORMAT_UNSIGNED_INT8 | FORMAT_SIGNED_INT8 => 1,
        FORMAT_UNSIGNED_INT16 | FORMAT_SIGNED_INT16 | FORMAT_HALF => 2,
        FORMAT_UNSIGNED_INT32 | FORMAT_SIGNED_INT32 | FORMAT_FLOAT => 4,
        _ => return None,
    };
    matches!(channels, 1 | 2 | 4).then(|| channel * channels as usize)
}

impl hipChannelFormatDesc {
    /// The driver-style format and channel count of a runtime channel
    /// description (`hipMallocArray`): every channel as wide as `x`.
    pub fn format(&self) -> Option<(c_int, c_uint)> {
        let bits = [self.x, self.y, self.z, self.w];
        let channels = bits.iter().take_while(|&&b| b != 0).count() as c_uint;
        if channels == 0 || bits[..channels as usize].iter().any(|&b| b != self.x) {
            return None;
        }
        let format = match (self.f, self.x) {
            (KIND_UNSIGNED, 8) => FORMAT_UNSIGNED_INT8,
            (KIND_UNSIGNED, 16) => FORMAT_UNSIGNED_INT16,
            (KIND_UNSIGNED, 32) => FORMAT_UNSIGNED_INT32,
            (KIND_SIGNED, 8) => FORMAT_SIGNED_INT8,
            (KIND_SIGNED, 16) => FORMAT_SIGNED_INT16,
            (KIND_SIGNED, 32) => FORMAT_SIGNED_INT32,
            (KIND_FLOAT, 16) => FORMAT_HALF,
            (KIND_FLOAT, 32) => FORMAT_FLOAT,
            _ => return None,
        };
        element_bytes(format, channels).map(|_| (format, channels))
    }

    /// The runtime channel description of a driver-style format.
    pub fn of_format(format: c_int, channels: c_uint) -> hipChannelFormatDesc {
        let (kind, bits) = match format {
            FORMAT_UNSIGNED_INT8 => (KIND_UNSIGNED, 8),
            FORMAT_UNSIGNED_INT16 => (KIND_UNSIGNED, 16),
            FORMAT_UNSIGNED_INT32 => (KIND_UNSIGNED, 32),
            FORMAT_SIGNED_INT8 => (KIND_SIGNED, 8),
            FORMAT_SIGNED_INT16 => (KIND_SIGNED, 16),
            FORMAT_SIGNED_INT32 => (KIND_SIGNED, 32),
            FORMAT_HALF => (KIND_FLOAT, 16),
            _ => (KIND_FLOAT, 32),
        };
        let c = |i: c_uint| if i < channels { bits } else { 0 };
        hipChannelFormatDesc {
            x: c(0),
            y: c(1),
            z: c(2),
            w: c(3),
            f: kind,
        }
    }
}

/// One side of a copy that names an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// An array, the copy starting at `pos` (x in bytes, row, slice).
    Array {
        /// The `hipArray_t`.
        array: usize,
        /// Where the copy starts.
        pos: [usize; 3],
    },
    /// Linear memory: the first byte (offsets added), row and slice pitch.
    Linear {
        /// The first byte.
        ptr: usize,
        /// Row and slice pitch.
        pitch: [usize; 2],
    },
}

impl Side {
    /// Whether it is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Side::Array { .. })
    }
}

/// A 2D or 3D copy with an array on at least one side; `extent` is width
/// in bytes, rows, slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayCopy {
    pub dst: Side,
    pub src: Side,
    pub extent: [usize; 3],
    /// The direction, an array counting as device memory.
    pub kind: HipMemcpyKind,
}

/// `base + z·slice + y·pitch + x`, checked.
fn at(base: usize, pitch: [usize; 2], [x, y, z]: [usize; 3]) -> Result<usize, RectError> {
    z.checked_mul(pitch[1])
        .and_then(|a| y.checked_mul(pitch[0]).and_then(|b| a.checked_add(b)))
        .and_then(|o| o.checked_add(x))
        .and_then(|o| base.checked_add(o))
        .ok_or(RectError::Invalid)
}

impl hipMemcpy3DParms {
    /// The copy `hipMemcpy3D` makes when an array takes part (`Err(Array)`
    /// never; `Err(Invalid)` for no array or a bad description). As in
    /// CUDA's runtime, the extent and an array's position count elements
    /// of the array (`element` gives its bytes), a pitched pointer's `x`
    /// bytes.
    pub fn array_copy(
        &self,
        element: impl Fn(*mut hipArray) -> Option<usize>,
    ) -> Result<ArrayCopy, RectError> {
        let arrays = [self.dstArray, self.srcArray];
        let first = arrays
            .into_iter()
            .find(|a| !a.is_null())
            .ok_or(RectError::Invalid)?;
        let e = element(first).ok_or(RectError::Invalid)?;
        let bytes = |n: usize| n.checked_mul(e).ok_or(RectError::Invalid);
        let side =
            |array: *mut hipArray, pos: &crate::types::hipPos, p: &crate::types::hipPitchedPtr| {
                if array.is_null() {
                    let slice = p.pitch.checked_mul(p.ysize).ok_or(RectError::Invalid)?;
                    let ptr = at(p.ptr as usize, [p.pitch, slice], [pos.x, pos.y, pos.z])?;
                    Ok(Side::Linear {
                        ptr,
                        pitch: [p.pitch, slice],
                    })
                } else {
                    Ok(Side::Array {
                        array: array as usize,
                        pos: [bytes(pos.x)?, pos.y, pos.z],
                    })
                }
            };
        Ok(ArrayCopy {
            dst: side(self.dstArray, &self.dstPos, &self.dstPtr)?,
            src: side(self.srcArray, &self.srcPos, &self.srcPtr)?,
            extent: [
                bytes(self.extent.width)?,
                self.extent.height,
                self.extent.depth,
            ],
            kind: self.kind,
        })
    }
}

impl hip_Memcpy2D {
    /// The copy `hipMemcpyParam2D` makes when a side is an array
    /// (`hipMemoryTypeArray`; offsets and width in bytes).
    pub fn array_copy(&self) -> Result<ArrayCopy, RectError> {
        let side = |ty, host: usize, dev: usize, array: *mut hipArray, x, y, pitch: usize| {
            let h = self.Height;
            match ty {
                MEMORY_TYPE_ARRAY if !array.is_null() => Ok(Side::Array {
                    array: array as usize,
                    pos: [x, y, 0],
                }),
                MEMORY_TYPE_HOST | MEMORY_TYPE_DEVICE | MEMORY_TYPE_UNIFIED => {
                    let base = if ty == MEMORY_TYPE_HOST { host } else { dev };
                    let slice = pitch.saturating_mul(h);
                    Ok(Side::Linear {
                        ptr: at(base, [pitch, slice], [x, y, 0])?,
                        pitch: [pitch, slice],
                    })
                }
                _ => Err(RectError::Invalid),
            }
        };
        let src = side(
            self.srcMemoryType,
            self.srcHost as usize,
            self.srcDevice as usize,
            self.srcArray,
            self.srcXInBytes,
            self.srcY,
            self.srcPitch,
        )?;
        let dst = side(
            self.dstMemoryType,
            self.dstHost as usize,
            self.dstDevice as usize,
            self.dstArray,
            self.dstXInBytes,
            self.dstY,
            self.dstPitch,
        )?;
        if !src.is_array() && !dst.is_array() {
            return Err(RectError::Invalid);
        }
        let device = |t| t != MEMORY_TYPE_HOST;
        let kind = if self.srcMemoryType == MEMORY_TYPE_UNIFIED
            || self.dstMemoryType == MEMORY_TYPE_UNIFIED
        {
            MEMCPY_DEFAULT
        } else {
            match (device(self.srcMemoryType), device(self.dstMemoryType)) {
                (false, false) => MEMCPY_HOST_TO_HOST,
                (false, true) => MEMCPY_HOST_TO_DEVICE,
                (true, false) => MEMCPY_DEVICE_TO_HOST,
                (true, true) => MEMCPY_DEVICE_TO_DEVICE,
            }
        };
        Ok(ArrayCopy {
            dst,
            src,
            extent: [self.WidthInBytes, self.Height, 1],
            kind,
        })
    }
}

// Layouts as gcc lays out Debian's ROCm 5.2 headers on x86_64.
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<ArrayDescriptor>() == 24);
    assert!(size_of::<Array3DDescriptor>() == 40);
    assert!(size_of::<ArrayHeader>() == 64);
    assert!(offset_of!(ArrayHeader, width) == 32);
    assert!(offset_of!(ArrayHeader, is_drv) == 52);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_descriptions_and_formats_agree() {
        for (f, c) in [
            (FORMAT_FLOAT, 1),
            (FORMAT_UNSIGNED_INT8, 4),
            (FORMAT_HALF, 2),
        ] {
            let d = hipChannelFormatDesc::of_format(f, c);
            assert_eq!(d.format(), Some((f, c)));
        }
        let mixed = hipChannelFormatDesc {
            x: 8,
            y: 16,
            z: 0,
            w: 0,
            f: KIND_UNSIGNED,
        };
        assert_eq!(mixed.format(), None);
        assert_eq!(element_bytes(FORMAT_FLOAT, 4), Some(16));
        assert_eq!(element_bytes(FORMAT_FLOAT, 3), None);
    }
}
