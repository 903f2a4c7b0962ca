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
//!
//! Stopping: processes of one run may wait for each other, so a replay
//! that ends without passing (failed, crashed, killed) may leave its peers
//! waiting forever. After the first one, the job starts no other and
//! sends SIGTERM to those running (each stops as an interrupted replay
//! does, keeping what it validated), then SIGKILL to any still running
//! [`STOP_GRACE`] later; their lines say they were stopped, the verdict
//! names the process that failed. SIGINT and SIGTERM sent to the job's
//! `hrr-play` go to its children (each in a process group of its own, so
//! a terminal's Ctrl-C reaches them once, through the job), which stop the
//! same way; the job then reports them, says it was interrupted, and exits
//! 128 + the signal.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use hrr_core::archive::Archive;
use hrr_core::job::{self, JobManifest, JobProcess};
use hrr_core::manifest::ArchiveKind;

use crate::args::Args;
use crate::child_args;
use crate::process_replay::ProcessReplay;

/// How long children told to stop (SIGTERM, or the signal the job got)
/// have before the job kills them (SIGKILL).
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// The children running now, by process index: their pids, for signals.
#[derive(Default)]
struct Children(Mutex<HashMap<usize, u32>>);

impl Children {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<usize, u32>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `sig` to every child running.
    fn signal_all(&self, sig: i32) {
        for &pid in self.map().values() {
            let Ok(pid) = libc::pid_t::try_from(pid) else {
                continue;
            };
            // SAFETY: kill(2) has no memory effects; `pid` is a child this
            // process spawned and has not reaped (it leaves the map before
            // its wait returns to the job).
            unsafe { libc::kill(pid, sig) };
        }
    }
}

/// Why the job stopped its children early.
#[derive(Clone, Debug)]
enum Stop {
    /// The job's `hrr-play` got this signal.
    Interrupted(i32),
    /// This process (by index) ended without passing.
    Failed(usize),
}

/// A signal's name for messages (`SIGTERM`).
fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGKILL => "SIGKILL".into(),
        s => format!("signal {s}"),
    }
}

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
    // SIGINT and SIGTERM reach the children through this process (each
    // child is a process group of its own), which stays to say how the
    // job ended.
    let mut signals = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM])
        .context("installing the signal handlers")?;
    let signal_handle = signals.handle();
    let got_signal = AtomicI32::new(0);
    let children = Children::default();

    // Where ranks of one communicator meet: the process replaying rank 0
    // publishes a fresh unique id, the others wait for it (hrr-replay's
    // collectives). Gone with the job.
    let rendezvous = tempfile::Builder::new()
        .prefix("hrr-rendezvous-")
        .tempdir()
        .context("creating the job's rendezvous directory")?;
    let rendezvous = rendezvous.path();

    let mut results: Vec<ProcessReplay> = vec![ProcessReplay::default(); n];
    let mut stop: Option<Stop> = None;
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel();
        let (got_signal, children) = (&got_signal, &children);
        s.spawn(move || {
            for sig in signals.forever() {
                got_signal.store(sig, Ordering::Release);
                children.signal_all(sig);
            }
        });
        let mut next = 0;
        let mut running = 0;
        let mut kill_at: Option<Instant> = None;
        while next < n || running > 0 {
            let sig = got_signal.load(Ordering::Acquire);
            if sig != 0 && !matches!(stop, Some(Stop::Interrupted(_))) {
                stop = Some(Stop::Interrupted(sig));
                kill_at.get_or_insert_with(|| Instant::now() + STOP_GRACE);
            }
            if stop.is_some() {
                // Started no more: the job is over.
                next = n;
            }
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
                    let _ = tx.send((
                        index,
                        replay_one(exe, &argv, &prefix, rendezvous, children, index),
                    ));
                });
                next += 1;
                running += 1;
            }
            if running == 0 {
                break;
            }
            if kill_at.is_some_and(|t| Instant::now() >= t) {
                children.signal_all(libc::SIGKILL);
                kill_at = Some(Instant::now() + STOP_GRACE);
            }
            let (index, mut r) = match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(got) => got,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            running -= 1;
            if !r.passed() {
                match &stop {
                    Some(Stop::Interrupted(sig)) => {
                        r.stopped = Some(format!("interrupted by {}", signal_name(*sig)));
                    }
                    Some(Stop::Failed(first)) => {
                        r.stopped = Some(format!(
                            "stopped after {} failed",
                            process_name(&job.processes[*first])
                        ));
                    }
                    // A replay that ran to its end and compared wrong: its
                    // peers have nothing to wait for and keep their verdicts.
                    None if !r.ended_early() => {}
                    None => {
                        // The first process to end early: its peers may wait
                        // for it forever.
                        stop = Some(Stop::Failed(index));
                        eprintln!(
                            "hrr-play: {} failed ({}): stopping the other processes of the job",
                            process_name(&job.processes[index]),
                            r.verdict()
                        );
                        children.signal_all(libc::SIGTERM);
                        kill_at = Some(Instant::now() + STOP_GRACE);
                    }
                }
            }
            results[index] = r;
        }
        signal_handle.close();
    });
    // Processes never started because the job stopped.
    if let Some(why) = &stop {
        let why = match why {
            Stop::Interrupted(sig) => format!("interrupted by {}", signal_name(*sig)),
            Stop::Failed(first) => format!(
                "stopped after {} failed",
                process_name(&job.processes[*first])
            ),
        };
        for r in results.iter_mut().filter(|r| r.never_ran()) {
            r.stopped = Some(format!("not started: {why}"));
        }
    }

    let replay_job = match &args.output {
        Some(o) => Some(write_replay_job(args, file, &job, &outs, o)?),
        None => None,
    };
    let interrupted = match stop {
        Some(Stop::Interrupted(sig)) => Some(sig),
        _ => None,
    };
    let exit = report(
        args,
        file,
        &job,
        &results,
        replay_job.as_deref(),
        interrupted,
    )?;
    Ok(ExitCode::from(exit))
}

