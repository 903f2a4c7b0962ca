//! No partial PASS: an incomplete capture, or a replay that stopped early,
//! fails `hrr-play` and `hrr-diff` unless `--allow-partial` asks to compare
//! a prefix; a replay that stops early keeps in its `-o` archive every D2H
//! it validated, marked incomplete, whichever way it stopped.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use hrr_core::KernelArg;
use hrr_core::manifest::Platform;
use hrr_core::testkit::{ArchiveBuilder, value_arg};
use hrr_tests::{Pipeline, read_events, read_manifest, workloads};

/// A recorded device allocation (as in `hostile.rs`).
const DEV: u64 = 0x7f00_0040_0000;
const N: usize = 256;

fn stdout(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn stderr(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

fn last_line(out: &str) -> &str {
    out.lines().last().unwrap_or("")
}

/// `fill(float *dst, float v, int n)` arguments; `dst` marked a pointer
/// when `ptr`.
fn fill_args(dst: u64, v: f32, ptr: bool) -> Vec<KernelArg> {
    let mut d = value_arg(&dst.to_le_bytes());
    if ptr {
        d.ptrs = vec![0];
    }
    vec![
        d,
        value_arg(&v.to_le_bytes()),
        value_arg(&(N as i32).to_le_bytes()),
    ]
}

fn filled(v: f32) -> Vec<u8> {
    (0..N).flat_map(|_| v.to_le_bytes()).collect()
}

/// alloc → fill 2.5 → D2H → fill 3.5 → D2H: two validated D2H, then
/// whatever `tail` adds (the event the replay stops at).
fn two_d2h_then(tail: impl FnOnce(ArchiveBuilder, &[u8]) -> ArchiveBuilder) -> ArchiveBuilder {
    let so = workloads().kernel("fill");
    let b = ArchiveBuilder::new(Platform::Cpu)
        .alloc(DEV, (N * 4) as u64)
        .module_load(0x9000, &so)
        .launch(
            "fill",
            &so,
            [1, 1, 1],
            [N as u32, 1, 1],
            fill_args(DEV, 2.5, true),
        )
        .d2h(DEV, &filled(2.5))
        .launch(
            "fill",
            &so,
            [1, 1, 1],
            [N as u32, 1, 1],
            fill_args(DEV, 3.5, true),
        )
        .d2h(DEV, &filled(3.5));
    tail(b, &so)
}

/// A zero flag (replayed allocations are zero-filled), then `spin` on it:
/// a kernel that never finishes, at event `seq + 2` of `b`.
fn spin_forever(b: ArchiveBuilder, spin: &[u8]) -> ArchiveBuilder {
    const FLAG: u64 = DEV + (1 << 20);
    b.alloc(FLAG, 4).module_load(0x9100, spin).launch(
        "spin",
        spin,
        [1, 1, 1],
        [1, 1, 1],
        fill_args(FLAG, 0.0, true)[..1].to_vec(),
    )
}

/// The D2H memcpy events (their `seq`) of an archive.
fn d2h_seqs(archive: &Path) -> Vec<u64> {
    read_events(archive)
        .iter()
        .filter(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .map(|e| e["seq"].as_u64().unwrap())
        .collect()
}

/// Cuts a finished capture short as a killed capture leaves it: the first
/// `keep` events, no `eof`, `complete:false`.
fn cut_short(archive: &Path, keep: usize) {
    let ev = archive.join("events.ndjson");
    let text = hrr_tests::events_text(archive);
    let kept: String = text.lines().take(keep).map(|l| format!("{l}\n")).collect();
    std::fs::write(&ev, kept).unwrap();
    // A killed capture never compressed its events.
    let _ = std::fs::remove_file(archive.join("events.ndjson.zst"));
    let mut m = read_manifest(archive);
    m["complete"] = false.into();
    m["events"] = 0.into();
    std::fs::write(
        archive.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_capture_cut_short_fails_unless_a_partial_replay_is_allowed() {
    let p = Pipeline::new("saxpy_module").capture();
    let events = p.events("cap.hrr");
    // Up to and including the first D2H: a prefix that replays and passes.
    let first_d2h = events
        .iter()
        .position(|e| e["op"] == "memcpy" && e["dir"] == "d2h")
        .expect("saxpy_module reads its result back");
    assert!(first_d2h + 2 < events.len(), "the cut loses events");
    cut_short(&p.cap(), first_d2h + 1);

    let a = p.play_cmd(&[]).assert().code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with(
            "capture : incomplete (no eof: the capture was killed or died before finishing)\n"
        ),
        "{out}"
    );
    assert!(
        last_line(&out).starts_with("FAIL (partial: ")
            && last_line(&out).ends_with(" events; capture incomplete)"),
        "{out}"
    );
    assert!(out.contains("d2h : 1 pass (1 exact, 0 within tolerance), 0 fail\n"));

    let a = p.play_cmd(&["--allow-partial"]).assert().success();
    let out = stdout(&a);
    assert!(out.starts_with("capture : incomplete ("), "{out}");
    assert!(
        last_line(&out).starts_with("PASS (partial: ")
            && last_line(&out).ends_with(" events; capture incomplete)"),
        "{out}"
    );

    let a = p.play_cmd(&["--json"]).assert().code(1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!(
        (&v["result"], &v["partial"], &v["exit_code"]),
        (&"FAIL".into(), &true.into(), &1.into()),
        "{v}"
    );
    // --strict still says why it is strict.
    let a = p
        .play_cmd(&["--strict", "--allow-partial"])
        .assert()
        .code(1);
    assert_eq!(
        last_line(&stdout(&a)),
        "FAIL (capture incomplete; --strict)"
    );

    // hrr-diff of the cut capture against a replay of it.
    p.play_cmd(&["--allow-partial", "-o", "replay.hrr"])
        .assert()
        .success();
    let a = p
        .tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1);
    let out = stdout(&a);
    assert!(out.starts_with("capture : incomplete (no eof"), "{out}");
    assert_eq!(last_line(&out), "FAIL (partial: capture incomplete)");
    let a = p
        .tool("hrr-diff")
        .args(["--allow-partial", "cap.hrr", "replay.hrr"])
        .assert()
        .success();
    assert_eq!(last_line(&stdout(&a)), "PASS (partial: capture incomplete)");
}

/// A replay that stops at a fatal event after its last D2H: the `-o`
/// archive holds both D2H, says where it stopped, and hrr-diff of the
/// complete capture against it fails (the pairs all match: only the
/// incompleteness says the replay did not get through).
#[test]
fn a_replay_that_dies_after_its_last_d2h_keeps_them_and_never_diffs_as_a_pass() {
    let p = Pipeline::empty("partial-fatal");
    // A memset through an address no allocation holds: fatal at event 6.
    two_d2h_then(|b, _| b.memset(DEV + (1 << 20), 0, 4))
        .write(p.path("cap.hrr"))
        .unwrap();
    let a = p
        .tool("hrr-play")
        .args(["cap.hrr", "-o", "replay.hrr"])
        .assert()
        .code(1);
    assert!(last_line(&stdout(&a)).starts_with("FAIL"), "{}", stdout(&a));
    let m = read_manifest(&p.replay());
    assert_eq!(m["complete"], false, "{m}");
    let why = m["incomplete"].as_str().unwrap_or_default().to_string();
    assert!(
        why.starts_with("the replay stopped: event 6 (hipMemset)"),
        "{m}"
    );
    assert_eq!(d2h_seqs(&p.replay()), [3, 5], "{m}");

    let a = p
        .tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1);
    let out = stdout(&a);
    assert!(
        out.starts_with(&format!("replay : incomplete ({why})\n")),
        "{out}"
    );
    assert!(
        out.contains("d2h : 2 pass (2 exact, 0 within tolerance), 0 fail\n"),
        "{out}"
    );
    assert_eq!(last_line(&out), "FAIL (partial: replay incomplete)");
    let a = p
        .tool("hrr-diff")
        .args(["--allow-partial", "cap.hrr", "replay.hrr"])
        .assert()
        .success();
    assert_eq!(last_line(&stdout(&a)), "PASS (partial: replay incomplete)");
    let a = p
        .tool("hrr-diff")
        .args(["--json", "cap.hrr", "replay.hrr"])
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).unwrap();
    assert_eq!((&v["passed"], &v["partial"]), (&false.into(), &true.into()));
}

/// The launch thread makes a faulting launch after the last D2H: the
/// error comes at the final synchronisation, and the D2H stay.
#[test]
fn a_replay_that_fails_at_its_final_sync_keeps_its_d2h() {
    let p = Pipeline::empty("partial-final");
    two_d2h_then(|b, so| {
        // Address 0x10: the kernel faults.
        b.launch(
            "fill",
            so,
            [1, 1, 1],
            [N as u32, 1, 1],
            fill_args(0x10, 1.0, false),
        )
    })
    .write(p.path("cap.hrr"))
    .unwrap();
    p.tool("hrr-play")
        .args(["cap.hrr", "-o", "replay.hrr"])
        .assert()
        .code(1);
    let m = read_manifest(&p.replay());
    assert_eq!(m["complete"], false, "{m}");
    assert!(
        m["incomplete"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the replay stopped: event 6 (hipModuleLaunchKernel)"),
        "{m}"
    );
    assert_eq!(d2h_seqs(&p.replay()), [3, 5], "{m}");
    p.tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1);
}

/// `cap.hrr`: two checked D2H, then a kernel that never finishes.
fn spinning_capture(name: &str) -> Pipeline {
    let p = Pipeline::empty(name);
    let spin = workloads().kernel("spin");
    two_d2h_then(|b, _| spin_forever(b, &spin))
        .write(p.path("cap.hrr"))
        .unwrap();
    p
}

/// A kernel that never finishes after the last D2H: the watchdog ends the
/// process, and the replay archive still holds the D2H and says why.
#[test]
fn a_replay_stopped_by_the_watchdog_keeps_its_d2h() {
    let p = spinning_capture("partial-watchdog");
    let a = p
        .tool("hrr-play")
        .args(["--watchdog", "1", "cap.hrr", "-o", "replay.hrr"])
        .assert()
        .code(1);
    assert_eq!(stdout(&a), "FAIL\n", "{}", stderr(&a));
    let m = read_manifest(&p.replay());
    assert_eq!(d2h_seqs(&p.replay()), [3, 5], "{m}");
    assert_eq!(m["complete"], false, "{m}");
    assert_eq!(
        m["incomplete"],
        "the replay stopped: event 8 (hipModuleLaunchKernel): no progress after 1 s (watchdog)",
        "{m}"
    );
    assert_eq!(m["events"], 2, "{m}");
    p.tool("hrr-diff")
        .args(["cap.hrr", "replay.hrr"])
        .assert()
        .code(1);
}

/// SIGINT while a kernel never finishes: the replay archive keeps the D2H
/// validated before, names the event, and hrr-play exits 130.
#[test]
fn an_interrupted_replay_keeps_its_d2h() {
    let p = spinning_capture("partial-sigint");
    let mut child = std::process::Command::new(hrr_tests::tools().bin("hrr-play"))
        .args(["cap.hrr", "-o", "replay.hrr"])
        .current_dir(p.dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once the replay is in the kernel: both D2H are behind it.
    let start = Instant::now();
    let on_disk =
        || std::fs::read_to_string(p.path("replay.hrr/events.ndjson")).unwrap_or_default();
    while on_disk().lines().count() < 2 && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill sends a signal to the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("hrr-play did not stop after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(130), "{status:?}: {err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(last_line(&stdout), "FAIL", "{err}");
    let m = read_manifest(&p.replay());
    assert_eq!(m["complete"], false, "{m}");
    // Stuck in the kernel, it stops around it; on a machine slow enough
    // that the signal comes before the launch, at the next event.
    let why = m["incomplete"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("the replay stopped: event ") && why.ends_with("): interrupted"),
        "{m}"
    );
    assert!(
        err.contains("hrr-play: fatal: event ") && err.contains("): interrupted"),
        "{err}"
    );
    assert_eq!(d2h_seqs(&p.replay()), [3, 5], "{m}");
}
