//! `run`: what `hrr-play` does with its arguments; returns the exit code.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use hrr_cli::progress::{Progress, Unit};
use hrr_core::archive::Archive;
use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
use hrr_core::event_reader::ReadOptions;
use hrr_core::manifest::ArchiveKind;
use hrr_replay::compare::{DType, Tolerance};
use hrr_replay::engine::{
    self, AddressSpace, PinnedHost, ReplayError, ReplayOptions, ReplaySummary, Replayer,
};

use crate::args::{self, Args};
use crate::info;

pub fn run(args: &Args) -> Result<ExitCode> {
    if args.repair {
        return repair(args);
    }
    let archive = Archive::open(&args.archive)?;
    let read = ReadOptions {
        strict: args.strict,
    };
    if args.info {
        info::print_info(&archive, read, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.events {
        info::print_events(&archive, read, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }

    let opts = ReplayOptions {
        read,
        tolerance: tolerance(args),
        regions: !args.no_regions,
        regions_strict: args.regions_strict,
        continue_on_error: args.continue_on_error,
        kernel_filter: args.kernel_filter.clone(),
        timing: args.timing,
    };
    let platform = archive.manifest().platform;
    let mut dev = args.device.open(platform)?;
    eprintln!(
        "hrr-play: replaying {} on {}",
        args.archive.display(),
        dev.name()
    );

    let mut out = match &args.output {
        Some(path) => Some(
            ArchiveWriter::create(
                path,
                ArchiveKind::Replay,
                platform,
                ManifestExtra {
                    replay_of: Some(args.archive.display().to_string()),
                    ..Default::default()
                },
            )
            .with_context(|| format!("creating replay archive {}", path.display()))?,
        ),
        None => None,
    };

    // Declared after the device, so dropped before it; kept across loops:
    // the blobs landed in the first iteration serve the later ones.
    let mut pinned = PinnedHost::new(args.pinned_cache.saturating_mul(1 << 20));
    let mut summary = ReplaySummary::default();
    let mut error = None;
    let mut iteration_ms = Vec::new();
    // One bar for every loop: its delay counts from the start of the work.
    let mut progress = Progress::new(args.json);
    let per_loop = archive.manifest().events;
    progress.stage(
        "replay",
        per_loop.saturating_mul(u64::from(args.loops)),
        Unit::Events,
    );
    for i in 0..args.loops {
        let mut warnings = Vec::new();
        let regions = if opts.regions {
            engine::load_regions(&archive, opts.regions_strict, &mut warnings)
                .map_err(anyhow::Error::msg)?
        } else {
            Default::default()
        };
        let space = AddressSpace {
            regions,
            regions_enabled: opts.regions,
            ..AddressSpace::default()
        };
        // Only the first iteration writes the replay archive.
        let writer = if i == 0 { out.as_mut() } else { None };
        let done = per_loop.saturating_mul(u64::from(i));
        let replayer = Replayer::new(dev.as_mut(), &archive, &opts, space, writer, &mut pinned);
        let (mut s, e) = replayer.run(|n| progress.set(done + n));
        s.warnings.splice(0..0, warnings);
        iteration_ms.push(s.wall_ms);
        summary = s;
        if e.is_some() {
            error = e;
            break;
        }
    }
    progress.finish();
    if let Some(w) = out {
        w.finish().context("finishing the replay archive")?;
    }

    for w in &summary.warnings {
        eprintln!("hrr-play: warning: {w}");
    }
    let code = match &error {
        Some(ReplayError::Format(msg)) => {
            eprintln!("hrr-play: error: {}: {msg}", args.archive.display());
            2
        }
        Some(e @ ReplayError::Fatal { .. }) => {
            eprintln!("hrr-play: fatal: {e}");
            1
        }
        None if summary.passed() => 0,
        None => 1,
    };
    report(args, &summary, &iteration_ms, code)?;
    Ok(ExitCode::from(code))
}

fn tolerance(args: &Args) -> Tolerance {
    Tolerance {
        atol: args.atol,
        rtol: args.rtol,
        exact: args.exact,
        dtype: match args.dtype {
            args::DType::Auto => DType::Auto,
            args::DType::F32 => DType::F32,
            args::DType::F16 => DType::F16,
            args::DType::Bf16 => DType::Bf16,
            args::DType::F64 => DType::F64,
        },
    }
}

/// Prints the DESIGN.md §5 summary (or JSON) on stdout.
fn report(args: &Args, s: &ReplaySummary, iteration_ms: &[f64], code: u8) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::to_value(s)?;
        v["iterations_ms"] = serde_json::json!(iteration_ms);
        v["result"] = serde_json::json!(if code == 0 { "PASS" } else { "FAIL" });
        v["exit_code"] = serde_json::json!(code);
        writeln!(out, "{v}")?;
        return Ok(());
    }
    for m in &s.mismatches {
        writeln!(
            out,
            "mismatch : event {} ({}) size {} first diff at {} ({} bytes differ, max abs {:.3e}, max rel {:.3e})",
            m.seq,
            m.api,
            m.size,
            m.first_diff.map_or("-".into(), |o| o.to_string()),
            m.bytes_differing,
            m.max_abs,
            m.max_rel
        )?;
    }
    for k in &s.kernels {
        writeln!(
            out,
            "kernel : {} x{} total {:.3} ms mean {:.3} ms max {:.3} ms",
            k.name,
            k.launches,
            k.total_ms,
            k.total_ms / k.launches.max(1) as f64,
            k.max_ms
        )?;
    }
    if args.timing {
        writeln!(out, "{}", s.copies)?;
    }
    if iteration_ms.len() > 1 {
        let mean = iteration_ms.iter().sum::<f64>() / iteration_ms.len() as f64;
        let min = iteration_ms.iter().copied().fold(f64::INFINITY, f64::min);
        writeln!(
            out,
            "loop : {} iterations, mean {mean:.3} ms, min {min:.3} ms",
            iteration_ms.len()
        )?;
    }
    write!(out, "{s}")?;
    writeln!(out, "{}", if code == 0 { "PASS" } else { "FAIL" })?;
    Ok(())
}

/// `--repair`: to `-o OUT`, or in place keeping the original as `ARCHIVE.torn`.
fn repair(args: &Args) -> Result<ExitCode> {
    let src = &args.archive;
    let (dst, in_place) = match &args.output {
        Some(out) => (out.clone(), false),
        None => (src.with_extension("hrr-repairing"), true),
    };
    let mut progress = Progress::new(args.json);
    progress.stage("repair", 0, Unit::Bytes);
    let report = hrr_core::archive::repair_with_progress(src, &dst, |done, total| {
        progress.set_total(total);
        progress.set(done);
    })?;
    progress.finish();
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
    let final_path = if in_place {
        let kept = src.with_extension("torn");
        std::fs::rename(src, &kept).with_context(|| format!("moving {} aside", src.display()))?;
        std::fs::rename(&dst, src)
            .with_context(|| format!("moving the repaired archive to {}", src.display()))?;
        eprintln!("hrr-play: repair: original kept at {}", kept.display());
        src.clone()
    } else {
        dst
    };
    eprintln!(
        "hrr-play: repaired {} -> {}: {} events kept, {} blobs",
        src.display(),
        final_path.display(),
        report.events_kept,
        report.blobs_linked + report.blobs_copied
    );
    Ok(ExitCode::SUCCESS)
}
