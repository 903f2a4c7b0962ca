//! `run`: what `hrr-play` does with its arguments; returns the exit code.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use hrr_cli::progress::{Progress as ProgressBar, Unit};
use hrr_core::archive::Archive;
use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
use hrr_core::error_chain::chain;
use hrr_core::event_reader::ReadOptions;
use hrr_core::manifest::{ArchiveKind, UnrecordedCalls};
use hrr_replay::compare::{DType, Tolerance};
use hrr_replay::engine::watchdog::{self, FINAL_SYNC, Progress};
use hrr_replay::engine::{
    self, AddressSpace, KernelTiming, PinnedHost, Placement, ReplayError, ReplayOptions,
    ReplaySummary, Replayer,
};

use crate::args::{self, Args};
use crate::info;

/// Fallback notes printed one by one; the rest are counted.
const FALLBACK_NOTES: usize = 20;

pub fn run(args: &Args) -> Result<ExitCode> {
    if args.repair {
        return crate::repair::repair(args);
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

    let progress = (args.watchdog > 0).then(Progress::new);
    let opts = ReplayOptions {
        read,
        tolerance: tolerance(args),
        regions: !args.no_regions,
        regions_strict: args.regions_strict,
        continue_on_error: args.continue_on_error,
        kernel_filter: args.kernel_filter.clone(),
        timing: args.timing,
        no_graphs: args.no_graphs,
        launch_thread: !args.no_launch_thread,
        progress: progress.clone(),
    };
    let incomplete = archive.incomplete_reason();
    // Events the application made, when the capture knows how many it lost.
    let recorded = archive
        .manifest()
        .extra
        .get("lost_events")
        .and_then(serde_json::Value::as_u64)
        .map(|lost| archive.manifest().events + lost);
    let unrecorded = UnrecordedCalls(&archive.manifest().unrecorded);
    if args.strict && unrecorded.total() > 0 {
        eprintln!(
            "hrr-play: fatal: {}: the application made calls the capture library forwarded \
             without recording them, so their effects are not in the archive and replay \
             cannot reproduce them ({}); --strict refuses to replay it",
            args.archive.display(),
            unrecorded.to_string().trim_start_matches("unrecorded : ")
        );
        return Ok(ExitCode::from(1));
    }
    let platform = archive.manifest().platform;
    let arenas = if args.no_placement {
        &[][..]
    } else {
        &archive.manifest().va_arenas[..]
    };
    // The recorded ranges, found before the device exists, are reserved as
    // soon as it does: before anything else of this process allocates. A
    // capture that noted the runtime's own arenas needs neither: steered to
    // their recorded bases, they give the recorded addresses back by
    // themselves (and reserving inside them only costs time).
    let plan_ranges = |archive: &Archive| {
        let regions = engine::load_regions(archive, false, &mut Vec::new()).unwrap_or_default();
        engine::placement_plan(archive, read, &regions)
    };
    // Planned on a thread of its own while the device opens: reading every
    // event of a 100k-launch archive takes about 50 ms, making a CUDA
    // context longer.
    let plan_now = !args.no_placement && arenas.is_empty();
    let (dev, ranges) = std::thread::scope(|s| {
        let plan = plan_now.then(|| s.spawn(|| plan_ranges(&archive)));
        let dev = args.device.open(platform, arenas);
        let ranges = plan.map_or_else(Vec::new, |h| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        });
        (dev, ranges)
    });
    let mut dev = dev?;
    let placement = if args.no_placement {
        Placement::off()
    } else if !arenas.is_empty() && hrr_cli::backend::arenas_steered() {
        Placement::by_allocator()
    } else if !arenas.is_empty() {
        Placement::reserve(dev.as_mut(), &plan_ranges(&archive))
    } else {
        Placement::reserve(dev.as_mut(), &ranges)
    };
    drop(ranges);
    eprintln!(
        "hrr-play: replaying {} on {}",
        args.archive.display(),
        dev.name()
    );
    if let Some(why) = placement.unable() {
        eprintln!("hrr-play: note: placement: {why}; every allocation is translated");
    }

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
            .context("creating the replay archive")?,
        ),
        None => None,
    };

    if let Some(p) = &progress {
        start_watchdog(args, p.clone())?;
    }

    // Declared after the device, so dropped before it; kept across loops:
    // the blobs landed in the first iteration serve the later ones.
    let mut pinned = PinnedHost::new(args.pinned_cache.saturating_mul(1 << 20));
    let mut summary = ReplaySummary::default();
    let mut error = None;
    let mut iteration_ms = Vec::new();
    // One bar for every loop: its delay counts from the start of the work.
    let mut bar = ProgressBar::new(args.json);
    let per_loop = archive.manifest().events;
    bar.stage(
        "replay",
        per_loop.saturating_mul(u64::from(args.loops)),
        Unit::Events,
    );
    for i in 0..args.loops {
        let mut warnings = Vec::new();
        let regions = if opts.regions {
            engine::load_regions(&archive, opts.regions_strict, &mut warnings)?
        } else {
            // Not materialised, but still known: a launch argument pointing
            // into a declared segment is then refused rather than run on
            // its capture-time address. Best effort, silently.
            engine::load_regions(&archive, false, &mut Vec::new()).unwrap_or_default()
        };
        let space = AddressSpace {
            regions,
            regions_enabled: opts.regions,
            placement: placement.clone(),
            ..AddressSpace::default()
        };
        // Only the first iteration writes the replay archive.
        let writer = if i == 0 { out.as_mut() } else { None };
        let done = per_loop.saturating_mul(u64::from(i));
        let replayer = Replayer::new(dev.as_mut(), &archive, &opts, space, writer, &mut pinned);
        let (mut s, e) = replayer.run(|n| bar.set(done + n));
        s.warnings.splice(0..0, warnings);
        iteration_ms.push(s.wall_ms);
        // Kernel times add up over the loops (`--loop N --timing` is a
        // benchmark: each kernel's mean is over all N iterations).
        let mut kernels = std::mem::take(&mut summary.kernels);
        merge_kernel_timings(&mut kernels, std::mem::take(&mut s.kernels));
        s.kernels = kernels;
        summary = s;
        if e.is_some() {
            error = e;
            break;
        }
    }
    bar.finish();
    if let Some(p) = &progress {
        p.finish();
    }
    if let Some(w) = out {
        match &error {
            None => {
                w.finish().context("finishing the replay archive")?;
            }
            // A replay that stopped early is not a complete replay archive.
            Some(e) => {
                w.abandon(&format!("the replay stopped: {}", chain(e)))
                    .context("writing the replay archive's manifest")?;
            }
        }
    }

    for w in &summary.warnings {
        eprintln!("hrr-play: warning: {w}");
    }
    // Each allocation that could not be placed, once (the first replay's
    // list: later loops place the same way).
    if let Some(note) = hrr_cli::backend::arena_note(arenas.len()) {
        eprintln!("hrr-play: note: placement: {note}");
    }
    for note in summary.placement.fallbacks.iter().take(FALLBACK_NOTES) {
        eprintln!("hrr-play: note: placement: {note}");
    }
    if summary.placement.fallbacks.len() > FALLBACK_NOTES {
        eprintln!(
            "hrr-play: note: placement: {} more allocations translated, not placed",
            summary.placement.fallbacks.len() - FALLBACK_NOTES
        );
    }
    let code = match &error {
        Some(e @ ReplayError::Fatal { .. }) => {
            eprintln!("hrr-play: fatal: {}", chain(e));
            1
        }
        Some(e) => {
            // Reader errors name their file (inside the archive) already.
            let archive = args.archive.display().to_string();
            let msg = chain(e).to_string();
            if msg.contains(&archive) {
                eprintln!("hrr-play: error: {msg}");
            } else {
                eprintln!("hrr-play: error: {archive}: {msg}");
            }
            2
        }
        None if summary.passed() => 0,
        None => 1,
    };
    // A replay of part of a capture proves less than a PASS says.
    let verdict = match (&incomplete, code) {
        (Some(_), 0) if args.strict => Verdict::FailIncomplete,
        (Some(_), 0) => Verdict::Partial(recorded),
        (_, 0) => Verdict::Pass,
        _ => Verdict::Fail,
    };
    let exit = verdict.exit_code(code);
    report(
        args,
        &summary,
        &iteration_ms,
        incomplete.as_deref(),
        verdict,
        exit,
        unrecorded,
    )?;
    Ok(ExitCode::from(exit))
}

