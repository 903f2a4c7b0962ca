//! The capture's recorder: what `libhrr_intercept.so` records, and how it
//! writes the archive (DESIGN.md §4) — family-agnostic, with no C API of
//! any family and no interposition in it.
//!
//! The families of the preloaded library (`hrr-intercept`) read the
//! application's arguments and call a [`Recorder`](record::recorder::Recorder)
//! method per recorded call with plain values; the interposition machinery
//! (`hrr-interpose`) reaches it only through the trait it defines, which
//! the preloaded library implements with this crate.
//!
//! Layout:
//! - [`record`] — recording: the `Recorder` and what events need to know
//!   (live allocations, code objects, launch arguments, the repeat-launch
//!   path, host memory kernels reach, executable graphs), and the launch
//!   lines' encoding with their arguments scanned for pointers;
//! - [`sink`] — writing the archive: the ordered, crash-tolerant event
//!   stream, content-addressed blobs, the one-process-per-archive claim;
//! - [`config`] — the environment the recorder reads; [`kept`] — bytes a
//!   blob is written from where they lie; [`self_profile`] — the
//!   recorder's own time per entry point; [`sys`] — the libc calls behind
//!   safe functions.
//!
//! `unsafe` is denied crate-wide and allowed only where memory is read on
//! a caller's word ([`kept`], `record::host_memory`) and in [`sys`].

#![deny(unsafe_code)]

pub mod config;
// Bytes read where they lie, on the word of `Kept::new`'s caller.
#[allow(unsafe_code)]
pub mod kept;
pub mod record;
pub mod self_profile;
pub mod sink;
// The libc calls behind safe functions (system calls on our own buffers).
#[allow(unsafe_code)]
pub mod sys;
