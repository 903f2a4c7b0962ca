//! Why an extraction failed, and the exit status each reason gives.
//!
//! Each variant says what its own layer knows and hands its cause out
//! through `source()` (hrr's error convention, `hrr_core::error_chain`):
//! `main` prints the whole chain on one line.

use std::path::PathBuf;

use hrr_core::archive::ArchiveError;
use hrr_core::archive_writer::WriteError;
use hrr_core::blob_store::BlobError;
use hrr_replay::device::DeviceError;
use hrr_replay::engine::{RegionsError, ReplayError};

use crate::select::{KernelMiss, SelectorError};

/// Why `hrr-extract` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// A `--kernel` value that names no launch syntactically.
    #[error(transparent)]
    Selector(#[from] SelectorError),
    /// The archive could not be opened.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// `-o` names something that is not empty.
    #[error("{}: already exists and is not empty; refusing to overwrite it", .0.display())]
    OutputExists(PathBuf),
    /// The replay backend could not be opened.
    #[error(transparent)]
    Backend(#[from] hrr_cli::backend::OpenError),
    /// `--launch SEQ` past the archive's last event.
    #[error("{}: no event has seq {seq}{}", archive.display(), match last {
        Some(l) => format!(" (its last is {l})"),
        None => " (it holds no events)".to_string(),
    })]
    NoSuchSeq {
        /// The archive.
        archive: PathBuf,
        /// The `seq` asked for.
        seq: u64,
        /// The archive's last `seq`, if any.
        last: Option<u64>,
    },
    /// `--launch SEQ` names an event that is not a launch.
    #[error("{}: event {seq} ({api}) is a `{op}`, not a launch", archive.display())]
    NotALaunch {
        /// The archive.
        archive: PathBuf,
        /// The event's `seq`.
        seq: u64,
        /// Its runtime entry point.
        api: String,
        /// Its op.
        op: &'static str,
    },
    /// The launch failed at capture: it did nothing there.
    #[error("{}: launch {seq} ({name}) failed at capture (ret {ret}); it ran nowhere to extract", archive.display())]
    FailedAtCapture {
        /// The archive.
        archive: PathBuf,
        /// The launch's `seq`.
        seq: u64,
        /// Its kernel.
        name: String,
        /// What it returned at capture.
        ret: i64,
    },
    /// `--kernel NAME#N` matched no launch.
    #[error("{}", archive.display())]
    KernelNotFound {
        /// The archive.
        archive: PathBuf,
        /// Why, with the names that come close.
        #[source]
        miss: KernelMiss,
    },
    /// The archive's region sidecars could not be loaded.
    #[error("{}: region sidecars", archive.display())]
    Regions {
        /// The archive.
        archive: PathBuf,
        /// Why.
        #[source]
        source: RegionsError,
    },
    /// The archive could not be read while replaying it.
    #[error("{}", archive.display())]
    Format {
        /// The archive.
        archive: PathBuf,
        /// Why.
        #[source]
        source: ReplayError,
    },
    /// An event before the launch, or the launch itself, failed on the device.
    #[error("replaying {}", archive.display())]
    Replay {
        /// The archive.
        archive: PathBuf,
        /// The event that failed, and why.
        #[source]
        source: ReplayError,
    },
    /// Memory the launch reaches could not be read back.
    #[error("reading {what} back from the device")]
    Device {
        /// What was being read.
        what: String,
        /// The runtime's error.
        #[source]
        source: DeviceError,
    },
    /// The launch's code object could not be read from the archive.
    #[error("code object of launch {seq}")]
    Code {
        /// The launch's `seq`.
        seq: u64,
        /// Why.
        #[source]
        source: BlobError,
    },
    /// Memory the launch reaches that hrr-extract cannot carry over.
    #[error("{}: launch {seq} reaches {what}; {why}", archive.display())]
    Unsupported {
        /// The archive.
        archive: PathBuf,
        /// The launch's `seq`.
        seq: u64,
        /// The memory.
        what: String,
        /// Why it cannot be extracted.
        why: &'static str,
    },
    /// The extracted archive could not be written.
    #[error("writing {}", path.display())]
    Write {
        /// Its (temporary) directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: WriteError,
    },
    /// The finished archive could not be moved to `-o`.
    #[error("moving the finished archive to {}", path.display())]
    Rename {
        /// The output path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl ExtractError {
    /// 1 when the replay itself failed, 2 for everything the user or the
    /// archive got wrong.
    pub fn exit_code(&self) -> u8 {
        match self {
            ExtractError::Replay { .. } | ExtractError::Device { .. } => 1,
            _ => 2,
        }
    }

    /// A replay error, sorted into format (2) or replay (1) failures.
    pub fn replay(archive: PathBuf, source: ReplayError) -> ExtractError {
        match source {
            ReplayError::Fatal { .. } => ExtractError::Replay { archive, source },
            _ => ExtractError::Format { archive, source },
        }
    }
}
