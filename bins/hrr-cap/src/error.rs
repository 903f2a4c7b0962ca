//! `CapError`: why hrr-cap could not run the application.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;

/// hrr-cap's own failure (as opposed to the application's exit status).
pub const EXIT_USAGE: u8 = 2;

/// The application succeeded but its archive is not whole: a blob an event
/// names is missing or not what its name says (`EX_IOERR` of sysexits.h;
/// an application that failed keeps its own status).
pub const EXIT_ARCHIVE_BAD: u8 = 74;

/// The archive's blobs could not be checked, or the manifest marked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Archive(#[from] hrr_core::archive::ArchiveError),
    #[error(transparent)]
    Manifest(#[from] hrr_core::manifest::ManifestError),
}

#[derive(Debug, thiserror::Error)]
pub enum CapError {
    #[error("cannot run {}", app.to_string_lossy())]
    Spawn { app: OsString, source: io::Error },
    #[error("archive directory {}", path.display())]
    Dir { path: PathBuf, source: io::Error },
    #[error("archive directory {} already exists and is not empty; choose another -o", path.display())]
    DirNotEmpty { path: PathBuf },
    #[error("capture library libhrr_intercept.so not found (looked in: {}); set HRR_INTERCEPT", list(.searched))]
    NoInterceptLib { searched: Vec<PathBuf> },
    #[error("HRR_INTERCEPT={}: no such file", path.display())]
    BadInterceptEnv { path: PathBuf },
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
