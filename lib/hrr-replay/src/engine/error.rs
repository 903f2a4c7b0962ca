//! Why a replay stops ([`ReplayError`]) and what failed in one event
//! ([`EventFailure`]).
//!
//! These follow hrr's error convention (`hrr_core::error_chain`): each error
//! displays its own part and hands its cause out through `source()`, never
//! both. Printed as a chain, a fatal event reads
//! `event <seq> (<api>): <dir> <dst|src> 0x… not mapped`, the line
//! `hrr-play: fatal:` prefixes.

use std::fmt;
use std::path::PathBuf;

use hrr_core::archive::ArchiveError;
use hrr_core::archive_writer::WriteError;
use hrr_core::blob_store::BlobError;
use hrr_core::event_reader::ReadError;
use hrr_core::hex::{Addr, BlobId};
use hrr_core::region_record::{RegionError, RegionWarning};

use crate::alloc_map::AllocMapError;
use crate::device::DeviceError;
use crate::engine::address_space::{MaterialiseError, Unmapped};
use crate::engine::code_cache::CodeError;
use crate::engine::launch_check::{GridError, KernargError};
use crate::engine::virtual_memory::VmmError;
use crate::region_timeline::RegionClass;

/// Why replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The event stream could not be opened (exit 2).
    #[error(transparent)]
    Open(#[from] ArchiveError),
    /// The event stream is unreadable or malformed (exit 2).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The thread parsing events ahead of replay panicked (exit 2).
    #[error("the event parser thread panicked")]
    ParserPanicked,
    /// The device failed to synchronise after the last event (exit 2).
    #[error(transparent)]
    FinalSync(DeviceError),
    /// Device 0 could not be made current before the first event.
    #[error("selecting device 0: {0}")]
    FirstDevice(DeviceError),
    /// The replay archive (`-o`) could not be written (exit 2).
    #[error(transparent)]
    Output(#[from] WriteError),
    /// The user stopped the replay (SIGINT, SIGTERM) before this event.
    #[error("event {seq} ({api}): interrupted")]
    Interrupted {
        /// The `seq` of the event that was not started.
        seq: u64,
        /// Its runtime entry point.
        api: String,
    },
    /// An event could not be replayed (exit 1).
    #[error("event {seq} ({api})")]
    Fatal {
        /// The event's `seq`.
        seq: u64,
        /// The event's runtime entry point.
        api: String,
        /// What failed (boxed: it is large, and replay's hot path returns
        /// `Result<_, ReplayError>` everywhere).
        #[source]
        what: Box<EventFailure>,
    },
}

/// What failed while replaying one event.
#[derive(Debug, thiserror::Error)]
pub enum EventFailure {
    /// A runtime call failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The recorded allocations contradict each other (an overlap, a double free).
    #[error(transparent)]
    Alloc(#[from] AllocMapError),
    /// A device operand lies in no allocation, and no declared region backed it.
    #[error(
        "{role} {addr:#x} not mapped{}{}",
        region_note(class),
        materialise_note(materialise)
    )]
    Unmapped {
        /// Which operand of the event.
        role: Operand,
        /// The recorded address.
        addr: u64,
        /// What the region sidecars declare at `addr`.
        class: RegionClass,
        /// Why backing its declared segment failed, when that was tried now.
        #[source]
        materialise: Option<MaterialiseError>,
    },
    /// A blob the event needs could not be read.
    #[error(transparent)]
    Blob(#[from] BlobError),
    /// The event ran on a recorded device that maps to no local device.
    #[error("{0}")]
    NoDevice(String),
    /// A collective that cannot be replayed (no library, a communicator
    /// whose ranks cannot meet, the library's own error).
    #[error("{0}")]
    Collectives(String),
    /// The event names a stream no earlier event created.
    #[error("stream {0} was never created")]
    UnknownStream(Addr),
    /// The event names an event no earlier event created.
    #[error("event {0} was never created")]
    UnknownEvent(Addr),
    /// A graph that cannot be rebuilt as recorded (its topology, a node, a
    /// launch's blobs).
    #[error("graph: {0}")]
    Graph(String),
    /// A host-to-device copy recorded without its bytes.
    #[error("h2d memcpy has no source blob")]
    NoSourceBlob,
    /// A copy's blob is not the copy's size.
    #[error("blob {id} holds {len} bytes, memcpy size is {size}")]
    BlobSize {
        /// The blob.
        id: BlobId,
        /// Its length.
        len: u64,
        /// The copy's recorded size.
        size: u64,
    },
    /// The launched kernel's code could not be made ready.
    #[error("kernel {name}")]
    Kernel {
        /// The kernel's name.
        name: String,
        /// Why.
        #[source]
        source: CodeError,
    },
    /// A device operand starts inside a recorded allocation and ends past it.
    #[error("{role} {addr} + {len} overruns the allocation at {base:#x} (size {size})")]
    Overrun {
        /// Which operand of the event.
        role: Operand,
        /// The recorded address.
        addr: Addr,
        /// The operand's length.
        len: u64,
        /// The allocation's recorded base.
        base: u64,
        /// The allocation's size.
        size: u64,
    },
    /// A device-to-host copy whose expected blob is not the copy's size.
    #[error("d2h of {size} bytes, but its expected blob {id} holds {expected} bytes")]
    D2hLength {
        /// The copy's size.
        size: u64,
        /// The expected blob.
        id: BlobId,
        /// Its length.
        expected: u64,
    },
    /// A launch's grid or block no device runs.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A launch's recorded arguments cannot be packed.
    #[error(transparent)]
    Kernarg(#[from] KernargError),
    /// A CUDA virtual-memory event could not be replayed.
    #[error(transparent)]
    VirtualMemory(#[from] VmmError),
    /// A module's global variable could not be found.
    #[error("global {name}")]
    Global {
        /// The variable's name.
        name: String,
        /// Why its module could not be made ready.
        #[source]
        source: CodeError,
    },
    /// The backend could not find a module's global variable by its name.
    #[error("global {name}: not found in its module")]
    GlobalLookup {
        /// The variable's name.
        name: String,
        /// The backend's error.
        #[source]
        source: DeviceError,
    },
    /// A `relocate` event's blob is not a whole number of offsets.
    #[error("relocate blob {id} holds {len} bytes, not a whole number of offsets")]
    RelocateBlob {
        /// The blob.
        id: BlobId,
        /// Its length.
        len: u64,
    },
    /// A rectangular copy or memset whose rows do not fit its pitches (a
    /// row wider than its pitch, slices overlapping) or whose size overflows.
    #[error("{op}: extent {extent:?} does not fit pitch {pitch:?}")]
    RectShape {
        /// The op and operand (`memcpy_rect dst`, …).
        op: &'static str,
        /// The offending pitch.
        pitch: [u64; 2],
        /// The extent.
        extent: [u64; 3],
    },
    /// An event names an array no earlier event created.
    #[error("array {0} was never created")]
    UnknownArray(Addr),
    /// A kernel argument or destroy names a texture or surface object no
    /// earlier event created.
    #[error("texture or surface object {0} was never created")]
    UnknownObject(Addr),
    /// An array, texture or surface event that cannot be replayed as
    /// recorded (a side without its pitch, a format no family defines, a
    /// resource the backend cannot be given).
    #[error("{0}")]
    ArrayShape(String),
    /// A pool op names a pool no earlier event created.
    #[error("memory pool {0} was never created")]
    UnknownPool(Addr),
    /// A `relocate` offset whose 8-byte word is not inside the event's range.
    #[error("relocate offset {offset} leaves no 8-byte word inside its {size} bytes")]
    RelocateOffset {
        /// The offset.
        offset: u64,
        /// The event's `size`.
        size: u64,
    },
    /// A module's global variable is not its recorded size.
    #[error("global {name} is {live} bytes at replay, {size} at capture")]
    GlobalSize {
        /// The variable's name.
        name: String,
        /// Its size at replay.
        live: u64,
        /// Its size at capture.
        size: u64,
    },
}

impl EventFailure {
    /// The failure of translating `role`.
    pub fn unmapped(role: Operand, u: Unmapped) -> EventFailure {
        EventFailure::Unmapped {
            role,
            addr: u.addr,
            class: u.class,
            materialise: u.materialise_error,
        }
    }
}

fn region_note(class: &RegionClass) -> String {
    match class {
        RegionClass::InBlock { base, size } => format!(" (in declared block {base:#x}+{size})"),
        RegionClass::InSegment { base, size } => {
            format!(" (in declared segment {base:#x}+{size})")
        }
        RegionClass::None => String::new(),
    }
}

fn materialise_note(e: &Option<MaterialiseError>) -> &'static str {
    if e.is_some() {
        "; materialising its segment failed"
    } else {
        ""
    }
}

/// A device operand of an event, as fatal messages name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A host-to-device copy's destination.
    H2dDst,
    /// A device-to-host copy's source.
    D2hSrc,
    /// A device-to-device copy's destination.
    D2dDst,
    /// A device-to-device copy's source.
    D2dSrc,
    /// A memset's destination.
    MemsetDst,
    /// A pointer in kernel argument `arg`, at byte `offset`.
    LaunchArg {
        /// The argument's index.
        arg: usize,
        /// The pointer's byte offset in it.
        offset: usize,
    },
    /// A collective's send buffer.
    CollSend,
    /// A collective's receive buffer.
    CollRecv,
    /// The device memory a `relocate` event rewrites.
    RelocateDst,
    /// The host memory a `host_write` event fills.
    HostWriteDst,
    /// The host memory a `host_read` event checks.
    HostReadSrc,
    /// A pointer word a `relocate` event translates, at `dst + offset`.
    RelocateWord {
        /// The event's `dst`.
        dst: Addr,
        /// The word's byte offset from it.
        offset: u64,
    },
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::H2dDst => f.write_str("h2d dst"),
            Operand::D2hSrc => f.write_str("d2h src"),
            Operand::D2dDst => f.write_str("d2d dst"),
            Operand::D2dSrc => f.write_str("d2d src"),
            Operand::MemsetDst => f.write_str("memset dst"),
            Operand::LaunchArg { arg, offset } => write!(f, "launch arg {arg}+{offset}"),
            Operand::CollSend => f.write_str("nccl send"),
            Operand::CollRecv => f.write_str("nccl recv"),
            Operand::RelocateDst => f.write_str("relocate dst"),
            Operand::HostWriteDst => f.write_str("host_write dst"),
            Operand::HostReadSrc => f.write_str("host_read src"),
            Operand::RelocateWord { dst, offset } => write!(f, "relocate word {dst}+{offset}"),
        }
    }
}

