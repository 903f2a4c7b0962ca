//! The interposition machinery both families share: when a wrapper records
//! ([`guard`]), how it reaches the next definition ([`real_fn`]), how a
//! family's signature table becomes exported wrappers ([`exports`]), what the
//! process's end, fatal signals and `fork` do to a capture ([`process_exit`],
//! [`fatal_signals`], [`fork_policy`]), what a process that recorded nothing
//! tells `hrr-cap` ([`no_capture_note`]), the environment it reads ([`config`]),
//! the recorder's own time per entry point on request ([`self_profile`]),
//! the libc calls behind safe functions ([`sys`]) and memory a blob is
//! written from where it lies ([`kept`]).

pub mod config;
// Machine code and the counters it increments.
#[allow(unsafe_code)]
pub mod count_stubs;
// FFI: the exported `dlsym` trampoline.
#[cfg(all(target_arch = "x86_64", not(any(test, feature = "bench"))))]
#[allow(unsafe_code)]
pub mod dlsym_hook;
// FFI: the macros that make exported C entry points.
#[cfg(not(any(test, feature = "bench")))]
#[allow(unsafe_code)]
pub mod exports;
// A signal handler and `sigaction`.
#[allow(unsafe_code)]
pub mod fatal_signals;
// `pthread_atfork`.
#[allow(unsafe_code)]
pub mod fork_policy;
pub mod guard;
// Memory read where it lies, on the caller's word.
#[allow(unsafe_code)]
pub mod kept;
pub mod no_capture_note;
// FFI: the exported `_exit`/`_Exit` and a `.fini_array` entry.
#[cfg(not(any(test, feature = "bench")))]
#[allow(unsafe_code)]
pub mod process_exit;
// Addresses from `dlsym` called as functions.
#[allow(unsafe_code)]
pub mod real_fn;
pub mod self_profile;
// The libc calls behind safe functions.
#[allow(unsafe_code)]
pub mod sys;
