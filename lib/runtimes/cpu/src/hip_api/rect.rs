//! Pitched memory: pitched allocations (`hipMallocPitch`, `hipMemAllocPitch`,
//! `hipMalloc3D`), 2D and 3D copies between linear memory
//! (`hipMemcpyParam2D`, `hipDrvMemcpy2DUnaligned`, `hipMemcpy3D`, their
//! `Async` forms; `hipMemcpy2D` lives with the plain copies and shares the
//! row loop) and 2D/3D memsets. Every row is checked before the first is
//! queued, so a bad operand changes nothing. A copy that names an array
//! is made by [`super::arrays`] over the array's memory.

use std::ffi::c_void;

use ::hip_api::args;
use ::hip_api::rect::{RectCopy, RectError};
use ::hip_api::types::{hip_Memcpy2D, hipExtent, hipMemcpy3DParms, hipPitchedPtr};

use super::put;
use crate::error::guard;
use crate::ffi::{self, HipError, HipStream, err};
use crate::memory::DevKind;
use crate::runtime::rt;
use crate::stream::Op;

/// Row pitch of pitched allocations: rows start 256-byte aligned, as a GPU
/// runtime aligns them for its memory transactions.
pub const PITCH_ALIGN: usize = 256;

/// The offset of row `y` of slice `z`, checked.
fn row(base: usize, pitch: [usize; 2], y: usize, z: usize) -> Result<usize, HipError> {
    z.checked_mul(pitch[1])
        .and_then(|a| y.checked_mul(pitch[0]).and_then(|b| a.checked_add(b)))
        .and_then(|o| base.checked_add(o))
        .ok_or(err::INVALID_VALUE)
}

/// Copies `extent` (width in bytes, rows, slices) from `src` to `dst`,
/// rows `pitch[0]` apart and slices `pitch[1]` apart on each side.
///
/// # Safety
/// HIP's contract for host operands of a copy.
pub(super) unsafe fn copy_rect(c: RectCopy, stream: HipStream) -> Result<(), HipError> {
    let [w, h, d] = c.extent;
    if w > c.dpitch[0] || w > c.spitch[0] {
        return Err(err::INVALID_VALUE);
    }
    let rt = rt()?;
    let target = rt.target(stream as usize)?;
    if w == 0 || h == 0 || d == 0 {
        return Ok(());
    }
    let rows = || {
        (0..d)
            .flat_map(move |z| (0..h).map(move |y| (y, z)))
            .map(|(y, z)| {
                Ok::<_, HipError>((row(c.dst, c.dpitch, y, z)?, row(c.src, c.spitch, y, z)?))
            })
    };
    for r in rows() {
        let (dst, src) = r?;
        rt.check_copy(dst, src, w, c.kind)?;
    }
    for r in rows() {
        let (dst, src) = r?;
        // SAFETY: every row's device operands were just checked against the
        // live allocations; host operands are valid per this function's
        // contract.
        let op = unsafe { Op::copy(dst, src, w) };
        rt.submit(&target, op)?;
    }
    Ok(())
}

/// Fills `extent` at `dst` with byte `value`, rows and slices `pitch` apart.
fn fill_rect(
    dst: usize,
    pitch: [usize; 2],
    extent: [usize; 3],
    value: u8,
    stream: HipStream,
) -> Result<(), HipError> {
    let [w, h, d] = extent;
    if w > pitch[0] {
        return Err(err::INVALID_VALUE);
    }
    let rt = rt()?;
    let target = rt.target(stream as usize)?;
    if w == 0 || h == 0 || d == 0 {
        return Ok(());
    }
    let rows = || (0..d).flat_map(move |z| (0..h).map(move |y| row(dst, pitch, y, z)));
    for r in rows() {
        rt.check_fill(r?, w)?;
    }
    for r in rows() {
        // SAFETY: every row was just checked to lie in one live,
        // device-accessible allocation.
        let op = unsafe { Op::fill(r?, u32::from(value), w, 1) };
        rt.submit(&target, op)?;
    }
    Ok(())
}

