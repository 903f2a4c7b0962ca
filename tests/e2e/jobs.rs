//! A job: every process of a multi-process run as one archive set.
//! `tests/workloads/job_launcher.c` starts two GPU workers with RANK and
//! WORLD_SIZE set and makes no GPU call itself; the capture gives a job
//! file beside the archives, which replay, `--info` and diff take whole.

use assert_cmd::assert::OutputAssertExt;
use hrr_tests::{Pipeline, read_manifest};
use serde_json::Value;

/// `hrr-cap -o NAME.hrr -- ./job_launcher ARGS` in `p`'s dir.
fn capture(p: Pipeline, name: &str, args: &str) -> Pipeline {
    let a = p
        .sh(&format!(
            "hrr-cap -o {name}.hrr -- ./job_launcher {args} | tee {name}.log"
        ))
        .assert()
        .success();
    let p = p.step(a);
    let log = std::fs::read_to_string(p.path(&format!("{name}.log"))).unwrap();
    assert!(log.contains("job_launcher: OK"), "{log}");
    p
}

fn captured() -> Pipeline {
    capture(Pipeline::new("job_launcher"), "job", "")
}

fn job_file(p: &Pipeline, name: &str) -> Value {
    let f = p.path(&format!("{name}.job.json"));
    serde_json::from_slice(&std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display())))
        .unwrap()
}

/// The archive of rank `r` in the job file `name`.
fn archive_of(job: &Value, r: u64) -> String {
    job["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["rank"] == r)
        .unwrap_or_else(|| panic!("no rank {r}: {job}"))["archive"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn capture_writes_a_job_of_two_ranked_processes() {
    let p = captured();
    let p = p
        .stderr_has("(+1 child process archive(s): ")
        .stderr_has("hrr-cap: job : 2 processes (rank 0, rank 1) -> ");
    let job = job_file(&p, "job");
    assert_eq!(
        (job["format"].as_str(), job["version"].as_u64()),
        (Some("hrr-job"), Some(1))
    );
    assert_eq!(job["kind"], "capture");
    assert_eq!(job["complete"], true);
    let procs = job["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 2, "{job}");
    let app_pid = job["app_pid"].as_u64().unwrap();
    for (i, pr) in procs.iter().enumerate() {
        assert_eq!(pr["rank"], i as u64, "{pr}");
        assert_eq!(pr["world_size"], 2);
        assert_eq!(pr["local_rank"], i as u64);
        assert_eq!(pr["complete"], true);
        // Workers of the launcher, which recorded nothing itself.
        assert_eq!(pr["ppid"].as_u64(), Some(app_pid), "{pr}");
        assert_ne!(pr["pid"].as_u64(), Some(app_pid));
        assert_eq!(pr["argv"][1], "worker");
        // Each archive's own manifest says the same.
        let m = read_manifest(&p.path(pr["archive"].as_str().unwrap()));
        assert_eq!(m["process"]["rank"], i as u64);
        assert_eq!(m["process"]["pid"], pr["pid"]);
        assert_eq!(m["process"]["job"], job["id"]);
    }
    let names: Vec<&str> = procs
        .iter()
        .map(|p| p["archive"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"job.hrr"), "{names:?}");
    // --info on the job lists both processes.
    let a = p
        .tool("hrr-play")
        .args(["--info", "job.hrr"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(out.starts_with("job : "), "{out}");
    assert!(out.contains("2 processes"), "{out}");
    for r in 0..2 {
        let line = format!("rank {r} of 2 (local {r}) complete true");
        assert!(out.contains(&line), "{line}\n{out}");
    }
}

#[test]
fn the_job_replays_both_processes_and_passes_with_one_summary() {
    let p = captured();
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "job.hrr", "-o", "rep.hrr"])
        .assert()
        .success();
    let p = p.step(a);
    let out = p.last_stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last(), Some(&"PASS"), "{out}");
    assert_eq!(out.matches("\nPASS").count(), 1, "one verdict line:\n{out}");
    let procs: Vec<&&str> = lines
        .iter()
        .filter(|l| l.starts_with("process : "))
        .collect();
    assert_eq!(procs.len(), 2, "{out}");
    for r in 0..2 {
        assert!(
            procs.iter().any(|l| l.contains(&format!(" rank {r} of 2 "))
                && l.contains("d2h : 1 pass (1 exact, 0 within tolerance), 0 fail")
                && l.ends_with(": PASS")),
            "rank {r}:\n{out}"
        );
    }
    // Each process's messages, behind its rank.
    let p = p.stderr_has("[rank 0 pid ").stderr_has("[rank 1 pid ");
    // The replay is a job too, which hrr-diff compares with the capture.
    let rep = job_file(&p, "rep");
    assert_eq!(rep["kind"], "replay");
    assert_eq!(rep["processes"].as_array().unwrap().len(), 2);
    assert_eq!(rep["complete"], true);
    let a = p
        .tool("hrr-diff")
        .args(["job.hrr", "rep.hrr"])
        .assert()
        .success();
    let p = p.step(a).stdout_has("paired by rank");
    assert!(p.last_stdout().ends_with("\nPASS\n"), "{}", p.last_stdout());
    // --json: one document.
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "job.hrr", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&a.get_output().stdout).expect("one JSON document");
    assert_eq!(doc["result"], "PASS");
    assert_eq!(doc["processes"].as_array().unwrap().len(), 2);
    // One archive alone replays as it always did.
    let one = archive_of(&job_file(&p, "job"), 1);
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "--no-job", &one])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(
        !out.contains("process : ") && out.ends_with("\nPASS\n"),
        "{out}"
    );
}

