//! A kernel's memory fault becomes a launch error, not a dead process.
//!
//! On a GPU a kernel that reads or writes an address it does not own stops
//! with `hipErrorIllegalAddress`; the host process lives on. On this runtime
//! kernels are native code running on the runtime's threads (the launching
//! thread and the block pool), where the same bug is a `SIGSEGV` that kills
//! the application — or `hrr-play`, replaying an archive whose pointers it
//! could not all translate.
//!
//! Every block therefore runs through [`call`], a small C function
//! (`fault_guard.c`) that sets a per-thread recovery point with `sigsetjmp`
//! and calls the kernel. Handlers for `SIGSEGV`, `SIGBUS`, `SIGFPE` and
//! `SIGILL` (installed once, `SA_ONSTACK`, on an alternate signal stack per
//! thread so that a kernel's stack overflow is caught too) `siglongjmp` back
//! to it when the fault was raised by the CPU on a thread that is inside a
//! block; [`call`] then returns [`Fault`]. Any other fault — outside a kernel,
//! on another thread, or sent with `kill` — goes to the handler installed
//! before ours (Rust's stack-overflow reporter, an application's), or to the
//! default action.
//!
//! Why C: `sigsetjmp` returns twice, which Rust cannot express soundly, and
//! the jump must skip only C frames (the kernel's): between the recovery
//! point and the fault there is no Rust frame whose destructors would be
//! skipped. The handler touches only an initial-exec TLS pointer and calls
//! async-signal-safe functions.
//!
//! What recovery cannot undo: memory the kernel wrote before faulting, and
//! locks it held if it faulted inside a library call (a kernel calling
//! `printf`, say). The launch reports the fault; what the kernel already did
//! stays done, as on a GPU.

use std::ffi::c_void;

use crate::ffi::{CpuKernelFn, CpuLaunch, HipError, err};

/// `hipErrorIllegalAddress`: what a GPU reports for a kernel's bad access.
pub const ILLEGAL_ADDRESS: HipError = 700;

unsafe extern "C" {
    fn hrr_fault_install() -> i32;
    fn hrr_fault_call(
        f: CpuKernelFn,
        launch: *const CpuLaunch,
        kernarg: *const c_void,
        addr: *mut *mut c_void,
    ) -> i32;
}

/// A fault a kernel block raised: the signal and the faulting address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The signal number (`SIGSEGV`, `SIGBUS`, `SIGFPE`, `SIGILL`).
    pub signal: i32,
    /// The faulting address the kernel touched (`si_addr`).
    pub addr: usize,
}

impl Fault {
    /// The HIP error a GPU would report for it: a bad address for memory
    /// faults, an unspecified launch failure otherwise.
    pub fn hip_error(&self) -> HipError {
        match self.signal {
            libc::SIGSEGV | libc::SIGBUS => ILLEGAL_ADDRESS,
            _ => err::LAUNCH_FAILURE,
        }
    }

    /// The signal's name, for messages.
    pub fn signal_name(&self) -> &'static str {
        match self.signal {
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGBUS => "SIGBUS",
            libc::SIGFPE => "SIGFPE",
            libc::SIGILL => "SIGILL",
            _ => "signal",
        }
    }
}

/// Installs the fault handlers (once per process). Returns whether they are
/// in place; without them a faulting kernel kills the process, as before.
pub fn install() -> bool {
    // SAFETY: hrr_fault_install only calls pthread_once, pthread_key_create
    // and sigaction; safe to call from any thread, any number of times.
    unsafe { hrr_fault_install() == 0 }
}

/// Runs one block of `entry` under the recovery point.
///
/// # Safety
/// `entry` must be a CPU kernel and `launch`/`kernarg` valid for it, as for
/// calling `entry` directly. [`install`] must have been called for faults to
/// be caught.
pub unsafe fn call(
    entry: CpuKernelFn,
    launch: &CpuLaunch,
    kernarg: *const c_void,
) -> Result<(), Fault> {
    let mut addr: *mut c_void = std::ptr::null_mut();
    // SAFETY: the caller vouches for the kernel call; `addr` is a valid
    // out-pointer for the call's duration.
    let sig = unsafe { hrr_fault_call(entry, launch, kernarg, &mut addr) };
    if sig == 0 {
        Ok(())
    } else {
        Err(Fault {
            signal: sig,
            addr: addr as usize,
        })
    }
}
