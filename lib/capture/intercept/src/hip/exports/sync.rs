//! Recorded handlers: streams, events, device synchronisation and device
//! selection, each one line of a macro table (the op it records, built from
//! the table's `args::NAME` fields).

use hip_api::args;
use hrr_core::{Addr, Op};

use super::intercept;
use crate::hip::types::HipError;
use hrr_interpose::call_args::out_addr;
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::recorder::Order;
use hrr_recorder::record::recorder::Recorder;

/// Stream work a capture took into a graph: not run, so not recorded.
#[inline(always)]
fn captured(op: &Op) -> bool {
    match op {
        Op::EventRecord { stream, .. } | Op::StreamWaitEvent { stream, .. } => {
            super::graph::captured(stream.0)
        }
        _ => false,
    }
}

fn a(p: *mut std::ffi::c_void) -> Addr {
    Addr(p as u64)
}

/// `NAME(OUT_STREAM);`: creates a stream, recorded as `stream_create`.
macro_rules! stream_creates {
    ($($name:ident($stream:ident);)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, a: args::$name) -> HipError {
            let record = |r: &Recorder, api, ret| {
                // SAFETY: read only after success, when the runtime wrote it.
                let h = unsafe { out_addr(ret, a.$stream) };
                r.op(api, ret, &Op::StreamCreate { stream: Addr(h) })
            };
            // SAFETY: the export's contract: the application's arguments.
            unsafe { intercept(real, a, Order::Lifecycle, record) }
        }
    )*};
}

stream_creates! {
    hipStreamCreate(stream);
    hipStreamCreateWithFlags(stream);
    hipStreamCreateWithPriority(stream);
    // A stream restricted to some compute units: the same stream to replay.
    hipExtStreamCreateWithCUMask(stream);
}

/// `NAME(OUT_EVENT);`: creates an event, recorded as `event_create`.
macro_rules! event_creates {
    ($($name:ident($event:ident);)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, a: args::$name) -> HipError {
            let record = |r: &Recorder, api, ret| {
                // SAFETY: read only after success, when the runtime wrote it.
                let h = unsafe { out_addr(ret, a.$event) };
                r.op(api, ret, &Op::EventCreate { event: Addr(h) })
            };
            // SAFETY: the export's contract: the application's arguments.
            unsafe { intercept(real, a, Order::Lifecycle, record) }
        }
    )*};
}

event_creates! {
    hipEventCreate(event);
    hipEventCreateWithFlags(event);
}

/// `NAME, ORDER => |a| OP;`: any other call recorded as one op built from
/// its arguments `a`.
macro_rules! ops {
    ($($name:ident, $order:ident => |$a:ident| $op:expr;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, $a: args::$name) -> HipError {
            // SAFETY: the export's contract: the application's arguments.
            unsafe {
                intercept(real, $a, Order::$order, |r, api, ret| {
                    let op = $op;
                    if !captured(&op) {
                        r.op(api, ret, &op)
                    }
                })
            }
        }
    )*};
}

ops! {
    hipStreamDestroy, Lifecycle => |x| Op::StreamDestroy { stream: a(x.stream) };
    hipStreamSynchronize, Free => |x| Op::StreamSync { stream: a(x.stream) };
    hipStreamWaitEvent, Free => |x| Op::StreamWaitEvent { stream: a(x.stream), event: a(x.event) };
    hipEventDestroy, Lifecycle => |x| Op::EventDestroy { event: a(x.event) };
    hipEventRecord, Free => |x| Op::EventRecord { event: a(x.event), stream: a(x.stream) };
    hipEventSynchronize, Free => |x| Op::EventSync { event: a(x.event) };
    hipDeviceSynchronize, Free => |_x| Op::DeviceSync;
    // The current context is the device's primary one: a device sync.
    hipCtxSynchronize, Free => |_x| Op::DeviceSync;
    hipSetDevice, Free => |x| Op::SetDevice { device: x.deviceId };
}
