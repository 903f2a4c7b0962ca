//! `hrr-trace` through the real binary: traces of real captures (hrr-cap on
//! the CPU runtime) and of a timed replay (hrr-play --timing), checked by an
//! independent validator of the trace format; the validator's own checks;
//! and bad input.

mod validator;

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use hrr_core::manifest::Platform;
use hrr_core::testkit::ArchiveBuilder;
use hrr_tests::{Pipeline, assert_no_crash, read_events};
use predicates::prelude::*;
use predicates::str::contains;
use serde_json::{Value, json};
use tempfile::TempDir;
use validator::{Summary, validate};

const DEV: u64 = 0x7f00_0000_0000;

fn hrr_trace() -> Command {
    Command::cargo_bin("hrr-trace").unwrap()
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `hrr-trace ARCHIVE`: must succeed; the parsed trace.
fn trace(archive: &Path) -> Value {
    let out = hrr_trace().arg(archive).output().unwrap();
    assert_no_crash("hrr-trace", &String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "hrr-trace {} failed: {}",
        archive.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_json(&out)
}

/// Validates, printing every violation on failure.
fn valid(trace: &Value) -> Summary {
    validate(trace).unwrap_or_else(|errors| {
        panic!(
            "invalid trace ({} problems):\n{}",
            errors.len(),
            errors.join("\n")
        )
    })
}

/// Device work an archive records: (kernels, copies, memsets) of calls that succeeded.
fn device_work(archive: &Path) -> (u64, u64, u64) {
    let events = read_events(archive);
    let count = |f: &dyn Fn(&Value) -> bool| {
        events
            .iter()
            .filter(|e| e["ret"].as_i64().unwrap_or(0) == 0 && f(e))
            .count() as u64
    };
    (
        count(&|e| e["op"] == "launch"),
        count(&|e| e["op"] == "memcpy" && e["dir"] != "h2h"),
        count(&|e| e["op"] == "memset"),
    )
}

/// Device slices of the trace (process "device", complete events).
fn device_slices(trace: &Value) -> Vec<&Value> {
    trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 2)
        .collect()
}

/// The checks every trace of an archive must pass; returns the summary.
fn check_against_archive(trace: &Value, archive: &Path) -> Summary {
    let s = valid(trace);
    let (kernels, copies, memsets) = device_work(archive);
    assert!(kernels > 0, "the workload launched nothing?");
    assert_eq!(s.slices("kernel"), kernels, "kernel slices vs launches");
    assert_eq!(s.slices("copy"), copies, "copy slices vs memcpys");
    assert_eq!(s.slices("memset"), memsets, "memset slices vs memsets");
    assert_eq!(
        s.flows,
        kernels + copies + memsets,
        "one arrow per piece of device work"
    );
    let events = read_events(archive);
    let calls = events.iter().filter(|e| e["op"] != "eof").count() as u64;
    assert_eq!(s.slices("api"), calls, "one API slice per call");
    let tids: std::collections::BTreeSet<String> = events
        .iter()
        .filter(|e| e["op"] != "eof")
        .map(|e| e["tid"].to_string())
        .collect();
    assert_eq!(
        s.tracks_of("application").len(),
        tids.len(),
        "one track per application thread"
    );
    for name in s.tracks_of("device") {
        assert!(
            name.starts_with("stream 0x") || name == "all streams",
            "{name}"
        );
    }
    s
}

#[test]
fn capture_of_a_multi_kernel_workload_is_a_valid_trace() {
    let p = Pipeline::new("launch_repeat").capture();
    let t = trace(&p.cap());
    let s = check_against_archive(&t, &p.cap());
    assert_eq!(t["displayTimeUnit"], "ns");
    assert_eq!(t["metadata"]["hrr_kind"], "capture");
    assert_eq!(t["metadata"]["hrr_device_timing"], "nominal");
    let kernels: std::collections::BTreeSet<&str> = device_slices(&t)
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for k in ["add", "mul", "tagged"] {
        assert!(kernels.contains(k), "kernel {k} missing from {kernels:?}");
    }
    // The default stream and the workload's own stream.
    let streams = s.tracks_of("device");
    assert!(streams.contains(&"stream 0x0"), "{streams:?}");
    assert!(streams.len() >= 2, "{streams:?}");
    for e in device_slices(&t) {
        assert_eq!(e["args"]["timing"], "nominal", "{e}");
        assert!(e["args"]["seq"].is_u64());
    }
    let launch = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["cat"] == "kernel")
        .unwrap();
    assert!(launch["args"]["grid"].is_array() && launch["args"]["block"].is_array());
}