/// Why the archive's region sidecars could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RegionsError {
    /// `regions/` could not be listed.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// A sidecar could not be read or parsed.
    #[error(transparent)]
    Region(#[from] RegionError),
    /// Under `--regions-strict`: a sidecar the tolerant loader would recover.
    #[error("{}: {warning}", path.display())]
    Recovered {
        /// The sidecar.
        path: PathBuf,
        /// Its first problem.
        warning: RegionWarning,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::error_chain::chain;

    fn fatal(what: EventFailure) -> String {
        let e = ReplayError::Fatal {
            seq: 4,
            api: "hipMemcpy".into(),
            what: Box::new(what),
        };
        chain(&e).to_string()
    }

    #[test]
    fn unmapped_operands_print_the_documented_line() {
        let u = Unmapped {
            addr: 0x7fbe_0140_0000,
            class: RegionClass::None,
            materialise_error: None,
        };
        assert_eq!(
            fatal(EventFailure::unmapped(Operand::H2dDst, u)),
            "event 4 (hipMemcpy): h2d dst 0x7fbe01400000 not mapped"
        );
        let u = Unmapped {
            addr: 0x1010,
            class: RegionClass::InSegment {
                base: 0x1000,
                size: 64,
            },
            materialise_error: Some(MaterialiseError::PastEnd),
        };
        assert_eq!(
            fatal(EventFailure::unmapped(
                Operand::LaunchArg { arg: 2, offset: 8 },
                u
            )),
            "event 4 (hipMemcpy): launch arg 2+8 0x1010 not mapped (in declared segment \
             0x1000+64); materialising its segment failed: operand extends past its segment"
        );
    }

    #[test]
    fn launch_and_copy_checks_print_their_lines() {
        let overrun = EventFailure::Overrun {
            role: Operand::H2dDst,
            addr: Addr(0x7f00_0040_0020),
            len: 64,
            base: 0x7f00_0040_0000,
            size: 64,
        };
        assert_eq!(
            fatal(overrun),
            "event 4 (hipMemcpy): h2d dst 0x7f0000400020 + 64 overruns the allocation at \
             0x7f0000400000 (size 64)"
        );
        let id = BlobId::of(b"x");
        let short = EventFailure::D2hLength {
            size: 64,
            id,
            expected: 32,
        };
        assert_eq!(
            fatal(short),
            format!(
                "event 4 (hipMemcpy): d2h of 64 bytes, but its expected blob {id} holds 32 bytes"
            )
        );
        let grid = crate::engine::launch_check::check_grid([0, 1, 1], [1, 1, 1]).unwrap_err();
        assert_eq!(
            fatal(grid.into()),
            "event 4 (hipMemcpy): grid [0, 1, 1] x block [1, 1, 1] has a zero dimension"
        );
        let code = CodeError::EntryRefused {
            code: id,
            target: "gfx90a".into(),
            source: crate::engine::launch_check::check_code_object(b"").unwrap_err(),
        };
        let kernel = EventFailure::Kernel {
            name: "k".into(),
            source: code,
        };
        assert_eq!(
            fatal(kernel),
            format!(
                "event 4 (hipMemcpy): kernel k: code object {id}: entry for gfx90a: the code \
                 object is empty (0 bytes)"
            )
        );
    }

    #[test]
    fn causes_print_once() {
        let dev = DeviceError::Call {
            call: "hipMalloc",
            code: 2,
            message: "out of memory".into(),
        };
        assert_eq!(
            fatal(EventFailure::Device(dev)),
            "event 4 (hipMemcpy): hipMalloc failed: out of memory (code 2)"
        );
    }
}
