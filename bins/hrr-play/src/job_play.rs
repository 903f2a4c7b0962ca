//! Replaying a job: every process archive of a multi-process run, each by
//! an `hrr-play` of its own, at the same time.
//!
//! Processes of one run may wait for each other (a collective, a pipe, a
//! file), so they replay concurrently: one child `hrr-play --no-job` per
//! recorded process, all started at once unless `--jobs N` bounds them,
//! each with the job's replay options. A child's stderr comes through line
//! by line behind `[rank R pid P] `; its stdout is its `--json` summary,
//! from which the job's summary is made: a line per process, one verdict.
//! The job passes only when every process replayed and passed.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use hrr_core::archive::Archive;
use hrr_core::job::{self, JobManifest, JobProcess};
use hrr_core::manifest::ArchiveKind;

use crate::args::Args;
use crate::child_args;
use crate::process_replay::ProcessReplay;

/// Replays the job whose file is `file`.
pub fn run(args: &Args, file: &Path) -> Result<ExitCode> {
    let job = JobManifest::read(file)?;
    if args.repair || args.events {
        bail!(
            "{} is a job of {} process archives: give --repair or --events one of them \
             (with --no-job)",
            args.archive.display(),
            job.processes.len()
        );
    }
    if args.info {
        crate::info::print_job_info(file, &job, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let n = job.processes.len();
    let limit = args.jobs.map_or(n, |j| j as usize).clamp(1, n.max(1));
    let exe = std::env::current_exe().context("finding hrr-play itself")?;
    let raw: Vec<OsString> = std::env::args_os().skip(1).collect();
    let common = child_args::without(&Args::command(), &raw, child_args::DROPPED);
    let outs: Vec<Option<PathBuf>> = job
        .processes
        .iter()
        .map(|p| args.output.as_deref().map(|o| output_for(file, o, p)))
        .collect();
    eprintln!(
        "hrr-play: replaying job {} ({n} processes, {limit} at a time)",
        file.display()
    );
    // The children get the terminal's Ctrl-C themselves (one process
    // group) and report it; this process stays to say how the job ended.
    // SAFETY: setting a disposition to SIG_IGN has no memory effects; the
    // children set their own handlers.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };

    // Where ranks of one communicator meet: the process replaying rank 0
    // publishes a fresh unique id, the others wait for it (hrr-replay's
    // collectives). Gone with the job.
    let rendezvous = tempfile::Builder::new()
        .prefix("hrr-rendezvous-")
        .tempdir()
        .context("creating the job's rendezvous directory")?;
    let rendezvous = rendezvous.path();

    let mut results: Vec<ProcessReplay> = vec![ProcessReplay::default(); n];
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let mut next = 0;
        let mut running = 0;
        while next < n || running > 0 {
            while running < limit && next < n {
                let p = &job.processes[next];
                let mut argv = common.clone();
                argv.push("--no-job".into());
                argv.push("--json".into());
                if let Some(o) = &outs[next] {
                    argv.extend(child_args::pair("-o", o));
                }
                argv.push("--".into());
                argv.push(JobManifest::archive_path(file, p).into());
                let (tx, exe, prefix, index) = (tx.clone(), &exe, prefix(p), next);
                s.spawn(move || {
                    let _ = tx.send((index, replay_one(exe, &argv, &prefix, rendezvous)));
                });
                next += 1;
                running += 1;
            }
            let Ok((index, r)) = rx.recv() else { break };
            results[index] = r;
            running -= 1;
        }
    });

    let replay_job = match &args.output {
        Some(o) => Some(write_replay_job(args, file, &job, &outs, o)?),
        None => None,
    };
    let exit = report(args, file, &job, &results, replay_job.as_deref())?;
    Ok(ExitCode::from(exit))
}

/// Runs one child `hrr-play`, passing its stderr on behind `prefix`, with
/// the job's rendezvous directory in `HRR_RENDEZVOUS`.
fn replay_one(exe: &Path, argv: &[OsString], prefix: &str, rendezvous: &Path) -> ProcessReplay {
    let mut child = match Command::new(exe)
        .args(argv)
        .env("HRR_RENDEZVOUS", rendezvous)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return ProcessReplay {
                spawn_error: Some(e.to_string()),
                ..ProcessReplay::default()
            };
        }
    };
    let stderr = child.stderr.take();
    let prefix = prefix.to_string();
    let pump = std::thread::spawn(move || {
        let Some(err) = stderr else { return };
        for line in BufReader::new(err).split(b'\n').map_while(Result::ok) {
            // A whole line at a time, so processes' lines never interleave.
            let mut buf = prefix.clone().into_bytes();
            buf.extend_from_slice(&line);
            buf.push(b'\n');
            let _ = std::io::stderr().lock().write_all(&buf);
        }
    });
    let mut out = Vec::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_end(&mut out);
    }
    let status = child.wait();
    let _ = pump.join();
    // The summary is the last line the child printed.
    let summary = String::from_utf8_lossy(&out)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok());
    match status {
        Ok(st) => ProcessReplay {
            exit: st.code(),
            signal: st.signal(),
            summary,
            spawn_error: None,
        },
        Err(e) => ProcessReplay {
            spawn_error: Some(e.to_string()),
            ..ProcessReplay::default()
        },
    }
}

/// `[rank R pid P] ` (`[pid P] ` without a rank).
fn prefix(p: &JobProcess) -> String {
    match p.process.rank {
        Some(r) => format!("[rank {r} pid {}] ", p.process.pid),
        None => format!("[pid {}] ", p.process.pid),
    }
}

