//! The driver's 2D and 3D copy descriptions (`CUDA_MEMCPY2D`,
//! `CUDA_MEMCPY3D`, as `cuMemcpy2D_v2` and `cuMemcpy3D_v2` take them) and
//! their geometry: between linear memory ([`Rect`]: the first byte of each
//! side, offsets added, row and slice pitches, the extent and where each side
//! is), or with a `CUarray` on a side ([`ArrayCopy`]: the array and the
//! position in it instead).

use core::ffi::{c_uint, c_void};

use crate::{
    CU_MEMORYTYPE_ARRAY, CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_UNIFIED,
    CUdeviceptr,
};

/// `CUDA_MEMCPY2D` (`cuMemcpy2D_v2`, `cuMemcpy2DAsync_v2`,
/// `cuMemcpy2DUnaligned_v2`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY2D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: c_uint,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub src_pitch: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: c_uint,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub dst_pitch: usize,
    pub width_in_bytes: usize,
    pub height: usize,
}

/// `CUDA_MEMCPY3D` (`cuMemcpy3D_v2`, `cuMemcpy3DAsync_v2`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY3D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_z: usize,
    pub src_lod: usize,
    pub src_memory_type: c_uint,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub reserved0: *mut c_void,
    pub src_pitch: usize,
    pub src_height: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_z: usize,
    pub dst_lod: usize,
    pub dst_memory_type: c_uint,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub reserved1: *mut c_void,
    pub dst_pitch: usize,
    pub dst_height: usize,
    pub width_in_bytes: usize,
    pub height: usize,
    pub depth: usize,
}

/// Where one side of a copy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Host memory.
    Host,
    /// Device memory.
    Device,
    /// Unified addressing: the pointer says (the caller looks it up).
    Unified,
}

/// A 2D or 3D copy between linear memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    /// First byte written.
    pub dst: u64,
    /// Row and slice pitch at the destination.
    pub dpitch: [u64; 2],
    /// Where the destination is.
    pub dst_side: Side,
    /// First byte read.
    pub src: u64,
    /// Row and slice pitch at the source.
    pub spitch: [u64; 2],
    /// Where the source is.
    pub src_side: Side,
    /// Width in bytes, rows, slices.
    pub extent: [u64; 3],
}

/// One side of a copy that names an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopySide {
    /// A `CUarray`, the copy starting at `pos` (x in bytes, row, slice).
    Array {
        /// Its handle.
        array: u64,
        /// Where the copy starts.
        pos: [u64; 3],
    },
    /// Linear memory: the first byte (offsets added), row and slice pitch.
    Linear {
        /// The first byte.
        ptr: u64,
        /// Row and slice pitch.
        pitch: [u64; 2],
        /// Where it is.
        side: Side,
    },
}

/// A 2D or 3D copy with an array on at least one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayCopy {
    /// Where it writes.
    pub dst: CopySide,
    /// What it reads.
    pub src: CopySide,
    /// Width in bytes, rows, slices.
    pub extent: [u64; 3],
}

/// Why a description is not a copy between linear memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RectError {
    /// A side is a `CUarray`.
    Array,
    /// A memory type the driver does not define, or an address overflowing.
    Invalid,
}

/// A side's first byte: its base by memory type, plus `x + y·pitch + z·slice`.
fn side(
    ty: c_uint,
    (host, dev): (u64, u64),
    (x, y, z): (usize, usize, usize),
    (pitch, slice): (usize, usize),
) -> Result<(u64, Side), RectError> {
    let (base, s) = match ty {
        CU_MEMORYTYPE_HOST => (host, Side::Host),
        CU_MEMORYTYPE_DEVICE => (dev, Side::Device),
        CU_MEMORYTYPE_UNIFIED => (dev, Side::Unified),
        CU_MEMORYTYPE_ARRAY => return Err(RectError::Array),
        _ => return Err(RectError::Invalid),
    };
    let off = (z as u64)
        .checked_mul(slice as u64)
        .and_then(|a| {
            (y as u64)
                .checked_mul(pitch as u64)
                .and_then(|b| a.checked_add(b))
        })
        .and_then(|o| o.checked_add(x as u64))
        .ok_or(RectError::Invalid)?;
    Ok((base.checked_add(off).ok_or(RectError::Invalid)?, s))
}

