//! `HipLauncher`: a kernel launch through the HIP runtime, on whichever
//! thread makes it: the replay thread, or the launch thread
//! ([`hrr_replay::launch_thread`]) over copies of the two entry points it needs.

use std::ffi::{CStr, c_void};

use hrr_replay::device::{DeviceError, Launch};
use hrr_replay::launch_thread::Launcher;

use crate::ffi::{self, HipError, fns};
use crate::hip_device::ptr;

/// The launch thread's end of a [`crate::HipDevice`]. The runtime stays
/// loaded while it runs: the device stops the thread before unloading it.
pub(crate) struct HipLauncher {
    pub(crate) launch: fns::hipModuleLaunchKernel,
    pub(crate) error_string: fns::hipGetErrorString,
    pub(crate) set_device: fns::hipSetDevice,
}

impl Launcher for HipLauncher {
    /// HIP's current device is per thread: the launch thread sets its own.
    fn select(&mut self, device: u32) -> Result<(), DeviceError> {
        // SAFETY: a plain HIP call; an ordinal the runtime lacks is its error.
        let code = unsafe { (self.set_device)(device as std::ffi::c_int) };
        check(self.error_string, "hipSetDevice", code)
    }

    fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
        launch(self.launch, self.error_string, l)
    }
}

/// Makes launch `l` through `hipModuleLaunchKernel`, its arguments packed in `extra`.
pub(crate) fn launch(
    f: fns::hipModuleLaunchKernel,
    error_string: fns::hipGetErrorString,
    l: &Launch<'_>,
) -> Result<(), DeviceError> {
    let kernarg = l.packed_args();
    let mut size = kernarg.len();
    let mut extra = launch_extra(&kernarg, &mut size);
    // SAFETY: `kernarg` and `size` outlive the call, which copies the
    // argument buffer before returning (HIP's launch contract).
    let code = unsafe {
        f(
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
            extra.as_mut_ptr(),
        )
    };
    // "invalid argument" alone does not say which: name what was passed.
    check(error_string, "hipModuleLaunchKernel", code).map_err(|mut e| {
        if let DeviceError::Call { message, .. } = &mut e {
            *message = format!(
                "{message}; launched with grid {:?}, block {:?}, {} bytes of shared memory, {} bytes of arguments",
                l.grid, l.block, l.shmem, size
            );
        }
        e
    })
}

/// A runtime call's code as a result, with the runtime's description.
pub(crate) fn check(
    error_string: fns::hipGetErrorString,
    call: &'static str,
    code: HipError,
) -> Result<(), DeviceError> {
    if code == ffi::err::SUCCESS {
        return Ok(());
    }
    // SAFETY: hipGetErrorString returns a static NUL-terminated string (or null).
    let msg = unsafe {
        let p = error_string(code);
        if p.is_null() {
            String::from("unknown error")
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    Err(DeviceError::Call {
        call,
        code: i64::from(code),
        message: msg,
    })
}

/// The `extra` array of a launch (or kernel node) that passes the arguments
/// as one buffer: `kernarg`, of `*size` bytes. Both must outlive its use.
pub(crate) fn launch_extra(kernarg: &[u8], size: &mut usize) -> [*mut c_void; 5] {
    // HIP_LAUNCH_PARAM_* are small integers passed where pointers go.
    let marker = std::ptr::without_provenance_mut::<c_void>;
    [
        marker(ffi::LAUNCH_PARAM_BUFFER_POINTER),
        // The runtime only reads the buffer (`void**` for C's sake).
        kernarg.as_ptr().cast_mut().cast(),
        marker(ffi::LAUNCH_PARAM_BUFFER_SIZE),
        (size as *mut usize).cast(),
        marker(ffi::LAUNCH_PARAM_END),
    ]
}
