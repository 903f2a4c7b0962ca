//! `hrr-diff A B`: compares the D2H outputs of two archives, paired by `seq`.
//!
//! Data goes to stdout (per-mismatch lines, the `d2h :` summary, `PASS` or
//! `FAIL`; or one JSON document with `--json`), warnings and errors to stderr.
//! Exit status: 0 same, 1 differ (or an archive is incomplete), 2 error.
//!
//! An archive that is not complete (a capture killed, a disk that filled, a
//! replay that stopped) is said before the summary, as
//! `capture : incomplete (REASON)` (or `replay : …` for a replay archive),
//! and fails the diff: `FAIL (partial: KIND incomplete)`, exit 1. Only what
//! it holds was compared; `--allow-partial` accepts that as
//! `PASS (partial: KIND incomplete)`, exit 0.
//!
//! Two jobs (multi-process runs; `job_run`) are compared process by
//! process, paired by rank, with one verdict.
//!
//! `--against C` (a second capture of the same program) sets apart the D2H
//! whose bytes differ between A and C: nondeterministic, counted
//! (`d2h : … , K nondeterministic`), named on stderr, not compared with B
//! and not failing unless `--strict`.
#![forbid(unsafe_code)]

mod job_run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use hrr_cli::progress::{Progress, Unit};
use hrr_core::archive::Archive;
use hrr_diff::archive_diff::{DiffReport, Step, diff_against};
use hrr_replay::compare::{DType, Tolerance};

/// Compare the device-to-host outputs of two hrr archives.
#[derive(Parser, Debug)]
#[command(name = "hrr-diff", version, about)]
struct Args {
    /// Expected archive (usually the capture).
    a: PathBuf,
    /// Actual archive (usually a replay).
    b: PathBuf,
    /// Absolute tolerance: |b - a| <= atol + rtol * |a| passes.
    #[arg(long, default_value_t = Tolerance::default().atol)]
    atol: f64,
    /// Relative tolerance.
    #[arg(long, default_value_t = Tolerance::default().rtol)]
    rtol: f64,
    /// Element type for tolerance checks: auto, f32, f16, bf16, f64.
    #[arg(long, default_value = "auto")]
    dtype: DType,
    /// Only byte-identical outputs pass.
    #[arg(long)]
    exact: bool,
    /// Print one JSON document on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// A second capture of the program A captured: D2H whose bytes differ
    /// between A and C (beyond the tolerance) are nondeterministic — counted
    /// and listed, not compared with B, not failing unless --strict.
    #[arg(long, value_name = "C")]
    against: Option<PathBuf>,
    /// Accept an incomplete archive (a capture killed, a replay that
    /// stopped): what it holds is compared and a pass is
    /// `PASS (partial: …)`, exit 0. Without it, `FAIL (partial: …)`, exit 1.
    #[arg(long)]
    allow_partial: bool,
    /// Nondeterministic D2H (--against) fail, and an incomplete archive
    /// fails even with --allow-partial.
    #[arg(long)]
    strict: bool,
}

/// The last line and whether it is a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    /// Every pair passed, an archive is incomplete, `--allow-partial`.
    Partial,
    /// Every pair passed, but an archive is incomplete.
    FailPartial,
    /// Every pair passed, an archive is incomplete, `--strict`.
    FailIncomplete,
    /// Every pair passed, but some D2H are nondeterministic and `--strict`.
    FailNondeterministic,
    Fail,
}

impl Verdict {
    fn of(args: &Args, r: &DiffReport, incomplete: bool) -> Verdict {
        match (r.passed(), incomplete) {
            (false, _) => Verdict::Fail,
            (true, true) if args.strict => Verdict::FailIncomplete,
            (true, true) if args.allow_partial => Verdict::Partial,
            (true, true) => Verdict::FailPartial,
            (true, false) if args.strict && r.nondeterministic > 0 => Verdict::FailNondeterministic,
            (true, false) => Verdict::Pass,
        }
    }

    fn passed(self) -> bool {
        matches!(self, Verdict::Pass | Verdict::Partial)
    }

    /// The last line; `kind` of the first incomplete archive.
    fn line(self, r: &DiffReport, kind: &str) -> String {
        match self {
            Verdict::Pass => "PASS".into(),
            Verdict::Partial => format!("PASS (partial: {kind} incomplete)"),
            Verdict::FailPartial => format!("FAIL (partial: {kind} incomplete)"),
            Verdict::FailIncomplete => format!("FAIL ({kind} incomplete; --strict)"),
            Verdict::FailNondeterministic => {
                format!("FAIL ({} nondeterministic; --strict)", r.nondeterministic)
            }
            Verdict::Fail => "FAIL".into(),
        }
    }
}

