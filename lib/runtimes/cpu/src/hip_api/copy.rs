//! Copies and memsets: synchronous ones on the null stream, `*Async` ones
//! on their stream, each checked against the live allocations first.

use std::ffi::c_void;

use ::hip_api::args;

use crate::error::guard;
use crate::ffi::{self, HipError, HipStream, err};
use crate::runtime::rt;
use crate::stream::Op;

/// # Safety
/// HIP's contract for host operands of a copy.
unsafe fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    len: usize,
    kind: ffi::HipMemcpyKind,
    stream: HipStream,
) -> Result<(), HipError> {
    let rt = rt()?;
    let target = rt.target(stream as usize)?;
    let (d, s) = (dst as usize, src as usize);
    rt.check_copy(d, s, len, kind)?;
    if len == 0 {
        return Ok(());
    }
    // SAFETY: device operands were just checked against the live allocations; host
    // operands are valid per this function's contract.
    let op = unsafe { Op::copy(d, s, len) };
    rt.submit(&target, op)
}

pub(super) unsafe fn hipMemcpy(a: args::hipMemcpy) -> HipError {
    let args::hipMemcpy {
        dst,
        src,
        sizeBytes: size,
        kind,
    } = a;

    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, kind, std::ptr::null_mut()) })
}

pub(super) unsafe fn hipMemcpyAsync(a: args::hipMemcpyAsync) -> HipError {
    let args::hipMemcpyAsync {
        dst,
        src,
        sizeBytes: size,
        kind,
        stream,
    } = a;

    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, kind, stream) })
}

pub(super) unsafe fn hipMemcpyHtoD(a: args::hipMemcpyHtoD) -> HipError {
    let args::hipMemcpyHtoD {
        dst,
        src,
        sizeBytes: size,
    } = a;

    // SAFETY: HIP contract.
    guard(|| unsafe {
        memcpy(
            dst,
            src,
            size,
            ffi::MEMCPY_HOST_TO_DEVICE,
            std::ptr::null_mut(),
        )
    })
}

pub(super) unsafe fn hipMemcpyDtoH(a: args::hipMemcpyDtoH) -> HipError {
    let args::hipMemcpyDtoH {
        dst,
        src,
        sizeBytes: size,
    } = a;

    // SAFETY: HIP contract.
    guard(|| unsafe {
        memcpy(
            dst,
            src,
            size,
            ffi::MEMCPY_DEVICE_TO_HOST,
            std::ptr::null_mut(),
        )
    })
}

pub(super) unsafe fn hipMemcpyDtoD(a: args::hipMemcpyDtoD) -> HipError {
    let args::hipMemcpyDtoD {
        dst,
        src,
        sizeBytes: size,
    } = a;

    // SAFETY: HIP contract.
    guard(|| unsafe {
        memcpy(
            dst,
            src,
            size,
            ffi::MEMCPY_DEVICE_TO_DEVICE,
            std::ptr::null_mut(),
        )
    })
}

pub(super) unsafe fn hipMemcpyHtoDAsync(a: args::hipMemcpyHtoDAsync) -> HipError {
    let args::hipMemcpyHtoDAsync {
        dst,
        src,
        sizeBytes: size,
        stream,
    } = a;

    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, ffi::MEMCPY_HOST_TO_DEVICE, stream) })
}

pub(super) unsafe fn hipMemcpyDtoHAsync(a: args::hipMemcpyDtoHAsync) -> HipError {
    let args::hipMemcpyDtoHAsync {
        dst,
        src,
        sizeBytes: size,
        stream,
    } = a;

    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, ffi::MEMCPY_DEVICE_TO_HOST, stream) })
}

pub(super) unsafe fn hipMemcpyDtoDAsync(a: args::hipMemcpyDtoDAsync) -> HipError {
    let args::hipMemcpyDtoDAsync {
        dst,
        src,
        sizeBytes: size,
        stream,
    } = a;

    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy(dst, src, size, ffi::MEMCPY_DEVICE_TO_DEVICE, stream) })
}