#[test]
fn capture_of_threads_and_streams_has_a_track_for_each() {
    let p = Pipeline::new("streams_threads").capture();
    let t = trace(&p.cap());
    let s = check_against_archive(&t, &p.cap());
    assert!(
        s.tracks_of("application").len() >= 5,
        "main + 4 workers: {:?}",
        s.tracks_of("application")
    );
    let created = read_events(&p.cap())
        .iter()
        .filter(|e| e["op"] == "stream_create")
        .count();
    let streams = s
        .tracks_of("device")
        .iter()
        .filter(|n| n.starts_with("stream ") && **n != "stream 0x0")
        .count();
    assert_eq!(streams, created, "{:?}", s.tracks_of("device"));
    // Recorded events and the waits on them show on their streams.
    let instants: Vec<&Value> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "i")
        .collect();
    for name in ["event_record", "stream_wait_event", "stream_sync"] {
        assert!(
            instants.iter().any(|e| e["name"] == name && e["s"] == "t"),
            "no {name} instant"
        );
    }
}

#[test]
fn timed_replay_shows_device_times_and_copy_bandwidth() {
    let p = Pipeline::new("launch_repeat").capture();
    let played = p
        .play_cmd(&["-o", "replay.hrr", "--timing"])
        .assert()
        .success();
    let p = p.step(played);
    // The added events leave the D2H comparison as it was.
    let p = p.diff().stdout_has("PASS");
    let out = p.path("replay.json");
    hrr_trace()
        .arg(p.replay())
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(contains("device times measured"));
    let t: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let s = check_against_archive(&t, &p.replay());
    assert_eq!(t["metadata"]["hrr_kind"], "replay");
    assert_eq!(t["metadata"]["hrr_device_timing"], "device");
    // Every launch of the capture was replayed and timed.
    assert_eq!(s.slices("kernel"), device_work(&p.cap()).0);
    let mut with_bandwidth = 0;
    for e in device_slices(&t) {
        assert_eq!(e["args"]["timing"], "device", "{e}");
        if e["cat"] == "copy" {
            let bytes = e["args"]["bytes"].as_f64().unwrap();
            let dur_us = e["dur"].as_f64().unwrap();
            if dur_us > 0.0 {
                let per_s = e["args"]["bytes_per_s"].as_f64().unwrap();
                let want = bytes / (dur_us * 1e-6);
                assert!(
                    (per_s - want).abs() <= want * 1e-3 + 1.0,
                    "{per_s} vs {want}: {e}"
                );
                with_bandwidth += 1;
            }
        }
    }
    assert!(with_bandwidth > 0, "no timed copy took measurable time");
    // API slices carry the measured times too.
    let api = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["cat"] == "api" && e["args"]["op"] == "launch")
        .unwrap();
    assert!(
        api["args"]["dev_ns"].is_u64() && api["args"]["dev_t"].is_u64(),
        "{api}"
    );
}

/// A small archive with every kind of device work, two threads and two streams.
fn built(dir: &Path) -> std::path::PathBuf {
    let data: Vec<u8> = (0..4096u32).map(|i| i as u8).collect();
    // Calls 10 µs apart, as a real capture's are (testkit's default is 1 ns).
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 8192)
        .at(20_000)
        .h2d(DEV, &data)
        .at(30_000)
        .memset(DEV + 4096, 1, 4096)
        .at(40_000)
        .launch(
            "k\"quoted\"",
            b"code",
            [4, 1, 1],
            [64, 1, 1],
            vec![hrr_core::testkit::ptr_arg(DEV)],
        )
        .at(50_000)
        .device_sync()
        .at(60_000)
        .d2h(DEV, &data)
        .write(dir.join("cap.hrr"))
        .unwrap()
}

#[test]
fn output_file_holds_what_stdout_would() {
    let tmp = TempDir::new().unwrap();
    let cap = built(tmp.path());
    let a = trace(&cap);
    let file = tmp.path().join("t.json");
    hrr_trace()
        .arg(&cap)
        .args(["-o"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    let b: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(a, b);
    let s = valid(&a);
    assert_eq!(
        (s.slices("kernel"), s.slices("copy"), s.slices("memset")),
        (1, 2, 1)
    );
    let kernel = device_slices(&a)
        .into_iter()
        .find(|e| e["cat"] == "kernel")
        .unwrap();
    assert_eq!(kernel["name"], "k\"quoted\"");
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".tmp-")),
        "no temporary left behind"
    );
}

