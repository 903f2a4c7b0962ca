//! hrr-core: the hrr archive format (events, blobs, manifest, region sidecars),
//! the address and region maps replay translates through, and the replay engine.
//!
//! The binaries (`hrr-play`, `hrr-sidecar`, `hrr-diff`) and the capture library
//! are thin layers over this crate.

pub mod alloc_map;
pub mod archive;
pub mod archive_diff;
pub mod archive_writer;
pub mod blob_store;
pub mod compare;
pub mod device;
pub mod engine;
pub mod event;
pub mod event_reader;
pub mod handle_map;
pub mod hex;
pub mod hrrr;
pub mod manifest;
pub mod region_record;
pub mod region_segments;
pub mod region_timeline;
pub mod sidecar;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod wire_scanner;

pub use event::{Dir, Event, KernelArg, MemKind, Op};
pub use hex::{Addr, BlobId, HexBytes};
