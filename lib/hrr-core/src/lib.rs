//! hrr-core: the hrr archive format (events, blobs, manifest, region sidecars),
//! the address and region maps replay translates through, and the replay engine.
//!
//! The binaries (`hrr-play`, `hrr-sidecar`, `hrr-diff`) and the capture library
//! are thin layers over this crate.

pub mod device;
pub mod event;
pub mod hex;

pub use event::{Dir, Event, KernelArg, MemKind, Op};
pub use hex::{Addr, BlobId, HexBytes};
