//! Capture windows (`hrr-cap --window`) through the whole pipeline on the
//! CPU runtime, over `tests/workloads/window.c`: each trigger, two windows
//! in one run, a window the run ends inside, windows around a graph launch,
//! a pool block's reuse and an array written before them. Every window's archive replays alone and
//! passes, `hrr-diff` passes it against its replay, and its D2H results are
//! byte for byte the same D2H of a whole-run capture of the same program
//! (the same blobs, in the same order, at the steps the window covers).

use hrr_tests::{Pipeline, assert_no_crash, d2h_counts, events_text, read_events, read_manifest};
use serde_json::Value;
use std::path::Path;

/// The blobs of an archive's D2H copies, in order.
fn d2h_blobs(archive: &Path) -> Vec<String> {
    read_events(archive)
        .iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .filter_map(|e| e["blob"].as_str().map(str::to_string))
        .collect()
}

/// `hrr-cap -o full.hrr -- ./window MODE`: the whole run.
fn full(p: &Pipeline, mode: &str) -> Vec<String> {
    p.sh(&format!(
        "hrr-cap -o full.hrr -- ./window {mode} > full.log"
    ))
    .assert()
    .success();
    d2h_blobs(&p.path("full.hrr"))
}

/// `hrr-cap --window SPEC -o cap.hrr -- ./window MODE`: its stderr.
fn windowed(p: &Pipeline, spec: &str, mode: &str) -> String {
    let a = p
        .sh(&format!(
            "hrr-cap --window {spec} -o cap.hrr -- ./window {mode} | tee app.log"
        ))
        .assert()
        .success();
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert_no_crash("hrr-cap", &err);
    assert!(p.app_log().contains("window: OK"), "{}", p.app_log());
    err
}

/// Replays window archive `name` alone (PASS, every D2H exact), diffs it
/// against its replay, and returns its D2H blobs.
fn replays(p: &Pipeline, name: &str, d2h: u64) -> Vec<String> {
    let out = format!("{name}.replay.hrr");
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", name, "-o", &out])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(stdout.lines().any(|l| l == "PASS"), "{name}: {stdout}");
    assert_eq!(
        d2h_counts(&stdout),
        Some((d2h, d2h, 0, 0)),
        "{name}: every D2H checked exactly:\n{stdout}"
    );
    let d = p.tool("hrr-diff").args([name, &out]).assert().success();
    let text = String::from_utf8_lossy(&d.get_output().stdout).into_owned();
    assert!(text.ends_with("PASS\n"), "{name}: {text}");
    d2h_blobs(&p.path(name))
}

/// The window's D2H are the full run's D2H `from..from + n`.
fn same_as_full(window: &[String], full: &[String], from: usize, n: usize) {
    assert_eq!(window.len(), n, "D2H in the window: {window:?}");
    assert_eq!(
        window,
        &full[from..from + n],
        "window D2H vs the full run's"
    );
}

/// The manifest's `window` field.
fn window_field(p: &Pipeline, name: &str) -> Value {
    read_manifest(&p.path(name))["window"].clone()
}

