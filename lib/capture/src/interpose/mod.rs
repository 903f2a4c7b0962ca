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
#[allow(unsafe_code)]
pub mod count_stubs;
#[cfg(all(target_arch = "x86_64", not(any(test, feature = "bench"))))]
#[allow(unsafe_code)]
pub mod dlsym_hook;
#[cfg(not(any(test, feature = "bench")))]
#[allow(unsafe_code)]
pub mod exports;
#[allow(unsafe_code)]
pub mod fatal_signals;
#[allow(unsafe_code)]
pub mod fork_policy;
pub mod guard;
#[allow(unsafe_code)]
pub mod kept;
pub mod no_capture_note;
#[cfg(not(any(test, feature = "bench")))]
#[allow(unsafe_code)]
pub mod process_exit;
#[allow(unsafe_code)]
pub mod real_fn;
pub mod self_profile;
#[allow(unsafe_code)]
pub mod sys;
