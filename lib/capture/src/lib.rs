//! `libhrr_intercept.so`: the capture library.
//!
//! Loaded with `LD_PRELOAD` (normally by `hrr-cap`), it defines every entry
//! point of the HIP runtime's signature table (`hip_api`), the CUDA
//! runtime's and driver's (and `dlsym`, through which programs look the
//! driver up), forwards each call to the real runtime, and records it into
//! an hrr archive (DESIGN.md §4) named by `HRR_OUT` — `events.ndjson`,
//! content-addressed `blobs/`, `manifest.json` — or, for entry points whose
//! effects the format does not capture yet, counts it (the manifest's
//! `unrecorded`).
//!
//! Layout, one folder per layer:
//! - [`hip`], [`cuda`] — the two families of C entry points (FFI; the only
//!   place that reads application memory), each forwarding to the real
//!   runtime and handing plain values to the recorder; [`hsa`], the HSA pool
//!   entry points and the built-in region producer (`--hsa-regions`);
//! - [`record`] — family-agnostic recording: the `Recorder` and what events
//!   need to know (live allocations, code objects, launch arguments);
//! - [`sink`] — writing the archive: events, blobs, the archive claim;
//! - [`interpose`] — the interposer's rules: first-level guard, next-symbol
//!   lookup, process exit, fatal signals, fork, configuration, libc.
//!
//! The `bench` feature leaves out the exported entry points (so that a
//! benchmark linking the rlib does not interpose its own `_exit`); unit tests
//! leave them out for the same reason.
//!
//! `unsafe` is denied crate-wide and allowed only in the FFI modules: the
//! families' exports and `interpose::{sys, kept, real_fn, exports,
//! fatal_signals, fork_policy, process_exit, count_stubs, dlsym_hook}`.

#![deny(unsafe_code)]

/// The CUDA family (exports, fat-binary registry, layouts); see its docs.
pub mod cuda;
/// The HIP family (exports and their types); see its docs.
pub mod hip;
pub mod hsa;
pub mod interpose;
pub mod record;
pub mod sink;

use interpose::sys;

/// Path of the library that defines `hipMalloc` after this one: the runtime
/// being recorded (its name tells the platform).
pub fn runtime_path() -> Option<std::path::PathBuf> {
    sys::dlsym_next(c"hipMalloc").and_then(|p| sys::object_path(p as usize))
}