/// (profiler) hipProfilerStart before step 2 to hipProfilerStop after step
/// 3: the state made before (a device pointer table, a buffer written once
/// and only read through it, a stream and an event) is restored by the
/// preamble; the window's two D2H are the full run's steps 2 and 3;
/// `--info` says what it is.
#[test]
fn profiler_window_replays_alone_with_the_state_before_it() {
    let p = Pipeline::new("window");
    let full = full(&p, "profiler");
    assert_eq!(full.len(), 6);
    windowed(&p, "profiler", "profiler");
    let w = window_field(&p, "cap.hrr");
    assert_eq!(w["trigger"], "profiler");
    assert_eq!(w["index"], 1);
    assert_eq!(w["opened"], true);
    // a, b, c, out and the table: 4 × 1 KiB + 64 bytes.
    assert_eq!(w["state_bytes"], 4 * 1024 + 64, "{w}");
    let ev = read_events(&p.path("cap.hrr"));
    let launches = ev.iter().filter(|e| e["op"] == "launch").count();
    assert_eq!(launches, 4, "steps 2 and 3 only: twice and gather each");
    for op in ["stream_create", "event_create", "alloc"] {
        assert!(ev.iter().any(|e| e["op"] == op), "preamble has {op}");
    }
    let blobs = replays(&p, "cap.hrr", 2);
    same_as_full(&blobs, &full, 2, 2);
    assert!(!p.path("cap-w2.hrr").exists(), "one window, one archive");
    let info = p
        .tool("hrr-play")
        .args(["--info", "cap.hrr"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&info.get_output().stdout).into_owned();
    assert!(
        text.contains("window : 1 (trigger profiler, profiler) restores 4160 bytes of state"),
        "{text}"
    );
    p.tool("hrr-trace")
        .args(["cap.hrr", "-o", "trace.json"])
        .assert()
        .success();
    // A launch pulled out of the window replays on its own too: its inputs
    // (the table, c) come from the preamble.
    p.tool("hrr-extract")
        .args(["--kernel", "gather", "-o", "gather.hrr", "cap.hrr"])
        .assert()
        .success();
    p.tool("hrr-play")
        .args(["--backend", "cpu", "gather.hrr"])
        .assert()
        .success()
        .stdout(predicates::str::contains("PASS"));
}

/// Without the preamble's uploads the window could not pass: the table's
/// pointers and c's bytes exist only in the state before it. The
/// preamble's uploads are what the replay reads (a window archive whose
/// state uploads are dropped fails its D2H).
#[test]
fn a_window_without_its_state_fails() {
    let p = Pipeline::new("window");
    windowed(&p, "profiler", "profiler");
    let text = events_text(&p.path("cap.hrr"));
    // Rewritten plain (the reader takes events.ndjson before the .zst).
    let _ = std::fs::remove_file(p.path("cap.hrr/events.ndjson.zst"));
    let path = p.path("cap.hrr/events.ndjson");
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("\"hrr-window-state\""))
        .collect();
    assert!(kept.len() < text.lines().count(), "the preamble uploads");
    // The trailer counts the events: dropped lines leave it incomplete,
    // which --allow-partial accepts; the D2H must fail all the same.
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "cap.hrr", "--allow-partial"])
        .assert()
        .failure();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let (_, _, _, fail) = d2h_counts(&stdout).unwrap_or((0, 0, 0, 0));
    assert!(fail > 0, "{stdout}");
}

/// (launches) `launches:3..6`: launch 0 is build_table, step k launches
/// 1+2k and 2+2k, so launches 3..6 are steps 1 and 2; the window runs to
/// launch 7, holding both steps' D2H.
#[test]
fn launches_window_covers_the_launches_named() {
    let p = Pipeline::new("window");
    let full = full(&p, "plain");
    windowed(&p, "launches:3..6", "plain");
    let w = window_field(&p, "cap.hrr");
    assert_eq!(w["trigger"], "launches");
    assert_eq!(w["spec"], "launches:3..6");
    let ev = read_events(&p.path("cap.hrr"));
    assert_eq!(ev.iter().filter(|e| e["op"] == "launch").count(), 4);
    let blobs = replays(&p, "cap.hrr", 2);
    same_as_full(&blobs, &full, 1, 2);
}

/// Before a window opens only bookkeeping is done: a launch outside it is
/// neither matched against the thread's kept lines nor read in full
/// (`HRR_CAPTURE_PROFILE` counts both kinds), which once cost twice a
/// recorded launch. The launches inside it are.
#[test]
fn launches_outside_a_window_are_not_recorded_in_any_form() {
    let p = Pipeline::new("window");
    p.sh("HRR_CAPTURE_PROFILE=1 hrr-cap --window launches:3..6 -o cap.hrr -- ./window plain > app.log 2> cap.err")
        .assert()
        .success();
    let err = std::fs::read_to_string(p.path("cap.err")).unwrap();
    let through_memo: u64 = err
        .lines()
        .filter_map(|l| l.strip_prefix("hrr-intercept: profile: phase launch: "))
        .filter(|l| l.starts_with("in full") || l.starts_with("repeated line"))
        .filter_map(|l| l.split(": ").nth(1)?.split(' ').next()?.parse::<u64>().ok())
        .sum();
    let ev = read_events(&p.path("cap.hrr"));
    let inside = ev.iter().filter(|e| e["op"] == "launch").count() as u64;
    assert_eq!(inside, 4);
    assert_eq!(through_memo, inside, "{err}");
}

/// (signal) SIGUSR2 before step 2 opens the window at the next launch,
/// SIGUSR2 after step 3 closes it at the next launch; `signal:USR1` the
/// same with SIGUSR1.
#[test]
fn signal_windows_open_and_close_at_the_next_launch() {
    for (spec, mode) in [("signal", "signal"), ("signal:USR1", "usr1")] {
        let p = Pipeline::new("window");
        let full = full(&p, mode);
        windowed(&p, spec, mode);
        assert_eq!(window_field(&p, "cap.hrr")["trigger"], "signal");
        // Opened at step 2's first launch (after its H2D), closed at step
        // 4's first launch: the D2H of steps 2 and 3.
        let blobs = replays(&p, "cap.hrr", 2);
        same_as_full(&blobs, &full, 2, 2);
    }
}

