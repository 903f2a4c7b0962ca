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
//! Three crates, each depending only on those below it:
//! - this one: the families side by side, none using another — [`hip`],
//!   [`cuda`] (its runtime's entry points and its driver's, which share
//!   the fat-binary registry), [`hsa`] (the pool entry points and the
//!   built-in region producer, `--hsa-regions`) and [`nccl`] (NCCL's and
//!   RCCL's collectives, recorded at their own API) — the only code that reads
//!   application memory, each forwarding to the real runtime and handing
//!   plain values to the recorder; and [`capture`], which wires the
//!   recorder into the machinery;
//! - `hrr-interpose`: the interposition machinery (first-level guard,
//!   next-symbol lookup, the export macros, reading a call's arguments,
//!   process exit, fatal signals, fork), which reaches the recorder only
//!   through its `Sink` trait, implemented by [`capture::Capture`];
//! - `hrr-recorder`: family-agnostic recording and the archive it writes.
//!
//! Unit tests leave out the exported entry points (a test binary must not
//! interpose its own `_exit`), and the modules only they call.
//!
//! `unsafe` is denied crate-wide and allowed only in the FFI modules: the
//! families' exports and what they read, and [`libc_exports`].

#![deny(unsafe_code)]

pub mod capture;
pub mod cuda;
pub mod hip;
// FFI: the trampolines host functions run through.
#[allow(unsafe_code)]
pub mod host_funcs;
pub mod hsa;
pub mod nccl;
// FFI: reads the parameters a launch's caller passed by pointer.
#[allow(unsafe_code)]
pub mod launch_params;
// FFI: the libc entry points this library defines.
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod libc_exports;
// FFI: an upload's source read while the copy runs.
#[allow(unsafe_code)]
pub mod upload;
