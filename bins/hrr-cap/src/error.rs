//! `CapError`: why hrr-cap could not run the application.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;

/// hrr-cap's own failure (as opposed to the application's exit status).
pub const EXIT_USAGE: u8 = 2;

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
