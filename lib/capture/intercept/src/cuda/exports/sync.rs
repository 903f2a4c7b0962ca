//! CUDA streams, events, device synchronisation, device selection and the
//! profiler range (the capture window's trigger, `crate::cuda::window`).
//! Handlers of the runtime table's entries (signatures:
//! `cuda_api::cudart_fn!`). Stream handles are recorded through
//! `stream_id`: the null stream, `cudaStreamLegacy` and
//! `cudaStreamPerThread` are all `"0x0"`.

#![allow(non_snake_case)]

use cuda_api::runtime::types::*;
use hrr_core::{Addr, Op};

use super::{cuda_handlers, intercept};
use crate::cuda::types::stream_id;
use hrr_interpose::call_args::out_addr;
use hrr_recorder::record::recorder::Order;
use hrr_recorder::record::recorder::Recorder;
use hrr_recorder::record::window::Trigger;

fn s(p: cudaStream_t) -> Addr {
    Addr(stream_id(p as u64))
}

fn e(p: cudaEvent_t) -> Addr {
    Addr(p as u64)
}

cuda_handlers! {
    [cudaStreamCreate, cudaStreamCreateWithFlags, cudaStreamCreateWithPriority] |real, a, api| {
        let record = |r: &Recorder, ret| {
            // SAFETY: read only after success, when the runtime wrote *stream.
            let h = unsafe { out_addr(ret, a.stream) };
            r.op(api, ret, &Op::StreamCreate { stream: Addr(h) })
        };
        // SAFETY: the export's contract: `a` holds the application's arguments.
        unsafe { intercept(real, a, Order::Lifecycle, record) }
    }
    [cudaStreamDestroy] |real, a, api| {
        // SAFETY: as above.
        unsafe {
            intercept(real, a, Order::Lifecycle, |r, ret| {
                r.op(api, ret, &Op::StreamDestroy { stream: s(a.stream) })
            })
        }
    }
    [cudaStreamSynchronize, cudaStreamSynchronize_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe {
            intercept(real, a, Order::Free, |r, ret| {
                r.op(api, ret, &Op::StreamSync { stream: s(a.stream) })
            })
        }
    }
    [cudaStreamWaitEvent, cudaStreamWaitEvent_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe {
            intercept(real, a, Order::Free, |r, ret| {
                if super::joins_capture(api, a.stream) {
                    return;
                }
                let op = Op::StreamWaitEvent { stream: s(a.stream), event: e(a.event) };
                r.op(api, ret, &op)
            })
        }
    }
    [cudaEventCreate, cudaEventCreateWithFlags] |real, a, api| {
        let record = |r: &Recorder, ret| {
            // SAFETY: read only after success, when the runtime wrote *event.
            let h = unsafe { out_addr(ret, a.event) };
            r.op(api, ret, &Op::EventCreate { event: Addr(h) })
        };
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, record) }
    }
    [cudaEventDestroy] |real, a, api| {
        // SAFETY: as above.
        unsafe {
            intercept(real, a, Order::Lifecycle, |r, ret| {
                r.op(api, ret, &Op::EventDestroy { event: e(a.event) })
            })
        }
    }
    [cudaEventRecord, cudaEventRecord_ptsz, cudaEventRecordWithFlags, cudaEventRecordWithFlags_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe {
            intercept(real, a, Order::Free, |r, ret| {
                if super::joins_capture(api, a.stream) {
                    return;
                }
                let op = Op::EventRecord { event: e(a.event), stream: s(a.stream) };
                r.op(api, ret, &op)
            })
        }
    }
    [cudaEventSynchronize] |real, a, api| {
        // SAFETY: as above.
        unsafe {
            intercept(real, a, Order::Free, |r, ret| {
                r.op(api, ret, &Op::EventSync { event: e(a.event) })
            })
        }
    }
    [cudaDeviceSynchronize] |real, a, api| {
        // SAFETY: as above (no arguments).
        unsafe { intercept(real, a, Order::Free, |r, ret| r.op(api, ret, &Op::DeviceSync)) }
    }
    [cudaProfilerStart] |real, a, _api| {
        // SAFETY: as above (no arguments).
        unsafe {
            intercept(real, a, Order::Free, |r, _| {
                crate::cuda::window::trigger(r, Trigger::ProfilerStart)
            })
        }
    }
    [cudaProfilerStop] |real, a, _api| {
        // SAFETY: as above (no arguments).
        unsafe {
            intercept(real, a, Order::Free, |r, _| {
                crate::cuda::window::trigger(r, Trigger::ProfilerStop)
            })
        }
    }
    [cudaSetDevice] |real, a, api| {
        // SAFETY: as above.
        unsafe {
            intercept(real, a, Order::Free, |r, ret| {
                // The device is current before its event is written (the
                // driver calls the runtime made for it are nested).
                if ret == 0
                    && let Ok(d) = u32::try_from(a.device)
                {
                    hrr_recorder::record::current_device::set(d);
                }
                r.op(api, ret, &Op::SetDevice { device: a.device })
            })
        }
    }
}
