//! `ArchiveSummary`: what a capture left on disk, for the summary line.
//!
//! Read from the files rather than trusted from the manifest alone, so a
//! capture that died (manifest still `complete:false`, counts 0) is reported
//! with what it did record: whole event lines and blob files.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use hrr_core::archive_writer::EVENTS_FILE;
use hrr_core::blob_store::BLOBS_DIR;
use hrr_core::manifest::Manifest;

/// Counts of one archive directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchiveSummary {
    /// Events recorded, the `eof` trailer not counted.
    pub events: u64,
    pub blobs: u64,
    /// Total size of the blob files.
    pub bytes: u64,
    /// `None`: no manifest (nothing was recorded).
    pub complete: Option<bool>,
    /// Calls forwarded without being recorded, by entry point (the
    /// manifest's `unrecorded`); `None` while the archive is unfinished
    /// (the counts are written when it finishes). Empty without an archive.
    pub unrecorded: Option<BTreeMap<String, u64>>,
}

impl ArchiveSummary {
    pub fn read(dir: &Path) -> ArchiveSummary {
        let manifest = Manifest::read(dir).ok();
        let (blobs, bytes) = blob_files(&dir.join(BLOBS_DIR));
        let complete = manifest.as_ref().map(|m| m.complete);
        // Finished: complete, or incomplete for a reason its writer gave
        // when it finished (a failed write, a blob it could not keep) or a
        // check added since; either way its counts were written.
        let finished = |m: &Manifest| m.complete || m.incomplete_reason().is_some();
        let events = match &manifest {
            Some(m) if finished(m) => m.events,
            _ => count_lines(&dir.join(EVENTS_FILE)),
        };
        let unrecorded = match &manifest {
            Some(m) if finished(m) => Some(m.unrecorded.clone()),
            Some(_) => None,
            None => Some(BTreeMap::new()),
        };
        ArchiveSummary {
            events,
            blobs,
            bytes,
            complete,
            unrecorded,
        }
    }
}

/// Whole lines in a file, streamed (an events file can be gigabytes).
fn count_lines(path: &Path) -> u64 {
    // Only a regular file (a FIFO would block the summary for ever).
    let Ok((mut f, _)) = hrr_core::safe_fs::open_regular(path, hrr_core::safe_fs::Follow::No)
    else {
        return 0;
    };
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        match f.read(&mut buf) {
            Ok(0) | Err(_) => return n,
            Ok(k) => n += buf[..k].iter().filter(|&&c| c == b'\n').count() as u64,
        }
    }
}

fn blob_files(root: &Path) -> (u64, u64) {
    let (mut n, mut bytes) = (0, 0);
    for fan in fs::read_dir(root).into_iter().flatten().flatten() {
        for f in fs::read_dir(fan.path()).into_iter().flatten().flatten() {
            let name = f.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue; // a temporary file of a write that never finished
            }
            match f.metadata() {
                Ok(m) if m.is_file() => {
                    n += 1;
                    bytes += m.len();
                }
                _ => {}
            }
        }
    }
    (n, bytes)
}

/// Archives that child processes recorded next to `dir` (`<stem>-<pid>.hrr`,
/// see the interposer's archive claim).
pub fn child_archives(dir: &Path) -> Vec<PathBuf> {
    let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let stem = name.strip_suffix(".hrr").unwrap_or(&name).to_string();
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut found: Vec<PathBuf> = fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix(&format!("{stem}-"))
                .and_then(|r| r.strip_suffix(".hrr"))
                .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

impl fmt::Display for ArchiveSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} events, {} blobs, {} bytes",
            self.events, self.blobs, self.bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_a_crashed_archive_from_its_files() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("cap.hrr");
        fs::create_dir_all(d.join("blobs/ab")).unwrap();
        fs::write(d.join("blobs/ab/ab12"), b"12345").unwrap();
        fs::write(d.join("blobs/ab/.tmp-1-0"), b"torn").unwrap();
        fs::write(d.join(EVENTS_FILE), b"{}\n{}\n{\"seq\"").unwrap();
        let mut m = Manifest::new(
            hrr_core::manifest::ArchiveKind::Capture,
            hrr_core::manifest::Platform::Cpu,
        );
        m.write_atomic(&d).unwrap();
        let s = ArchiveSummary::read(&d);
        assert_eq!(
            s,
            ArchiveSummary {
                events: 2,
                blobs: 1,
                bytes: 5,
                complete: Some(false),
                unrecorded: None,
            }
        );
        m.complete = true;
        m.events = 1;
        m.unrecorded.insert("hipMemcpy2D".into(), 2);
        m.write_atomic(&d).unwrap();
        let s = ArchiveSummary::read(&d);
        assert_eq!(s.events, 1, "complete: the manifest's count (eof excluded)");
        assert_eq!(s.unrecorded, Some(m.unrecorded.clone()));
        // Finished, then found incomplete: still the manifest's counts.
        m.mark_incomplete("blob check: 1 of 1 blob missing");
        m.write_atomic(&d).unwrap();
        let s = ArchiveSummary::read(&d);
        assert_eq!(s.complete, Some(false));
        assert_eq!((s.events, s.unrecorded), (1, Some(m.unrecorded.clone())));
        let none = ArchiveSummary::read(&t.path().join("none"));
        assert_eq!(none.complete, None);
        assert_eq!(
            none.unrecorded,
            Some(BTreeMap::new()),
            "no archive, no call"
        );
    }

    #[test]
    fn finds_child_archives() {
        let t = tempfile::tempdir().unwrap();
        for n in [
            "cap.hrr",
            "cap-123.hrr",
            "cap-x.hrr",
            "cap-.hrr",
            "other-1.hrr",
        ] {
            fs::create_dir(t.path().join(n)).unwrap();
        }
        assert_eq!(
            child_archives(&t.path().join("cap.hrr")),
            vec![t.path().join("cap-123.hrr")]
        );
    }
}
