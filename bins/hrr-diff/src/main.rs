//! `hrr-diff A B`: compares the D2H outputs of two archives, paired by `seq`.
//!
//! Data goes to stdout (per-mismatch lines, the `d2h :` summary, `PASS` or
//! `FAIL`; or one JSON document with `--json`), warnings and errors to stderr.
//! Exit status: 0 same, 1 differ, 2 error.
//!
//! An archive that is not complete (a capture killed, a disk that filled, a
//! replay that stopped) is said before the summary, as
//! `capture : incomplete (REASON)` (or `replay : …` for a replay archive),
//! and a pass over it is `PASS (partial: …)`: only what it holds was compared.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use hrr_cli::progress::{Progress, Unit};
use hrr_core::archive::Archive;
use hrr_diff::archive_diff::{DiffReport, Step, diff_with_progress};
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
}

fn main() -> ExitCode {
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
    let tol = Tolerance {
        atol: args.atol,
        rtol: args.rtol,
        dtype: args.dtype,
        exact: args.exact,
    };
    anyhow::ensure!(
        tol.atol >= 0.0 && tol.rtol >= 0.0,
        "--atol and --rtol must be non-negative"
    );
    let a = Archive::open(&args.a)?;
    let b = Archive::open(&args.b)?;
    let mut progress = Progress::new(args.json);
    let mut step = None;
    let report = diff_with_progress(&a, &b, &tol, |s, done, total| {
        if step != Some(s) {
            step = Some(s);
            let (label, unit) = match s {
                Step::ReadA => ("reading A", Unit::Bytes),
                Step::ReadB => ("reading B", Unit::Bytes),
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
    let incomplete: Vec<(&'static str, String)> = [&a, &b]
        .into_iter()
        .filter_map(|x| {
            x.incomplete_reason()
                .map(|why| (x.manifest().kind.as_str(), why))
        })
        .collect();
    if args.json {
        let mut doc = serde_json::to_value(&report).context("serialising the report")?;
        doc["passed"] = report.passed().into();
        doc["incomplete"] = serde_json::json!({
            "a": a.incomplete_reason(),
            "b": b.incomplete_reason(),
        });
        doc["partial"] = (!incomplete.is_empty()).into();
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).context("serialising the report")?
        );
    } else {
        print_text(&report, &incomplete);
    }
    Ok(report.passed())
}

fn print_text(r: &DiffReport, incomplete: &[(&'static str, String)]) {
    for (kind, why) in incomplete {
        println!("{kind} : incomplete ({why})");
    }
    for m in &r.mismatches {
        println!("mismatch: {m}");
    }
    for e in &r.only_in_a {
        println!("only in A: seq {} {} size {}", e.seq, e.api, e.size);
    }
    for e in &r.only_in_b {
        println!("only in B: seq {} {} size {}", e.seq, e.api, e.size);
    }
    println!("{}", r.summary_line());
    match (r.passed(), incomplete.first()) {
        (true, Some((kind, _))) => println!("PASS (partial: {kind} incomplete)"),
        (true, None) => println!("PASS"),
        (false, _) => println!("FAIL"),
    }
}