/// How a replay ends: the last line of the summary and the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    /// Passed, but the capture is incomplete: `PASS (partial: …)`, exit 0;
    /// with the number of events the application made, when known.
    Partial(Option<u64>),
    /// Passed, the capture is incomplete and `--strict` was given: exit 1.
    FailIncomplete,
    Fail,
}

impl Verdict {
    fn exit_code(self, code: u8) -> u8 {
        match self {
            Verdict::Pass | Verdict::Partial(_) => 0,
            Verdict::FailIncomplete => 1,
            Verdict::Fail => code,
        }
    }

    fn passed(self) -> bool {
        matches!(self, Verdict::Pass | Verdict::Partial(_))
    }

    fn line(self, s: &ReplaySummary) -> String {
        match self {
            Verdict::Pass => "PASS".into(),
            Verdict::Partial(recorded) => format!(
                "PASS (partial: {} of {} events; capture incomplete)",
                s.replayed,
                recorded.unwrap_or(s.events).max(s.replayed)
            ),
            Verdict::FailIncomplete => "FAIL (capture incomplete; --strict)".into(),
            Verdict::Fail => "FAIL".into(),
        }
    }
}

/// Starts the `--watchdog` thread: a replay stuck in one event for the
/// limit ends with the fatal line and exit status 1 (the stuck runtime
/// call cannot be interrupted, so the process exits around it).
fn start_watchdog(args: &Args, progress: std::sync::Arc<Progress>) -> Result<()> {
    let archive = args.archive.clone();
    let json = args.json;
    watchdog::spawn(
        progress,
        Duration::from_secs(args.watchdog),
        move |seq, limit| {
            let what = describe_event(&archive, seq);
            let msg = format!("{what}: no progress after {} s (watchdog)", limit.as_secs());
            eprintln!("hrr-play: fatal: {msg}");
            let mut out = std::io::stdout().lock();
            let _ = if json {
                let v = serde_json::json!({
                    "result": "FAIL", "exit_code": 1, "fatal": msg,
                });
                writeln!(out, "{v}")
            } else {
                writeln!(out, "FAIL")
            };
            let _ = out.flush();
            // SAFETY: _exit ends the process without running atexit
            // handlers, which could wait on the runtime call that is stuck.
            unsafe { libc::_exit(1) }
        },
    )
    .context("starting the watchdog thread")
}

