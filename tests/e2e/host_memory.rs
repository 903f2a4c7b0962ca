//! Host memory kernels read and write directly (mapped pinned, managed,
//! registered): the host's writes become `host_write` events before the
//! launches that read them, the kernels' writes `host_read` events at the
//! next synchronisation, and replay reproduces and checks both.

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts};
use predicates::prelude::*;
use serde_json::Value;

fn count(events: &[Value], op: &str) -> usize {
    events.iter().filter(|e| e["op"] == op).count()
}

/// The `op`s of `events` that are one of `ops`, in order.
fn ops_of<'e>(events: &'e [Value], ops: &[&str]) -> Vec<&'e str> {
    events
        .iter()
        .filter_map(|e| e["op"].as_str())
        .filter(|o| ops.contains(o))
        .collect()
}

/// After the capture's recorded bytes were replaced: a replay says `d2h`
/// (its check counts) and FAIL, exit 1, and so does `hrr-diff` of the
/// capture against the first replay.
fn replay_and_diff_fail(p: &Pipeline, d2h: &str) {
    p.play_cmd(&["-o", "replay2.hrr"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(d2h))
        .stdout(predicate::str::is_match(r"(?m)^FAIL").unwrap());
    p.tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1)
        .stdout(predicate::str::is_match(r"(?m)^FAIL").unwrap());
}