fn rect_err(e: RectError) -> HipError {
    match e {
        RectError::Array => err::NOT_SUPPORTED,
        RectError::Invalid => err::INVALID_VALUE,
    }
}

/// A pitched allocation of `height` rows (× `depth`) of `width` bytes:
/// its base and pitch (null for an empty one).
fn alloc_pitched(width: usize, height: usize, depth: usize) -> Result<(usize, usize), HipError> {
    let pitch = width
        .checked_next_multiple_of(PITCH_ALIGN)
        .ok_or(err::INVALID_VALUE)?
        .max(PITCH_ALIGN);
    let size = pitch
        .checked_mul(height)
        .and_then(|s| s.checked_mul(depth))
        .ok_or(err::OUT_OF_MEMORY)?;
    let p = if width == 0 || size == 0 {
        0
    } else {
        rt()?.mem().alloc_device(size, DevKind::Device, 0)?
    };
    Ok((p, pitch))
}

pub(super) unsafe fn hipMallocPitch(a: args::hipMallocPitch) -> HipError {
    let args::hipMallocPitch {
        ptr,
        pitch,
        width,
        height,
    } = a;
    guard(|| {
        if ptr.is_null() || pitch.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let (p, row) = alloc_pitched(width, height, 1)?;
        // SAFETY: HIP contract for the out-parameters (checked non-null).
        unsafe {
            put(pitch, row)?;
            put(ptr, p as *mut c_void)
        }
    })
}

pub(super) unsafe fn hipMemAllocPitch(a: args::hipMemAllocPitch) -> HipError {
    let args::hipMemAllocPitch {
        dptr,
        pitch,
        widthInBytes: width,
        height,
        elementSizeBytes: elem,
    } = a;
    guard(|| {
        if dptr.is_null() || pitch.is_null() || !matches!(elem, 4 | 8 | 16) {
            return Err(err::INVALID_VALUE);
        }
        let (p, row) = alloc_pitched(width, height, 1)?;
        // SAFETY: HIP contract for the out-parameters (checked non-null).
        unsafe {
            put(pitch, row)?;
            put(dptr, p as ffi::HipDevicePtr)
        }
    })
}

pub(super) unsafe fn hipMalloc3D(a: args::hipMalloc3D) -> HipError {
    let args::hipMalloc3D {
        pitchedDevPtr: out,
        extent: hipExtent {
            width,
            height,
            depth,
        },
    } = a;
    guard(|| {
        if out.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let (p, pitch) = alloc_pitched(width, height, depth)?;
        let v = hipPitchedPtr {
            ptr: p as *mut c_void,
            pitch,
            xsize: width,
            ysize: height,
        };
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(out, v) }
    })
}

/// A copy description that may name an array.
trait ArrayCopies {
    /// The copy, when a side is an array.
    fn array_copy(&self) -> Result<::hip_api::array::ArrayCopy, RectError>;
}

impl ArrayCopies for hip_Memcpy2D {
    fn array_copy(&self) -> Result<::hip_api::array::ArrayCopy, RectError> {
        hip_Memcpy2D::array_copy(self)
    }
}

impl ArrayCopies for hipMemcpy3DParms {
    fn array_copy(&self) -> Result<::hip_api::array::ArrayCopy, RectError> {
        hipMemcpy3DParms::array_copy(self, super::arrays::element_of)
    }
}