/// Copies `height` rows of `width` bytes, row `i` from `src + i * spitch`
/// to `dst + i * dpitch` (the row loop of `rect`).
///
/// # Safety
/// HIP's contract for host operands of a copy.
unsafe fn memcpy_2d(
    (dst, dpitch): (*mut c_void, usize),
    (src, spitch): (*const c_void, usize),
    (width, height): (usize, usize),
    kind: ffi::HipMemcpyKind,
    stream: HipStream,
) -> Result<(), HipError> {
    let c = ::hip_api::rect::RectCopy {
        dst: dst as usize,
        dpitch: [dpitch, 0],
        src: src as usize,
        spitch: [spitch, 0],
        extent: [width, height, 1],
        kind,
    };
    // SAFETY: per this function's contract.
    unsafe { super::rect::copy_rect(c, stream) }
}

pub(super) unsafe fn hipMemcpy2D(a: args::hipMemcpy2D) -> HipError {
    let args::hipMemcpy2D {
        dst,
        dpitch,
        src,
        spitch,
        width,
        height,
        kind,
    } = a;
    // SAFETY: HIP contract.
    guard(|| unsafe {
        memcpy_2d(
            (dst, dpitch),
            (src, spitch),
            (width, height),
            kind,
            std::ptr::null_mut(),
        )
    })
}

pub(super) unsafe fn hipMemcpy2DAsync(a: args::hipMemcpy2DAsync) -> HipError {
    let args::hipMemcpy2DAsync {
        dst,
        dpitch,
        src,
        spitch,
        width,
        height,
        kind,
        stream,
    } = a;
    // SAFETY: HIP contract.
    guard(|| unsafe { memcpy_2d((dst, dpitch), (src, spitch), (width, height), kind, stream) })
}

fn memset(
    dst: *mut c_void,
    value: u32,
    count: usize,
    width: u8,
    stream: HipStream,
) -> Result<(), HipError> {
    let rt = rt()?;
    let target = rt.target(stream as usize)?;
    let bytes = count
        .checked_mul(usize::from(width))
        .ok_or(err::INVALID_VALUE)?;
    rt.check_fill(dst as usize, bytes)?;
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: the whole destination range was just checked to lie in one live,
    // device-accessible allocation.
    let op = unsafe { Op::fill(dst as usize, value, count, width) };
    rt.submit(&target, op)
}

pub(super) unsafe fn hipMemset(a: args::hipMemset) -> HipError {
    let args::hipMemset {
        dst,
        value,
        sizeBytes: size,
    } = a;

    guard(|| memset(dst, u32::from(value as u8), size, 1, std::ptr::null_mut()))
}

pub(super) unsafe fn hipMemsetAsync(a: args::hipMemsetAsync) -> HipError {
    let args::hipMemsetAsync {
        dst,
        value,
        sizeBytes: size,
        stream,
    } = a;

    guard(|| memset(dst, u32::from(value as u8), size, 1, stream))
}

pub(super) unsafe fn hipMemsetD8(a: args::hipMemsetD8) -> HipError {
    let args::hipMemsetD8 {
        dest: dst,
        value,
        count,
    } = a;

    guard(|| memset(dst, u32::from(value), count, 1, std::ptr::null_mut()))
}

pub(super) unsafe fn hipMemsetD8Async(a: args::hipMemsetD8Async) -> HipError {
    let args::hipMemsetD8Async {
        dest: dst,
        value,
        count,
        stream,
    } = a;

    guard(|| memset(dst, u32::from(value), count, 1, stream))
}

pub(super) unsafe fn hipMemsetD16(a: args::hipMemsetD16) -> HipError {
    let args::hipMemsetD16 {
        dest: dst,
        value,
        count,
    } = a;

    guard(|| memset(dst, u32::from(value), count, 2, std::ptr::null_mut()))
}

pub(super) unsafe fn hipMemsetD16Async(a: args::hipMemsetD16Async) -> HipError {
    let args::hipMemsetD16Async {
        dest: dst,
        value,
        count,
        stream,
    } = a;

    guard(|| memset(dst, u32::from(value), count, 2, stream))
}

pub(super) unsafe fn hipMemsetD32(a: args::hipMemsetD32) -> HipError {
    let args::hipMemsetD32 {
        dest: dst,
        value,
        count,
    } = a;

    guard(|| memset(dst, value as u32, count, 4, std::ptr::null_mut()))
}

pub(super) unsafe fn hipMemsetD32Async(a: args::hipMemsetD32Async) -> HipError {
    let args::hipMemsetD32Async {
        dst,
        value,
        count,
        stream,
    } = a;

    guard(|| memset(dst, value as u32, count, 4, stream))
}
