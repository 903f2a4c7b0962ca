//! Recorded handlers of stream-ordered memory pools: `hipMemPoolCreate`,
//! `hipMemPoolDestroy`, `hipMemPoolTrimTo`, `hipMemPoolSetAttribute`,
//! `hipDeviceSetMemPool` and `hipMallocFromPoolAsync` (`hipMallocAsync` and
//! `hipFreeAsync` are in [`super::memory`]). Handles are recorded as the
//! application saw them; replay maps them to its own pools.

use hip_api::args;

use super::intercept;
use crate::hip::types::HipError;
use hrr_interpose::call_args::{out, out_addr};
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::pools::PoolOp;
use hrr_recorder::record::recorder::Order;

/// `hipMemPoolAttrReleaseThreshold`: this and later attributes are u64s,
/// the reuse flags before it ints.
const FIRST_U64_ATTR: i32 = 4;

#[inline]
pub unsafe fn hipMemPoolCreate(
    real: &'static Real<args::hipMemPoolCreate>,
    a: args::hipMemPoolCreate,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: read only after success, when the runtime wrote it.
            let p = out_addr(ret, a.mem_pool);
            r.pool(api, ret, PoolOp::Create(p))
        })
    }
}

#[inline]
pub unsafe fn hipMemPoolDestroy(
    real: &'static Real<args::hipMemPoolDestroy>,
    a: args::hipMemPoolDestroy,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.pool(api, ret, PoolOp::Destroy(a.mem_pool as u64))
        })
    }
}

#[inline]
pub unsafe fn hipMemPoolTrimTo(
    real: &'static Real<args::hipMemPoolTrimTo>,
    a: args::hipMemPoolTrimTo,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Free, |r, api, ret| {
            r.pool(
                api,
                ret,
                PoolOp::Trim(a.mem_pool as u64, a.min_bytes_to_hold as u64),
            )
        })
    }
}

#[inline]
pub unsafe fn hipMemPoolSetAttribute(
    real: &'static Real<args::hipMemPoolSetAttribute>,
    a: args::hipMemPoolSetAttribute,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Free, |r, api, ret| {
            // SAFETY: the runtime just read the value through this pointer
            // (after success only), as a u64 or an int by attribute.
            let value = if a.attr >= FIRST_U64_ATTR {
                out(ret, a.value.cast::<u64>())
            } else {
                out(ret, a.value.cast::<i32>()) as u64
            };
            r.pool(
                api,
                ret,
                PoolOp::Attr(a.mem_pool as u64, a.attr as u32, value),
            )
        })
    }
}

#[inline]
pub unsafe fn hipDeviceSetMemPool(
    real: &'static Real<args::hipDeviceSetMemPool>,
    a: args::hipDeviceSetMemPool,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Free, |r, api, ret| {
            r.pool(api, ret, PoolOp::Device(a.device, a.mem_pool as u64))
        })
    }
}

#[inline]
pub unsafe fn hipMallocFromPoolAsync(
    real: &'static Real<args::hipMallocFromPoolAsync>,
    a: args::hipMallocFromPoolAsync,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            // SAFETY: read only after success, when the runtime wrote it.
            let p = out_addr(ret, a.dev_ptr);
            r.pool_alloc(
                api,
                ret,
                p,
                a.size as u64,
                a.mem_pool as u64,
                a.stream as u64,
            )
        })
    }
}