/// `ARCHIVE rank R` (`ARCHIVE pid P` without a rank).
fn process_name(p: &JobProcess) -> String {
    match p.process.rank {
        Some(r) => format!("{} rank {r}", p.archive),
        None => format!("{} pid {}", p.archive, p.process.pid),
    }
}

/// Runs one child `hrr-play` (process `index` of the job, its pid in
/// `children` while it runs), passing its stderr on behind `prefix`, with
/// the job's rendezvous directory in `HRR_RENDEZVOUS`.
fn replay_one(
    exe: &Path,
    argv: &[OsString],
    prefix: &str,
    rendezvous: &Path,
    children: &Children,
    index: usize,
) -> ProcessReplay {
    let mut child = match Command::new(exe)
        .args(argv)
        .env("HRR_RENDEZVOUS", rendezvous)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A process group of its own: signals reach it through the job.
        .process_group(0)
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
    children.map().insert(index, child.id());
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
    // Reaped under the map's lock and taken out of it at once, so that a
    // signal never reaches a pid that may have been reused; its output has
    // ended, so it is exiting: polled.
    let status = loop {
        let mut map = children.map();
        let done = match child.try_wait() {
            Ok(None) => None,
            Ok(Some(st)) => Some(Ok(st)),
            Err(e) => Some(Err(e)),
        };
        if let Some(status) = done {
            map.remove(&index);
            break status;
        }
        drop(map);
        std::thread::sleep(Duration::from_millis(10));
    };
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
            ..ProcessReplay::default()
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
    interrupted: Option<i32>,
) -> Result<u8> {
    // Failed by themselves; those the job stopped are named apart.
    let failed: Vec<(&JobProcess, &ProcessReplay)> = job
        .processes
        .iter()
        .zip(results)
        .filter(|(_, r)| !r.passed() && r.stopped.is_none())
        .collect();
    let stopped: Vec<&JobProcess> = job
        .processes
        .iter()
        .zip(results)
        .filter(|(_, r)| !r.passed() && r.stopped.is_some())
        .map(|(p, _)| p)
        .collect();
    let partial: Vec<&JobProcess> = job
        .processes
        .iter()
        .zip(results)
        .filter(|(_, r)| r.partial())
        .map(|(p, _)| p)
        .collect();
    let passed = failed.is_empty()
        && stopped.is_empty()
        && interrupted.is_none()
        && !job.processes.is_empty();
    let exit = if passed {
        0
    } else if let Some(sig) = interrupted {
        128u8.saturating_add(sig.clamp(0, 127) as u8)
    } else {
        failed
            .iter()
            .map(|(_, r)| r.exit_code())
            .max()
            .unwrap_or(1)
            .max(1)
    };
    let name = process_name;
    let stopped_names = || {
        let names: Vec<String> = stopped.iter().map(|p| name(p)).collect();
        names.join(", ")
    };
    let verdict = if job.processes.is_empty() {
        "FAIL (the job lists no process)".to_string()
    } else if let Some(sig) = interrupted {
        format!(
            "FAIL (interrupted by {}: {} of {} processes stopped{})",
            signal_name(sig),
            stopped.len(),
            job.processes.len(),
            if stopped.is_empty() {
                String::new()
            } else {
                format!(": {}", stopped_names())
            }
        )
    } else if !passed {
        let names: Vec<String> = failed.iter().map(|(p, _)| name(p)).collect();
        let mut v = format!(
            "FAIL ({} of {} processes: {}",
            failed.len(),
            job.processes.len(),
            names.join(", ")
        );
        if !stopped.is_empty() {
            v.push_str(&format!("; stopped after it: {}", stopped_names()));
        }
        v.push(')');
        v
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
            "interrupted": interrupted.map(signal_name),
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
