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

/// The null stream, where the synchronous forms run.
const SYNC: HipStream = std::ptr::null_mut();

/// `linear_copies! { NAME { PARAM, … } => (KIND, STREAM), … }`: the 1D copy
/// entry points. Each has `dst`, `src` and `sizeBytes`; its other
/// parameters, bound by name, give the copy's kind and stream.
macro_rules! linear_copies {
    ($($name:ident { $($p:ident),* } => ($kind:expr, $stream:expr),)*) => {$(
        pub(super) unsafe fn $name(a: args::$name) -> HipError {
            let args::$name { dst, src, sizeBytes, $($p),* } = a;
            let (kind, stream) = ($kind, $stream);
            // SAFETY: HIP contract for the copy's host operands.
            guard(|| unsafe { memcpy(dst, src, sizeBytes, kind, stream) })
        }
    )*};
}

linear_copies! {
    hipMemcpy { kind } => (kind, SYNC),
    hipMemcpyAsync { kind, stream } => (kind, stream),
    hipMemcpyHtoD {} => (ffi::MEMCPY_HOST_TO_DEVICE, SYNC),
    hipMemcpyDtoH {} => (ffi::MEMCPY_DEVICE_TO_HOST, SYNC),
    hipMemcpyDtoD {} => (ffi::MEMCPY_DEVICE_TO_DEVICE, SYNC),
    hipMemcpyHtoDAsync { stream } => (ffi::MEMCPY_HOST_TO_DEVICE, stream),
    hipMemcpyDtoHAsync { stream } => (ffi::MEMCPY_DEVICE_TO_HOST, stream),
    hipMemcpyDtoDAsync { stream } => (ffi::MEMCPY_DEVICE_TO_DEVICE, stream),
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
    guard(|| unsafe { memcpy_2d((dst, dpitch), (src, spitch), (width, height), kind, SYNC) })
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

/// `memsets! { NAME { PARAM, … } => (DST, VALUE, COUNT, WIDTH, STREAM), … }`:
/// the linear memset entry points, from their parameters (bound by name).
macro_rules! memsets {
    ($($name:ident { $($p:ident),* } => ($($arg:expr),*),)*) => {$(
        pub(super) unsafe fn $name(a: args::$name) -> HipError {
            let args::$name { $($p),* } = a;
            guard(|| memset($($arg),*))
        }
    )*};
}

memsets! {
    hipMemset { dst, value, sizeBytes } => (dst, u32::from(value as u8), sizeBytes, 1, SYNC),
    hipMemsetAsync { dst, value, sizeBytes, stream } =>
        (dst, u32::from(value as u8), sizeBytes, 1, stream),
    hipMemsetD8 { dest, value, count } => (dest, u32::from(value), count, 1, SYNC),
    hipMemsetD8Async { dest, value, count, stream } => (dest, u32::from(value), count, 1, stream),
    hipMemsetD16 { dest, value, count } => (dest, u32::from(value), count, 2, SYNC),
    hipMemsetD16Async { dest, value, count, stream } =>
        (dest, u32::from(value), count, 2, stream),
    hipMemsetD32 { dest, value, count } => (dest, value as u32, count, 4, SYNC),
    hipMemsetD32Async { dst, value, count, stream } => (dst, value as u32, count, 4, stream),
}

/// Both devices of a peer copy must exist. The copy itself is a
/// device-to-device one: every device's memory is the one reservation.
fn check_devices(ids: [std::ffi::c_int; 2]) -> Result<(), HipError> {
    let devices = &rt()?.devices;
    for id in ids {
        devices.check(id)?;
    }
    Ok(())
}

/// `hipMemcpyPeer`: a copy from device `srcDeviceId`'s memory to
/// `dstDeviceId`'s.
pub(super) unsafe fn hipMemcpyPeer(a: args::hipMemcpyPeer) -> HipError {
    let args::hipMemcpyPeer {
        dst,
        dstDeviceId,
        src,
        srcDeviceId,
        sizeBytes,
    } = a;
    guard(|| {
        check_devices([dstDeviceId, srcDeviceId])?;
        // SAFETY: HIP contract for the copy's operands.
        unsafe { memcpy(dst, src, sizeBytes, ffi::MEMCPY_DEVICE_TO_DEVICE, SYNC) }
    })
}

/// `hipMemcpyPeerAsync`: [`hipMemcpyPeer`] on `stream`.
pub(super) unsafe fn hipMemcpyPeerAsync(a: args::hipMemcpyPeerAsync) -> HipError {
    let args::hipMemcpyPeerAsync {
        dst,
        dstDeviceId,
        src,
        srcDevice,
        sizeBytes,
        stream,
    } = a;
    guard(|| {
        check_devices([dstDeviceId, srcDevice])?;
        // SAFETY: HIP contract for the copy's operands.
        unsafe { memcpy(dst, src, sizeBytes, ffi::MEMCPY_DEVICE_TO_DEVICE, stream) }
    })
}