/// A side that may be an array: the array and the position in it, else
/// [`side`]'s first byte with the pitches.
fn copy_side(
    ty: c_uint,
    (host, dev, array): (u64, u64, u64),
    (x, y, z): (usize, usize, usize),
    (pitch, slice): (usize, usize),
) -> Result<CopySide, RectError> {
    if ty == CU_MEMORYTYPE_ARRAY {
        return Ok(CopySide::Array {
            array,
            pos: [x as u64, y as u64, z as u64],
        });
    }
    let (ptr, side) = side(ty, (host, dev), (x, y, z), (pitch, slice))?;
    Ok(CopySide::Linear {
        ptr,
        pitch: [pitch as u64, slice as u64],
        side,
    })
}

impl CUDA_MEMCPY2D {
    /// The copy this describes, with arrays allowed on either side.
    pub fn array_copy(&self) -> Result<ArrayCopy, RectError> {
        let h = self.height;
        let slice = |p: usize| p.checked_mul(h).ok_or(RectError::Invalid);
        let src = copy_side(
            self.src_memory_type,
            (self.src_host as u64, self.src_device, self.src_array as u64),
            (self.src_x_in_bytes, self.src_y, 0),
            (self.src_pitch, slice(self.src_pitch)?),
        )?;
        let dst = copy_side(
            self.dst_memory_type,
            (self.dst_host as u64, self.dst_device, self.dst_array as u64),
            (self.dst_x_in_bytes, self.dst_y, 0),
            (self.dst_pitch, slice(self.dst_pitch)?),
        )?;
        Ok(ArrayCopy {
            dst,
            src,
            extent: [self.width_in_bytes as u64, h as u64, 1],
        })
    }

    /// The copy this describes.
    pub fn rect(&self) -> Result<Rect, RectError> {
        let (src, src_side) = side(
            self.src_memory_type,
            (self.src_host as u64, self.src_device),
            (self.src_x_in_bytes, self.src_y, 0),
            (self.src_pitch, 0),
        )?;
        let (dst, dst_side) = side(
            self.dst_memory_type,
            (self.dst_host as u64, self.dst_device),
            (self.dst_x_in_bytes, self.dst_y, 0),
            (self.dst_pitch, 0),
        )?;
        let h = self.height as u64;
        Ok(Rect {
            dst,
            dpitch: [
                self.dst_pitch as u64,
                (self.dst_pitch as u64).saturating_mul(h),
            ],
            dst_side,
            src,
            spitch: [
                self.src_pitch as u64,
                (self.src_pitch as u64).saturating_mul(h),
            ],
            src_side,
            extent: [self.width_in_bytes as u64, h, 1],
        })
    }
}

impl CUDA_MEMCPY3D {
    /// The copy this describes, with arrays allowed on either side
    /// (`srcLOD`/`dstLOD` aside: a `CUarray` has one level).
    pub fn array_copy(&self) -> Result<ArrayCopy, RectError> {
        let slice = |p: usize, h: usize| p.checked_mul(h).ok_or(RectError::Invalid);
        let src = copy_side(
            self.src_memory_type,
            (self.src_host as u64, self.src_device, self.src_array as u64),
            (self.src_x_in_bytes, self.src_y, self.src_z),
            (self.src_pitch, slice(self.src_pitch, self.src_height)?),
        )?;
        let dst = copy_side(
            self.dst_memory_type,
            (self.dst_host as u64, self.dst_device, self.dst_array as u64),
            (self.dst_x_in_bytes, self.dst_y, self.dst_z),
            (self.dst_pitch, slice(self.dst_pitch, self.dst_height)?),
        )?;
        Ok(ArrayCopy {
            dst,
            src,
            extent: [
                self.width_in_bytes as u64,
                self.height as u64,
                self.depth as u64,
            ],
        })
    }

