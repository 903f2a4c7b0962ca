//! `CudaLauncher`: a kernel launch through the driver, on whichever thread
//! makes it: the replay thread, or the launch thread
//! ([`hrr_replay::launch_thread`]) over a copy of the driver and context.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{Arc, Mutex};

use cuda_api::{CUlaunchAttribute, CUlaunchConfig, LAUNCH_ATTR_VALUE_SIZE};
use hrr_core::LaunchAttr;
use hrr_replay::device::{DeviceError, Launch};
use hrr_replay::launch_thread::Launcher;

use crate::device::ptr;
use crate::driver::CudaDriver;
use crate::error::CudaError;
use crate::ffi::{CUcontext, CUdevice};
use crate::kernarg::Kernarg;

/// The launch thread's end of a [`crate::CudaDevice`]: the driver and the
/// device's primary context.
pub(crate) struct CudaLauncher {
    drv: &'static CudaDriver,
    /// The context, as an address: a raw pointer is not `Send`, and the
    /// context outlives the thread (the device stops it before releasing it).
    ctx: usize,
    /// The device's primary contexts by ordinal (see `CudaDevice`), for
    /// [`Launcher::select`].
    contexts: Arc<Mutex<HashMap<c_int, (CUdevice, usize)>>>,
}

impl CudaLauncher {
    pub(crate) fn new(
        drv: &'static CudaDriver,
        ctx: CUcontext,
        contexts: Arc<Mutex<HashMap<c_int, (CUdevice, usize)>>>,
    ) -> CudaLauncher {
        CudaLauncher {
            drv,
            ctx: ctx as usize,
            contexts,
        }
    }
}

impl Launcher for CudaLauncher {
    fn bind(&mut self) -> Result<(), DeviceError> {
        // SAFETY: the device's retained primary context; it is released only
        // after this thread has ended.
        let code = unsafe { (self.drv.api().cuCtxSetCurrent)(self.ctx as CUcontext) };
        Ok(self.drv.check("cuCtxSetCurrent", code)?)
    }

    /// The device's primary context, which `select_device` retained before
    /// the launches queued for it.
    fn select(&mut self, device: u32) -> Result<(), DeviceError> {
        let ctx = c_int::try_from(device).ok().and_then(|d| {
            let contexts = self.contexts.lock().unwrap_or_else(|e| e.into_inner());
            contexts.get(&d).map(|&(_, c)| c)
        });
        let Some(ctx) = ctx else {
            return Err(DeviceError::Call {
                call: "cuCtxSetCurrent",
                code: -1,
                message: format!("device {device} has no retained context"),
            });
        };
        self.ctx = ctx;
        self.bind()
    }

    fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
        launch(self.drv, l)
    }
}

/// Makes launch `l` in the context current on this thread: `cuLaunchKernel`,
/// or `cuLaunchKernelEx` when it carries attributes.
pub(crate) fn launch(drv: &CudaDriver, l: &Launch<'_>) -> Result<(), DeviceError> {
    let mut kernarg = Kernarg::new(l.args);
    let mut extra = kernarg.extra();
    // A kernel without parameters takes neither array.
    let extra_ptr = if kernarg.is_empty() {
        std::ptr::null_mut()
    } else {
        extra.as_mut_ptr()
    };
    let (name, code) = if l.attrs.is_empty() {
        // SAFETY: `kernarg` (buffer and size) and `extra` outlive the call,
        // and cuLaunchKernel copies the parameter buffer before returning.
        let code = unsafe {
            (drv.api().cuLaunchKernel)(
                ptr(l.func),
                l.grid[0],
                l.grid[1],
                l.grid[2],
                l.block[0],
                l.block[1],
                l.block[2],
                l.shmem,
                ptr(l.stream),
                std::ptr::null_mut(),
                extra_ptr,
            )
        };
        ("cuLaunchKernel", code)
    } else {
        let f = drv.api().cuLaunchKernelEx.ok_or(CudaError::Unsupported {
            symbol: "cuLaunchKernelEx",
            needs: "12.0",
        })?;
        let mut attrs: Vec<CUlaunchAttribute> = l.attrs.iter().map(launch_attribute).collect();
        let config = CUlaunchConfig {
            grid_dim_x: l.grid[0],
            grid_dim_y: l.grid[1],
            grid_dim_z: l.grid[2],
            block_dim_x: l.block[0],
            block_dim_y: l.block[1],
            block_dim_z: l.block[2],
            shared_mem_bytes: l.shmem,
            h_stream: ptr(l.stream),
            attrs: attrs.as_mut_ptr(),
            num_attrs: attrs.len() as u32,
        };
        // SAFETY: `config`, `attrs`, `kernarg` and `extra` outlive the call,
        // which copies the parameters before returning.
        let code = unsafe { f(&config, ptr(l.func), std::ptr::null_mut(), extra_ptr) };
        ("cuLaunchKernelEx", code)
    };
    Ok(drv.check(name, code)?)
}

/// A recorded attribute as `cuLaunchKernelEx` takes it: its value bytes
/// at the start of the 64-byte union, the rest zero.
pub(crate) fn launch_attribute(a: &LaunchAttr) -> CUlaunchAttribute {
    let mut value = [0u8; LAUNCH_ATTR_VALUE_SIZE];
    let n = a.hex.0.len().min(LAUNCH_ATTR_VALUE_SIZE);
    value[..n].copy_from_slice(&a.hex.0[..n]);
    CUlaunchAttribute {
        id: a.id,
        pad: [0; 4],
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuda_api::launch_attr;

    #[test]
    fn recorded_attributes_fill_the_value_union() {
        let a = LaunchAttr {
            id: launch_attr::CLUSTER_DIMENSION,
            hex: hrr_core::HexBytes(vec![2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]),
        };
        let c = launch_attribute(&a);
        assert_eq!(c.id, 4);
        assert_eq!(&c.value[..12], &a.hex.0[..]);
        assert!(c.value[12..].iter().all(|&b| b == 0));
        let long = LaunchAttr {
            id: 2,
            hex: hrr_core::HexBytes(vec![7; 80]),
        };
        assert_eq!(launch_attribute(&long).value, [7; 64], "cut to the union");
    }
}
