//! `JobError`: a job file that cannot be used.

use std::path::PathBuf;

/// Reading or writing a job file failed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The file could not be opened or read.
    #[error(transparent)]
    Open(#[from] crate::safe_fs::OpenError),
    /// The file could not be written.
    #[error("{}", path.display())]
    Write {
        /// The job file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// Not JSON, or not the shape of a job file.
    #[error("{}: not a job file: {reason}", path.display())]
    Invalid {
        /// The job file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A job file of a later format version.
    #[error("{}: job format version {version} is newer than this hrr reads ({})", path.display(), super::JOB_VERSION)]
    TooNew {
        /// The job file.
        path: PathBuf,
        /// Its version.
        version: u64,
    },
    /// A process archive named by a path rather than a plain name beside
    /// the job file.
    #[error("{}: process archive {name:?} is not a plain name beside the job file", path.display())]
    ArchiveName {
        /// The job file.
        path: PathBuf,
        /// The name it gives.
        name: String,
    },
}
