//! The geometry of HIP's 2D and 3D copies, decoded once for every consumer
//! (the CPU runtime performs it, the capture library records it): the first
//! byte of each side (offsets added), row and slice pitches, the extent
//! (width in bytes, rows, slices) and the direction.

use crate::HipMemcpyKind;
use crate::memory::{
    MEMCPY_DEFAULT, MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE,
    MEMCPY_HOST_TO_HOST, MEMORY_TYPE_DEVICE, MEMORY_TYPE_HOST, MEMORY_TYPE_UNIFIED,
};
use crate::types::{hip_Memcpy2D, hipMemcpy3DParms, hipMemoryType, hipPitchedPtr, hipPos};

/// A 2D or 3D copy between linear memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RectCopy {
    /// First byte written.
    pub dst: usize,
    /// Row and slice pitch at the destination.
    pub dpitch: [usize; 2],
    /// First byte read.
    pub src: usize,
    /// Row and slice pitch at the source.
    pub spitch: [usize; 2],
    /// Width in bytes, height in rows, depth in slices.
    pub extent: [usize; 3],
    /// The direction (`hipMemcpyDefault` where a side is unified memory).
    pub kind: HipMemcpyKind,
}

/// Why a copy's description is not one of linear memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RectError {
    /// A side is a `hipArray` (not linear memory).
    Array,
    /// A memory type or an offset HIP does not define, or an address that
    /// overflows.
    Invalid,
}

impl hip_Memcpy2D {
    /// The copy `hipMemcpyParam2D` makes.
    pub fn rect(&self) -> Result<RectCopy, RectError> {
        let side = |ty: hipMemoryType, host: usize, dev: usize, array: bool, x: usize, y, pitch| {
            let base = match ty {
                MEMORY_TYPE_HOST => host,
                MEMORY_TYPE_DEVICE | MEMORY_TYPE_UNIFIED => dev,
                _ if array => return Err(RectError::Array),
                _ => return Err(RectError::Invalid),
            };
            offset(base, pitch, 0, x, y, 0)
        };
        let src = side(
            self.srcMemoryType,
            self.srcHost as usize,
            self.srcDevice as usize,
            !self.srcArray.is_null(),
            self.srcXInBytes,
            self.srcY,
            self.srcPitch,
        )?;
        let dst = side(
            self.dstMemoryType,
            self.dstHost as usize,
            self.dstDevice as usize,
            !self.dstArray.is_null(),
            self.dstXInBytes,
            self.dstY,
            self.dstPitch,
        )?;
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
        Ok(RectCopy {
            dst,
            dpitch: [self.dstPitch, self.dstPitch.saturating_mul(self.Height)],
            src,
            spitch: [self.srcPitch, self.srcPitch.saturating_mul(self.Height)],
            extent: [self.WidthInBytes, self.Height, 1],
            kind,
        })
    }
}

impl hipMemcpy3DParms {
    /// The copy `hipMemcpy3D` makes, between pitched pointers.
    pub fn rect(&self) -> Result<RectCopy, RectError> {
        if !self.srcArray.is_null() || !self.dstArray.is_null() {
            return Err(RectError::Array);
        }
        let side = |p: &hipPitchedPtr, pos: &hipPos| {
            let slice = p.pitch.checked_mul(p.ysize).ok_or(RectError::Invalid)?;
            let at = offset(p.ptr as usize, p.pitch, slice, pos.x, pos.y, pos.z)?;
            Ok((at, [p.pitch, slice]))
        };
        let (src, spitch) = side(&self.srcPtr, &self.srcPos)?;
        let (dst, dpitch) = side(&self.dstPtr, &self.dstPos)?;
        Ok(RectCopy {
            dst,
            dpitch,
            src,
            spitch,
            extent: [self.extent.width, self.extent.height, self.extent.depth],
            kind: self.kind,
        })
    }
}

/// `base + z·slice + y·pitch + x`, checked.
fn offset(
    base: usize,
    pitch: usize,
    slice: usize,
    x: usize,
    y: usize,
    z: usize,
) -> Result<usize, RectError> {
    z.checked_mul(slice)
        .and_then(|a| y.checked_mul(pitch).and_then(|b| a.checked_add(b)))
        .and_then(|o| o.checked_add(x))
        .and_then(|o| base.checked_add(o))
        .ok_or(RectError::Invalid)
}