/// The copy `p` describes (a `hip_Memcpy2D` or a `hipMemcpy3DParms`, made a
/// [`RectCopy`] by `rect`), on `stream`.
///
/// # Safety
/// `p` is null or HIP's description of a copy whose host operands are valid.
unsafe fn copy_described<T: ArrayCopies>(
    p: *const T,
    rect: fn(&T) -> Result<RectCopy, RectError>,
    stream: HipStream,
) -> HipError {
    let arrays = T::array_copy;
    guard(|| {
        // SAFETY: HIP contract: `p` points at the description (checked non-null).
        let c = unsafe { p.as_ref() }.ok_or(err::INVALID_VALUE)?;
        let rect = match rect(c) {
            Err(RectError::Array) => {
                let copy = arrays(c).map_err(rect_err)?;
                // SAFETY: HIP contract for the host operands it describes.
                return unsafe { super::arrays::copy_array(copy, stream) };
            }
            r => r.map_err(rect_err)?,
        };
        // SAFETY: HIP contract for the host operands it describes.
        unsafe { copy_rect(rect, stream) }
    })
}

pub(super) unsafe fn hipMemcpyParam2D(a: args::hipMemcpyParam2D) -> HipError {
    // SAFETY: HIP contract.
    unsafe { copy_described(a.pCopy, hip_Memcpy2D::rect, std::ptr::null_mut()) }
}

pub(super) unsafe fn hipMemcpyParam2DAsync(a: args::hipMemcpyParam2DAsync) -> HipError {
    // SAFETY: HIP contract.
    unsafe { copy_described(a.pCopy, hip_Memcpy2D::rect, a.stream) }
}

/// Unaligned pitches and offsets are no different on the CPU.
pub(super) unsafe fn hipDrvMemcpy2DUnaligned(a: args::hipDrvMemcpy2DUnaligned) -> HipError {
    // SAFETY: HIP contract.
    unsafe { copy_described(a.pCopy, hip_Memcpy2D::rect, std::ptr::null_mut()) }
}

pub(super) unsafe fn hipMemcpy3D(a: args::hipMemcpy3D) -> HipError {
    // SAFETY: HIP contract.
    unsafe { copy_described(a.p, hipMemcpy3DParms::rect, std::ptr::null_mut()) }
}

pub(super) unsafe fn hipMemcpy3DAsync(a: args::hipMemcpy3DAsync) -> HipError {
    // SAFETY: HIP contract.
    unsafe { copy_described(a.p, hipMemcpy3DParms::rect, a.stream) }
}

pub(super) unsafe fn hipMemset2D(a: args::hipMemset2D) -> HipError {
    let args::hipMemset2D {
        dst,
        pitch,
        value,
        width,
        height,
    } = a;
    guard(|| {
        fill_rect(
            dst as usize,
            [pitch, 0],
            [width, height, 1],
            value as u8,
            std::ptr::null_mut(),
        )
    })
}

pub(super) unsafe fn hipMemset2DAsync(a: args::hipMemset2DAsync) -> HipError {
    let args::hipMemset2DAsync {
        dst,
        pitch,
        value,
        width,
        height,
        stream,
    } = a;
    guard(|| {
        fill_rect(
            dst as usize,
            [pitch, 0],
            [width, height, 1],
            value as u8,
            stream,
        )
    })
}

/// A 3D memset's rows: slices are `pitch × ysize` apart.
fn fill_3d(p: hipPitchedPtr, value: i32, e: hipExtent, stream: HipStream) -> Result<(), HipError> {
    let slice = p.pitch.checked_mul(p.ysize).ok_or(err::INVALID_VALUE)?;
    if e.depth > 1 && e.height > p.ysize {
        return Err(err::INVALID_VALUE);
    }
    fill_rect(
        p.ptr as usize,
        [p.pitch, slice],
        [e.width, e.height, e.depth],
        value as u8,
        stream,
    )
}

pub(super) unsafe fn hipMemset3D(a: args::hipMemset3D) -> HipError {
    guard(|| fill_3d(a.pitchedDevPtr, a.value, a.extent, std::ptr::null_mut()))
}

pub(super) unsafe fn hipMemset3DAsync(a: args::hipMemset3DAsync) -> HipError {
    guard(|| fill_3d(a.pitchedDevPtr, a.value, a.extent, a.stream))
}
