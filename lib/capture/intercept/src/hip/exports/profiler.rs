//! Recorded handlers of the profiler range, `hipProfilerStart` and
//! `hipProfilerStop`: forwarded, then the capture window's trigger
//! (`hrr_recorder::record::window`, setting `profiler`); no event of their
//! own. [`HipDevice`] is how a window's start reaches the device: the
//! runtime's `hipDeviceSynchronize` and `hipMemcpy`, called past this
//! library (never recorded).

use std::ffi::c_void;
use std::sync::OnceLock;

use hip_api::args;
use hrr_interpose::dl;
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::window::{DeviceAccess, Trigger};

use super::intercept;
use crate::hip::types::HipError;
use hrr_recorder::record::recorder::Order;

/// `hipMemcpyDeviceToHost`.
const DEVICE_TO_HOST: i32 = 2;

type SyncFn = unsafe extern "C" fn() -> i32;
type CopyFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize, i32) -> i32;

/// The HIP runtime, reached unrecorded.
pub struct HipDevice;

fn sync_fn() -> Option<SyncFn> {
    static F: OnceLock<Option<SyncFn>> = OnceLock::new();
    *F.get_or_init(|| {
        // SAFETY: the runtime's hipDeviceSynchronize has this signature.
        dl::dlsym_next(c"hipDeviceSynchronize")
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, SyncFn>(p) })
    })
}

fn copy_fn() -> Option<CopyFn> {
    static F: OnceLock<Option<CopyFn>> = OnceLock::new();
    *F.get_or_init(|| {
        // SAFETY: the runtime's hipMemcpy has this signature.
        dl::dlsym_next(c"hipMemcpy")
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, CopyFn>(p) })
    })
}

impl DeviceAccess for HipDevice {
    fn synchronize(&self) -> Result<(), i32> {
        let f = sync_fn().ok_or(-1)?;
        // SAFETY: no arguments.
        match unsafe { f() } {
            0 => Ok(()),
            e => Err(e),
        }
    }

    fn read(&self, ptr: u64, buf: &mut [u8]) -> Result<(), i32> {
        let f = copy_fn().ok_or(-1)?;
        // SAFETY: `buf` is ours and holds `buf.len()` bytes; `ptr` is a live
        // device allocation of at least that size (the recorder's word).
        match unsafe {
            f(
                buf.as_mut_ptr().cast(),
                ptr as *const c_void,
                buf.len(),
                DEVICE_TO_HOST,
            )
        } {
            0 => Ok(()),
            e => Err(e),
        }
    }
}

#[inline]
pub unsafe fn hipProfilerStart(
    real: &'static Real<args::hipProfilerStart>,
    a: args::hipProfilerStart,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Free, |r, _, _| {
            r.window_trigger(Trigger::ProfilerStart, &HipDevice, crate::capture::closing)
        })
    }
}

#[inline]
pub unsafe fn hipProfilerStop(
    real: &'static Real<args::hipProfilerStop>,
    a: args::hipProfilerStop,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Free, |r, _, _| {
            r.window_trigger(Trigger::ProfilerStop, &HipDevice, crate::capture::closing)
        })
    }
}