/// Two windows in one run: steps 1..2 into cap.hrr, 4..5 into cap-w2.hrr,
/// each replaying alone.
#[test]
fn two_windows_give_two_archives() {
    let p = Pipeline::new("window");
    let full = full(&p, "profiler2");
    let err = windowed(&p, "profiler", "profiler2");
    assert!(err.contains("cap-w2.hrr"), "hrr-cap reports both: {err}");
    assert_eq!(window_field(&p, "cap.hrr")["index"], 1);
    assert_eq!(window_field(&p, "cap-w2.hrr")["index"], 2);
    same_as_full(&replays(&p, "cap.hrr", 2), &full, 1, 2);
    same_as_full(&replays(&p, "cap-w2.hrr", 2), &full, 4, 2);
    assert!(!p.path("cap-w3.hrr").exists());
}

/// A window the run ends inside (started before step 3, never stopped) is
/// a complete archive of what ran, steps 3..5.
#[test]
fn a_window_that_never_closes_is_finished_at_exit() {
    let p = Pipeline::new("window");
    let full = full(&p, "open");
    windowed(&p, "profiler", "open");
    let m = read_manifest(&p.path("cap.hrr"));
    assert_eq!(m["complete"], true);
    assert_eq!(m["window"]["closed_at_exit"], true);
    same_as_full(&replays(&p, "cap.hrr", 3), &full, 3, 3);
}

/// A window the run never reaches (its launches stop short of it) leaves
/// an empty archive: `hrr-cap` says nothing was recorded and why, and
/// `hrr-play` fails it rather than pass a replay of nothing.
#[test]
fn a_window_that_never_opens_is_said_and_never_passes() {
    let p = Pipeline::new("window");
    let err = windowed(&p, "launches:100000..100001", "plain");
    assert!(
        err.contains("(nothing recorded: the capture window launches:100000..100001 never opened)"),
        "{err}"
    );
    assert_eq!(window_field(&p, "cap.hrr")["opened"], false);
    let a = p
        .tool("hrr-play")
        .args(["--backend", "cpu", "cap.hrr"])
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(
        stdout
            .lines()
            .any(|l| l == "FAIL (capture window never opened: nothing recorded)"),
        "{stdout}"
    );
    assert!(!stdout.lines().any(|l| l.starts_with("PASS")), "{stdout}");
}

/// A window around a graph launch: the executable graph, captured and
/// instantiated before it, is in the preamble.
#[test]
fn a_window_around_a_graph_launch() {
    let p = Pipeline::new("window");
    let full = full(&p, "graph");
    windowed(&p, "profiler", "graph");
    let ev = read_events(&p.path("cap.hrr"));
    assert!(ev.iter().any(|e| e["op"] == "graph_exec"), "preamble");
    assert_eq!(ev.iter().filter(|e| e["op"] == "graph_launch").count(), 2);
    same_as_full(&replays(&p, "cap.hrr", 2), &full, 2, 2);
}

/// A window around a pool block's reuse: the block, freed before the
/// window with bytes the next step adds to, is restored into its pool.
#[test]
fn a_window_around_a_pool_reuse() {
    let p = Pipeline::new("window");
    let full = full(&p, "pool");
    // Each step downloads out, then the pool block.
    windowed(&p, "profiler", "pool");
    let ev = read_events(&p.path("cap.hrr"));
    assert!(ev.iter().any(|e| e["op"] == "pool_create"), "preamble");
    same_as_full(&replays(&p, "cap.hrr", 4), &full, 4, 4);
}

/// A setting that names no window is refused before the application runs.
#[test]
fn a_bad_window_setting_is_a_usage_error() {
    let p = Pipeline::new("window");
    p.sh("hrr-cap --window launches:9..3 -o cap.hrr -- ./window plain")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("launches:A..B"));
    assert!(!p.cap().join("manifest.json").exists());
}

/// Pinned host memory the host wrote once before the window and a kernel
/// reads inside it: the window's first launch records it whole
/// (`host_write`), so the window replays alone.
#[test]
fn a_window_reading_pinned_memory_written_before_it() {
    let p = Pipeline::new("window");
    let full = full(&p, "pinned");
    windowed(&p, "profiler", "pinned");
    let ev = read_events(&p.path("cap.hrr"));
    let writes = ev.iter().filter(|e| e["op"] == "host_write").count();
    assert_eq!(writes, 1, "recorded once, at the window's first launch");
    same_as_full(&replays(&p, "cap.hrr", 2), &full, 2, 2);
}