    /// The copy this describes (mipmap levels aside: `srcLOD`/`dstLOD`
    /// matter only for arrays).
    pub fn rect(&self) -> Result<Rect, RectError> {
        let sslice = self
            .src_pitch
            .checked_mul(self.src_height)
            .ok_or(RectError::Invalid)?;
        let dslice = self
            .dst_pitch
            .checked_mul(self.dst_height)
            .ok_or(RectError::Invalid)?;
        let (src, src_side) = side(
            self.src_memory_type,
            (self.src_host as u64, self.src_device),
            (self.src_x_in_bytes, self.src_y, self.src_z),
            (self.src_pitch, sslice),
        )?;
        let (dst, dst_side) = side(
            self.dst_memory_type,
            (self.dst_host as u64, self.dst_device),
            (self.dst_x_in_bytes, self.dst_y, self.dst_z),
            (self.dst_pitch, dslice),
        )?;
        Ok(Rect {
            dst,
            dpitch: [self.dst_pitch as u64, dslice as u64],
            dst_side,
            src,
            spitch: [self.src_pitch as u64, sslice as u64],
            src_side,
            extent: [
                self.width_in_bytes as u64,
                self.height as u64,
                self.depth as u64,
            ],
        })
    }
}

// x86_64 layouts of CUDA 13.0's cuda.h.
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<CUDA_MEMCPY2D>() == 128);
    assert!(offset_of!(CUDA_MEMCPY2D, dst_x_in_bytes) == 56);
    assert!(offset_of!(CUDA_MEMCPY2D, width_in_bytes) == 112);
    assert!(size_of::<CUDA_MEMCPY3D>() == 200);
    assert!(offset_of!(CUDA_MEMCPY3D, src_pitch) == 72);
    assert!(offset_of!(CUDA_MEMCPY3D, dst_x_in_bytes) == 88);
    assert!(offset_of!(CUDA_MEMCPY3D, width_in_bytes) == 176);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_added_and_arrays_refused() {
        let mut c = CUDA_MEMCPY2D {
            src_x_in_bytes: 4,
            src_y: 2,
            src_memory_type: CU_MEMORYTYPE_DEVICE,
            src_host: core::ptr::null(),
            src_device: 0x1000,
            src_array: core::ptr::null_mut(),
            src_pitch: 256,
            dst_x_in_bytes: 0,
            dst_y: 0,
            dst_memory_type: CU_MEMORYTYPE_HOST,
            dst_host: 0x5000 as *mut c_void,
            dst_device: 0,
            dst_array: core::ptr::null_mut(),
            dst_pitch: 40,
            width_in_bytes: 40,
            height: 3,
        };
        let r = c.rect().unwrap();
        assert_eq!(
            (r.src, r.src_side, r.dst, r.dst_side),
            (0x1000 + 516, Side::Device, 0x5000, Side::Host)
        );
        assert_eq!(
            (r.spitch, r.dpitch, r.extent),
            ([256, 768], [40, 120], [40, 3, 1])
        );
        c.src_memory_type = CU_MEMORYTYPE_ARRAY;
        assert_eq!(c.rect(), Err(RectError::Array));
        c.src_memory_type = 9;
        assert_eq!(c.rect(), Err(RectError::Invalid));
    }

    #[test]
    fn an_array_side_keeps_its_handle_and_position() {
        let c = CUDA_MEMCPY3D {
            src_x_in_bytes: 8,
            src_y: 1,
            src_z: 0,
            src_lod: 0,
            src_memory_type: CU_MEMORYTYPE_HOST,
            src_host: 0x5000 as *const c_void,
            src_device: 0,
            src_array: core::ptr::null_mut(),
            reserved0: core::ptr::null_mut(),
            src_pitch: 64,
            src_height: 4,
            dst_x_in_bytes: 16,
            dst_y: 2,
            dst_z: 3,
            dst_lod: 0,
            dst_memory_type: CU_MEMORYTYPE_ARRAY,
            dst_host: core::ptr::null_mut(),
            dst_device: 0,
            dst_array: 0xa0 as *mut c_void,
            reserved1: core::ptr::null_mut(),
            dst_pitch: 0,
            dst_height: 0,
            width_in_bytes: 32,
            height: 2,
            depth: 1,
        };
        assert_eq!(c.rect(), Err(RectError::Array));
        assert_eq!(
            c.array_copy(),
            Ok(ArrayCopy {
                dst: CopySide::Array {
                    array: 0xa0,
                    pos: [16, 2, 3]
                },
                src: CopySide::Linear {
                    ptr: 0x5000 + 64 + 8,
                    pitch: [64, 256],
                    side: Side::Host
                },
                extent: [32, 2, 1],
            })
        );
    }
}
