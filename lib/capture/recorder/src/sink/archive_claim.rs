//! `ArchiveClaim`: one process per archive directory.
//!
//! `HRR_OUT` is inherited by every process the application starts, and so is
//! `LD_PRELOAD`. The first process that makes a HIP call claims the directory
//! by creating `DIR/.hrr-owner` with `O_EXCL` (it holds that process's pid).
//! Any later process — an exec'd child, a sibling worker, a second run into
//! the same directory — finds the lock taken and records into its own archive
//! next to it, `<DIR without .hrr>-<pid>.hrr`, so it never writes into an
//! archive another process owns. A directory that already holds an archive
//! without a lock (from another tool) counts as taken too.
//!
//! The lock file is left in place after the capture: a finished archive stays
//! claimed, so nothing appends to it later.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Name of the lock file inside a claimed archive.
pub const OWNER_FILE: &str = ".hrr-owner";

/// The directory this process records into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveClaim {
    /// The directory claimed.
    pub dir: PathBuf,
    /// `true` when `HRR_OUT` was taken and this is the per-pid sibling.
    pub fallback: bool,
}

/// Neither the requested directory nor its per-pid sibling could be claimed.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error("cannot create archive directory {}", path.display())]
    /// The directory could not be created.
    Create {
        /// The directory.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    #[error("{} is owned by another process and so is {}", requested.display(), fallback.display())]
    /// Both the directory and its per-pid sibling belong to other processes.
    Taken {
        /// The directory asked for.
        requested: PathBuf,
        /// Its per-pid sibling.
        fallback: PathBuf,
    },
}

impl ArchiveClaim {
    /// Claims `requested` for process `pid`, or else its per-pid sibling.
    pub fn claim(requested: &Path, pid: u32) -> Result<ArchiveClaim, ClaimError> {
        if try_claim(requested, pid)? {
            return Ok(ArchiveClaim {
                dir: requested.to_path_buf(),
                fallback: false,
            });
        }
        let fallback = sibling(requested, pid);
        if try_claim(&fallback, pid)? {
            return Ok(ArchiveClaim {
                dir: fallback,
                fallback: true,
            });
        }
        Err(ClaimError::Taken {
            requested: requested.to_path_buf(),
            fallback,
        })
    }
}

/// `cap.hrr` → `cap-<pid>.hrr`; `out` → `out-<pid>.hrr`.
pub fn sibling(dir: &Path, pid: u32) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hrr".into());
    let stem = name.strip_suffix(".hrr").unwrap_or(&name);
    dir.with_file_name(format!("{stem}-{pid}.hrr"))
}

/// Creates `dir` if needed and takes its lock. `Ok(false)`: someone else has it.
fn try_claim(dir: &Path, pid: u32) -> Result<bool, ClaimError> {
    let create_err = |source| ClaimError::Create {
        path: dir.to_path_buf(),
        source,
    };
    {
        use std::os::unix::fs::DirBuilderExt;
        // Archives hold application data: private to the user (0700).
        fs::DirBuilder::new()
            .recursive(true)
            .mode(hrr_core::safe_fs::DIR_MODE)
            .create(dir)
            .map_err(create_err)?;
    }
    if fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        // Never record through a symlink: someone else's directory.
        return Ok(false);
    }
    let lock = dir.join(OWNER_FILE);
    let mut f = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(hrr_core::safe_fs::FILE_MODE)
        .open(&lock)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(create_err(e)),
    };
    // An archive some other tool wrote (no lock): never append to it.
    if dir.join(hrr_core::archive_writer::EVENTS_FILE).exists() {
        drop(f);
        let _ = fs::remove_file(&lock);
        return Ok(false);
    }
    f.write_all(format!("{pid}\n").as_bytes())
        .map_err(create_err)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_claims_second_falls_back_third_fails() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap.hrr");
        let a = ArchiveClaim::claim(&dir, 10).unwrap();
        assert_eq!(
            a,
            ArchiveClaim {
                dir: dir.clone(),
                fallback: false
            }
        );
        assert_eq!(fs::read_to_string(dir.join(OWNER_FILE)).unwrap(), "10\n");
        let b = ArchiveClaim::claim(&dir, 11).unwrap();
        assert_eq!(
            b,
            ArchiveClaim {
                dir: t.path().join("cap-11.hrr"),
                fallback: true
            }
        );
        assert!(matches!(
            ArchiveClaim::claim(&dir, 11),
            Err(ClaimError::Taken { .. })
        ));
    }

    #[test]
    fn an_unlocked_existing_archive_is_not_appended_to() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("events.ndjson"), b"").unwrap();
        let c = ArchiveClaim::claim(t.path(), 5).unwrap();
        assert!(c.fallback);
        assert!(!t.path().join(OWNER_FILE).exists());
    }

    #[test]
    fn sibling_names() {
        assert_eq!(
            sibling(Path::new("/a/cap.hrr"), 7),
            PathBuf::from("/a/cap-7.hrr")
        );
        assert_eq!(sibling(Path::new("out"), 7), PathBuf::from("out-7.hrr"));
    }

    #[test]
    fn unwritable_parent_is_an_error() {
        let e = ArchiveClaim::claim(Path::new("/proc/hrr-no/cap.hrr"), 1).unwrap_err();
        assert!(
            e.to_string().contains("cannot create archive directory"),
            "{e}"
        );
    }
}
