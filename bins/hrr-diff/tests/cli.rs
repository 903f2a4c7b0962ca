//! End-to-end tests of the `hrr-diff` binary over archives built with the testkit.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use hrr_core::manifest::Platform;
use hrr_core::testkit::ArchiveBuilder;
use predicates::prelude::*;
use predicates::str::contains;

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A capture with one D2H per output (seq 1, 2, …; seq 0 is the alloc).
fn capture(dir: &Path, outs: &[Vec<u8>]) -> PathBuf {
    let mut b = ArchiveBuilder::new(Platform::Cpu).alloc(0x1000, 1 << 20);
    for o in outs {
        b = b.d2h(0x1000, o);
    }
    b.write(dir.join("cap.hrr")).unwrap()
}

/// A replay archive holding D2H results at the given capture seqs.
fn replay(dir: &Path, name: &str, outs: &[(u64, Vec<u8>)]) -> PathBuf {
    let mut b = ArchiveBuilder::replay(Platform::Cpu, "cap.hrr");
    for (seq, o) in outs {
        b = b.seq(*seq).d2h(0x1000, o);
    }
    b.write(dir.join(name)).unwrap()
}

fn hrr_diff() -> Command {
    Command::cargo_bin("hrr-diff").unwrap()
}

#[test]
fn identical_archives_pass_with_exit_0() {
    let t = tempfile::tempdir().unwrap();
    let outs = vec![f32s(&[1.0, 2.0]), b"bytes".to_vec()];
    let cap = capture(t.path(), &outs);
    let rep = replay(
        t.path(),
        "rep.hrr",
        &[(1, outs[0].clone()), (2, outs[1].clone())],
    );
    hrr_diff()
        .arg(&cap)
        .arg(&rep)
        .assert()
        .code(0)
        .stdout(contains(
            "d2h : 2 pass (2 exact, 0 within tolerance), 0 fail\nPASS\n",
        ));
}

#[test]
fn mismatch_prints_details_and_exits_1() {
    let t = tempfile::tempdir().unwrap();
    let cap = capture(t.path(), &[f32s(&[1.0, 2.0, 3.0, 4.0])]);
    let rep = replay(t.path(), "rep.hrr", &[(1, f32s(&[1.0, 2.0, 3.5, 4.0]))]);
    hrr_diff()
        .arg(&cap)
        .arg(&rep)
        .assert()
        .code(1)
        .stdout(contains(
            "mismatch: seq 1 hipMemcpy: size 16, first diff at byte 10",
        ))
        .stdout(contains("max abs 5.000000e-1"))
        .stdout(contains(
            "d2h : 0 pass (0 exact, 0 within tolerance), 1 fail\nFAIL\n",
        ));
}

#[test]
fn tolerance_flags_decide() {
    let t = tempfile::tempdir().unwrap();
    let cap = capture(t.path(), &[f32s(&[100.0])]);
    let rep = replay(t.path(), "rep.hrr", &[(1, f32s(&[100.01]))]);
    hrr_diff().arg(&cap).arg(&rep).assert().code(1);
    hrr_diff()
        .arg(&cap)
        .arg(&rep)
        .args(["--rtol", "1e-3"])
        .assert()
        .code(0)
        .stdout(contains("(0 exact, 1 within tolerance)"));
    hrr_diff()
        .arg(&cap)
        .arg(&rep)
        .args(["--rtol", "1e-3", "--exact"])
        .assert()
        .code(1);
    hrr_diff()
        .arg(&cap)
        .arg(&rep)
        .args(["--atol", "0.1", "--dtype", "f64"])
        .assert()
        .code(1);
}

#[test]
fn one_sided_events_are_listed_and_fail() {
    let t = tempfile::tempdir().unwrap();
    let cap = capture(t.path(), &[b"a".to_vec(), b"b".to_vec()]);
    let rep = replay(t.path(), "rep.hrr", &[(1, b"a".to_vec())]);
    hrr_diff()
        .arg(&cap)
        .arg(&rep)
        .assert()
        .code(1)
        .stdout(contains("only in A: seq 2 hipMemcpy size 1"))
        .stdout(contains("1 fail\nFAIL"));
}

