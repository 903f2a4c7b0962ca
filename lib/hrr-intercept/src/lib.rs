//! `libhrr_intercept.so`: the capture library.
//!
//! Loaded with `LD_PRELOAD` (normally by `hrr-cap`), it defines the HIP
//! runtime's entry points, forwards each call to the real runtime, and
//! records it into an hrr archive (DESIGN §4) named by `HRR_OUT`:
//! `events.ndjson`, content-addressed `blobs/`, `manifest.json`.
//!
//! Layout:
//! - [`exports`] — the C entry points (FFI; the only place that reads
//!   application memory), and the exit paths;
//! - [`recorder`] — the capture state and one method per recorded call;
//! - [`event_sink`], [`event_line`], [`blob_writer`] — writing the archive;
//! - [`hsa_regions`] — the built-in HSA region producer
//!   (`regions/hsa.ndjson`, off unless `hrr-cap --hsa-regions`);
//! - [`live_allocs`], [`code_objects`] (with [`handle_hasher`]),
//!   [`kernel_args`] — what the events need to know; [`launch_memo`], the
//!   repeat-launch path;
//! - [`guard`], [`real_fn`], [`fatal_signals`], [`fork_policy`],
//!   [`archive_claim`], [`config`] — the interposer's rules;
//! - [`sys`], [`hip_types`] — libc and HIP C definitions.
//!
//! The `bench` feature leaves out [`exports`] (so that a benchmark linking
//! the rlib does not interpose its own `_exit`); unit tests leave them out
//! for the same reason.
//!
//! `unsafe` is denied crate-wide and allowed only in the FFI modules:
//! [`exports`], [`sys`], [`fatal_signals`], [`fork_policy`].

#![deny(unsafe_code)]

pub mod archive_claim;
pub mod blob_writer;
pub mod code_objects;
pub mod config;
/// The CUDA family (exports, fat-binary registry, layouts); see its docs.
#[allow(unsafe_code)]
pub mod cuda;
pub mod event_line;
pub mod event_sink;
#[allow(unsafe_code)]
pub mod fatal_signals;
#[allow(unsafe_code)]
pub mod fork_policy;
pub mod guard;
pub mod handle_hasher;
pub mod hip_types;
pub mod hsa_regions;
pub mod kernel_args;
pub mod launch_memo;
pub mod live_allocs;
pub mod real_fn;
pub mod recorder;
#[allow(unsafe_code)]
pub mod sys;

#[cfg(not(any(test, feature = "bench")))]
#[allow(unsafe_code)]
pub mod exports;

/// Path of the library that defines `hipMalloc` after this one: the runtime
/// being recorded (its name tells the platform).
pub fn runtime_path() -> Option<std::path::PathBuf> {
    sys::dlsym_next(c"hipMalloc").and_then(|p| sys::object_path(p as usize))
}
