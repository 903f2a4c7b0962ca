//! Repairing an archive where it lies: the filesystem half of `--repair`
//! without `-o`.
//!
//! The repaired archive is built in a fresh private directory next to the
//! original (`.NAME.repairing-PID-N`, `0700`); the original is moved aside
//! to the first free name of `NAME.torn`, `NAME.torn.1`, … (never replacing
//! anything: `renameat2(RENAME_NOREPLACE)`), and the repaired one takes its
//! place. Any failure removes the private directory and puts the original
//! back, so nothing is left behind. An archive that is complete (or was
//! repaired before) and reads cleanly is left alone: repairing twice is
//! repairing once.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::Op;
use crate::archive::{Archive, ArchiveError, RepairReport, repair_with_progress};
use crate::event_reader::ReadOptions;
use crate::safe_fs::DirFd;

/// What [`repair_in_place`] did.
#[derive(Debug)]
pub enum InPlace {
    /// The archive reads cleanly: nothing was touched. `incomplete` is why
    /// it stays incomplete, when an earlier repair left it so.
    NothingToRepair {
        /// The archive's own reason for being incomplete, if any.
        incomplete: Option<String>,
    },
    /// Repaired: the report, and where the original was kept.
    Repaired {
        /// What repair kept, dropped and could not find.
        report: Box<RepairReport>,
        /// The original archive, moved aside.
        kept: PathBuf,
    },
}

/// Why an archive could not be repaired in place; the original is where it
/// was in every case.
#[derive(Debug, thiserror::Error)]
pub enum InPlaceError {
    /// The archive could not be opened or repaired.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// No private directory could be made next to it.
    #[error("creating the repair directory next to {}", .path.display())]
    WorkDir {
        /// The archive.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The original could not be moved aside.
    #[error("moving {} aside", .path.display())]
    MoveAside {
        /// The archive.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The repaired archive could not take the original's place.
    #[error("moving the repaired archive to {}", .path.display())]
    Replace {
        /// The archive.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// Repairs the archive at `src` in its place (see the module docs),
/// calling `progress(bytes read, bytes of events)` as
/// [`repair_with_progress`] does.
pub fn repair_in_place(
    src: &Path,
    progress: impl FnMut(u64, u64),
) -> Result<InPlace, InPlaceError> {
    let archive = Archive::open(src)?;
    if reads_cleanly(&archive) {
        return Ok(InPlace::NothingToRepair {
            incomplete: archive.incomplete_reason(),
        });
    }
    drop(archive);
    let tmp = fresh_dir(src).map_err(|source| InPlaceError::WorkDir {
        path: src.to_path_buf(),
        source,
    })?;
    let report = match repair_with_progress(src, &tmp, progress) {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e.into());
        }
    };
    let kept = match move_aside(src) {
        Ok(k) => k,
        Err(source) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(InPlaceError::MoveAside {
                path: src.to_path_buf(),
                source,
            });
        }
    };
    if let Err(source) = std::fs::rename(&tmp, src) {
        // Put everything back as it was.
        let _ = std::fs::rename(&kept, src);
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(InPlaceError::Replace {
            path: src.to_path_buf(),
            source,
        });
    }
    Ok(InPlace::Repaired {
        report: Box::new(report),
        kept,
    })
}

/// Nothing to repair: complete, or an archive repair left incomplete (what
/// it lacks, no repair brings back); and every line reads, the last event
/// is an `eof` trailer counting the events before it, nothing recovered.
pub fn reads_cleanly(a: &Archive) -> bool {
    if !a.is_complete() && !a.manifest().repaired {
        return false;
    }
    let Ok(mut events) = a.events(ReadOptions::default()) else {
        return false;
    };
    let mut read = 0u64;
    let mut trailer = None;
    for e in events.by_ref() {
        match e {
            Ok(e) => {
                trailer = match e.op {
                    Op::Eof { events } => Some(events),
                    _ => None,
                };
                read += 1;
            }
            Err(_) => return false,
        }
    }
    trailer.is_some_and(|n| n + 1 == read) && events.warnings().is_empty()
}

fn parent_and_name(src: &Path) -> (PathBuf, OsString) {
    let parent = src
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let name = src
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "archive".into());
    (parent, name)
}

/// A new, empty, private directory next to `src` that nothing else uses.
fn fresh_dir(src: &Path) -> io::Result<PathBuf> {
    let (parent, name) = parent_and_name(src);
    for n in 0..1000 {
        let mut tmp = OsString::from(".");
        tmp.push(&name);
        tmp.push(format!(".repairing-{}-{n}", std::process::id()));
        let path = parent.join(tmp);
        match DirFd::create(&path, false) {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free name for a repair directory"))
}

/// Renames `src` to the first free name of `NAME.torn`, `NAME.torn.1`, …
/// without ever replacing what is there.
fn move_aside(src: &Path) -> io::Result<PathBuf> {
    let first = src.with_extension("torn");
    for n in 0..1000u32 {
        let to = if n == 0 {
            first.clone()
        } else {
            let mut s = first.clone().into_os_string();
            s.push(format!(".{n}"));
            PathBuf::from(s)
        };
        match rename_noreplace(src, &to) {
            Ok(()) => return Ok(to),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "{}.N: no free name to keep the original under",
        first.display()
    )))
}

fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))
    };
    let (a, b) = (c(from)?, c(to)?);
    // SAFETY: both are NUL-terminated paths; renameat2 has no other
    // preconditions and never replaces `to` with RENAME_NOREPLACE.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        // A filesystem without RENAME_NOREPLACE: check, then rename.
        Some(libc::EINVAL) | Some(libc::ENOSYS) => {
            if std::fs::symlink_metadata(to).is_ok() {
                return Err(io::ErrorKind::AlreadyExists.into());
            }
            std::fs::rename(from, to)
        }
        _ => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_original_is_moved_aside_under_a_free_name_never_over_one() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("a.hrr");
        std::fs::create_dir(&src).unwrap();
        std::fs::create_dir(t.path().join("a.torn")).unwrap();
        let kept = move_aside(&src).unwrap();
        assert_eq!(kept, t.path().join("a.torn.1"));
        assert!(!src.exists() && kept.is_dir());
        assert!(t.path().join("a.torn").is_dir(), "what was there stays");
        let dir = fresh_dir(&src).unwrap();
        assert!(
            dir.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".a.hrr.repairing-")
        );
    }
}