#[test]
fn json_is_one_document_on_stdout() {
    let t = tempfile::tempdir().unwrap();
    let cap = capture(t.path(), &[f32s(&[1.0]), f32s(&[2.0])]);
    let rep = replay(t.path(), "rep.hrr", &[(1, f32s(&[1.0])), (2, f32s(&[3.0]))]);
    let out = hrr_diff()
        .arg(&cap)
        .arg(&rep)
        .arg("--json")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).expect("stdout is one JSON document");
    assert_eq!(v["passed"], false);
    assert_eq!(v["exact"], 1);
    assert_eq!(v["failed"], 1);
    assert_eq!(v["mismatches"][0]["seq"], 2);
    assert_eq!(v["mismatches"][0]["max_abs"], 1.0);
    assert_eq!(v["tolerance"]["dtype"], "auto");
}

#[test]
fn replay_vs_replay_works() {
    let t = tempfile::tempdir().unwrap();
    let a = replay(
        t.path(),
        "r1.hrr",
        &[(4, b"x".to_vec()), (9, b"y".to_vec())],
    );
    let b = replay(
        t.path(),
        "r2.hrr",
        &[(4, b"x".to_vec()), (9, b"y".to_vec())],
    );
    hrr_diff()
        .arg(&a)
        .arg(&b)
        .assert()
        .code(0)
        .stdout(contains("PASS"));
}

#[test]
fn errors_exit_2_with_a_clear_message() {
    let t = tempfile::tempdir().unwrap();
    let cap = capture(t.path(), &[b"a".to_vec()]);
    hrr_diff()
        .arg(&cap)
        .arg(t.path().join("missing.hrr"))
        .assert()
        .code(2)
        .stderr(contains("hrr-diff: error:").and(contains("missing.hrr: no such archive")));

    // An archive from a newer hrr.
    let newer = replay(t.path(), "newer.hrr", &[(1, b"a".to_vec())]);
    let manifest = newer.join("manifest.json");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"version\": 2", "\"version\": 3");
    std::fs::write(&manifest, text).unwrap();
    hrr_diff()
        .arg(&cap)
        .arg(&newer)
        .assert()
        .code(2)
        .stderr(contains(
            "is format version 3, this hrr reads version 2; upgrade hrr",
        ));

    hrr_diff()
        .arg(&cap)
        .arg(&cap)
        .args(["--dtype", "f8"])
        .assert()
        .code(2)
        .stderr(contains("unknown dtype"));
}

#[test]
fn torn_replay_warns_but_still_compares() {
    let t = tempfile::tempdir().unwrap();
    let cap = capture(t.path(), &[b"a".to_vec()]);
    let rep = ArchiveBuilder::replay(Platform::Cpu, "cap.hrr")
        .seq(1)
        .d2h(0x1000, b"a")
        .write_unfinished(t.path().join("rep.hrr"))
        .unwrap();
    let events = rep.join("events.ndjson");
    let mut text = std::fs::read(&events).unwrap();
    text.extend_from_slice(br#"{"seq":2,"api":"hipMemcpy","op":"mem"#);
    std::fs::write(&events, text).unwrap();
    // Every pair passes, and still the diff fails: the replay is incomplete.
    hrr_diff()
        .arg(&cap)
        .arg(&rep)
        .assert()
        .code(1)
        .stderr(contains("archive is incomplete").and(contains("torn last line")))
        .stdout(contains(
            "d2h : 1 pass (1 exact, 0 within tolerance), 0 fail\nFAIL (partial: replay incomplete)\n",
        ));
    hrr_diff()
        .arg("--allow-partial")
        .arg(&cap)
        .arg(&rep)
        .assert()
        .code(0)
        .stdout(contains("PASS (partial: replay incomplete)\n"));
    hrr_diff()
        .args(["--allow-partial", "--strict"])
        .arg(&cap)
        .arg(&rep)
        .assert()
        .code(1)
        .stdout(contains("FAIL (replay incomplete; --strict)\n"));
}
