//! Recorded handlers of pitched memory: pitched allocations (`alloc` of
//! pitch × height (× depth) bytes), 2D/3D copies between linear memory
//! (`memcpy_rect`) and 2D/3D memsets (`memset_rect`). A copy whose
//! description names an array is recorded by [`super::arrays`]
//! (`memcpy_array`); one that cannot be read is forwarded and counted as
//! unrecorded.

use std::ffi::c_void;

use api_table::Entry;
use hip_api::args;
use hip_api::rect::{RectCopy as HipRect, RectError};
use hrr_core::{Dir, MemKind};

use super::memory::sync_stream;
use super::{intercept, resolve_dir};
use crate::capture::Guard;
use crate::hip::types::{self as hip, HipError, HipStream};
use hip_api::array::ArrayCopy;
use hrr_interpose::call_args::{gather, out, out_addr};
use hrr_interpose::exports::missing;
use hrr_interpose::real_fn::Real;
use hrr_interpose::unrecorded::Counter;
use hrr_recorder::record::recorder::{Order, Recorder};
use hrr_recorder::record::rect::RectCopy;

// ---------------------------------------------------------------- allocation

#[inline]
pub unsafe fn hipMallocPitch(
    real: &'static Real<args::hipMallocPitch>,
    a: args::hipMallocPitch,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: read only after success, when the runtime wrote them.
            let (p, pitch) = (out_addr(ret, a.ptr), out(ret, a.pitch));
            r.alloc(
                api,
                ret,
                p,
                (pitch as u64).saturating_mul(a.height as u64),
                MemKind::Device,
            )
        })
    }
}

#[inline]
pub unsafe fn hipMemAllocPitch(
    real: &'static Real<args::hipMemAllocPitch>,
    a: args::hipMemAllocPitch,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: read only after success, when the runtime wrote them.
            let (p, pitch) = (out(ret, a.dptr) as u64, out(ret, a.pitch));
            r.alloc(
                api,
                ret,
                p,
                (pitch as u64).saturating_mul(a.height as u64),
                MemKind::Device,
            )
        })
    }
}

#[inline]
pub unsafe fn hipMalloc3D(
    real: &'static Real<args::hipMalloc3D>,
    a: args::hipMalloc3D,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            let (p, pitch) = if ret == hip::err::SUCCESS && !a.pitchedDevPtr.is_null() {
                // SAFETY: the successful call wrote the pitched pointer.
                let pp = a.pitchedDevPtr.read_unaligned();
                (pp.ptr as u64, pp.pitch as u64)
            } else {
                (0, 0)
            };
            let e = a.extent;
            let size = pitch
                .saturating_mul(e.height as u64)
                .saturating_mul(e.depth as u64);
            r.alloc(api, ret, p, size, MemKind::Device)
        })
    }
}

// ---------------------------------------------------------------- copies

/// The shared body of every 2D/3D copy: the geometry decoded before the
/// call (`rect`), the direction resolved, the packed blob (H2D source /
/// D2H result) gathered after a successful call.
///
/// # Safety
/// `a` holds the application's arguments; `rect` is its copy's description.
unsafe fn copy<A: Entry<Ret = HipError>>(
    real: &Real<A>,
    calls: &'static Counter,
    a: A,
    (rect, arrays): (Result<HipRect, RectError>, Arrays),
    stream: Option<HipStream>,
) -> HipError {
    if rect == Err(RectError::Array) {
        // SAFETY: per this function's contract.
        return unsafe { super::arrays::copy(real, calls, a, arrays, stream) };
    }
    let api = A::NAME;
    let Some(f) = real.get() else {
        return missing::<A>();
    };
    let Some(g) = Guard::enter(api) else {
        // SAFETY: per this function's contract.
        return unsafe { a.call(f) };
    };
    let Ok(h) = rect else {
        // SAFETY: per this function's contract.
        let ret = unsafe { a.call(f) };
        calls.bump();
        return ret;
    };
    let c = RectCopy {
        dir: g
            .run(|r| resolve_dir(r, h.kind, h.dst as u64, h.src as u64))
            .unwrap_or(Dir::H2h),
        dst: h.dst as u64,
        dpitch: h.dpitch.map(|p| p as u64),
        src: h.src as u64,
        spitch: h.spitch.map(|p| p as u64),
        extent: h.extent.map(|e| e as u64),
        stream: stream.map(|s| s as u64),
    };
    // SAFETY: per this function's contract.
    let ret = unsafe { a.call(f) };
    g.run(|r| {
        // Never read a side the recorder knows to be device memory.
        let data = match c.dir {
            _ if ret != hip::err::SUCCESS => None,
            Dir::H2d if r.is_device(c.src) != Some(true) => {
                // SAFETY: the runtime accepted and read every row at src.
                Some(unsafe { gather(c.src, c.spitch, c.extent) })
            }
            Dir::D2h if r.is_device(c.dst) != Some(true) => {
                if let Some(s) = stream {
                    sync_stream(s);
                }
                // SAFETY: the runtime wrote every row at dst, and the copy
                // has completed.
                Some(unsafe { gather(c.dst, c.dpitch, c.extent) })
            }
            _ => None,
        };
        r.memcpy_rect(api, ret, &c, data.as_deref());
    });
    ret
}

