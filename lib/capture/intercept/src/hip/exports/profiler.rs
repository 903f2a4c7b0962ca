//! Recorded handlers of the profiler range, `hipProfilerStart` and
//! `hipProfilerStop`: forwarded, then the capture window's trigger
//! (`hrr_recorder::record::window`, setting `profiler`); no event of their
//! own. [`HipDevice`] is how a window's start reaches the device: the
//! runtime's `hipDeviceSynchronize`, `hipMemcpy` and (an array's contents)
//! `hipMemcpy3D`, called past this library (never recorded).

use std::ffi::c_void;
use std::sync::OnceLock;

use hip_api::args;
use hip_api::types::{hipArray_t, hipExtent, hipMemcpy3DParms, hipPitchedPtr, hipPos};
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
type Copy3DFn = unsafe extern "C" fn(*const hipMemcpy3DParms) -> i32;

/// The HIP runtime, reached unrecorded.
pub struct HipDevice;

/// Before a kernel launch is forwarded: a capture window may open or close
/// there (one check when no window is set).
pub fn before_launch(g: &Option<crate::capture::Guard>) {
    if let Some(g) = g
        && g.recorder().windowed()
    {
        g.run(|r| r.window_before_launch(&HipDevice, crate::capture::closing));
    }
}

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

fn copy_3d_fn() -> Option<Copy3DFn> {
    static F: OnceLock<Option<Copy3DFn>> = OnceLock::new();
    *F.get_or_init(|| {
        // SAFETY: the runtime's hipMemcpy3D has this signature.
        dl::dlsym_next(c"hipMemcpy3D")
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, Copy3DFn>(p) })
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

    fn read_array(
        &self,
        array: u64,
        element: u64,
        extent: [u64; 3],
        buf: &mut [u8],
    ) -> Option<Result<(), i32>> {
        let Some(f) = copy_3d_fn() else {
            return Some(Err(-1));
        };
        let [w, h, d] = extent.map(|n| n as usize);
        let pitch = w * element as usize;
        if buf.len() != pitch * h * d {
            return Some(Err(-1));
        }
        let at = hipPos { x: 0, y: 0, z: 0 };
        let none = hipPitchedPtr {
            ptr: std::ptr::null_mut(),
            pitch: 0,
            xsize: 0,
            ysize: 0,
        };
        // The extent counts the array's elements (an array takes part).
        let p = hipMemcpy3DParms {
            srcArray: array as usize as hipArray_t,
            srcPos: at,
            srcPtr: none,
            dstArray: std::ptr::null_mut(),
            dstPos: at,
            dstPtr: hipPitchedPtr {
                ptr: buf.as_mut_ptr().cast(),
                pitch,
                xsize: w,
                ysize: h,
            },
            extent: hipExtent {
                width: w,
                height: h,
                depth: d,
            },
            kind: DEVICE_TO_HOST as _,
        };
        // SAFETY: `buf` is ours and holds `pitch * h * d` bytes; `array` is
        // a live array of this extent (the recorder's word).
        Some(match unsafe { f(&p) } {
            0 => Ok(()),
            e => Err(e),
        })
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
