//! Nondeterminism told apart from a replay mismatch: `hrr-play --runs N`
//! compares each D2H across N replays, `hrr-diff --against C` across two
//! captures. The `nondeterministic` workload reads back one result that is
//! the same every run (`iota`) and one that never is (`stamp`, the CPU
//! clock as the kernel runs).

use hrr_core::manifest::Platform;
use hrr_core::testkit::{ArchiveBuilder, value_arg};
use hrr_tests::{Pipeline, d2h_counts, read_events, workloads};

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn last_line(out: &str) -> &str {
    out.lines().last().unwrap_or("")
}

/// The `seq` of the D2H of `size` bytes in the pipeline's capture.
fn d2h_seq(p: &Pipeline, size: u64) -> u64 {
    p.events("cap.hrr")
        .iter()
        .find(|e| e["op"] == "memcpy" && e["dir"] == "d2h" && e["size"] == size)
        .and_then(|e| e["seq"].as_u64())
        .unwrap_or_else(|| panic!("no D2H of {size} bytes"))
}

/// 64 `u64` clock readings.
const STAMP_BYTES: u64 = 64 * 8;

#[test]
fn runs_tell_a_nondeterministic_d2h_from_a_replay_mismatch() {
    let p = Pipeline::new("nondeterministic").capture();
    let stamp = d2h_seq(&p, STAMP_BYTES);

    // One replay cannot tell: the clock's D2H fails.
    let a = p.play_cmd(&[]).assert().code(1);
    let out = stdout(&a);
    assert_eq!(d2h_counts(&out), Some((1, 1, 0, 1)), "{out}");
    assert_eq!(last_line(&out), "FAIL");

    // Three replays disagree among themselves on it: nondeterministic,
    // named on stderr, not a failure.
    let a = p
        .play_cmd(&["--runs", "3", "-o", "replay.hrr"])
        .assert()
        .success();
    let out = stdout(&a);
    assert!(
        out.contains("\nd2h : 1 pass (1 exact, 0 within tolerance), 0 fail, 1 nondeterministic\n"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("runs : 3 replays compared, mean ")),
        "{out}"
    );
    assert!(!out.contains("mismatch :"), "{out}");
    assert_eq!(last_line(&out), "PASS");
    assert!(
        stderr(&a).contains(&format!(
            "hrr-play: nondeterministic: event {stamp} (hipMemcpy) size {STAMP_BYTES}: \
             2 of 3 runs differ from the first"
        )),
        "{}",
        stderr(&a)
    );
    // The replay archive holds the first run's D2H, once each.
    let d2h: Vec<u64> = read_events(&p.replay())
        .iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(d2h.len(), 2, "{d2h:?}");
    assert!(d2h.contains(&stamp), "{d2h:?}");

    // --strict: nondeterminism fails.
    let a = p.play_cmd(&["--runs", "3", "--strict"]).assert().code(1);
    assert_eq!(
        last_line(&stdout(&a)),
        "FAIL (1 nondeterministic; --strict)"
    );

    // JSON: the count and the list.
    let a = p.play_cmd(&["--runs", "3", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(v["d2h_nondeterministic"], 1, "{v}");
    assert_eq!(v["nondeterministic"][0]["seq"], stamp, "{v}");
    assert_eq!(v["nondeterministic"][0]["differing"], 2, "{v}");
    assert_eq!((&v["runs"], &v["result"]), (&3.into(), &"PASS".into()));

    // One run compares nothing: a usage error.
    let a = p.play_cmd(&["--runs", "1"]).assert().code(2);
    assert!(stderr(&a).contains("--runs"), "{}", stderr(&a));
    p.play_cmd(&["--runs", "3", "--loop", "2"]).assert().code(2);
}

#[test]
fn runs_that_agree_with_each_other_and_not_the_capture_fail() {
    // The capture says fill wrote 2.5; every replay writes 1.0.
    let p = Pipeline::empty("runs-agree");
    let so = workloads().kernel("fill");
    const DEV: u64 = 0x7f00_0040_0000;
    let mut dst = value_arg(&DEV.to_le_bytes());
    dst.ptrs = vec![0];
    let args = vec![
        dst,
        value_arg(&1.0f32.to_le_bytes()),
        value_arg(&64i32.to_le_bytes()),
    ];
    let wrong: Vec<u8> = (0..64).flat_map(|_| 2.5f32.to_le_bytes()).collect();
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 256)
        .module_load(0x9000, &so)
        .launch("fill", &so, [1, 1, 1], [64, 1, 1], args)
        .d2h(DEV, &wrong)
        .write(p.path("cap.hrr"))
        .unwrap();
    let a = p
        .tool("hrr-play")
        .args(["cap.hrr", "--runs", "3"])
        .assert()
        .code(1);
    let out = stdout(&a);
    assert!(
        out.contains("\nd2h : 0 pass (0 exact, 0 within tolerance), 1 fail\n")
            && out.contains("mismatch : event 3 (hipMemcpy) size 256"),
        "{out}"
    );
    assert_eq!(last_line(&out), "FAIL");
    assert!(!stderr(&a).contains("nondeterministic"), "{}", stderr(&a));
}

#[test]
fn a_second_capture_marks_nondeterministic_d2h_in_hrr_diff() {
    let p = Pipeline::new("nondeterministic").capture();
    let stamp = d2h_seq(&p, STAMP_BYTES);
    p.sh(&format!(
        "hrr-cap -o cap2.hrr -- {} > app2.log",
        p.app_cmdline()
    ))
    .assert()
    .success();
    // The replay's clock D2H fails against the capture...
    p.play_cmd(&["-o", "replay.hrr"]).assert().code(1);
    let a = p
        .tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1);
    assert!(
        stdout(&a).contains("d2h : 1 pass (1 exact, 0 within tolerance), 1 fail\n"),
        "{}",
        stdout(&a)
    );
    // ...and a second capture shows the program itself does not repeat it.
    let a = p
        .tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr", "--against", "cap2.hrr"])
        .assert()
        .success();
    let out = stdout(&a);
    assert!(
        out.ends_with(
            "d2h : 1 pass (1 exact, 0 within tolerance), 0 fail, 1 nondeterministic\nPASS\n"
        ),
        "{out}"
    );
    assert!(
        stderr(&a).contains(&format!(
            "hrr-diff: nondeterministic: seq {stamp} hipMemcpy: size {STAMP_BYTES}, first diff at byte "
        )) && stderr(&a).contains("differ between A and C"),
        "{}",
        stderr(&a)
    );
    let a = p
        .tool("hrr-diff")
        .args(["--strict", "cap.hrr", "replay.hrr", "--against", "cap2.hrr"])
        .assert()
        .code(1);
    assert_eq!(
        last_line(&stdout(&a)),
        "FAIL (1 nondeterministic; --strict)"
    );
    let a = p
        .tool("hrr-diff")
        .args(["--json", "cap.hrr", "replay.hrr", "--against", "cap2.hrr"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(v["nondeterministic"], 1, "{v}");
    assert_eq!(v["nondeterministic_d2h"][0]["seq"], stamp, "{v}");
    // Two captures against each other: the same verdict.
    p.tool("hrr-diff")
        .args(["cap.hrr", "cap2.hrr", "--against", "cap2.hrr"])
        .assert()
        .success();
}
