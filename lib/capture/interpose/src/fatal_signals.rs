//! Fatal signals: write what is buffered, then let the signal do what it
//! would have done.
//!
//! Installed at the first recorded call for SIGSEGV, SIGABRT, SIGBUS,
//! SIGILL, SIGFPE, SIGTERM and SIGINT (a signal the application ignores is
//! left alone). The handler:
//! 1. writes the recorder's buffered events with async-signal-safe calls
//!    only ([`Sink::flush_from_signal`]); the manifest keeps `complete:false`,
//!    so readers know the capture died;
//! 2. restores the handler that was installed before ours (the default, or
//!    the application's);
//! 3. chains to it: a fault raised by the CPU itself (SEGV/BUS/ILL/FPE with
//!    a kernel `si_code`) returns, the faulting instruction runs again and
//!    faults into the restored handler with its original `siginfo`; any
//!    other signal is raised again and delivered when this handler returns.
//!
//! The handler is one-shot: if the restored handler lets the process go on,
//! recording goes on too, and a normal exit still finishes the archive. A
//! handler the application installs later replaces ours; the periodic flush
//! (100 ms) then bounds what a crash loses.

use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::Sink;

const SIGNALS: [c_int; 7] = [
    libc::SIGSEGV,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTERM,
    libc::SIGINT,
];

/// The actions ours replaced, one slot per signal in `SIGNALS`.
struct Previous {
    actions: [UnsafeCell<MaybeUninit<libc::sigaction>>; SIGNALS.len()],
    saved: [AtomicBool; SIGNALS.len()],
}

// SAFETY: slot i is written only by `install` (once, before `saved[i]` is set
// with Release) and read only after `saved[i]` is observed true (Acquire).
unsafe impl Sync for Previous {}

static PREVIOUS: Previous = Previous {
    actions: [const { UnsafeCell::new(MaybeUninit::uninit()) }; SIGNALS.len()],
    saved: [const { AtomicBool::new(false) }; SIGNALS.len()],
};

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs the handler for every fatal signal (once per process), flushing
/// `S`'s buffered events.
pub fn install<S: Sink>() {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    for (i, &sig) in SIGNALS.iter().enumerate() {
        let slot = PREVIOUS.actions[i].get().cast::<libc::sigaction>();
        // SAFETY: querying (null new action) only writes into our slot, which
        // nothing reads until saved[i] is set below.
        if unsafe { libc::sigaction(sig, std::ptr::null(), slot) } != 0 {
            continue;
        }
        // SAFETY: the slot was just filled by the kernel.
        if unsafe { (*slot).sa_sigaction } == libc::SIG_IGN {
            continue;
        }
        // SAFETY: an all-zero sigaction is a valid value to fill in.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = handler::<S> as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: sa_mask is a sigset_t we own; sigaction reads act and
        // writes the previous action into our slot.
        let ok = unsafe {
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, slot) == 0
        };
        if ok {
            PREVIOUS.saved[i].store(true, Ordering::Release);
        }
    }
}

extern "C" fn handler<S: Sink>(sig: c_int, info: *mut libc::siginfo_t, _ctx: *mut c_void) {
    // SAFETY: __errno_location is the calling thread's errno; we put it back.
    let errno = unsafe { *libc::__errno_location() };
    S::flush_from_signal();
    let i = SIGNALS.iter().position(|&s| s == sig);
    let restored = match i {
        Some(i) if PREVIOUS.saved[i].load(Ordering::Acquire) => {
            // SAFETY: saved[i] is set, so the slot holds the previous action.
            unsafe {
                libc::sigaction(sig, PREVIOUS.actions[i].get().cast(), std::ptr::null_mut()) == 0
            }
        }
        _ => false,
    };
    if !restored {
        // SAFETY: resetting to the default disposition is always valid.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    let code = if info.is_null() {
        0
    } else {
        // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
        unsafe { (*info).si_code }
    };
    let cpu_fault = matches!(
        sig,
        libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE
    ) && code > 0;
    if !cpu_fault {
        // SAFETY: raise is async-signal-safe; the signal stays blocked until
        // this handler returns, then reaches the restored handler.
        unsafe { libc::raise(sig) };
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}
