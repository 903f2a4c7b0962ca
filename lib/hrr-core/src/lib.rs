//! hrr-core: the hrr archive format, shared by every other crate — events and
//! their wire form (reader, scanner), blobs, the manifest, the archive
//! reader/writer and its repair (in place too), region sidecar records and
//! ROCm's `.hrrr` streams. (The crate's name is fixed by the project's
//! contract; it is the format crate, in the manner of `nextest-metadata`.)
//!
//! The replay engine (`hrr-replay`), the capture library (`hrr-recorder`, `hrr-intercept`) and
//! the binaries build on it; it knows nothing of devices or runtimes.

pub mod archive;
pub mod archive_writer;
pub mod blob_check;
pub mod blob_store;
pub mod error_chain;
pub mod event;
pub mod event_reader;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod graph;
pub mod hex;
pub mod hrrr;
pub mod job;
pub mod manifest;
pub mod mem_files;
pub mod message;
pub mod process_info;
pub mod region_record;
pub mod repair_in_place;
pub mod safe_fs;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod window;
pub mod wire;
pub mod zst;

pub use event::{Dir, Event, KernelArg, LaunchAttr, MemKind, Op};

/// The cores this process may use, read once (`available_parallelism`
/// reads cgroup files): what large blob hashes and reads are split over.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
pub use hex::{Addr, BlobId, HexBytes};
