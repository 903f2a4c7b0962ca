//! Recorded handlers: streams, events, device synchronisation, device
//! selection and reset, each one line of a macro table (the op it records, built from
//! the table's `args::NAME` fields).

use std::ffi::c_void;

use api_table::Entry;
use hip_api::args;
use hrr_core::{Addr, Op};

use super::intercept;
use crate::hip::types::{HipError, HipStream};
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
}

/// `hipSetDevice`: the calling thread's current device (HIP's is per
/// thread, 0 until set) changes before its event is written, so
/// `set_device` and every later event of the thread carry the new one.
#[inline(always)]
pub unsafe fn hipSetDevice(
    real: &'static Real<args::hipSetDevice>,
    x: args::hipSetDevice,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, x, Order::Free, |r, api, ret| {
            if ret == 0
                && let Ok(d) = u32::try_from(x.deviceId)
            {
                hrr_recorder::record::current_device::set(d);
            }
            r.op(api, ret, &Op::SetDevice { device: x.deviceId })
        })
    }
}

/// `hipStreamAddCallback`: recorded as `host_func`, an ordering point. The
/// callback runs through this library's trampoline (`crate::host_funcs`),
/// so that launches after it see what it wrote to host memory. Into a
/// capturing stream it becomes a graph's host node: forwarded unchanged.
#[inline]
pub unsafe fn hipStreamAddCallback(
    real: &'static Real<args::hipStreamAddCallback>,
    a: args::hipStreamAddCallback,
) -> HipError {
    use crate::host_funcs;
    let captured = super::graph::captured(a.stream as u64);
    let mut b = a;
    if !captured && let Some(cb) = a.callback {
        let (t, data) = host_funcs::wrap_callback(cb, a.userData);
        b.callback = Some(t);
        b.userData = data;
    }
    let ours = host_funcs::is_callback_trampoline(b.callback);
    // SAFETY: the application's arguments, the callback and its data
    // possibly replaced by the trampoline's (`ours`).
    unsafe { host_func_enqueued(real, b, b.stream, captured, ours.then_some(b.userData)) }
}

/// `hipLaunchHostFunc` (ROCm 5.3 on; a runtime without it answers as for
/// any function it lacks): recorded as `host_func` like
/// [`hipStreamAddCallback`], the function run through the trampoline. Into
/// a capturing stream it becomes a graph's host node, run at each launch:
/// through the graph trampoline, which snapshots the device-to-host copies
/// before it (`super::graph`).
#[inline]
pub unsafe fn hipLaunchHostFunc(
    real: &'static Real<args::hipLaunchHostFunc>,
    a: args::hipLaunchHostFunc,
) -> HipError {
    use crate::host_funcs;
    let captured = super::graph::captured(a.stream as u64);
    let mut b = a;
    if let Some(f) = a.fn_ {
        let (t, data) = if captured {
            host_funcs::wrap_graph_host_fn(f, a.userData)
        } else {
            host_funcs::wrap_host_fn(f, a.userData)
        };
        b.fn_ = Some(t);
        b.userData = data;
    }
    let ours = host_funcs::is_host_fn_trampoline(b.fn_);
    // SAFETY: as in `hipStreamAddCallback`.
    unsafe { host_func_enqueued(real, b, b.stream, captured, ours.then_some(b.userData)) }
}

/// Forwards `b`, a host function or callback enqueued on `stream`, and
/// records it as `host_func` unless the stream is capturing (then it is a
/// graph's host node); `trampoline` is the trampoline's data when `b`
/// carries it, released when the call fails (the function never runs).
///
/// # Safety
/// `b` is the application's arguments with at most the function and its
/// data replaced by the trampoline's.
unsafe fn host_func_enqueued<A: Entry<Ret = HipError>>(
    real: &'static Real<A>,
    b: A,
    stream: HipStream,
    captured: bool,
    trampoline: Option<*mut c_void>,
) -> HipError {
    // SAFETY: per the contract.
    let ret = unsafe {
        intercept(real, b, Order::Free, |r, api, ret| {
            if !captured {
                r.op(
                    api,
                    ret,
                    &Op::HostFunc {
                        stream: Addr(stream as u64),
                    },
                )
            }
        })
    };
    if ret != 0
        && let Some(data) = trampoline
    {
        // SAFETY: the trampoline's data, handed to a call that failed.
        unsafe { crate::host_funcs::refused(data) };
    }
    ret
}

/// `hipMemcpyPeer`: a device-to-device copy between devices, with both.
#[inline]
pub unsafe fn hipMemcpyPeer(
    real: &'static Real<args::hipMemcpyPeer>,
    a: args::hipMemcpyPeer,
) -> HipError {
    let op = Op::MemcpyPeer {
        dst: Addr(a.dst as u64),
        src: Addr(a.src as u64),
        size: a.sizeBytes as u64,
        stream: None,
        dst_device: Some(a.dstDeviceId),
        src_device: Some(a.srcDeviceId),
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Free, |r, api, ret| r.op(api, ret, &op)) }
}

/// `hipMemcpyPeerAsync`: as `hipMemcpyPeer`, on a stream (into a capturing
/// stream: a graph's copy node, not recorded here).
#[inline]
pub unsafe fn hipMemcpyPeerAsync(
    real: &'static Real<args::hipMemcpyPeerAsync>,
    a: args::hipMemcpyPeerAsync,
) -> HipError {
    let op = Op::MemcpyPeer {
        dst: Addr(a.dst as u64),
        src: Addr(a.src as u64),
        size: a.sizeBytes as u64,
        stream: Some(Addr(a.stream as u64)),
        dst_device: Some(a.dstDeviceId),
        src_device: Some(a.srcDevice),
    };
    let captured = super::graph::captured(a.stream as u64);
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Free, |r, api, ret| {
            if !captured {
                r.op(api, ret, &op)
            }
        })
    }
}

/// `hipDeviceEnablePeerAccess`: recorded with the peer's ordinal.
#[inline]
pub unsafe fn hipDeviceEnablePeerAccess(
    real: &'static Real<args::hipDeviceEnablePeerAccess>,
    a: args::hipDeviceEnablePeerAccess,
) -> HipError {
    let op = Op::PeerAccess {
        peer: a.peerDeviceId,
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Free, |r, api, ret| r.op(api, ret, &op)) }
}

/// `hipDeviceReset`: the calling thread's current device reset, recorded
/// as `device_reset`; the recorder forgets what the reset destroyed there
/// (host memory stays: HIP's belongs to no device).
/// A lifecycle call: an allocation another thread makes once the reset
/// freed its address is recorded after it.
#[inline]
pub unsafe fn hipDeviceReset(
    real: &'static Real<args::hipDeviceReset>,
    a: args::hipDeviceReset,
) -> HipError {
    let device = hrr_recorder::record::current_device::current() as i32;
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.device_reset(api, ret, device, false)
        })
    }
}

/// `hipDevicePrimaryCtxReset`: device `dev`'s primary context reset, which
/// is a reset of that device (as [`hipDeviceReset`]).
#[inline]
pub unsafe fn hipDevicePrimaryCtxReset(
    real: &'static Real<args::hipDevicePrimaryCtxReset>,
    a: args::hipDevicePrimaryCtxReset,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.device_reset(api, ret, a.dev, false)
        })
    }
}
