//! `hrr-diff JOB_A JOB_B`: two multi-process runs compared process by
//! process (a single archive on one side counts as a job of one process).
//!
//! Processes are paired by rank, else by start order (`JobPairs`); each
//! pair is compared as two archives are, its detail lines behind
//! `[rank R] ` (or `[process N] `), then one line per pair
//! (`process : rank R : A ~ B : d2h : … : PASS`) and one verdict. A process
//! on one side only, or whose archive cannot be read, fails the diff and
//! is named.

use anyhow::{Context, bail};
use hrr_core::job::JobProcess;
use hrr_diff::job_pairs::JobPairs;
use hrr_diff::job_side::JobSide;

use crate::{Args, Verdict, compare, json_doc, print_text};

/// Compares the jobs `args.a` and `args.b`; `Ok(passed)`.
pub fn run(args: &Args) -> anyhow::Result<bool> {
    if args.against.is_some() {
        bail!("--against compares single archives: give hrr-diff one process's archives");
    }
    let a = JobSide::open(&args.a)?;
    let b = JobSide::open(&args.b)?;
    let procs =
        |s: &JobSide| -> Vec<JobProcess> { s.processes.iter().map(|(p, _)| p.clone()).collect() };
    let pairs = JobPairs::of(&procs(&a), &procs(&b));
    let paired_by = if pairs.by_rank { "rank" } else { "start" };
    if !args.json {
        println!(
            "job : {} processes in A, {} in B, paired by {paired_by}",
            a.processes.len(),
            b.processes.len()
        );
    }
    let mut failed: Vec<String> = Vec::new();
    let mut docs = Vec::new();
    let mut lines = Vec::new();
    for (n, &(ia, ib)) in pairs.pairs.iter().enumerate() {
        let pa = ia.map(|i| &a.processes[i]);
        let pb = ib.map(|i| &b.processes[i]);
        let label = match (pairs.by_rank, pa.or(pb)) {
            (true, Some((p, _))) => format!("rank {}", p.process.rank.unwrap_or_default()),
            _ => format!("process {n}"),
        };
        let name = |s: Option<&(JobProcess, std::path::PathBuf)>| {
            s.map_or("(none)".to_string(), |(p, _)| {
                format!("{} (pid {})", p.archive, p.process.pid)
            })
        };
        let (an, bn) = (name(pa), name(pb));
        let (verdict, d2h, doc) = match (pa, pb) {
            (Some((_, pa)), Some((_, pb))) => match compare(args, pa, pb, false) {
                Ok((report, incomplete, incomplete_doc)) => {
                    let v = Verdict::of(args, &report, !incomplete.is_empty());
                    if !args.json {
                        print_text(&format!("[{label}] "), &report, &incomplete, v);
                    }
                    let kind = incomplete.first().map_or("", |(kind, _)| kind);
                    let doc = json_doc(args, &report, &incomplete, incomplete_doc, v)?;
                    (v.line(&report, kind), report.summary_line(), doc)
                }
                Err(e) => {
                    let why = hrr_core::message::chain(&*e);
                    eprintln!("hrr-diff: error: {label}: {why}");
                    (
                        format!("FAIL ({why})"),
                        "d2h : none".into(),
                        serde_json::json!({ "error": why, "passed": false }),
                    )
                }
            },
            (Some(_), None) => (
                "FAIL (only in A)".into(),
                "d2h : none".into(),
                serde_json::json!({ "error": "only in A", "passed": false }),
            ),
            _ => (
                "FAIL (only in B)".into(),
                "d2h : none".into(),
                serde_json::json!({ "error": "only in B", "passed": false }),
            ),
        };
        if !verdict.starts_with("PASS") {
            let side = match (pa, pb) {
                (Some(_), None) => " only in A",
                (None, Some(_)) => " only in B",
                _ => "",
            };
            failed.push(format!("{label}{side}"));
        }
        lines.push(format!(
            "process : {label} : {an} ~ {bn} : {d2h} : {verdict}"
        ));
        let mut doc = doc;
        doc["process"] = label.into();
        doc["a_archive"] = pa.map(|(p, _)| p.archive.clone()).into();
        doc["b_archive"] = pb.map(|(p, _)| p.archive.clone()).into();
        docs.push(doc);
    }
    let passed = failed.is_empty() && !pairs.pairs.is_empty();
    let verdict = if pairs.pairs.is_empty() {
        "FAIL (no process to compare)".to_string()
    } else if passed {
        "PASS".to_string()
    } else {
        format!(
            "FAIL ({} of {} processes: {})",
            failed.len(),
            pairs.pairs.len(),
            failed.join(", ")
        )
    };
    if args.json {
        let doc = serde_json::json!({
            "a": args.a, "b": args.b, "paired_by": paired_by,
            "processes": docs, "passed": passed, "verdict": verdict,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).context("serialising the report")?
        );
        return Ok(passed);
    }
    for l in lines {
        println!("{l}");
    }
    println!("{verdict}");
    Ok(passed)
}
