//! Finishing the archive when the process ends.
//!
//! - `exit()` (and returning from `main`): a `.fini_array` destructor runs
//!   after every `atexit` handler, so calls made from those handlers (e.g.
//!   `__hipUnregisterFatBinary` from hipcc's module destructor) are recorded
//!   before the archive is finished.
//! - `_exit()` / `_Exit()` skip destructors, so they are interposed: finish,
//!   then the real one. They may be called from a signal handler, so the
//!   recorder's locks are only tried ([`Exit::Immediate`]).
//!
//! Either way the archive gets its `eof` event and a manifest with
//! `complete:true`, unless this is not the recording process (a forked or
//! vforked child: [`Sink::finish`] checks). A process that recorded nothing
//! leaves `hrr-cap` a note at `exit()` instead ([`no_capture_note`]).
//!
//! The exports and the destructor are made by [`process_exit_exports!`]
//! in the preloaded library, for its [`Sink`].
//!
//! [`no_capture_note`]: crate::no_capture_note
//! [`process_exit_exports!`]: crate::process_exit_exports

use std::ffi::c_int;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::{Exit, Sink};

/// Finishes `S`'s archive as the process ends by `api` (a panic is
/// swallowed: the process is ending either way).
pub fn finish<S: Sink>(api: &'static str, exit: Exit) {
    let _ = catch_unwind(AssertUnwindSafe(|| S::finish(api, exit)));
}

/// The `.fini_array` destructor: finishes `S`'s archive after every
/// `atexit` handler, or leaves the note of a process that recorded nothing.
pub extern "C" fn at_fini<S: Sink>() {
    finish::<S>("exit", Exit::Normal);
    let _ =
        catch_unwind(|| crate::no_capture_note::at_exit(S::recorded(), crate::exports::queried()));
}

/// Ends the process with `status` by the system call, when no later
/// library defines `_exit`.
pub fn exit_group(status: c_int) -> ! {
    // SAFETY: exit_group ends the process; it takes only the status.
    unsafe { libc::syscall(libc::SYS_exit_group, status) };
    unreachable!("exit_group returned")
}

/// Defines, for the [`Sink`] `$sink`, libc's `_exit` and `_Exit` (finish,
/// then the real one) and the `.fini_array` destructor that finishes at
/// `exit()`: `process_exit_exports!(crate::capture::Capture);`. The
/// expanding module must allow `unsafe_code` (exports and a link section).
#[macro_export]
macro_rules! process_exit_exports {
    ($sink:ty) => {
        // SAFETY: `.fini_array` holds pointers to `extern "C" fn()` run by
        // the dynamic loader at exit; at_fini is one and lives as long as
        // the library.
        #[used]
        #[unsafe(link_section = ".fini_array")]
        static FINI: extern "C" fn() = $crate::process_exit::at_fini::<$sink>;

        /// libc's `_exit`: finishes the archive, then ends the process.
        ///
        /// # Safety
        /// None beyond libc's: any status may be passed; it does not return.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn _exit(status: ::std::ffi::c_int) -> ! {
            $crate::process_exit::finish::<$sink>("_exit", $crate::Exit::Immediate);
            match $crate::real!(_exit: unsafe extern "C" fn(::std::ffi::c_int) -> !) {
                // SAFETY: the application's argument, forwarded unchanged.
                Some(f) => unsafe { f(status) },
                None => $crate::process_exit::exit_group(status),
            }
        }

        /// libc's `_Exit`: finishes the archive, then ends the process.
        ///
        /// # Safety
        /// None beyond libc's: any status may be passed; it does not return.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn _Exit(status: ::std::ffi::c_int) -> ! {
            $crate::process_exit::finish::<$sink>("_Exit", $crate::Exit::Immediate);
            match $crate::real!(_Exit: unsafe extern "C" fn(::std::ffi::c_int) -> !) {
                // SAFETY: the application's argument, forwarded unchanged.
                Some(f) => unsafe { f(status) },
                None => $crate::process_exit::exit_group(status),
            }
        }
    };
}