/// `event N (api)` for the event with `seq` (read again from the archive:
/// the replayer keeps no per-event state for the watchdog).
fn describe_event(archive: &Path, seq: u64) -> String {
    if seq == FINAL_SYNC {
        return "final device synchronisation".into();
    }
    let api = Archive::open(archive)
        .ok()
        .and_then(|a| a.events(ReadOptions::default()).ok())
        .and_then(|mut r| r.find_map(|e| e.ok().filter(|e| e.seq == seq)))
        .map(|e| e.api);
    match api {
        Some(api) => format!("event {seq} ({api})"),
        None => format!("event {seq}"),
    }
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

/// Prints the DESIGN.md §5 summary (or JSON) on stdout; an incomplete
/// capture is said first (`capture : incomplete (REASON)`), then the
/// capture's unrecorded calls (from its manifest).
fn report(
    args: &Args,
    s: &ReplaySummary,
    iteration_ms: &[f64],
    incomplete: Option<&str>,
    verdict: Verdict,
    exit: u8,
    unrecorded: UnrecordedCalls<'_>,
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = serde_json::to_value(s)?;
        v["unrecorded"] = serde_json::json!({
            "calls": unrecorded.total(),
            "by_entry_point": unrecorded.0,
        });
        v["iterations_ms"] = serde_json::json!(iteration_ms);
        v["result"] = serde_json::json!(if verdict.passed() { "PASS" } else { "FAIL" });
        v["partial"] = serde_json::json!(matches!(verdict, Verdict::Partial(_)));
        v["capture_incomplete"] = serde_json::json!(incomplete);
        v["exit_code"] = serde_json::json!(exit);
        writeln!(out, "{v}")?;
        return Ok(());
    }
    if let Some(why) = incomplete {
        writeln!(out, "capture : incomplete ({why})")?;
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
    writeln!(out, "{unrecorded}")?;
    write!(out, "{s}")?;
    writeln!(out, "{}", verdict.line(s))?;
    Ok(())
}

/// Adds `more` kernel timings into `into`, kernel by kernel (by name, in the
/// order they first appeared).
fn merge_kernel_timings(into: &mut Vec<KernelTiming>, more: Vec<KernelTiming>) {
    for k in more {
        match into.iter_mut().find(|t| t.name == k.name) {
            Some(t) => {
                t.launches += k.launches;
                t.total_ms += k.total_ms;
                t.max_ms = t.max_ms.max(k.max_ms);
            }
            None => into.push(k),
        }
    }
}