fn main() -> ExitCode {
    if let Some(code) = hrr_cli::generate::requested::<Args>() {
        return code;
    }
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("hrr-diff: error: {}", hrr_core::message::chain(&*e));
            ExitCode::from(2)
        }
    }
}

/// Runs the comparison; `Ok(passed)`.
fn run(args: &Args) -> anyhow::Result<bool> {
    anyhow::ensure!(
        args.atol >= 0.0 && args.rtol >= 0.0,
        "--atol and --rtol must be non-negative"
    );
    // Jobs (multi-process runs) are compared process by process.
    if hrr_core::job::locate(&args.a).is_some() || hrr_core::job::locate(&args.b).is_some() {
        return job_run::run(args);
    }
    let (report, incomplete, incomplete_doc) = compare(args, &args.a, &args.b, true)?;
    let verdict = Verdict::of(args, &report, !incomplete.is_empty());
    if args.json {
        let doc = json_doc(args, &report, &incomplete, incomplete_doc, verdict)?;
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).context("serialising the report")?
        );
    } else {
        print_text("", &report, &incomplete, verdict);
    }
    Ok(verdict.passed())
}

/// The incomplete archives compared, each as `(kind, reason)`.
type Incomplete = Vec<(&'static str, String)>;

/// Compares archive `a` with archive `b` (and `--against`); the report,
/// the incomplete archives, and the `incomplete` object of `--json`.
/// `bar`: draw the progress bar (on a terminal, past a second).
fn compare(
    args: &Args,
    a: &Path,
    b: &Path,
    bar: bool,
) -> anyhow::Result<(DiffReport, Incomplete, serde_json::Value)> {
    let tol = Tolerance {
        atol: args.atol,
        rtol: args.rtol,
        dtype: args.dtype,
        exact: args.exact,
    };
    let a = Archive::open(a)?;
    let b = Archive::open(b)?;
    let c = args.against.as_ref().map(Archive::open).transpose()?;
    let mut progress = Progress::new(args.json || !bar);
    let mut step = None;
    let report = diff_against(&a, &b, c.as_ref(), &tol, |s, done, total| {
        if step != Some(s) {
            step = Some(s);
            let (label, unit) = match s {
                Step::ReadA => ("reading A", Unit::Bytes),
                Step::ReadB => ("reading B", Unit::Bytes),
                Step::ReadC => ("reading C", Unit::Bytes),
                Step::Compare => ("comparing", Unit::Pairs),
            };
            progress.stage(label, total, unit);
        }
        progress.set(done);
    })?;
    progress.finish();
    for w in &report.warnings {
        eprintln!("hrr-diff: warning: {w}");
    }
    for n in &report.nondeterministic_d2h {
        eprintln!("hrr-diff: nondeterministic: {n}");
    }
    let incomplete: Incomplete = [Some(&a), Some(&b), c.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|x| {
            x.incomplete_reason()
                .map(|why| (x.manifest().kind.as_str(), why))
        })
        .collect();
    let mut doc = serde_json::json!({
        "a": a.incomplete_reason(),
        "b": b.incomplete_reason(),
    });
    if let Some(c) = &c {
        doc["c"] = c.incomplete_reason().into();
    }
    Ok((report, incomplete, doc))
}

/// The `--json` document of one comparison.
fn json_doc(
    args: &Args,
    report: &DiffReport,
    incomplete: &Incomplete,
    incomplete_doc: serde_json::Value,
    verdict: Verdict,
) -> anyhow::Result<serde_json::Value> {
    let mut doc = serde_json::to_value(report).context("serialising the report")?;
    doc["passed"] = verdict.passed().into();
    doc["incomplete"] = incomplete_doc;
    doc["partial"] = (!incomplete.is_empty()).into();
    doc["allow_partial"] = args.allow_partial.into();
    Ok(doc)
}

/// One comparison's text, each line behind `prefix` but the verdict.
fn print_text(prefix: &str, r: &DiffReport, incomplete: &Incomplete, verdict: Verdict) {
    for (kind, why) in incomplete {
        println!("{prefix}{kind} : incomplete ({why})");
    }
    for m in &r.mismatches {
        println!("{prefix}mismatch: {m}");
    }
    for e in &r.only_in_a {
        println!("{prefix}only in A: seq {} {} size {}", e.seq, e.api, e.size);
    }
    for e in &r.only_in_b {
        println!("{prefix}only in B: seq {} {} size {}", e.seq, e.api, e.size);
    }
    if prefix.is_empty() {
        println!("{}", r.summary_line());
        let kind = incomplete.first().map_or("", |(kind, _)| kind);
        println!("{}", verdict.line(r, kind));
    }
}