/// How a copy naming an array is decoded (given the recorder, for arrays'
/// element sizes).
type Arrays = Box<dyn FnOnce(&Recorder) -> Option<ArrayCopy>>;

/// `NAME: RECT, stream STREAM;` in terms of the arguments `a`: a 2D/3D copy
/// recorded as `memcpy_rect` (or `memcpy_array`, naming an array).
macro_rules! copies {
    ($a:ident; $($name:ident: $rect:expr, stream $stream:expr;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, $a: args::$name) -> HipError {
            static CALLS: Counter = Counter::new(<args::$name as Entry>::NAME);
            // SAFETY: the export's contract: the application's arguments,
            // which describe this copy.
            unsafe { copy(real, &CALLS, $a, $rect, $stream) }
        }
    )*};
}

/// A 2D copy given by its arguments (never an array).
fn rect_2d(
    (dst, dpitch): (*mut c_void, usize),
    (src, spitch): (*const c_void, usize),
    (width, height): (usize, usize),
    kind: hip::HipMemcpyKind,
) -> (Result<HipRect, RectError>, Arrays) {
    (
        Ok(HipRect {
            dst: dst as usize,
            dpitch: [dpitch, dpitch.saturating_mul(height)],
            src: src as usize,
            spitch: [spitch, spitch.saturating_mul(height)],
            extent: [width, height, 1],
            kind,
        }),
        Box::new(|_| None),
    )
}

/// The copy a `hip_Memcpy2D` describes.
///
/// # Safety
/// `p` is null or points at the application's description.
unsafe fn param_2d(p: *const hip_api::types::hip_Memcpy2D) -> (Result<HipRect, RectError>, Arrays) {
    // SAFETY: per the contract.
    let Some(d) = (unsafe { p.as_ref() }).copied() else {
        return (Err(RectError::Invalid), Box::new(|_| None));
    };
    (d.rect(), Box::new(move |_| d.array_copy().ok()))
}

/// The copy a `hipMemcpy3DParms` describes.
///
/// # Safety
/// `p` is null or points at the application's description.
unsafe fn parms_3d(
    p: *const hip_api::types::hipMemcpy3DParms,
) -> (Result<HipRect, RectError>, Arrays) {
    // SAFETY: per the contract.
    let Some(d) = (unsafe { p.as_ref() }).copied() else {
        return (Err(RectError::Invalid), Box::new(|_| None));
    };
    let arrays: Arrays = Box::new(move |r: &Recorder| {
        d.array_copy(|a| r.array_element(a as u64).map(|e| e as usize))
            .ok()
    });
    (d.rect(), arrays)
}

copies! { a;
    hipMemcpy2D: rect_2d((a.dst, a.dpitch), (a.src, a.spitch), (a.width, a.height), a.kind), stream None;
    hipMemcpy2DAsync: rect_2d((a.dst, a.dpitch), (a.src, a.spitch), (a.width, a.height), a.kind), stream Some(a.stream);
    hipMemcpyParam2D: param_2d(a.pCopy), stream None;
    hipMemcpyParam2DAsync: param_2d(a.pCopy), stream Some(a.stream);
    hipDrvMemcpy2DUnaligned: param_2d(a.pCopy), stream None;
    hipMemcpy3D: parms_3d(a.p), stream None;
    hipMemcpy3DAsync: parms_3d(a.p), stream Some(a.stream);
}

// ---------------------------------------------------------------- memsets

/// `NAME: (DST, PITCH, EXTENT, VALUE), stream STREAM;` in terms of `a`: a
/// byte memset recorded as `memset_rect`.
macro_rules! memsets {
    ($a:ident; $($name:ident: ($dst:expr, $pitch:expr, $extent:expr, $value:expr), stream $stream:expr;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, $a: args::$name) -> HipError {
            let (dst, pitch, extent, value): (*mut c_void, [usize; 2], [usize; 3], i32) =
                ($dst, $pitch, $extent, $value);
            let stream: Option<HipStream> = $stream;
            // SAFETY: the export's contract: the application's arguments.
            unsafe {
                intercept(real, $a, Order::Free, |r, api, ret| {
                    r.memset_rect(
                        api,
                        ret,
                        dst as u64,
                        pitch.map(|p| p as u64),
                        extent.map(|e| e as u64),
                        (u32::from(value as u8), 1),
                        stream.map(|s| s as u64),
                    )
                })
            }
        }
    )*};
}

memsets! { a;
    hipMemset2D: (a.dst, [a.pitch, a.pitch.saturating_mul(a.height)], [a.width, a.height, 1], a.value), stream None;
    hipMemset2DAsync: (a.dst, [a.pitch, a.pitch.saturating_mul(a.height)], [a.width, a.height, 1], a.value), stream Some(a.stream);
    hipMemset3D: (a.pitchedDevPtr.ptr, [a.pitchedDevPtr.pitch, a.pitchedDevPtr.pitch.saturating_mul(a.pitchedDevPtr.ysize)], [a.extent.width, a.extent.height, a.extent.depth], a.value), stream None;
    hipMemset3DAsync: (a.pitchedDevPtr.ptr, [a.pitchedDevPtr.pitch, a.pitchedDevPtr.pitch.saturating_mul(a.pitchedDevPtr.ysize)], [a.extent.width, a.extent.height, a.extent.depth], a.value), stream Some(a.stream);
}
