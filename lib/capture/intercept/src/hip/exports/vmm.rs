//! Recorded handlers: HIP's virtual memory management, recorded as the CUDA
//! driver's is (`va_reserve`, `mem_create`, `mem_map`, `mem_access`, …):
//! replay maps the same pieces at the same offsets of a reservation of its
//! own, and what a kernel reaches inside a mapping translates through it.

use hip_api::args;
use hrr_core::{Addr, MemKind, Op};

use super::intercept;
use crate::hip::types::HipError;
use hrr_interpose::call_args::out_addr;
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::recorder::Order;
use hrr_recorder::record::recorder::Recorder;

#[inline]
pub unsafe fn hipMemAddressReserve(
    real: &'static Real<args::hipMemAddressReserve>,
    a: args::hipMemAddressReserve,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        // SAFETY: read only after success, when the runtime wrote *ptr.
        let p = unsafe { out_addr(ret, a.ptr) };
        r.va_reserve(api, ret, p, a.size as u64)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

#[inline]
pub unsafe fn hipMemAddressFree(
    real: &'static Real<args::hipMemAddressFree>,
    a: args::hipMemAddressFree,
) -> HipError {
    let record = |r: &Recorder, api, ret| r.va_free(api, ret, a.devPtr as u64, a.size as u64);
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

#[inline]
pub unsafe fn hipMemCreate(
    real: &'static Real<args::hipMemCreate>,
    a: args::hipMemCreate,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        // SAFETY: read only after success, when the runtime wrote *handle.
        let h = unsafe { out_addr(ret, a.handle) };
        // Device memory: the property struct's layout changed between ROCm
        // releases, and HIP's physical allocations are device-located.
        let op = Op::MemCreate {
            handle: Addr(h),
            size: a.size as u64,
            mem: MemKind::Device,
        };
        r.op(api, ret, &op)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

#[inline]
pub unsafe fn hipMemRelease(
    real: &'static Real<args::hipMemRelease>,
    a: args::hipMemRelease,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        let op = Op::MemRelease {
            handle: Addr(a.handle as u64),
        };
        r.op(api, ret, &op)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

#[inline]
pub unsafe fn hipMemMap(real: &'static Real<args::hipMemMap>, a: args::hipMemMap) -> HipError {
    let record = |r: &Recorder, api, ret| {
        let op = Op::MemMap {
            ptr: Addr(a.ptr as u64),
            size: a.size as u64,
            offset: a.offset as u64,
            handle: Addr(a.handle as u64),
        };
        r.op(api, ret, &op)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

#[inline]
pub unsafe fn hipMemUnmap(
    real: &'static Real<args::hipMemUnmap>,
    a: args::hipMemUnmap,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        let op = Op::MemUnmap {
            ptr: Addr(a.ptr as u64),
            size: a.size as u64,
        };
        r.op(api, ret, &op)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

#[inline]
pub unsafe fn hipMemSetAccess(
    real: &'static Real<args::hipMemSetAccess>,
    a: args::hipMemSetAccess,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        let op = Op::MemAccess {
            ptr: Addr(a.ptr as u64),
            size: a.size as u64,
        };
        r.op(api, ret, &op)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Free, record) }
}