/// Makes the capture's `host_read` events of blob `old` name other bytes of
/// the same length (`len`, a valid blob): what kernels wrote, misrecorded.
fn corrupt_host_read(p: &Pipeline, old: &str, len: usize) {
    let other = vec![0x5au8; len];
    let id = hrr_core::BlobId::of(&other).to_string();
    let dir = p.cap().join("blobs").join(&id[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&id), &other).unwrap();
    let events = p.cap().join("events.ndjson");
    let text = hrr_tests::events_text(&p.cap());
    assert!(text.contains(old), "blob {old} is not in the capture");
    let text = text
        .lines()
        .map(|l| {
            if l.contains(r#""op":"host_read""#) {
                l.replace(old, &id)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    std::fs::write(&events, text).unwrap();
}

/// capture → play → diff of `host_memory SCENARIO`: every check passes.
fn pipeline(scenario: &str) -> (Pipeline, Vec<Value>, (u64, u64, u64, u64)) {
    let p = Pipeline::new("host_memory").arg(scenario).capture();
    assert!(
        p.app_log().contains(&format!("host_memory {scenario}: OK")),
        "{}",
        p.app_log()
    );
    let events = p.events("cap.hrr");
    let p = p.play();
    let out = p.last_stdout();
    let counts = d2h_counts(&out).unwrap_or_else(|| panic!("no d2h line:\n{out}"));
    assert_eq!(counts.3, 0, "{out}");
    assert_no_crash("hrr-play", &p.last_stderr());
    let p = p.diff();
    assert!(p.last_stdout().contains("PASS"), "{}", p.last_stdout());
    (p, events, counts)
}

/// The same scenario captured with `HRR_HOST_MEMORY=off`: no host memory
/// events, and the replay's kernels read what the copies uploaded only, so
/// `host_memory SCENARIO`'s results differ at replay (exit 1, FAIL).
fn fails_without_snapshots(scenario: &str) {
    let p = Pipeline::new("host_memory").arg(scenario);
    let script = format!(
        "HRR_HOST_MEMORY=off hrr-cap -o cap.hrr -- {} | tee app.log",
        p.app_cmdline()
    );
    p.sh(&script).assert().success();
    let ev = p.events("cap.hrr");
    assert_eq!(count(&ev, "host_write") + count(&ev, "host_read"), 0);
    p.play_cmd(&["-o", "replay.hrr"])
        .assert()
        .code(1)
        .stdout(predicate::str::is_match(r"(?m)^FAIL").unwrap());
}

#[test]
fn mapped_pinned_memory_the_host_changes_between_launches() {
    fails_without_snapshots("mapped");
    let (_p, ev, (pass, exact, _, _)) = pipeline("mapped");
    // x before each launch, as the host changed it (16 KiB: one chunk).
    assert_eq!(count(&ev, "host_write"), 3, "{ev:#?}");
    let second = ev
        .iter()
        .filter(|e| e["op"] == "host_write")
        .nth(1)
        .unwrap();
    assert_eq!(second["size"], 16384, "x (16 KiB) is one chunk: {second}");
    assert_eq!((pass, exact), (3, 3), "three D2H results of y");
}

#[test]
fn managed_memory_written_by_host_and_kernels_in_turn() {
    fails_without_snapshots("managed");
    let (_p, ev, (pass, exact, _, _)) = pipeline("managed");
    assert!(count(&ev, "host_write") >= 3, "{ev:#?}");
    // y after each kernel, read back at the device synchronisation.
    assert_eq!(count(&ev, "host_read"), 3, "{ev:#?}");
    assert_eq!((pass, exact), (4, 4), "three host_read checks and one D2H");
}

#[test]
fn registered_host_memory_read_by_a_kernel() {
    fails_without_snapshots("registered");
    let (_p, ev, (pass, _, _, _)) = pipeline("registered");
    let w: Vec<_> = ev.iter().filter(|e| e["op"] == "host_write").collect();
    assert_eq!(w.len(), 1, "{ev:#?}");
    assert_eq!(w[0]["size"], 16384, "the whole registered range: {}", w[0]);
    assert_eq!(pass, 1);
}

#[test]
fn host_memory_a_kernel_writes_is_checked_at_replay() {
    let (p, ev, (pass, exact, _, _)) = pipeline("devwrite");
    let reads: Vec<_> = ev.iter().filter(|e| e["op"] == "host_read").collect();
    assert_eq!(reads.len(), 1, "{ev:#?}");
    assert_eq!(reads[0]["size"], 16384, "{}", reads[0]);
    assert_eq!((pass, exact), (1, 1));

    // Corrupt what the capture recorded: the host_read names other bytes of
    // the same length (a valid blob), and both replay and diff fail.
    corrupt_host_read(&p, reads[0]["blob"].as_str().unwrap(), 16384);
    replay_and_diff_fail(&p, "d2h : 0 pass (0 exact, 0 within tolerance), 1 fail");
}

#[test]
fn a_graph_kernel_node_reads_mapped_memory_the_host_changes_between_launches() {
    fails_without_snapshots("graph");
    let (p, ev, (pass, exact, _, _)) = pipeline("graph");
    // x as the host changed it, recorded before each graph launch (one
    // 16 KiB chunk each time).
    assert_eq!(
        ops_of(&ev, &["host_write", "graph_launch"]),
        ["host_write", "graph_launch"].repeat(3),
        "{ev:#?}"
    );
    for w in ev.iter().filter(|e| e["op"] == "host_write") {
        assert_eq!(w["api"], "hipGraphLaunch", "{w}");
        assert_eq!(w["size"], 16384, "{w}");
    }
    assert_eq!((pass, exact), (3, 3), "three D2H results of y");
    // The kernel node's pointer to x translated to the replay's own
    // pinned memory, not placed at the recorded address: the same result.
    p.play_cmd(&["--no-placement", "-o", "replay2.hrr"])
        .assert()
        .success()
        .stdout(predicate::str::contains("placement : 0 of "))
        .stdout(predicate::str::contains(
            "d2h : 3 pass (3 exact, 0 within tolerance), 0 fail",
        ));
}

#[test]
fn host_memory_a_graph_kernel_node_writes_is_checked_at_replay() {
    let (p, ev, (pass, exact, _, _)) = pipeline("graphwrite");
    // What the kernel wrote, read back at each stream synchronisation; the
    // host's change between the launches, recorded before the second.
    assert_eq!(
        ops_of(&ev, &["host_write", "graph_launch", "host_read"]),
        [
            "graph_launch",
            "host_read",
            "host_write",
            "graph_launch",
            "host_read"
        ],
        "{ev:#?}"
    );
    let reads: Vec<_> = ev.iter().filter(|e| e["op"] == "host_read").collect();
    for r in &reads {
        assert_eq!(r["api"], "hipStreamSynchronize", "{r}");
        assert_eq!(r["size"], 16384, "{r}");
    }
    assert_eq!((pass, exact), (2, 2), "two host_read checks");

    // The second launch's result misrecorded: replay and diff fail on it.
    corrupt_host_read(&p, reads[1]["blob"].as_str().unwrap(), 16384);
    replay_and_diff_fail(&p, "d2h : 1 pass (1 exact, 0 within tolerance), 1 fail");
}

/// An async D2H copy into pinned memory that a launch still pending reached
/// (a framework's pinned staging buffer): the copy's bytes are device
/// output at the synchronisation, and the replay's memory for that range
/// must hold them too, for the check there and for the next launch.
#[test]
fn a_copy_into_pinned_memory_a_launch_reached_lands_there_at_replay() {
    let (_p, ev, (pass, exact, _, fail)) = pipeline("copyin");
    let reads: Vec<_> = ev.iter().filter(|e| e["op"] == "host_read").collect();
    assert_eq!(reads.len(), 1, "the copied bytes at the sync: {ev:#?}");
    assert_eq!(fail, 0);
    assert_eq!(
        (pass, exact),
        (3, 3),
        "the copy, the host_read and the last D2H"
    );
}

/// A device-to-device copy whose source is pinned memory the host wrote
/// (how XLA seeds a loop counter): the bytes it reads are recorded before
/// it, or the replay's copy would read whatever its own allocation holds.
#[test]
fn a_device_copy_from_pinned_memory_the_host_wrote_replays() {
    let (_p, ev, (pass, exact, _, fail)) = pipeline("d2dfrom");
    let writes = ev.iter().filter(|e| e["op"] == "host_write").count();
    assert_eq!(writes, 2, "one host_write before each copy: {ev:#?}");
    assert_eq!((pass, exact, fail), (2, 2, 0));
}