#[test]
fn missing_archive_is_a_clear_error() {
    let tmp = TempDir::new().unwrap();
    hrr_trace()
        .arg(tmp.path().join("nope.hrr"))
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(contains("hrr-trace: error: ").and(contains("nope.hrr: no such archive")));
    hrr_trace().assert().code(2).stderr(contains("Usage"));
}

#[test]
fn torn_last_line_is_dropped_with_a_warning() {
    let tmp = TempDir::new().unwrap();
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, 64)
        .memset(DEV, 0, 64)
        .write_unfinished(tmp.path().join("cap.hrr"))
        .unwrap();
    let events = cap.join("events.ndjson");
    let mut text = std::fs::read(&events).unwrap();
    text.extend_from_slice(br#"{"seq":2,"t":9,"api":"hipMem"#);
    std::fs::write(&events, text).unwrap();
    let out = hrr_trace().arg(&cap).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is incomplete"), "{err}");
    assert!(
        err.contains("events.ndjson:3: torn last line"),
        "the warning names file and line: {err}"
    );
    let s = valid(&stdout_json(&out));
    assert_eq!((s.slices("api"), s.slices("memset")), (2, 1));
}

#[test]
fn malformed_line_stops_with_file_and_line() {
    let tmp = TempDir::new().unwrap();
    let cap = built(tmp.path());
    let events = cap.join("events.ndjson");
    let text = std::fs::read_to_string(&events).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = r#"{"seq":2,"api":"hipMemset","op":"memset"}"#;
    std::fs::write(&events, lines.join("\n") + "\n").unwrap();
    let file = tmp.path().join("t.json");
    hrr_trace()
        .arg(&cap)
        .arg("-o")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(
            contains("events.ndjson:3: malformed event")
                .and(contains("lacks required field `dst`"))
                .and(contains("panicked").not()),
        );
    assert!(!file.exists(), "no partial trace under the output name");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

#[test]
fn unwritable_output_is_an_error_naming_it() {
    let tmp = TempDir::new().unwrap();
    let cap = built(tmp.path());
    hrr_trace()
        .arg(&cap)
        .arg("-o")
        .arg(tmp.path().join("no/such/dir/t.json"))
        .assert()
        .code(2)
        .stderr(contains("no/such/dir/t.json"));
}

// ------------------------------------------------------------ the validator

/// A valid trace, then one mutation per rule: each must be caught.
#[test]
fn validator_catches_each_broken_rule() {
    let tmp = TempDir::new().unwrap();
    let good = trace(&built(tmp.path()));
    valid(&good);

    fn find(t: &Value, f: &dyn Fn(&Value) -> bool) -> usize {
        t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .position(f)
            .expect("an event to break")
    }
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Mutation, &str)> = vec![
        (
            "not an object",
            Box::new(|t| *t = json!([])),
            "not a JSON object",
        ),
        (
            "no traceEvents",
            Box::new(|t| {
                t.as_object_mut().unwrap().remove("traceEvents");
            }),
            "no traceEvents",
        ),
        (
            "no name",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                t["traceEvents"][i].as_object_mut().unwrap().remove("name");
            }),
            "lacks `name`",
        ),
        (
            "no ts",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                t["traceEvents"][i].as_object_mut().unwrap().remove("ts");
            }),
            "lacks `ts`",
        ),
        (
            "no tid",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "M");
                t["traceEvents"][i].as_object_mut().unwrap().remove("tid");
            }),
            "lacks `tid`",
        ),
        (
            "unknown ph",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                t["traceEvents"][i]["ph"] = json!("Z");
            }),
            "unknown ph",
        ),
        (
            "negative dur",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                t["traceEvents"][i]["dur"] = json!(-1.0);
            }),
            "negative dur",
        ),
        (
            "X without dur",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                t["traceEvents"][i].as_object_mut().unwrap().remove("dur");
            }),
            "without a numeric dur",
        ),
        (
            "B never closed",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                let mut b = t["traceEvents"][i].clone();
                b["ph"] = json!("B");
                b.as_object_mut().unwrap().remove("dur");
                t["traceEvents"].as_array_mut().unwrap().push(b);
            }),
            "is never closed",
        ),
        (
            "E without B",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                let mut e = t["traceEvents"][i].clone();
                e["ph"] = json!("E");
                e["ts"] = json!(1e9);
                t["traceEvents"].as_array_mut().unwrap().push(e);
            }),
            "without a B",
        ),
        (
            "E closing another B",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                let mut b = t["traceEvents"][i].clone();
                b["ph"] = json!("B");
                b["ts"] = json!(1e9);
                let mut e = b.clone();
                e["ph"] = json!("E");
                e["name"] = json!("other");
                let list = t["traceEvents"].as_array_mut().unwrap();
                list.push(b);
                list.push(e);
            }),
            "closes B",
        ),
        (
            "overlapping slices",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X" && e["pid"] == 1);
                let mut x = t["traceEvents"][i].clone();
                x["ts"] = json!(x["ts"].as_f64().unwrap() + x["dur"].as_f64().unwrap() / 2.0);
                x["dur"] = json!(1e6);
                t["traceEvents"].as_array_mut().unwrap().push(x);
            }),
            "without nesting",
        ),
        (
            "time going back",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "X");
                let mut x = t["traceEvents"][i].clone();
                x["ts"] = json!(0.0);
                x["dur"] = json!(0.0);
                t["traceEvents"].as_array_mut().unwrap().push(x);
            }),
            "goes back in time",
        ),
        (
            "flow without its end",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "f");
                t["traceEvents"].as_array_mut().unwrap().remove(i);
            }),
            "1 start(s) and 0 end(s)",
        ),
        (
            "flow ends with other ids",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "s");
                t["traceEvents"][i]["id"] = json!(999_999);
            }),
            "0 start(s) and 1 end(s)",
        ),
        (
            "flow end outside any slice",
            Box::new(|t| {
                let i = find(t, &|e| e["ph"] == "f");
                t["traceEvents"][i]["ts"] = json!(1e9);
            }),
            "inside no slice",
        ),
        (
            "track without a name",
            Box::new(|t| {
                let i = find(t, &|e| e["name"] == "thread_name" && e["pid"] == 2);
                t["traceEvents"].as_array_mut().unwrap().remove(i);
            }),
            "has no thread_name",
        ),
        (
            "process without a name",
            Box::new(|t| {
                let i = find(t, &|e| e["name"] == "process_name" && e["pid"] == 1);
                t["traceEvents"].as_array_mut().unwrap().remove(i);
            }),
            "pid 1 has no process_name",
        ),
    ];
    for (what, mutate, expected) in cases {
        let mut t = good.clone();
        mutate(&mut t);
        match validate(&t) {
            Ok(_) => panic!("{what}: the validator accepted it"),
            Err(errors) => assert!(
                errors.iter().any(|e| e.contains(expected)),
                "{what}: expected {expected:?} among {errors:#?}"
            ),
        }
    }
}

