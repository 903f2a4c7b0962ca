//! Finishing the archive when the process ends.
//!
//! - `exit()` (and returning from `main`): a `.fini_array` destructor runs
//!   after every `atexit` handler, so calls made from those handlers (e.g.
//!   `__hipUnregisterFatBinary` from hipcc's module destructor) are recorded
//!   before the archive is finished.
//! - `_exit()` / `_Exit()` skip destructors, so they are interposed: finish,
//!   then the real one. They may be called from a signal handler, so the
//!   sink's lock is only tried (never waited on by the thread that holds it).
//!
//! Either way the archive gets its `eof` event and a manifest with
//! `complete:true`, unless this is not the recording process (a forked or
//! vforked child: `Recorder::finish` checks the pid). A process that
//! recorded nothing leaves `hrr-cap` a note at `exit()` instead
//! (`no_capture_note`).

use std::ffi::c_int;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::interpose::real_fn::real;
use crate::record::recorder;
use crate::sink::event_sink::LockMode;

fn finish(api: &str, mode: LockMode) {
    if let Some(r) = recorder::existing() {
        let _ = catch_unwind(AssertUnwindSafe(|| r.finish(api, mode)));
    }
}

extern "C" fn at_fini() {
    finish("exit", LockMode::Block);
    let _ = catch_unwind(|| {
        crate::interpose::no_capture_note::at_exit(
            recorder::existing().is_some(),
            crate::interpose::exports::queried(),
        )
    });
}

// SAFETY: `.fini_array` holds pointers to `extern "C" fn()` run by the
// dynamic loader at exit; at_fini is one and lives as long as the library.
#[used]
#[unsafe(link_section = ".fini_array")]
static FINI: extern "C" fn() = at_fini;

fn exit_group(status: c_int) -> ! {
    // SAFETY: exit_group ends the process; it takes only the status.
    unsafe { libc::syscall(libc::SYS_exit_group, status) };
    unreachable!("exit_group returned")
}

/// libc's `_exit`: finishes the archive, then ends the process.
///
/// # Safety
/// None beyond libc's: any status may be passed; it does not return.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _exit(status: c_int) -> ! {
    finish("_exit", LockMode::Try);
    match real!(_exit: unsafe extern "C" fn(c_int) -> !) {
        // SAFETY: the application's argument, forwarded unchanged.
        Some(f) => unsafe { f(status) },
        None => exit_group(status),
    }
}

/// libc's `_Exit`: finishes the archive, then ends the process.
///
/// # Safety
/// None beyond libc's: any status may be passed; it does not return.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _Exit(status: c_int) -> ! {
    finish("_Exit", LockMode::Try);
    match real!(_Exit: unsafe extern "C" fn(c_int) -> !) {
        // SAFETY: the application's argument, forwarded unchanged.
        Some(f) => unsafe { f(status) },
        None => exit_group(status),
    }
}
