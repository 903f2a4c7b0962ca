//! What happens to recording across `fork` and `exec`.
//!
//! - **fork**: the child is not recorded. A `pthread_atfork` child handler
//!   turns the recorder off ([`Sink::forked`]) before the child runs any
//!   code of its own; the
//!   events the parent had buffered stay the parent's (the child never
//!   flushes them, never finishes the archive, and its exit paths check the
//!   pid). HIP runtimes do not support using the device in a forked child
//!   anyway.
//! - **vfork**: no atfork handler runs and the child shares the parent's
//!   memory, so nothing may be changed; the exit paths (`_exit`, destructors)
//!   and the signal flush compare `getpid()` with the recorder's pid and do
//!   nothing in the child.
//! - **exec** (after fork, or `posix_spawn`): the new image loads the
//!   interposer again through the inherited `LD_PRELOAD` and `HRR_OUT`. Its
//!   first HIP call finds the archive claimed (`archive_claim`) and records
//!   into `<DIR>-<pid>.hrr`; a program that never calls HIP records nothing.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::Sink;

static INSTALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn in_child<S: Sink>() {
    S::forked();
}

/// Registers the atfork child handler (once per process): `S` stops
/// recording in the child.
pub fn install<S: Sink>() {
    if INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    // SAFETY: in_child is a plain extern "C" fn that lives as long as the
    // process (this library is never unloaded: it is preloaded).
    unsafe { libc::pthread_atfork(None, None, Some(in_child::<S>)) };
}
