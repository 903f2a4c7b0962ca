//! Recorded handlers: HIP's virtual memory management, recorded as the CUDA
//! driver's is (`va_reserve`, `mem_create`, `mem_map`, `mem_access`, …):
//! replay maps the same pieces at the same offsets of a reservation of its
//! own, and what a kernel reaches inside a mapping translates through it.
//! Retained, exported and imported handles are references to a physical
//! allocation (`mem_retain`, `mem_export`, `mem_import`), which replay
//! counts as the runtime does.

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

#[inline]
pub unsafe fn hipMemRetainAllocationHandle(
    real: &'static Real<args::hipMemRetainAllocationHandle>,
    a: args::hipMemRetainAllocationHandle,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        // SAFETY: read only after success, when the runtime wrote *handle.
        let h = unsafe { out_addr(ret, a.handle) };
        let op = Op::MemRetain {
            ptr: Addr(a.addr as u64),
            handle: Addr(h),
        };
        r.op(api, ret, &op)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

/// `hipMemHandleTypePosixFileDescriptor`.
const HANDLE_POSIX_FD: i32 = 1;

/// A descriptor exported: its number (the one shareable handle type of
/// HIP on Linux; another type is named by the pointer's value).
#[inline]
pub unsafe fn hipMemExportToShareableHandle(
    real: &'static Real<args::hipMemExportToShareableHandle>,
    a: args::hipMemExportToShareableHandle,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        let shareable = if a.handleType == HANDLE_POSIX_FD {
            // SAFETY: read only after success, when the runtime wrote the
            // descriptor, an int, at `shareableHandle`.
            unsafe { hrr_interpose::call_args::out(ret, a.shareableHandle.cast::<i32>()) as u64 }
        } else {
            a.shareableHandle as u64
        };
        let op = Op::MemExport {
            handle: Addr(a.handle as u64),
            shareable,
        };
        r.op(api, ret, &op)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Free, record) }
}

/// A descriptor imported: passed as the pointer's value, as CUDA takes it.
#[inline]
pub unsafe fn hipMemImportFromShareableHandle(
    real: &'static Real<args::hipMemImportFromShareableHandle>,
    a: args::hipMemImportFromShareableHandle,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        // SAFETY: read only after success, when the runtime wrote *handle.
        let h = unsafe { out_addr(ret, a.handle) };
        let op = Op::MemImport {
            handle: Addr(h),
            shareable: a.osHandle as u64,
        };
        r.op(api, ret, &op)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}
