//! CUDA streams, events, device synchronisation and device selection.
//! Stream handles are recorded through `stream_id`: the null stream,
//! `cudaStreamLegacy` and `cudaStreamPerThread` are all `"0x0"`.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_int, c_uint};

use hrr_core::{Addr, Op};

use super::ffi::{Order, cuda_real, intercept, out_addr};
use super::types::{CudaError, CudaEvent, CudaStream, stream_id};

fn s(p: CudaStream) -> Addr {
    Addr(stream_id(p as u64))
}

fn e(p: CudaEvent) -> Addr {
    Addr(p as u64)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamCreate(stream: *mut CudaStream) -> CudaError {
    let real = cuda_real!(cudaStreamCreate: unsafe extern "C" fn(*mut CudaStream) -> CudaError);
    intercept(
        "cudaStreamCreate",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *stream.
            let h = unsafe { out_addr(ret, stream) };
            r.op(
                "cudaStreamCreate",
                ret,
                &Op::StreamCreate { stream: Addr(h) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamCreateWithFlags(
    stream: *mut CudaStream,
    flags: c_uint,
) -> CudaError {
    let real = cuda_real!(cudaStreamCreateWithFlags: unsafe extern "C" fn(*mut CudaStream, c_uint) -> CudaError);
    intercept(
        "cudaStreamCreateWithFlags",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream, flags) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *stream.
            let h = unsafe { out_addr(ret, stream) };
            r.op(
                "cudaStreamCreateWithFlags",
                ret,
                &Op::StreamCreate { stream: Addr(h) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamCreateWithPriority(
    stream: *mut CudaStream,
    flags: c_uint,
    priority: c_int,
) -> CudaError {
    let real = cuda_real!(cudaStreamCreateWithPriority: unsafe extern "C" fn(*mut CudaStream, c_uint, c_int) -> CudaError);
    intercept(
        "cudaStreamCreateWithPriority",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(stream, flags, priority) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *stream.
            let h = unsafe { out_addr(ret, stream) };
            r.op(
                "cudaStreamCreateWithPriority",
                ret,
                &Op::StreamCreate { stream: Addr(h) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamDestroy(stream: CudaStream) -> CudaError {
    let real = cuda_real!(cudaStreamDestroy: unsafe extern "C" fn(CudaStream) -> CudaError);
    intercept(
        "cudaStreamDestroy",
        real,
        Order::Lifecycle,
        // SAFETY: the application's argument, forwarded unchanged.
        |f| unsafe { f(stream) },
        |r, ret| {
            r.op(
                "cudaStreamDestroy",
                ret,
                &Op::StreamDestroy { stream: s(stream) },
            )
        },
    )
}

macro_rules! stream_sync_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(stream: CudaStream) -> CudaError {
            let real = cuda_real!($name: unsafe extern "C" fn(CudaStream) -> CudaError);
            intercept(
                stringify!($name),
                real,
                Order::Free,
                // SAFETY: the application's argument, forwarded unchanged.
                |f| unsafe { f(stream) },
                |r, ret| r.op(stringify!($name), ret, &Op::StreamSync { stream: s(stream) }),
            )
        }
    };
}
stream_sync_fn!(cudaStreamSynchronize);
stream_sync_fn!(cudaStreamSynchronize_ptsz);

macro_rules! stream_wait_event_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(stream: CudaStream, event: CudaEvent, flags: c_uint) -> CudaError {
            let real = cuda_real!($name: unsafe extern "C" fn(CudaStream, CudaEvent, c_uint) -> CudaError);
            intercept(
                stringify!($name),
                real,
                Order::Free,
                // SAFETY: the application's arguments, forwarded unchanged.
                |f| unsafe { f(stream, event, flags) },
                |r, ret| {
                    r.op(
                        stringify!($name),
                        ret,
                        &Op::StreamWaitEvent {
                            stream: s(stream),
                            event: e(event),
                        },
                    )
                },
            )
        }
    };
}
stream_wait_event_fn!(cudaStreamWaitEvent);
stream_wait_event_fn!(cudaStreamWaitEvent_ptsz);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaEventCreate(event: *mut CudaEvent) -> CudaError {
    let real = cuda_real!(cudaEventCreate: unsafe extern "C" fn(*mut CudaEvent) -> CudaError);
    intercept(
        "cudaEventCreate",
        real,
        Order::Lifecycle,
        // SAFETY: the application's argument, forwarded unchanged.
        |f| unsafe { f(event) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *event.
            let h = unsafe { out_addr(ret, event) };
            r.op("cudaEventCreate", ret, &Op::EventCreate { event: Addr(h) })
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaEventCreateWithFlags(
    event: *mut CudaEvent,
    flags: c_uint,
) -> CudaError {
    let real = cuda_real!(cudaEventCreateWithFlags: unsafe extern "C" fn(*mut CudaEvent, c_uint) -> CudaError);
    intercept(
        "cudaEventCreateWithFlags",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(event, flags) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *event.
            let h = unsafe { out_addr(ret, event) };
            r.op(
                "cudaEventCreateWithFlags",
                ret,
                &Op::EventCreate { event: Addr(h) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaEventDestroy(event: CudaEvent) -> CudaError {
    let real = cuda_real!(cudaEventDestroy: unsafe extern "C" fn(CudaEvent) -> CudaError);
    intercept(
        "cudaEventDestroy",
        real,
        Order::Lifecycle,
        // SAFETY: the application's argument, forwarded unchanged.
        |f| unsafe { f(event) },
        |r, ret| {
            r.op(
                "cudaEventDestroy",
                ret,
                &Op::EventDestroy { event: e(event) },
            )
        },
    )
}

macro_rules! event_record_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(event: CudaEvent, stream: CudaStream) -> CudaError {
            let real = cuda_real!($name: unsafe extern "C" fn(CudaEvent, CudaStream) -> CudaError);
            intercept(
                stringify!($name),
                real,
                Order::Free,
                // SAFETY: the application's arguments, forwarded unchanged.
                |f| unsafe { f(event, stream) },
                |r, ret| {
                    r.op(
                        stringify!($name),
                        ret,
                        &Op::EventRecord {
                            event: e(event),
                            stream: s(stream),
                        },
                    )
                },
            )
        }
    };
}
event_record_fn!(cudaEventRecord);
event_record_fn!(cudaEventRecord_ptsz);

macro_rules! event_record_flags_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(event: CudaEvent, stream: CudaStream, flags: c_uint) -> CudaError {
            let real = cuda_real!($name: unsafe extern "C" fn(CudaEvent, CudaStream, c_uint) -> CudaError);
            intercept(
                stringify!($name),
                real,
                Order::Free,
                // SAFETY: the application's arguments, forwarded unchanged.
                |f| unsafe { f(event, stream, flags) },
                |r, ret| {
                    r.op(
                        stringify!($name),
                        ret,
                        &Op::EventRecord {
                            event: e(event),
                            stream: s(stream),
                        },
                    )
                },
            )
        }
    };
}
event_record_flags_fn!(cudaEventRecordWithFlags);
event_record_flags_fn!(cudaEventRecordWithFlags_ptsz);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaEventSynchronize(event: CudaEvent) -> CudaError {
    let real = cuda_real!(cudaEventSynchronize: unsafe extern "C" fn(CudaEvent) -> CudaError);
    intercept(
        "cudaEventSynchronize",
        real,
        Order::Free,
        // SAFETY: the application's argument, forwarded unchanged.
        |f| unsafe { f(event) },
        |r, ret| {
            r.op(
                "cudaEventSynchronize",
                ret,
                &Op::EventSync { event: e(event) },
            )
        },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceSynchronize() -> CudaError {
    let real = cuda_real!(cudaDeviceSynchronize: unsafe extern "C" fn() -> CudaError);
    intercept(
        "cudaDeviceSynchronize",
        real,
        Order::Free,
        // SAFETY: no arguments.
        |f| unsafe { f() },
        |r, ret| r.op("cudaDeviceSynchronize", ret, &Op::DeviceSync),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaSetDevice(device: c_int) -> CudaError {
    let real = cuda_real!(cudaSetDevice: unsafe extern "C" fn(c_int) -> CudaError);
    intercept(
        "cudaSetDevice",
        real,
        Order::Free,
        // SAFETY: the application's argument, forwarded unchanged.
        |f| unsafe { f(device) },
        |r, ret| r.op("cudaSetDevice", ret, &Op::SetDevice { device }),
    )
}
