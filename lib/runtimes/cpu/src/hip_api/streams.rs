//! Streams: in-order queues, each with a worker thread.

use ::hip_api::args;

use super::put;
use crate::error::guard;
use crate::ffi::{self, HipError, HipStream, err};
use crate::runtime::rt;

pub(super) unsafe fn hipStreamCreateWithFlags(a: args::hipStreamCreateWithFlags) -> HipError {
    let args::hipStreamCreateWithFlags { stream, flags } = a;

    guard(|| {
        if stream.is_null() || flags & !ffi::STREAM_NON_BLOCKING != 0 {
            return Err(err::INVALID_VALUE);
        }
        let h = rt()?.create_stream(flags)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(stream, h as HipStream) }
    })
}

pub(super) unsafe fn hipStreamCreate(a: args::hipStreamCreate) -> HipError {
    let args::hipStreamCreate { stream } = a;
    // SAFETY: same contract.
    unsafe { hipStreamCreateWithFlags(args::hipStreamCreateWithFlags { stream, flags: 0 }) }
}

pub(super) unsafe fn hipStreamCreateWithPriority(a: args::hipStreamCreateWithPriority) -> HipError {
    let args::hipStreamCreateWithPriority {
        stream,
        flags,
        priority: _,
    } = a;
    // SAFETY: same contract (one priority: the pool's threads).
    unsafe { hipStreamCreateWithFlags(args::hipStreamCreateWithFlags { stream, flags }) }
}

pub(super) unsafe fn hipExtStreamCreateWithCUMask(
    a: args::hipExtStreamCreateWithCUMask,
) -> HipError {
    let args::hipExtStreamCreateWithCUMask {
        stream,
        cuMaskSize: _,
        cuMask: _,
    } = a;
    // SAFETY: same contract (a CPU stream runs on the whole pool: no compute
    // units to mask).
    unsafe { hipStreamCreateWithFlags(args::hipStreamCreateWithFlags { stream, flags: 0 }) }
}

pub(super) unsafe fn hipStreamDestroy(a: args::hipStreamDestroy) -> HipError {
    let args::hipStreamDestroy { stream } = a;

    guard(|| rt()?.destroy_stream(stream as usize))
}

pub(super) unsafe fn hipStreamSynchronize(a: args::hipStreamSynchronize) -> HipError {
    let args::hipStreamSynchronize { stream } = a;

    guard(|| rt()?.stream_synchronize(stream as usize))
}

pub(super) unsafe fn hipStreamQuery(a: args::hipStreamQuery) -> HipError {
    let args::hipStreamQuery { stream } = a;

    guard(|| rt()?.stream_query(stream as usize))
}

pub(super) unsafe fn hipStreamWaitEvent(a: args::hipStreamWaitEvent) -> HipError {
    let args::hipStreamWaitEvent {
        stream,
        event,
        flags,
    } = a;

    guard(|| {
        if flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        rt()?.stream_wait_event(stream as usize, event as usize)
    })
}
