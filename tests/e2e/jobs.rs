//! A job: every process of a multi-process run as one archive set.
//! `tests/workloads/job_launcher.c` starts two GPU workers with RANK and
//! WORLD_SIZE set and makes no GPU call itself; the capture gives a job
//! file beside the archives, which replay, `--info` and diff take whole.

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
