//! Streams, events, device synchronisation and device selection.

use std::ffi::{c_int, c_uint};

use hrr_core::{Addr, Op};

use super::{Order, intercept, out_addr, real};
use crate::hip::types::{HipError, HipEvent, HipStream};

fn a(p: *mut std::ffi::c_void) -> Addr {
    Addr(p as u64)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut HipStream) -> HipError {
    let real = real!(hipStreamCreate: unsafe extern "C" fn(*mut HipStream) -> HipError);
    intercept(
        "hipStreamCreate",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *stream.
            let s = unsafe { out_addr(ret, stream) };
            r.op(
                "hipStreamCreate",
                ret,
                &Op::StreamCreate { stream: Addr(s) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamCreateWithFlags(
    stream: *mut HipStream,
    flags: c_uint,
) -> HipError {
    let real =
        real!(hipStreamCreateWithFlags: unsafe extern "C" fn(*mut HipStream, c_uint) -> HipError);
    intercept(
        "hipStreamCreateWithFlags",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream, flags) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *stream.
            let s = unsafe { out_addr(ret, stream) };
            r.op(
                "hipStreamCreateWithFlags",
                ret,
                &Op::StreamCreate { stream: Addr(s) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamCreateWithPriority(
    stream: *mut HipStream,
    flags: c_uint,
    priority: c_int,
) -> HipError {
    let real = real!(hipStreamCreateWithPriority: unsafe extern "C" fn(*mut HipStream, c_uint, c_int) -> HipError);
    intercept(
        "hipStreamCreateWithPriority",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream, flags, priority) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *stream.
            let s = unsafe { out_addr(ret, stream) };
            r.op(
                "hipStreamCreateWithPriority",
                ret,
                &Op::StreamCreate { stream: Addr(s) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamDestroy(stream: HipStream) -> HipError {
    let real = real!(hipStreamDestroy: unsafe extern "C" fn(HipStream) -> HipError);
    intercept(
        "hipStreamDestroy",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream) },
        |r, ret| {
            r.op(
                "hipStreamDestroy",
                ret,
                &Op::StreamDestroy { stream: a(stream) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamSynchronize(stream: HipStream) -> HipError {
    let real = real!(hipStreamSynchronize: unsafe extern "C" fn(HipStream) -> HipError);
    intercept(
        "hipStreamSynchronize",
        real,
        Order::Free,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream) },
        |r, ret| {
            r.op(
                "hipStreamSynchronize",
                ret,
                &Op::StreamSync { stream: a(stream) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamWaitEvent(
    stream: HipStream,
    event: HipEvent,
    flags: c_uint,
) -> HipError {
    let real =
        real!(hipStreamWaitEvent: unsafe extern "C" fn(HipStream, HipEvent, c_uint) -> HipError);
    intercept(
        "hipStreamWaitEvent",
        real,
        Order::Free,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream, event, flags) },
        |r, ret| {
            r.op(
                "hipStreamWaitEvent",
                ret,
                &Op::StreamWaitEvent {
                    stream: a(stream),
                    event: a(event),
                },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventCreate(event: *mut HipEvent) -> HipError {
    let real = real!(hipEventCreate: unsafe extern "C" fn(*mut HipEvent) -> HipError);
    intercept(
        "hipEventCreate",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(event) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *event.
            let e = unsafe { out_addr(ret, event) };
            r.op("hipEventCreate", ret, &Op::EventCreate { event: Addr(e) })
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventCreateWithFlags(event: *mut HipEvent, flags: c_uint) -> HipError {
    let real =
        real!(hipEventCreateWithFlags: unsafe extern "C" fn(*mut HipEvent, c_uint) -> HipError);
    intercept(
        "hipEventCreateWithFlags",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(event, flags) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *event.
            let e = unsafe { out_addr(ret, event) };
            r.op(
                "hipEventCreateWithFlags",
                ret,
                &Op::EventCreate { event: Addr(e) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventDestroy(event: HipEvent) -> HipError {
    let real = real!(hipEventDestroy: unsafe extern "C" fn(HipEvent) -> HipError);
    intercept(
        "hipEventDestroy",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(event) },
        |r, ret| {
            r.op(
                "hipEventDestroy",
                ret,
                &Op::EventDestroy { event: a(event) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventRecord(event: HipEvent, stream: HipStream) -> HipError {
    let real = real!(hipEventRecord: unsafe extern "C" fn(HipEvent, HipStream) -> HipError);
    intercept(
        "hipEventRecord",
        real,
        Order::Free,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(event, stream) },
        |r, ret| {
            r.op(
                "hipEventRecord",
                ret,
                &Op::EventRecord {
                    event: a(event),
                    stream: a(stream),
                },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipEventSynchronize(event: HipEvent) -> HipError {
    let real = real!(hipEventSynchronize: unsafe extern "C" fn(HipEvent) -> HipError);
    intercept(
        "hipEventSynchronize",
        real,
        Order::Free,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(event) },
        |r, ret| {
            r.op(
                "hipEventSynchronize",
                ret,
                &Op::EventSync { event: a(event) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipDeviceSynchronize() -> HipError {
    let real = real!(hipDeviceSynchronize: unsafe extern "C" fn() -> HipError);
    intercept(
        "hipDeviceSynchronize",
        real,
        Order::Free,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f() },
        |r, ret| r.op("hipDeviceSynchronize", ret, &Op::DeviceSync),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipSetDevice(device: c_int) -> HipError {
    let real = real!(hipSetDevice: unsafe extern "C" fn(c_int) -> HipError);
    intercept(
        "hipSetDevice",
        real,
        Order::Free,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(device) },
        |r, ret| r.op("hipSetDevice", ret, &Op::SetDevice { device }),
    )
}