#[test]
fn a_missing_or_corrupt_process_archive_fails_the_job_naming_it() {
    let p = captured();
    let job = job_file(&p, "job");
    let one = archive_of(&job, 1);
    // Corrupt: every blob of rank 1's archive overwritten.
    let blobs = p.path(&one).join("blobs");
    for fan in std::fs::read_dir(&blobs).unwrap().flatten() {
        for f in std::fs::read_dir(fan.path()).unwrap().flatten() {
            std::fs::write(f.path(), b"not the blob").unwrap();
        }
    }
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "job.hrr"])
        .assert()
        .failure();
    let p = p.step(a);
    let out = p.last_stdout();
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("FAIL (1 of 2 processes: ") && last.contains(&one),
        "{out}"
    );
    // Missing: rank 1's archive removed.
    std::fs::remove_dir_all(p.path(&one)).unwrap();
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "job.hrr"])
        .assert()
        .failure();
    let p = p.step(a);
    let out = p.last_stdout();
    assert!(
        out.lines()
            .last()
            .unwrap_or_default()
            .contains(&format!("{one} rank 1")),
        "{out}"
    );
    assert!(!out.contains("\nPASS"), "{out}");
    // hrr-diff of the job against itself fails too, naming rank 1.
    let a = p
        .tool("hrr-diff")
        .args(["job.hrr", "job.hrr"])
        .assert()
        .failure();
    p.step(a).stdout_has("FAIL (1 of 2 processes: rank 1)");
}

#[test]
fn diff_of_two_captures_passes_and_of_a_changed_job_fails() {
    let p = captured();
    let p = capture(p, "again", "");
    let a = p
        .tool("hrr-diff")
        .args(["job.hrr", "again.hrr"])
        .assert()
        .success();
    let p = p.step(a).stdout_has("paired by rank");
    let p = capture(p, "changed", "changed");
    let a = p
        .tool("hrr-diff")
        .args(["job.hrr", "changed.hrr"])
        .assert()
        .failure();
    let p = p.step(a).stdout_has("[rank 1] mismatch: ");
    let out = p.last_stdout();
    assert!(out.ends_with("FAIL (1 of 2 processes: rank 1)\n"), "{out}");
    // A process on one side only: one archive (not named as the run, so
    // not the job) against the job.
    let job = job_file(&p, "job");
    let (rank, alone) = (0..2)
        .map(|r| (r, archive_of(&job, r)))
        .find(|(_, a)| a != "job.hrr")
        .unwrap();
    let a = p
        .tool("hrr-diff")
        .args([alone.as_str(), "job.hrr"])
        .assert()
        .failure();
    p.step(a)
        .stdout_has(&format!("rank {} only in B", 1 - rank));
}

/// Where the spinning kernels' flag lies (never set: they never finish).
const SPIN_FLAG: u64 = 0x7f00_0040_0000;

/// A job file `spin.job.json` in `p`'s dir listing ranks 0..n: each rank
/// in `spinning` an archive whose replay never finishes (a kernel that
/// spins forever), the others archives that do not exist. Its absolute
/// path.
fn spinning_job(p: &Pipeline, n: u64, spinning: &[u64]) -> std::path::PathBuf {
    use hrr_core::job::{JobManifest, JobProcess};
    use hrr_core::manifest::{ArchiveKind, Platform};
    use hrr_core::testkit::{ArchiveBuilder, value_arg};
    let so = hrr_tests::workloads().kernel("spin");
    let mut job = JobManifest::new(ArchiveKind::Capture);
    for rank in 0..n {
        let archive = format!("spin-{rank}.hrr");
        if spinning.contains(&rank) {
            let mut flag = value_arg(&SPIN_FLAG.to_le_bytes());
            flag.ptrs = vec![0];
            ArchiveBuilder::new(Platform::Cpu)
                .alloc(SPIN_FLAG, 4)
                .module_load(0x9000, &so)
                .launch("spin", &so, [1, 1, 1], [1, 1, 1], vec![flag])
                .write(p.path(&archive))
                .unwrap();
        }
        let mut proc = JobProcess {
            archive,
            complete: true,
            ..JobProcess::default()
        };
        proc.process.pid = 1000 + rank as u32;
        proc.process.rank = Some(rank);
        proc.process.world_size = Some(n);
        job.processes.push(proc);
    }
    job.complete = true;
    let file = p.path("spin.job.json");
    job.write(&file).unwrap();
    file
}

