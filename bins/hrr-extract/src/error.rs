//! Why an extraction failed, and the exit status each reason gives.

use std::path::PathBuf;

use hrr_core::archive::ArchiveError;
use hrr_core::archive_writer::WriteError;
use hrr_core::blob_store::BlobError;
use hrr_replay::device::DeviceError;
use hrr_replay::engine::ReplayError;

#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// A command-line value that makes no sense.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("{}: already exists and is not empty; refusing to overwrite it", .0.display())]
    OutputExists(PathBuf),
    #[error(transparent)]
    Backend(#[from] hrr_cli::backend::OpenError),
    #[error("{}: no event has seq {seq}{}", archive.display(), match last {
        Some(l) => format!(" (its last is {l})"),
        None => " (it holds no events)".to_string(),
    })]
    NoSuchSeq {
        archive: PathBuf,
        seq: u64,
        last: Option<u64>,
    },
    #[error("{}: event {seq} ({api}) is a `{op}`, not a launch", archive.display())]
    NotALaunch {
        archive: PathBuf,
        seq: u64,
        api: String,
        op: &'static str,
    },
    #[error("{}: launch {seq} ({name}) failed at capture (ret {ret}); it ran nowhere to extract", archive.display())]
    FailedAtCapture {
        archive: PathBuf,
        seq: u64,
        name: String,
        ret: i64,
    },
    #[error("{}: {message}", archive.display())]
    KernelNotFound { archive: PathBuf, message: String },
    #[error("{}: region sidecars: {message}", archive.display())]
    Regions { archive: PathBuf, message: String },
    /// The archive could not be read while replaying it.
    #[error("{}", archive.display())]
    Format {
        archive: PathBuf,
        source: ReplayError,
    },
    /// An event before the launch, or the launch itself, failed on the device.
    #[error("replaying {}", archive.display())]
    Replay {
        archive: PathBuf,
        source: ReplayError,
    },
    #[error("reading {what} back from the device")]
    Device { what: String, source: DeviceError },
    #[error("code object of launch {seq}")]
    Code { seq: u64, source: BlobError },
    #[error("writing {}", path.display())]
    Write { path: PathBuf, source: WriteError },
    #[error("moving the finished archive to {}", path.display())]
    Rename {
        path: PathBuf,
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