#[path = "../examples/synthetic_archive.rs"]
#[allow(dead_code)]
mod synthetic;

/// An archive of many 256 KiB chunks, parsed on several threads: the trace
/// holds every call in file order, and messages name lines counted across
/// chunks.
#[test]
fn an_archive_of_many_chunks_is_traced_in_file_order() {
    let tmp = TempDir::new().unwrap();
    let cap = tmp.path().join("big.hrr");
    // About 1.5 MB: six chunks.
    synthetic::write_archive(&cap, 6000);
    let events = cap.join("events.ndjson");
    let lines: Vec<String> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let with = |at: usize, line: &str| {
        let mut l = lines.clone();
        l.insert(at, line.to_string());
        std::fs::write(&events, l.join("\n") + "\n").unwrap();
    };

    // An unknown op in the fifth chunk: skipped, named by its line.
    with(4500, r#"{"seq":99999,"api":"hipX","op":"future_op"}"#);
    let out = hrr_trace().arg(&cap).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("events.ndjson:4501: unknown op `future_op` skipped"),
        "{err}"
    );
    assert!(err.contains("hrr-trace: 6001 events -> "), "{err}");
    let t = stdout_json(&out);
    valid(&t);
    let seqs: Vec<u64> = t["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "api")
        .map(|e| e["args"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (0..6000).collect::<Vec<_>>(), "calls in file order");

    // A malformed line in the sixth chunk: the error names it.
    with(5500, r#"{"seq":5500,"op":"#);
    hrr_trace()
        .arg(&cap)
        .assert()
        .code(2)
        .stderr(contains("events.ndjson:5501: malformed event"));
}
