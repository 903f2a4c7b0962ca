//! After the application: the archive's blobs checked against their names
//! before hrr-cap reports success (`--no-verify` skips it).
//!
//! Every blob file is hashed and every blob an event names is looked for
//! (`Archive::check_blobs`, the check replay's reads make). A capture can
//! leave a blob that is not what its name says only through memory the
//! program changed under the writer (the capture library refuses to keep
//! such a file and says so) or through the filesystem; either way the
//! archive would replay to an error at the first event needing it, so it
//! is marked incomplete here (`complete:false`, its `incomplete` reason
//! naming the blobs) and hrr-cap ends with [`crate::error::EXIT_ARCHIVE_BAD`]
//! when the application itself succeeded.

use std::path::Path;
use std::time::{Duration, Instant};

use hrr_core::archive::Archive;
use hrr_core::blob_check::BlobCheck;
use hrr_core::manifest::{BLOB_FAILURES_FIELD, Manifest};

use crate::error::CheckError;

/// Bad blobs printed one a line (the rest are counted).
const PRINTED: usize = 10;

/// Checks above this long say how long they took.
const SAY_TIME_FROM: Duration = Duration::from_secs(1);

/// Checks the blobs of the archive `dir` (`progress(done, total)` in
/// bytes while it runs) and, when any is missing or not what its name
/// says, marks the manifest incomplete with the reason. The check's
/// findings either way.
pub fn check_and_mark(
    dir: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<BlobCheck, CheckError> {
    let archive = Archive::open(dir)?;
    let check = archive.check_blobs(progress)?;
    if let Some(why) = check.reason() {
        let mut m = Manifest::read(dir)?;
        m.mark_incomplete(&why);
        m.write_atomic(dir)?;
    }
    Ok(check)
}

/// [`check_and_mark`] with a progress bar (on a terminal, past a second),
/// its findings printed on stderr; whether the archive's blobs are all
/// there and what their names say.
pub fn run(dir: &Path) -> bool {
    let start = Instant::now();
    let mut bar = hrr_cli::progress::Progress::new(false);
    bar.stage("checking blobs", 0, hrr_cli::progress::Unit::Bytes);
    let result = check_and_mark(dir, &mut |done, total| {
        bar.set_total(total);
        bar.set(done);
    });
    bar.finish();
    let check = match result {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "hrr-cap: error: cannot check the blobs of {}: {}",
                dir.display(),
                hrr_core::message::chain(&e)
            );
            return false;
        }
    };
    let took = start.elapsed();
    if took >= SAY_TIME_FROM {
        eprintln!(
            "hrr-cap: blob check: {} blobs, {} bytes in {:.1} s",
            check.blobs,
            check.bytes,
            took.as_secs_f64()
        );
    }
    if let Some(why) = &check.events_unread {
        eprintln!(
            "hrr-cap: warning: the events could not all be read ({why}); blobs named after \
             that were not looked for"
        );
    }
    for bad in check.bad.iter().take(PRINTED) {
        eprintln!("hrr-cap: error: {bad}");
    }
    if check.bad.len() > PRINTED {
        eprintln!(
            "hrr-cap: error: and {} more blobs missing or not what their names say",
            check.bad.len() - PRINTED
        );
    }
    if !check.ok() {
        let why = if check.bad.iter().any(|b| b.uses > 0) {
            ": replay would stop at the first event needing one of these blobs"
        } else {
            ""
        };
        eprintln!("hrr-cap: error: {} is incomplete{why}", dir.display());
    }
    check.ok()
}

/// Blob files the capture library said it could not write (the manifest's
/// `blob_failures`; 0 when it says nothing).
pub fn library_failures(dir: &Path) -> u64 {
    Manifest::read(dir)
        .ok()
        .and_then(|m| m.extra.get(BLOB_FAILURES_FIELD).and_then(|v| v.as_u64()))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::BlobId;
    use hrr_core::blob_store::BlobStore;
    use hrr_core::manifest::{ArchiveKind, Platform};
    use hrr_core::testkit::ArchiveBuilder;

    #[test]
    fn a_corrupt_and_a_missing_blob_mark_the_archive_incomplete() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap.hrr");
        ArchiveBuilder::new(Platform::Cpu)
            .h2d(0x10, b"aaa")
            .h2d(0x10, b"bbb")
            .h2d(0x10, b"ccc")
            .h2d(0x10, b"bbb")
            .write(&dir)
            .unwrap();
        let (b, c) = (BlobId::of(b"bbb"), BlobId::of(b"ccc"));
        // Clean: nothing changes.
        let check = check_and_mark(&dir, &mut |_, _| {}).unwrap();
        assert!(check.ok(), "{check:?}");
        assert!(Manifest::read(&dir).unwrap().complete);
        // One blob rewritten on disk, one gone.
        let store = BlobStore::of_archive(&dir);
        std::fs::write(store.path(&b), b"BBB").unwrap();
        std::fs::remove_file(store.path(&c)).unwrap();
        let check = check_and_mark(&dir, &mut |_, _| {}).unwrap();
        let bad: Vec<String> = check.bad.iter().map(ToString::to_string).collect();
        assert_eq!(
            bad,
            [
                format!(
                    "blob {b} does not match its name (its bytes hash to {}); used by event 1 \
                     (hipMemcpy), event 3 (hipMemcpy)",
                    BlobId::of(b"BBB")
                ),
                format!("blob {c} is missing; used by event 2 (hipMemcpy)"),
            ]
        );
        let m = Manifest::read(&dir).unwrap();
        assert!(!m.complete);
        let why = m.incomplete_reason().unwrap();
        assert!(
            why.starts_with("blob check: 2 of 3 blobs missing or not what their names say")
                && why.contains(&c.to_string()),
            "{why}"
        );
        assert!(!run(&dir), "the same, printed");
    }

    #[test]
    fn the_librarys_failures_are_read_from_the_manifest() {
        let t = tempfile::tempdir().unwrap();
        let mut m = Manifest::new(ArchiveKind::Capture, Platform::Cpu);
        m.write_atomic(t.path()).unwrap();
        assert_eq!(library_failures(t.path()), 0);
        m.extra
            .insert(BLOB_FAILURES_FIELD.into(), serde_json::Value::from(2));
        m.write_atomic(t.path()).unwrap();
        assert_eq!(library_failures(t.path()), 2);
    }
}
