//! `run`: what `hrr-play` does with its arguments; returns the exit code.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

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
    self, AddressSpace, D2hRecords, KernelTiming, PinnedHost, Placement, ReplayError,
    ReplayOptions, ReplaySummary, Replayer, runs,
};

use crate::args::{self, Args};
use crate::{info, stop};

/// Fallback notes printed one by one; the rest are counted.
const FALLBACK_NOTES: usize = 20;

pub fn run(args: &Args) -> Result<ExitCode> {
    // A multi-process run is replayed as a whole, unless one of its
    // archives is asked for alone.
    if !args.no_job
        && let Some(file) = hrr_core::job::locate(&args.archive)
    {
        return crate::job_play::run(args, &file);
    }
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

    // Every event the replay starts is marked: for the watchdog, and for
    // naming the event a signal stopped a stuck replay at.
    let progress = Progress::new();
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
        progress: Some(progress.clone()),
        interrupt: Some(&stop::INTERRUPTED),
        device_map: args.device_map.clone().unwrap_or_default(),
        d2h_records: match args.runs {
            None => D2hRecords::Off,
            // Failed results are compared with each other within the
            // tolerance, so their bytes are kept; byte for byte, a hash does.
            Some(_) if bytewise(&tolerance(args)) => D2hRecords::Digests,
            Some(_) => D2hRecords::FailedBytes,
        },
        collectives_library: args
            .nccl_lib
            .clone()
            .or_else(|| std::env::var_os("HRR_NCCL_LIBRARY").map(Into::into)),
        rendezvous: std::env::var_os("HRR_RENDEZVOUS").map(Into::into),
    };
    let incomplete = archive.incomplete_reason();
    // A window's archive from a run that never reached its trigger holds
    // nothing of the program: replaying it proves nothing.
    let never_opened =
        hrr_core::window::WindowInfo::of(archive.manifest()).is_some_and(|w| !w.opened);
    // Events the application made, when the capture knows how many it lost
    // (or its manifest claims to be complete: then its count).
    let recorded = archive
        .manifest()
        .extra
        .get("lost_events")
        .and_then(serde_json::Value::as_u64)
        .map(|lost| archive.manifest().events + lost)
        .or(archive
            .manifest()
            .complete
            .then_some(archive.manifest().events));
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
    // The recorded ranges, found before the device exists, are reserved as
    // soon as it does: before anything else of this process allocates.
    let plan_ranges = |archive: &Archive| {
        // Segments are planned only where they may be materialised.
        let regions = if args.no_regions {
            Default::default()
        } else {
            engine::load_regions(archive, false, &mut Vec::new()).unwrap_or_default()
        };
        engine::placement_plan(archive, read, &regions)
    };
    // The CUDA backend needs the plan before its driver starts (to keep the
    // ranges free); the others get it from a thread of its own while the
    // device opens: reading every event of a 100k-launch archive takes about
    // 50 ms, and opening ROCm hundreds.
    let first = !args.no_placement && args.device.wants_plan(platform);
    let mut startup = Startup::default();
    let t = Instant::now();
    let early = if first {
        plan_ranges(&archive)
    } else {
        Vec::new()
    };
    startup.plan_ms = ms_since(t);
    let t = Instant::now();
    let (dev, ranges) = std::thread::scope(|s| {
        let plan = (!args.no_placement && !first).then(|| {
            s.spawn(|| {
                let t = Instant::now();
                (plan_ranges(&archive), ms_since(t))
            })
        });
        let dev = args.device.open(platform, &early);
        let ranges = plan.map_or_else(Default::default, |h| {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        });
        (dev, ranges)
    });
    startup.device_open_ms = ms_since(t);
    let (ranges, plan_ms) = if first {
        (early, startup.plan_ms)
    } else {
        ranges
    };
    startup.plan_ms = plan_ms;
    let mut dev = dev?;
    // Every device the capture used needs a local one, before anything is
    // replayed (events are checked again as they come: an archive may not
    // list its devices).
    if let Err(why) = opts
        .device_map
        .check(&archive.manifest().devices_used(), dev.device_count())
    {
        eprintln!("hrr-play: fatal: {}: {why}", args.archive.display());
        return Ok(ExitCode::from(1));
    }
    let t = Instant::now();
    let placement = if args.no_placement {
        Placement::off()
    } else {
        Placement::reserve(dev.as_mut(), &ranges)
    };
    startup.reserve_ms = ms_since(t);
    drop(ranges);
    eprintln!(
        "hrr-play: replaying {} on {}",
        args.archive.display(),
        dev.name()
    );
    if let Some(note) = placement.note() {
        eprintln!("hrr-play: note: placement: {note}");
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
            .context("creating the replay archive")?
            .compress(!hrr_cli::plain_asked(args.plain)),
        ),
        None => None,
    };

    // Whatever stops the replay from here on, the replay archive is left
    // saying so, with every D2H validated before.
    let replayed = replay_all(
        args,
        &archive,
        &opts,
        &placement,
        dev.as_mut(),
        out.as_mut(),
        &progress,
    );
    progress.finish();
    if !stop::claim() {
        // The watchdog or the interrupt watcher is ending the process.
        stop::wait_for_the_end();
    }
    if let Some(w) = out {
        let stopped = match &replayed {
            Ok(r) => r.error.as_ref().map(|e| chain(e).to_string()),
            Err(e) => Some(chain(&**e).to_string()),
        };
        match stopped {
            None => {
                w.finish().context("finishing the replay archive")?;
            }
            // A replay that stopped early is not a complete replay archive.
            Some(why) => {
                w.abandon(&format!("the replay stopped: {why}"))
                    .context("writing the replay archive's manifest")?;
            }
        }
    }
    let Replayed {
        summary,
        error,
        iteration_ms,
    } = replayed?;

    for w in &summary.warnings {
        eprintln!("hrr-play: warning: {w}");
    }
    // Each allocation that could not be placed, once (the first replay's
    // list: later loops place the same way).
    for note in summary.placement.fallbacks.iter().take(FALLBACK_NOTES) {
        eprintln!("hrr-play: note: placement: {note}");
    }
    if summary.placement.fallbacks.len() > FALLBACK_NOTES {
        eprintln!(
            "hrr-play: note: placement: {} more allocations translated, not placed",
            summary.placement.fallbacks.len() - FALLBACK_NOTES
        );
    }
    for n in &summary.nondeterministic {
        eprintln!("hrr-play: nondeterministic: {n}");
    }
    let code = match &error {
        Some(e @ ReplayError::Fatal { .. }) => {
            eprintln!("hrr-play: fatal: {}", chain(e));
            1
        }
        Some(e @ ReplayError::Interrupted { .. }) => {
            eprintln!("hrr-play: fatal: {}", chain(e));
            stop::interrupted_status()
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
    // A replay of part of a capture proves less than a PASS says: it fails
    // unless the user asked for a prefix (`--allow-partial`); a replay of
    // none of it proves nothing, and fails even so.
    let verdict = match (&incomplete, code) {
        (_, 0) if never_opened => Verdict::FailNeverOpened,
        (Some(_), 0) if args.strict => Verdict::FailIncomplete,
        (Some(_), 0) if args.allow_partial && summary.replayed_events() > 0 => {
            Verdict::Partial(recorded)
        }
        (Some(_), 0) => Verdict::FailPartial(recorded),
        (None, 0) if args.strict && summary.d2h_nondeterministic > 0 => {
            Verdict::FailNondeterministic
        }
        // Pointers stored in device memory are right only where placed.
        (None, 0) if args.strict && summary.placement.placed < summary.placement.allocations => {
            Verdict::FailUnplaced
        }
        (_, 0) => Verdict::Pass,
        _ => Verdict::Fail,
    };
    let exit = verdict.exit_code(code);
    report(
        args,
        &summary,
        Times {
            startup,
            iterations: &iteration_ms,
        },
        incomplete.as_deref(),
        verdict,
        exit,
        unrecorded,
    )?;
    Ok(ExitCode::from(exit))
}

/// Where the time before the first event went (`startup_ms` in `--json`):
/// the placement plan's scan of the archive (on a thread of its own while
/// the device opens, except on CUDA, whose driver must start after it),
/// opening the device, and reserving the recorded ranges.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
struct Startup {
    plan_ms: f64,
    device_open_ms: f64,
    reserve_ms: f64,
}

/// The replay's times for its report: start-up, then each replay's.
struct Times<'a> {
    startup: Startup,
    iterations: &'a [f64],
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// What the replays did.
struct Replayed {
    /// The last replay's summary (with `--runs`, the verdicts over all).
    summary: ReplaySummary,
    /// Why the replay stopped early, if it did.
    error: Option<ReplayError>,
    /// Wall time of each replay.
    iteration_ms: Vec<f64>,
}

/// Replays the archive `--loop N` or `--runs N` times (once by default),
/// the first replay writing `out`; with `--runs`, merges the D2H verdicts
/// of all replays. An `Err` is an error outside any replay (the watchdog,
/// the regions); a replay that stopped is `Ok` with its `error`.
fn replay_all(
    args: &Args,
    archive: &Archive,
    opts: &ReplayOptions,
    placement: &Placement,
    dev: &mut dyn hrr_replay::device::Device,
    mut out: Option<&mut ArchiveWriter>,
    progress: &std::sync::Arc<Progress>,
) -> Result<Replayed> {
    if args.watchdog > 0 {
        start_watchdog(args, progress.clone())?;
    }
    watch_signals(args, progress.clone()).context("installing the signal handlers")?;
    // Declared after the device, so dropped before it; kept across loops:
    // the blobs landed in the first iteration serve the later ones.
    let mut pinned = PinnedHost::new(args.pinned_cache.saturating_mul(1 << 20));
    let mut summary = ReplaySummary::default();
    let mut error = None;
    let mut iteration_ms = Vec::new();
    let mut records = Vec::new();
    let iterations = args.runs.unwrap_or(args.loops);
    // One bar for every loop: its delay counts from the start of the work.
    let mut bar = ProgressBar::new(args.json);
    let per_loop = archive.manifest().events;
    bar.stage(
        "replay",
        per_loop.saturating_mul(u64::from(iterations)),
        Unit::Events,
    );
    for i in 0..iterations {
        let mut warnings = Vec::new();
        let regions = if opts.regions {
            engine::load_regions(archive, opts.regions_strict, &mut warnings)?
        } else {
            // Not materialised, but still known: a launch argument pointing
            // into a declared segment is then refused rather than run on
            // its capture-time address. Best effort, silently.
            engine::load_regions(archive, false, &mut Vec::new()).unwrap_or_default()
        };
        let space = AddressSpace {
            regions,
            regions_enabled: opts.regions,
            placement: placement.clone(),
            ..AddressSpace::default()
        };
        // Only the first iteration writes the replay archive.
        let writer = if i == 0 { out.as_deref_mut() } else { None };
        let done = per_loop.saturating_mul(u64::from(i));
        let replayer = Replayer::new(dev, archive, opts, space, writer, &mut pinned);
        let (mut s, e) = replayer.run(|n| bar.set(done + n));
        s.warnings.splice(0..0, warnings);
        iteration_ms.push(s.wall_ms);
        records.push(std::mem::take(&mut s.d2h_records));
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
    if args.runs.is_some() {
        let v = runs::merge(&records, &opts.tolerance);
        summary.d2h_exact = v.exact;
        summary.d2h_tolerance = v.within_tolerance;
        summary.d2h_fail = v.fail;
        summary.mismatches = v.mismatches;
        summary.d2h_nondeterministic = v.nondeterministic.len() as u64;
        summary.nondeterministic = v.nondeterministic;
    }
    Ok(Replayed {
        summary,
        error,
        iteration_ms,
    })
}

/// How a replay ends: the last line of the summary and the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    /// Passed, but the capture is incomplete and `--allow-partial` was
    /// given: `PASS (partial: …)`, exit 0; with the number of events the
    /// application made, when known.
    Partial(Option<u64>),
    /// Passed, but the capture is incomplete: `FAIL (partial: …)`, exit 1.
    FailPartial(Option<u64>),
    /// Passed, the capture is incomplete and `--strict` was given: exit 1.
    FailIncomplete,
    /// Passed, but `--runs` found nondeterministic D2H and `--strict` was
    /// given: exit 1.
    FailNondeterministic,
    /// Passed, but allocations were translated, not placed, and `--strict`
    /// was given: exit 1.
    FailUnplaced,
    /// The archive is a capture window's that never opened: nothing was
    /// recorded, so nothing was replayed: exit 1.
    FailNeverOpened,
    Fail,
}

impl Verdict {
    fn exit_code(self, code: u8) -> u8 {
        match self {
            Verdict::Pass | Verdict::Partial(_) => 0,
            Verdict::FailPartial(_)
            | Verdict::FailIncomplete
            | Verdict::FailNondeterministic
            | Verdict::FailUnplaced
            | Verdict::FailNeverOpened => 1,
            Verdict::Fail => code,
        }
    }

    fn passed(self) -> bool {
        matches!(self, Verdict::Pass | Verdict::Partial(_))
    }

    fn partial(self) -> bool {
        matches!(self, Verdict::Partial(_) | Verdict::FailPartial(_))
    }

    fn line(self, s: &ReplaySummary) -> String {
        let partial = |recorded: Option<u64>| {
            format!(
                "partial: {} of {} events; capture incomplete",
                s.replayed_events(),
                recorded
                    .unwrap_or(s.events - u64::from(s.trailer && s.events > 0))
                    .max(s.replayed_events())
            )
        };
        match self {
            Verdict::Pass => "PASS".into(),
            Verdict::Partial(recorded) => format!("PASS ({})", partial(recorded)),
            Verdict::FailPartial(recorded) => format!("FAIL ({})", partial(recorded)),
            Verdict::FailIncomplete => "FAIL (capture incomplete; --strict)".into(),
            Verdict::FailNondeterministic => format!(
                "FAIL ({} nondeterministic; --strict)",
                s.d2h_nondeterministic
            ),
            Verdict::FailUnplaced => format!(
                "FAIL ({} of {} allocations not placed; --strict)",
                s.placement.allocations - s.placement.placed,
                s.placement.allocations
            ),
            Verdict::FailNeverOpened => {
                "FAIL (capture window never opened: nothing recorded)".into()
            }
            Verdict::Fail => "FAIL".into(),
        }
    }
}

/// Starts the `--watchdog` thread: a replay stuck in one event for the
/// limit ends with the fatal line and exit status 1 (the stuck runtime
/// call cannot be interrupted, so the process exits around it), its
/// replay archive marked stopped at that event.
fn start_watchdog(args: &Args, progress: std::sync::Arc<Progress>) -> Result<()> {
    let archive = args.archive.clone();
    let output = args.output.clone();
    let json = args.json;
    watchdog::spawn(
        progress,
        Duration::from_secs(args.watchdog),
        move |seq, limit| {
            if !stop::claim() {
                return; // the replay is over: the main thread ends it
            }
            let what = describe_event(&archive, seq);
            let msg = format!("{what}: no progress after {} s (watchdog)", limit.as_secs());
            end_stopped(output.as_deref(), json, &msg, 1)
        },
    )
    .context("starting the watchdog thread")
}

/// Installs the SIGINT/SIGTERM handlers ([`stop`]): the replayer stops
/// before its next event; a replay stuck in one runtime call is ended
/// around it, its replay archive marked stopped at that event.
fn watch_signals(args: &Args, progress: std::sync::Arc<Progress>) -> std::io::Result<()> {
    let archive = args.archive.clone();
    let output = args.output.clone();
    let json = args.json;
    stop::watch_signals(move |_| {
        if !stop::claim() {
            return; // the replay stopped by itself
        }
        let msg = format!(
            "{}: interrupted",
            describe_event(&archive, progress.current())
        );
        end_stopped(output.as_deref(), json, &msg, stop::interrupted_status())
    })
}

/// Ends the process from a thread other than the replay's, which is stuck
/// in a runtime call: the replay archive (whose D2H lines are on disk
/// already) is marked stopped, the fatal line and `FAIL` are printed.
fn end_stopped(output: Option<&Path>, json: bool, msg: &str, status: u8) -> ! {
    eprintln!("hrr-play: fatal: {msg}");
    if let Some(dir) = output
        && let Err(e) = stop::mark_stopped(dir, &format!("the replay stopped: {msg}"))
    {
        eprintln!(
            "hrr-play: error: writing the replay archive's manifest: {}",
            chain(&e)
        );
    }
    let mut out = std::io::stdout().lock();
    let _ = if json {
        let v = serde_json::json!({
            "result": "FAIL", "exit_code": status, "fatal": msg,
        });
        writeln!(out, "{v}")
    } else {
        writeln!(out, "FAIL")
    };
    let _ = out.flush();
    // SAFETY: _exit ends the process without running atexit handlers,
    // which could wait on the runtime call that is stuck.
    unsafe { libc::_exit(i32::from(status)) }
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

/// Whether `t` passes only identical bytes (up to `+0`/`-0` and NaN
/// payloads): replays are then compared with each other by hash.
fn bytewise(t: &Tolerance) -> bool {
    t.exact || (t.atol == 0.0 && t.rtol == 0.0)
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
    times: Times<'_>,
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
        v["iterations_ms"] = serde_json::json!(times.iterations);
        v["startup_ms"] = serde_json::to_value(times.startup)?;
        v["result"] = serde_json::json!(if verdict.passed() { "PASS" } else { "FAIL" });
        v["partial"] = serde_json::json!(verdict.partial());
        v["allow_partial"] = serde_json::json!(args.allow_partial);
        if let Some(n) = args.runs {
            v["runs"] = serde_json::json!(n);
        }
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
    if times.iterations.len() > 1 {
        let mean = times.iterations.iter().sum::<f64>() / times.iterations.len() as f64;
        let min = times
            .iterations
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let n = times.iterations.len();
        if args.runs.is_some() {
            write!(out, "runs : {n} replays compared")?;
        } else {
            write!(out, "loop : {n} iterations")?;
        }
        writeln!(out, ", mean {mean:.3} ms, min {min:.3} ms")?;
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
