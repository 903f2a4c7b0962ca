//! Streams: in-order queues, each with a worker thread.

use std::ffi::c_void;

use ::hip_api::args;
use ::hip_api::types::{hipError_t, hipStream_t};

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

/// What a stream callback is called with.
struct StreamCallback {
    callback: unsafe extern "C" fn(hipStream_t, hipError_t, *mut c_void),
    stream: hipStream_t,
    data: *mut c_void,
}

/// Runs a [`StreamCallback`] as a stream's host op. The callback is kept
/// (a few bytes per call): a captured one runs at every launch of its graph.
unsafe extern "C" fn run_callback(p: *mut c_void) {
    // SAFETY: `p` is the leaked `StreamCallback` of `hipStreamAddCallback`.
    let c = unsafe { &*p.cast::<StreamCallback>() };
    // SAFETY: the application's callback with its data (its contract).
    unsafe { (c.callback)(c.stream, ::hip_api::err::SUCCESS, c.data) };
}

/// `hipStreamAddCallback`: the callback runs in the stream's order, on its
/// worker (the legacy stream's: at once, on the calling thread).
pub(super) unsafe fn hipStreamAddCallback(a: args::hipStreamAddCallback) -> HipError {
    let args::hipStreamAddCallback {
        stream,
        callback,
        userData,
        flags,
    } = a;
    guard(|| {
        let (Some(callback), 0) = (callback, flags) else {
            return Err(err::INVALID_VALUE);
        };
        let rt = rt()?;
        let target = rt.target(stream as usize)?;
        let c = Box::leak(Box::new(StreamCallback {
            callback,
            stream,
            data: userData,
        }));
        let data = std::ptr::from_mut(c) as usize;
        // SAFETY: `run_callback` is callable with the leaked callback's address.
        rt.submit(&target, unsafe {
            crate::stream::Op::host(run_callback, data)
        })
    })
}

/// `hipLaunchHostFunc`: the function runs in the stream's order, as a
/// callback does; into a capturing stream it is a host node.
pub(super) unsafe fn hipLaunchHostFunc(a: args::hipLaunchHostFunc) -> HipError {
    let args::hipLaunchHostFunc {
        stream,
        fn_,
        userData,
    } = a;
    guard(|| {
        let Some(func) = fn_ else {
            return Err(err::INVALID_VALUE);
        };
        let rt = rt()?;
        let target = rt.target(stream as usize)?;
        // The application's own function and data: into a capturing stream
        // they are the host node's parameters, as `hipGraphHostNodeGetParams`
        // reports them.
        // SAFETY: the application's function, callable with its data (its contract).
        rt.submit(&target, unsafe {
            crate::stream::Op::host(func, userData as usize)
        })
    })
}