/// Virtual memory (a reservation, a physical handle mapped, access set) is
/// rebuilt by the preamble and its bytes uploaded; a handle exported as a
/// file descriptor and imported again cannot be: both are named on stderr
/// and in the manifest, and the window replays all the same.
#[test]
fn what_a_window_cannot_rebuild_is_named() {
    let p = Pipeline::new("window");
    let full = full(&p, "ipc");
    let err = windowed(&p, "profiler", "ipc");
    assert_eq!(
        err.matches("hrr-intercept: window 1: not restored: ")
            .count(),
        2,
        "{err}"
    );
    let w = window_field(&p, "cap.hrr");
    let named = w["not_restored"].as_array().expect("not_restored").len();
    assert_eq!(named, 2, "{w}");
    let ev = read_events(&p.path("cap.hrr"));
    for op in ["va_reserve", "mem_create", "mem_map", "mem_access"] {
        assert!(ev.iter().any(|e| e["op"] == op), "preamble has {op}");
    }
    assert!(
        !ev.iter()
            .any(|e| e["op"] == "mem_export" || e["op"] == "mem_import")
    );
    same_as_full(&replays(&p, "cap.hrr", 2), &full, 2, 2);
    let info = p
        .tool("hrr-play")
        .args(["--info", "cap.hrr"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&info.get_output().stdout).into_owned();
    assert!(text.contains("  not restored : "), "{text}");
}

/// An array made and filled before the window and only read inside it
/// (copied into device memory, then downloaded, each step): the preamble
/// uploads its contents (`memcpy_array` h2d, `hrr-window-state`, its whole
/// extent), so the window replays alone and its D2H are the full run's.
#[test]
fn a_window_reading_an_array_written_before_it() {
    let p = Pipeline::new("window");
    let full = full(&p, "array");
    // Each step downloads out, then the array's copy.
    assert_eq!(full.len(), 12);
    let err = windowed(&p, "profiler", "array");
    assert!(!err.contains("not restored"), "{err}");
    let ev = read_events(&p.path("cap.hrr"));
    let uploads: Vec<_> = ev
        .iter()
        .filter(|e| e["op"] == "memcpy_array" && e["api"] == "hrr-window-state")
        .collect();
    assert_eq!(uploads.len(), 1, "one upload for the one array");
    let u = uploads[0];
    assert_eq!(u["dir"], "h2d", "{u}");
    // 32 × 8 floats: 128 bytes a row, 8 rows, one slice.
    assert_eq!(u["extent"], serde_json::json!([128, 8, 1]), "{u}");
    assert!(u["blob"].is_string(), "{u}");
    let w = window_field(&p, "cap.hrr");
    // a, b, c, out, the array's device copy, the table; the array.
    assert_eq!(w["state_bytes"], 5 * 1024 + 64 + 1024, "{w}");
    assert!(w.get("not_restored").is_none(), "{w}");
    same_as_full(&replays(&p, "cap.hrr", 4), &full, 4, 4);
}

/// A mipmapped array whose levels 0 and 1 were filled before the window and
/// are only read inside it (copied to the host each step): the preamble
/// uploads each level through the handle the program looked it up by
/// (`memcpy_array` h2d, `hrr-window-state`, the level's extent), so the
/// window replays alone and its D2H are the full run's.
#[test]
fn a_window_reading_mipmap_levels_written_before_it() {
    let p = Pipeline::new("window");
    let array_d2h = |archive: &Path| -> Vec<String> {
        read_events(archive)
            .iter()
            .filter(|e| e["op"] == "memcpy_array" && e["dir"] == "d2h")
            .filter_map(|e| e["blob"].as_str().map(str::to_string))
            .collect()
    };
    let full = full(&p, "mipmap");
    assert_eq!(full.len(), 6, "out, each step");
    let full_levels = array_d2h(&p.path("full.hrr"));
    assert_eq!(full_levels.len(), 12, "both levels, each step");
    let err = windowed(&p, "profiler", "mipmap");
    assert!(!err.contains("not restored"), "{err}");
    let ev = read_events(&p.path("cap.hrr"));
    let uploads: Vec<&Value> = ev
        .iter()
        .filter(|e| e["op"] == "memcpy_array" && e["api"] == "hrr-window-state")
        .collect();
    assert_eq!(
        uploads.len(),
        2,
        "one upload a level looked up: {uploads:?}"
    );
    // Level 0: 32 floats a row, 8 rows; level 1: 16 × 4.
    assert_eq!(uploads[0]["extent"], serde_json::json!([128, 8, 1]));
    assert_eq!(uploads[1]["extent"], serde_json::json!([64, 4, 1]));
    let w = window_field(&p, "cap.hrr");
    assert!(w.get("not_restored").is_none(), "{w}");
    same_as_full(&replays(&p, "cap.hrr", 6), &full, 2, 2);
    assert_eq!(
        array_d2h(&p.path("cap.hrr")),
        full_levels[4..8],
        "the levels' D2H in the window vs the full run's"
    );
}
