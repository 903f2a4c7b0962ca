//! `--repair`: rewrite a torn or crashed archive as a clean one, to `-o OUT`
//! or in place (`hrr_core::repair_in_place`), with a progress bar and the
//! report on stderr. With `-o OUT`, a failure removes what was written
//! there.
//!
//! What cannot be copied is reported and left out, as docs/FORMAT.md says:
//! missing, corrupt or unreadable blobs (a FIFO, symlink or directory in
//! their place; their events are kept), and region files that are not
//! regular files or are larger than a reader reads.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use hrr_cli::progress::{Progress, Unit};
use hrr_core::archive::RepairReport;
use hrr_core::repair_in_place::{InPlace, repair_in_place};

use crate::args::Args;

pub fn repair(args: &Args) -> Result<ExitCode> {
    let src = &args.archive;
    if let Some(out) = &args.output {
        let report = with_progress(args, |p| {
            hrr_core::archive::repair_with_progress(src, out, p)
        })?;
        print_report(&report);
        print_done(src, out, &report);
        return Ok(ExitCode::SUCCESS);
    }
    match with_progress(args, |p| repair_in_place(src, p))? {
        InPlace::NothingToRepair { incomplete: None } => eprintln!(
            "hrr-play: repair: {} is complete and reads cleanly; nothing to repair",
            src.display()
        ),
        InPlace::NothingToRepair {
            incomplete: Some(why),
        } => eprintln!(
            "hrr-play: repair: {} was repaired and reads cleanly; nothing to repair (it \
             stays incomplete: {why})",
            src.display()
        ),
        InPlace::Repaired { report, kept } => {
            print_report(&report);
            eprintln!("hrr-play: repair: original kept at {}", kept.display());
            print_done(src, src, &report);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `f` with a progress bar over the bytes of events it reads.
fn with_progress<T, E: std::error::Error + Send + Sync + 'static>(
    args: &Args,
    f: impl FnOnce(&mut dyn FnMut(u64, u64)) -> Result<T, E>,
) -> Result<T> {
    let mut progress = Progress::new(args.json);
    progress.stage("repair", 0, Unit::Bytes);
    let r = f(&mut |done, total| {
        progress.set_total(total);
        progress.set(done);
    })?;
    progress.finish();
    Ok(r)
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
