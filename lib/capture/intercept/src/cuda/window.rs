//! The CUDA family's side of capture windows
//! (`hrr_recorder::record::window`): `cudaProfilerStart`/`Stop` and
//! `cuProfilerStart`/`Stop` as the `profiler` setting's trigger, kernel
//! launches counted before they are forwarded (`launches:A..B`, and where
//! `signal` acts), and [`CudaDevice`], how a window's start reaches the
//! device: the real driver's `cuCtxSynchronize`, `cuMemcpyDtoH_v2` and (an
//! array's contents) `cuMemcpy3D_v2`, never through this library's
//! wrappers.

use std::ffi::c_void;

use hrr_recorder::record::recorder::Recorder;
use hrr_recorder::record::window::{DeviceAccess, Trigger};

use cuda_api::rect::CUDA_MEMCPY3D;
use cuda_api::{CU_MEMORYTYPE_ARRAY, CU_MEMORYTYPE_HOST};

use super::driver::libcuda;

/// The driver, reached unrecorded.
pub struct CudaDevice;

impl DeviceAccess for CudaDevice {
    fn synchronize(&self) -> Result<(), i32> {
        let f = libcuda::get()
            .and_then(|l| l.queries.ctx_synchronize)
            .ok_or(-1)?;
        // SAFETY: no arguments; the calling thread's current context.
        match unsafe { f() } {
            0 => Ok(()),
            e => Err(e),
        }
    }

    fn read(&self, ptr: u64, buf: &mut [u8]) -> Result<(), i32> {
        let f = libcuda::get()
            .and_then(|l| l.queries.memcpy_dtoh)
            .ok_or(-1)?;
        // SAFETY: `buf` is ours and holds `buf.len()` bytes; `ptr` is a live
        // device allocation of at least that size (the recorder's word).
        match unsafe { f(buf.as_mut_ptr().cast::<c_void>(), ptr, buf.len()) } {
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
        let Some(f) = libcuda::get().and_then(|l| l.queries.memcpy_3d) else {
            return Some(Err(-1));
        };
        let [w, h, d] = extent.map(|n| n as usize);
        let pitch = w * element as usize;
        if buf.len() != pitch * h * d {
            return Some(Err(-1));
        }
        let c = CUDA_MEMCPY3D {
            src_x_in_bytes: 0,
            src_y: 0,
            src_z: 0,
            src_lod: 0,
            src_memory_type: CU_MEMORYTYPE_ARRAY,
            src_host: std::ptr::null(),
            src_device: 0,
            src_array: array as usize as *mut c_void,
            reserved0: std::ptr::null_mut(),
            src_pitch: 0,
            src_height: 0,
            dst_x_in_bytes: 0,
            dst_y: 0,
            dst_z: 0,
            dst_lod: 0,
            dst_memory_type: CU_MEMORYTYPE_HOST,
            dst_host: buf.as_mut_ptr().cast(),
            dst_device: 0,
            dst_array: std::ptr::null_mut(),
            reserved1: std::ptr::null_mut(),
            dst_pitch: pitch,
            dst_height: h,
            width_in_bytes: pitch,
            height: h,
            depth: d,
        };
        // SAFETY: `buf` is ours and holds `pitch * h * d` bytes; `array` is
        // a live array of this extent (the recorder's word).
        Some(match unsafe { f((&raw const c).cast()) } {
            0 => Ok(()),
            e => Err(e),
        })
    }
}

/// Whether driver entry point `api` launches a kernel (evaluated at
/// compile time for each wrapper).
pub const fn is_kernel_launch(api: &str) -> bool {
    starts_with(api, "cuLaunchKernel") || starts_with(api, "cuLaunchCooperativeKernel")
}

const fn starts_with(s: &str, p: &str) -> bool {
    let (s, p) = (s.as_bytes(), p.as_bytes());
    if s.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if s[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A profiler start or stop the runtime layer recorded.
pub fn trigger(r: &'static Recorder, t: Trigger) {
    r.window_trigger(t, &CudaDevice, crate::capture::closing);
}

/// A profiler start or stop the driver layer recorded.
pub fn trigger_global(t: Trigger) {
    if let Some(r) = crate::capture::existing() {
        trigger(r, t);
    }
}

/// Before a kernel launch is forwarded (see the module docs).
pub fn before_launch(r: &'static Recorder) {
    r.window_before_launch(&CudaDevice, crate::capture::closing);
}
