//! hrr-trace: an hrr archive as a Chrome trace (the JSON object form that
//! Perfetto and chrome://tracing open).
//!
//! - [`convert`] decides what each archive event becomes (slices, instants,
//!   flow arrows) and where it lies in time;
//! - [`tracks`] owns the trace's processes and tracks and keeps each track's
//!   slices in order and apart;
//! - [`json`] streams the JSON out, one event at a time.
//!
//! The archive's events are parsed on several threads by hrr-core's
//! `ParallelReader`, a chunk of the file each, and converted in file order
//! on the calling thread; the trace is written as it goes, so memory does
//! not grow with the archive.
#![forbid(unsafe_code)]

pub mod convert;
pub mod json;
pub mod tracks;

pub use convert::{NOMINAL_NS, TraceError, TraceStats, write_trace};