/// Where process `p` of the job `file` replays to for `-o OUT`: the
/// archive named as the run is named becomes `OUT.hrr`, `NAME-REST`
/// becomes `OUT-REST`, so the replay job is laid out as the capture's.
fn output_for(file: &Path, out: &Path, p: &JobProcess) -> PathBuf {
    let (from, to) = (job::stem(file), job::stem(out));
    let name = if p.archive == format!("{from}.hrr") {
        format!("{to}.hrr")
    } else if let Some(rest) = p.archive.strip_prefix(&format!("{from}-")) {
        format!("{to}-{rest}")
    } else {
        format!("{to}-{}.hrr", p.process.pid)
    };
    out.with_file_name(name)
}

/// Writes `OUT.job.json`: the replay archives, each with the recorded
/// process it replayed (so a replay job pairs with its capture by rank).
fn write_replay_job(
    args: &Args,
    file: &Path,
    job: &JobManifest,
    outs: &[Option<PathBuf>],
    out: &Path,
) -> Result<PathBuf> {
    let mut replay = JobManifest::new(ArchiveKind::Replay);
    replay.replay_of = Some(args.archive.display().to_string());
    replay.id = job.id.clone();
    for (p, o) in job.processes.iter().zip(outs) {
        let Some(o) = o else { continue };
        replay.processes.push(JobProcess {
            archive: o
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            complete: Archive::open(o).is_ok_and(|a| a.incomplete_reason().is_none()),
            process: p.process.clone(),
        });
    }
    replay.complete = replay.processes.iter().all(|p| p.complete);
    let dest = job::job_file(out);
    replay
        .write(&dest)
        .with_context(|| format!("writing the replay job of {}", file.display()))?;
    Ok(dest)
}

/// Prints the job's summary (or its JSON document) on stdout; the exit
/// status: 0 when every process passed, else the largest of theirs (at
/// least 1).
fn report(
    args: &Args,
    file: &Path,
    job: &JobManifest,
    results: &[ProcessReplay],
    replay_job: Option<&Path>,
) -> Result<u8> {
    let failed: Vec<(&JobProcess, &ProcessReplay)> = job
        .processes
        .iter()
        .zip(results)
        .filter(|(_, r)| !r.passed())
        .collect();
    let partial: Vec<&JobProcess> = job
        .processes
        .iter()
        .zip(results)
        .filter(|(_, r)| r.partial())
        .map(|(p, _)| p)
        .collect();
    let passed = failed.is_empty() && !job.processes.is_empty();
    let exit = if passed {
        0
    } else {
        results
            .iter()
            .map(ProcessReplay::exit_code)
            .max()
            .unwrap_or(1)
            .max(1)
    };
    let name = |p: &JobProcess| match p.process.rank {
        Some(r) => format!("{} rank {r}", p.archive),
        None => format!("{} pid {}", p.archive, p.process.pid),
    };
    let verdict = if job.processes.is_empty() {
        "FAIL (the job lists no process)".to_string()
    } else if !passed {
        let names: Vec<String> = failed.iter().map(|(p, _)| name(p)).collect();
        format!(
            "FAIL ({} of {} processes: {})",
            failed.len(),
            job.processes.len(),
            names.join(", ")
        )
    } else if !partial.is_empty() {
        let names: Vec<String> = partial.iter().map(|p| name(p)).collect();
        format!("PASS (partial: {})", names.join(", "))
    } else {
        "PASS".into()
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let processes: Vec<serde_json::Value> = job
            .processes
            .iter()
            .zip(results)
            .map(|(p, r)| {
                let mut v = serde_json::to_value(p).unwrap_or_default();
                v["result"] = if r.passed() { "PASS" } else { "FAIL" }.into();
                v["verdict"] = r.verdict().into();
                v["exit_code"] = r.exit_code().into();
                v["partial"] = r.partial().into();
                v["summary"] = r.summary.clone().unwrap_or_default();
                v
            })
            .collect();
        let doc = serde_json::json!({
            "job": file.display().to_string(),
            "result": if passed { "PASS" } else { "FAIL" },
            "verdict": verdict,
            "exit_code": exit,
            "partial": !partial.is_empty(),
            "processes": processes,
            "replay_job": replay_job.map(|p| p.display().to_string()),
        });
        writeln!(out, "{doc}")?;
        return Ok(exit);
    }
    writeln!(
        out,
        "job : {} ({} processes)",
        file.display(),
        job.processes.len()
    )?;
    for (p, r) in job.processes.iter().zip(results) {
        let rank = match (p.process.rank, p.process.world_size) {
            (Some(rank), Some(w)) => format!("rank {rank} of {w}"),
            (Some(rank), None) => format!("rank {rank}"),
            _ => "no rank".into(),
        };
        writeln!(
            out,
            "process : {} {rank} pid {} : {} : {}",
            p.archive,
            p.process.pid,
            r.d2h(),
            r.verdict()
        )?;
    }
    if let Some(j) = replay_job {
        writeln!(out, "replay job : {}", j.display())?;
    }
    writeln!(out, "{verdict}")?;
    Ok(exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_mirror_the_capture_names() {
        let p = |a: &str| JobProcess {
            archive: a.into(),
            process: hrr_core::process_info::ProcessInfo {
                pid: 5,
                ..Default::default()
            },
            ..Default::default()
        };
        let f = Path::new("/c/job.job.json");
        let o = Path::new("/r/rep.hrr");
        assert_eq!(output_for(f, o, &p("job.hrr")), Path::new("/r/rep.hrr"));
        assert_eq!(
            output_for(f, o, &p("job-77.hrr")),
            Path::new("/r/rep-77.hrr")
        );
        assert_eq!(output_for(f, o, &p("other.hrr")), Path::new("/r/rep-5.hrr"));
    }
}