/// The pids of the live processes whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let state = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // A zombie is gone but for its parent's wait.
        let zombie = state
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}

/// Kills (SIGKILL) what `processes_with(needle)` finds: what a failed
/// test left running; the pids it killed.
fn kill_left_behind(needle: &str) -> Vec<u32> {
    let left = processes_with(needle);
    for &pid in &left {
        // SAFETY: kill(2) has no memory effects; a replay this test started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    left
}

/// Waits up to `secs` for `done`, polling.
fn wait_until(secs: u64, mut done: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    done()
}

/// SIGTERM to `hrr-play JOB` whose children never finish: it reaches the
/// children, which stop; the job waits for them, says it was interrupted,
/// and exits 128 + 15, leaving no child behind.
#[test]
fn sigterm_to_a_job_replay_stops_its_children_and_says_so() {
    let p = Pipeline::empty("job-sigterm");
    let file = spinning_job(&p, 2, &[0, 1]);
    let dir = p.path("").display().to_string();
    let child = std::process::Command::new(hrr_tests::tools().bin("hrr-play"))
        .args(["--backend", "cpu"])
        .arg(&file)
        .current_dir(p.path(""))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let needle = format!("{dir}spin-");
    assert!(
        wait_until(60, || processes_with(&needle).len() == 2),
        "both children replaying: {:?}",
        processes_with(&needle)
    );
    // Both stuck in their kernels for a moment.
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill(2) of the child this test spawned and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().unwrap();
    let left = kill_left_behind(&needle);
    assert!(left.is_empty(), "children left behind: {left:?}");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(128 + 15), "{stdout}{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("FAIL (interrupted by SIGTERM: 2 of 2 processes stopped"),
        "{stdout}{stderr}"
    );
    assert_eq!(
        stdout.matches(": FAIL (interrupted by SIGTERM)").count(),
        2,
        "each process's line says so:\n{stdout}"
    );
}

/// A process whose replay fails (its archive is missing) while its peer's
/// never finishes (as a peer waiting for it in a collective would not):
/// the job stops the peer instead of waiting forever, and fails naming the
/// process that failed and the one it stopped.
#[test]
fn a_failed_process_stops_its_peers_instead_of_hanging_the_job() {
    let p = Pipeline::empty("job-peer-failed");
    let file = spinning_job(&p, 2, &[0]);
    let out = p
        .tool("hrr-play")
        .args(["--backend", "cpu"])
        .arg(&file)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let left = kill_left_behind(&format!("{}spin-", p.path("").display()));
    assert!(left.is_empty(), "children left behind: {left:?}");
    let a = out.assert().failure();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(
            "FAIL (1 of 2 processes: spin-1.hrr rank 1; stopped after it: spin-0.hrr rank 0)"
        ),
        "{out}{err}"
    );
    assert!(
        err.contains("spin-1.hrr rank 1 failed") && err.contains("stopping the other processes"),
        "{err}"
    );
    assert!(
        out.contains(": FAIL (stopped after spin-1.hrr rank 1 failed)"),
        "{out}"
    );
    assert_eq!(
        a.get_output().status.code(),
        Some(2),
        "the failed one's status"
    );
}

/// A process whose replay runs to its end and only compares wrong stops
/// nothing: its peers have nothing to wait for and keep their own
/// verdicts. One at a time (`--jobs 1`), rank 0 first: rank 0's saxpy
/// factor is changed in its archive, and rank 1 must still replay and pass.
#[test]
fn a_process_that_only_compares_wrong_leaves_its_peers_their_verdicts() {
    let p = captured();
    let job = job_file(&p, "job");
    let zero = p.path(&archive_of(&job, 0));
    let text = hrr_tests::events_text(&zero);
    // Rank 0 computes with a = 2.0f: its bytes 00 00 00 40 lead the
    // launch's arguments; 5.0f is 00 00 a0 40.
    let mut changed = false;
    let text: String = text
        .lines()
        .map(|l| {
            if !changed && l.contains(r#""op":"launch""#) && l.contains(r#""hex":"00000040""#) {
                changed = true;
                l.replacen(r#""hex":"00000040""#, r#""hex":"0000a040""#, 1)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert!(changed, "no launch with a = 2.0 in rank 0's archive");
    let _ = std::fs::remove_file(zero.join("events.ndjson.zst"));
    std::fs::write(zero.join("events.ndjson"), text).unwrap();
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "--jobs", "1", "job.hrr"])
        .assert()
        .code(1);
    let p = p.step(a);
    let out = p.last_stdout();
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("FAIL (1 of 2 processes: ") && !last.contains("stopped"),
        "{out}"
    );
    let one = archive_of(&job, 1);
    assert!(
        out.lines()
            .any(|l| l.contains(&format!("{one} rank 1")) && l.ends_with(": PASS")),
        "rank 1 replayed and passed: {out}"
    );
}
