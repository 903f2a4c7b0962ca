//! Events: recorded on a stream, waited on, timed.

use ::hip_api::args;

use super::put;
use crate::error::guard;
use crate::ffi::{HipError, HipEvent, err};
use crate::runtime::rt;

pub(super) unsafe fn hipEventCreateWithFlags(a: args::hipEventCreateWithFlags) -> HipError {
    let args::hipEventCreateWithFlags { event, flags } = a;

    guard(|| {
        if event.is_null() || flags & !0x7 != 0 {
            return Err(err::INVALID_VALUE);
        }
        let h = rt()?.create_event(flags);
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(event, h as HipEvent) }
    })
}

pub(super) unsafe fn hipEventCreate(a: args::hipEventCreate) -> HipError {
    let args::hipEventCreate { event } = a;
    // SAFETY: same contract.
    unsafe { hipEventCreateWithFlags(args::hipEventCreateWithFlags { event, flags: 0 }) }
}

pub(super) unsafe fn hipEventDestroy(a: args::hipEventDestroy) -> HipError {
    let args::hipEventDestroy { event } = a;

    guard(|| rt()?.destroy_event(event as usize))
}

pub(super) unsafe fn hipEventRecord(a: args::hipEventRecord) -> HipError {
    let args::hipEventRecord { event, stream } = a;

    guard(|| rt()?.record_event(event as usize, stream as usize))
}

pub(super) unsafe fn hipEventSynchronize(a: args::hipEventSynchronize) -> HipError {
    let args::hipEventSynchronize { event } = a;

    guard(|| {
        rt()?.event(event as usize)?.synchronize();
        Ok(())
    })
}

pub(super) unsafe fn hipEventQuery(a: args::hipEventQuery) -> HipError {
    let args::hipEventQuery { event } = a;

    guard(|| {
        if rt()?.event(event as usize)?.is_complete() {
            Ok(())
        } else {
            Err(err::NOT_READY)
        }
    })
}

pub(super) unsafe fn hipEventElapsedTime(a: args::hipEventElapsedTime) -> HipError {
    let args::hipEventElapsedTime { ms, start, stop } = a;

    guard(|| {
        if ms.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let v = rt()?.elapsed_ms(start as usize, stop as usize)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(ms, v) }
    })
}
