//! `--repair`: rewrite a torn or crashed archive as a clean one, to `-o OUT`
//! or in place.
//!
//! In place, the repaired archive is built in a fresh hidden directory next
//! to the original (`.NAME.repairing-PID-N`, `0700`), the original is moved
//! aside to the first free name of `NAME.torn`, `NAME.torn.1`, … (never
//! replacing anything: `renameat2(RENAME_NOREPLACE)`), and the repaired one
//! takes its place. Any failure removes the hidden directory and puts the
//! original back, so nothing is left behind; with `-o OUT`, a failure
//! removes what was written there. An archive that is complete and reads
//! cleanly is left alone: repairing twice is repairing once.
//!
//! What cannot be copied is reported and left out, as docs/FORMAT.md says:
//! missing, corrupt or unreadable blobs (a FIFO, symlink or directory in
//! their place; their events are kept), and region files that are not
//! regular files or are larger than a reader reads.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use hrr_cli::progress::{Progress, Unit};
use hrr_core::Op;
use hrr_core::archive::{Archive, RepairReport};
use hrr_core::event_reader::ReadOptions;
use hrr_core::safe_fs::DirFd;

use crate::args::Args;

pub fn repair(args: &Args) -> Result<ExitCode> {
    let src = &args.archive;
    if let Some(out) = &args.output {
        let report = repair_to(args, src, out)?;
        print_report(&report);
        print_done(src, out, &report);
        return Ok(ExitCode::SUCCESS);
    }
    let archive = Archive::open(src)?;
    if reads_cleanly(&archive) {
        match archive.incomplete_reason() {
            None => eprintln!(
                "hrr-play: repair: {} is complete and reads cleanly; nothing to repair",
                src.display()
            ),
            Some(why) => eprintln!(
                "hrr-play: repair: {} was repaired and reads cleanly; nothing to repair (it \
                 stays incomplete: {why})",
                src.display()
            ),
        }
        return Ok(ExitCode::SUCCESS);
    }
    drop(archive);
    let tmp = fresh_dir(src).context("creating the repair directory")?;
    let report = match repair_to(args, src, &tmp) {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    print_report(&report);
    let kept = match move_aside(src) {
        Ok(k) => k,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e).with_context(|| format!("moving {} aside", src.display()));
        }
    };
    if let Err(e) = std::fs::rename(&tmp, src) {
        // Put everything back as it was.
        let _ = std::fs::rename(&kept, src);
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e).with_context(|| format!("moving the repaired archive to {}", src.display()));
    }
    eprintln!("hrr-play: repair: original kept at {}", kept.display());
    print_done(src, src, &report);
    Ok(ExitCode::SUCCESS)
}

/// [`hrr_core::archive::repair`] with a progress bar over the bytes of
/// `events.ndjson` read.
fn repair_to(args: &Args, src: &Path, dst: &Path) -> Result<RepairReport> {
    let mut progress = Progress::new(args.json);
    progress.stage("repair", 0, Unit::Bytes);
    let report = hrr_core::archive::repair_with_progress(src, dst, |done, total| {
        progress.set_total(total);
        progress.set(done);
    })?;
    progress.finish();
    Ok(report)
}

fn print_report(report: &RepairReport) {
    if let Some((line, reason)) = &report.stopped_at {
        eprintln!("hrr-play: repair: stopped at line {line}: {reason}");
    }
    for w in &report.warnings {
        eprintln!("hrr-play: repair: {w}");
    }
    for (id, seq) in &report.blobs_missing {
        eprintln!("hrr-play: repair: blob {id} (first used by event {seq}) is missing");
    }
    for (id, seq) in &report.blobs_corrupt {
        eprintln!("hrr-play: repair: blob {id} (first used by event {seq}) is corrupt");
    }
    for (id, seq, why) in &report.blobs_unreadable {
        eprintln!("hrr-play: repair: blob {id} (first used by event {seq}) is unreadable: {why}");
    }
    for (_, why) in &report.regions_left_out {
        eprintln!("hrr-play: repair: region file left out: {why}");
    }
}

fn print_done(src: &Path, dst: &Path, report: &RepairReport) {
    eprintln!(
        "hrr-play: repaired {} -> {}: {} events kept, {} blobs",
        src.display(),
        dst.display(),
        report.events_kept,
        report.blobs_linked + report.blobs_copied
    );
    // Repair makes an archive readable, not whole: what its writer lost
    // (or repair dropped) stays lost, and the archive says so.
    if let Some(why) = &report.incomplete {
        eprintln!(
            "hrr-play: repair: {} stays incomplete: {why}",
            dst.display()
        );
    }
}

/// Nothing to repair: complete, or an archive repair left incomplete (what
/// it lacks, no repair brings back); and every line reads, the last event
/// is an `eof` trailer counting the events before it, nothing recovered.
fn reads_cleanly(a: &Archive) -> bool {
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
