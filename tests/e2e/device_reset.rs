//! A device reset between two "tests" of one program
//! (`tests/workloads/device_reset.c`) through the whole pipeline on the CPU
//! runtime: the reset is recorded (`device_reset`, nothing unrecorded), the
//! allocation made after it at the freed address is placed there again by
//! the replay, which passes; two captures of the program diff clean; a
//! window opened after the reset replays alone without the freed
//! allocation in its state; a stream the reset destroyed fails when used,
//! at capture, and that failed call is skipped at replay.

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, read_events, read_manifest};
use serde_json::Value;

/// `placement : P of A allocations at recorded addresses`: (P, A).
fn placement(stdout: &str) -> Option<(u64, u64)> {
    let rest = stdout
        .lines()
        .find_map(|l| l.strip_prefix("placement : "))?;
    let mut w = rest.split_whitespace();
    let p = w.next()?.parse().ok()?;
    let _of = w.next()?;
    let a = w.next()?.parse().ok()?;
    Some((p, a))
}

/// Captures `./device_reset MODE` (which must pass, with nothing
/// unrecorded), replays it (PASS, every D2H exact, every allocation
/// placed) and diffs capture and replay; the capture's events.
fn pipeline(mode: &str) -> (Pipeline, Vec<Value>) {
    let p = Pipeline::new("device_reset").arg(mode).capture();
    assert!(
        p.app_log().contains(&format!("device_reset: OK ({mode};")),
        "{}",
        p.app_log()
    );
    let err = p.last_stderr();
    assert!(
        err.lines().any(|l| l == "unrecorded : 0 calls"),
        "the reset is recorded:\n{err}"
    );
    assert_eq!(read_manifest(&p.cap())["complete"], true);
    let events = p.events("cap.hrr");
    let p = p.play();
    let out = p.last_stdout();
    let (pass, exact, _, fail) = d2h_counts(&out).unwrap_or_else(|| panic!("no d2h line:\n{out}"));
    assert_eq!((pass, exact, fail), (2, 2, 0), "{out}");
    // a, then b at a's address, then x.
    assert_eq!(
        placement(&out),
        Some((3, 3)),
        "every allocation placed:\n{out}"
    );
    assert_no_crash("hrr-play", &p.last_stderr());
    let p = p.diff();
    assert!(p.last_stdout().ends_with("PASS\n"), "{}", p.last_stdout());
    (p, events)
}

/// `hipDeviceReset` is one `device_reset` of device 0 between the two
/// tests; the allocation after it has the freed one's address, and the
/// replay frees and places it again.
#[test]
fn a_device_reset_between_tests_replays_with_every_allocation_placed() {
    let (_p, ev) = pipeline("plain");
    let resets: Vec<&Value> = ev.iter().filter(|e| e["op"] == "device_reset").collect();
    assert_eq!(resets.len(), 1, "{resets:?}");
    assert_eq!(resets[0]["api"], "hipDeviceReset");
    assert_eq!(resets[0]["device"], 0);
    assert_eq!(resets[0]["ret"], 0);
    let allocs: Vec<&Value> = ev.iter().filter(|e| e["op"] == "alloc").collect();
    assert_eq!(allocs.len(), 3);
    assert_eq!(allocs[0]["ptr"], allocs[1]["ptr"], "the address comes back");
    let seq = |e: &Value| e["seq"].as_u64().unwrap();
    assert!(seq(allocs[0]) < seq(resets[0]) && seq(resets[0]) < seq(allocs[1]));
}

/// `hipDevicePrimaryCtxReset(0)` is the same reset, under its own name.
#[test]
fn a_primary_context_reset_is_a_device_reset() {
    let (_p, ev) = pipeline("primary");
    let r: Vec<&Value> = ev.iter().filter(|e| e["op"] == "device_reset").collect();
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0]["api"].as_str(), r[0]["device"].as_u64()),
        (Some("hipDevicePrimaryCtxReset"), Some(0))
    );
}

/// Two captures of the program: the same results, `hrr-diff` PASS.
#[test]
fn two_captures_across_a_reset_diff_clean() {
    let p = Pipeline::new("device_reset").capture();
    p.sh(&format!(
        "hrr-cap -o again.hrr -- {} > again.log",
        p.app_cmdline()
    ))
    .assert()
    .success();
    let d = p
        .tool("hrr-diff")
        .args(["cap.hrr", "again.hrr"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&d.get_output().stdout).into_owned();
    assert!(out.contains("d2h : 2 pass"), "{out}");
    assert!(out.ends_with("PASS\n"), "{out}");
}

/// The stream made before the reset, synchronised after it: the program
/// sees hipErrorInvalidHandle (400) at capture, the archive holds the
/// failed call, and replay skips it as it skips every failed call.
#[test]
fn a_stream_the_reset_destroyed_fails_and_is_skipped_at_replay() {
    let (p, ev) = pipeline("stale");
    let syncs: Vec<&Value> = ev
        .iter()
        .filter(|e| e["api"] == "hipStreamSynchronize")
        .collect();
    assert_eq!(syncs.len(), 2, "{syncs:?}");
    assert_eq!(
        (syncs[0]["ret"].as_i64(), syncs[1]["ret"].as_i64()),
        (Some(0), Some(400))
    );
    let _ = p;
}

/// A window over the launches after the reset (`launches:1..2`: the second
/// test's fill and saxpy) replays alone, PASS: its state holds the second
/// test's two allocations, not the first test's buffer the reset freed
/// (which lay at the same address), nor the stream it destroyed.
#[test]
fn a_window_after_a_reset_holds_only_what_outlived_it() {
    let p = Pipeline::new("device_reset");
    p.sh(&format!(
        "hrr-cap --window launches:1..2 -o cap.hrr -- {} | tee app.log",
        p.app_cmdline()
    ))
    .assert()
    .success();
    assert!(p.app_log().contains("device_reset: OK"), "{}", p.app_log());
    let m = read_manifest(&p.cap());
    assert_eq!(m["window"]["state_allocs"], 2, "{m}");
    assert_eq!(m["window"]["state_bytes"], 2 * 4096, "{m}");
    let ev = read_events(&p.cap());
    let preamble: Vec<&Value> = ev.iter().take_while(|e| e["op"] != "launch").collect();
    let allocs = preamble.iter().filter(|e| e["op"] == "alloc").count();
    assert_eq!(allocs, 2, "b and x only: {preamble:?}");
    assert!(
        !preamble.iter().any(|e| e["op"] == "stream_create"),
        "the stream died with the reset: {preamble:?}"
    );
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "cap.hrr", "-o", "replay.hrr"])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert_eq!(d2h_counts(&out), Some((1, 1, 0, 0)), "{out}");
    assert!(out.lines().any(|l| l == "PASS"), "{out}");
}
