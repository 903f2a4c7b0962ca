//! `hrr-play` on the CPU runtime: DESIGN.md §5's rules and the command line,
//! through the real binary on archives written by hrr-core's testkit.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use assert_cmd::prelude::*;
use hrr_core::manifest::Platform;
use hrr_core::testkit::ArchiveBuilder;
use predicates::prelude::*;
use predicates::str::contains;
use tempfile::TempDir;

const SEG: u64 = 0x7fbe_0140_0000;
const BUF: u64 = 0x7f00_0000_1000;

/// `hrr-play`, with `libhrr_hip_cpu.so` built next to it.
fn play() -> Command {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-q", "-p", "hrr-runtime-cpu"])
            .status()
            .expect("running cargo build");
        assert!(status.success(), "building the CPU runtime failed");
    });
    let mut cmd = Command::cargo_bin("hrr-play").unwrap();
    cmd.env_remove("HRR_HIP_RUNTIME");
    cmd
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

/// The seed's archive: H2D into a hidden segment, D2D out, D2H back.
fn seed(dir: &Path, with_sidecar: bool) -> PathBuf {
    let data = pattern(4096);
    let mut b = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 4096)
        .h2d(SEG, &data)
        .d2d(BUF, SEG, 4096)
        .d2h(BUF, &data);
    if with_sidecar {
        b = b.segment(SEG, 262_144, 0);
    }
    b.write(dir.join("cap.hrr")).unwrap()
}

#[test]
fn memcpy_first_touch_materialises_the_segment() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    play()
        .arg(&cap)
        .assert()
        .success()
        .stdout(contains("regions : 1 records from 1 stream(s)"))
        .stdout(contains("region segs : 1 materialised"))
        .stdout(contains(
            "d2h : 1 pass (1 exact, 0 within tolerance), 0 fail",
        ))
        .stdout(contains("PASS"));
}

#[test]
fn unmapped_device_operand_is_fatal_without_sidecar() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), false);
    play()
        .arg(&cap)
        .assert()
        .code(1)
        .stderr(contains(format!(
            "hrr-play: fatal: event 1 (hipMemcpy): h2d dst {SEG:#x} not mapped"
        )))
        .stderr(contains("panicked").not())
        .stdout(contains("FAIL"));
}

#[test]
fn no_regions_ignores_the_sidecar() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    play()
        .arg(&cap)
        .arg("--no-regions")
        .assert()
        .code(1)
        .stderr(contains(format!("h2d dst {SEG:#x} not mapped")));
}

#[test]
fn host_destination_inside_a_segment_is_not_materialised() {
    let tmp = TempDir::new().unwrap();
    let data = pattern(256);
    // The D2H's host destination value lies inside the declared segment.
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 256)
        .h2d(BUF, &data)
        .d2h_to(SEG + 0x100, BUF, &data)
        .segment(SEG, 262_144, 0)
        .write(tmp.path().join("cap.hrr"))
        .unwrap();
    play()
        .arg(&cap)
        .assert()
        .success()
        .stdout(contains("region segs : 0 materialised"));
}

#[test]
fn d2h_mismatch_fails_with_details_and_json() {
    let tmp = TempDir::new().unwrap();
    let mut expected = pattern(64);
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .h2d(BUF, &expected.clone())
        .d2h(BUF, &{
            expected[10] ^= 0xff;
            expected
        })
        .write(tmp.path().join("cap.hrr"))
        .unwrap();
    play()
        .arg(&cap)
        .arg("--exact")
        .assert()
        .code(1)
        .stdout(contains(
            "mismatch : event 2 (hipMemcpy) size 64 first diff at 10",
        ))
        .stdout(contains(
            "d2h : 0 pass (0 exact, 0 within tolerance), 1 fail",
        ))
        .stdout(contains("FAIL"));
    let out = play().arg(&cap).arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["d2h_fail"], 1);
    assert_eq!(v["result"], "FAIL");
    assert_eq!(v["mismatches"][0]["first_diff"], 10);
}

#[test]
fn failed_calls_are_not_replayed() {
    let tmp = TempDir::new().unwrap();
    // A hipMalloc that failed at capture returned no usable pointer; turning it
    // into a success at replay would hide what the application saw.
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 1 << 20)
        .ret(2)
        .write(tmp.path().join("cap.hrr"))
        .unwrap();
    play()
        .arg(&cap)
        .assert()
        .success()
        .stdout(contains("skipped : 1 failed at capture"));
}

#[test]
fn info_and_events_need_no_runtime() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    for flag in ["--info", "--events"] {
        play()
            .arg(&cap)
            .arg(flag)
            .args(["--backend", "hip"])
            .env("HRR_HIP_RUNTIME", "/nonexistent/libamdhip64.so")
            .assert()
            .success()
            .stdout(contains("hipMemcpy").or(contains("memcpy")));
    }
    let out = play()
        .arg(&cap)
        .args(["--events", "--json"])
        .output()
        .unwrap();
    let lines: Vec<_> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 5, "4 events and the eof trailer");
    for l in lines {
        hrr_core::Event::parse(l).expect("each --events --json line is an event");
    }
}

#[test]
fn missing_runtime_is_a_clear_error() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    play()
        .arg(&cap)
        .args([
            "--backend",
            "hip",
            "--runtime",
            "/nonexistent/libamdhip64.so",
        ])
        .assert()
        .code(2)
        .stderr(contains(
            "cannot load HIP runtime /nonexistent/libamdhip64.so",
        ));
}

#[test]
fn newer_format_version_is_refused() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    let manifest = cap.join("manifest.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    v["version"] = 7.into();
    let text = v.to_string();
    std::fs::write(&manifest, text).unwrap();
    play()
        .arg(&cap)
        .assert()
        .code(2)
        .stderr(contains("version 7"));
}

#[test]
fn replay_archive_records_what_was_read_back() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    let out = tmp.path().join("replay.hrr");
    play().arg(&cap).arg("-o").arg(&out).assert().success();
    let replay = hrr_core::archive::Archive::open(&out).unwrap();
    assert_eq!(
        replay.manifest().kind,
        hrr_core::manifest::ArchiveKind::Replay
    );
    assert!(replay.manifest().complete);
    let d2h: Vec<_> = replay
        .events(Default::default())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| matches!(e.op, hrr_core::Op::Memcpy { .. }))
        .collect();
    assert_eq!(d2h.len(), 1);
    assert_eq!(d2h[0].seq, 3, "the replayed D2H keeps its capture seq");
    let hrr_core::Op::Memcpy { blob: Some(id), .. } = d2h[0].op else {
        panic!("no blob")
    };
    assert_eq!(&*replay.blobs().get(&id).unwrap(), &pattern(4096)[..]);
}

#[test]
fn loop_repeats_the_replay() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    play()
        .arg(&cap)
        .args(["--loop", "3"])
        .assert()
        .success()
        .stdout(contains("loop : 3 iterations"))
        .stdout(contains("region segs : 1 materialised"));
}

#[test]
fn repair_recovers_a_torn_archive() {
    let tmp = TempDir::new().unwrap();
    let data = pattern(64);
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .h2d(BUF, &data)
        .d2h(BUF, &data)
        .write_unfinished(tmp.path().join("cap.hrr"))
        .unwrap();
    // A crash mid-write leaves half a line.
    let events = cap.join("events.ndjson");
    let mut text = std::fs::read(&events).unwrap();
    text.extend_from_slice(br#"{"seq":3,"t":5,"tid":1,"api":"hipMem"#);
    std::fs::write(&events, text).unwrap();
    play()
        .arg(&cap)
        .arg("--repair")
        .assert()
        .success()
        .stderr(contains("3 events kept"));
    assert!(tmp.path().join("cap.torn").exists(), "the original is kept");
    let repaired = hrr_core::archive::Archive::open(&cap).unwrap();
    assert!(repaired.manifest().complete);
    play()
        .arg(&cap)
        .assert()
        .success()
        .stdout(contains("d2h : 1 pass"));
}

#[test]
fn kernel_filter_skips_other_launches() {
    let tmp = TempDir::new().unwrap();
    // The code object is not loadable: replaying the launch must fail, so a
    // pass shows the filter really left it out.
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .launch(
            "scale",
            b"not a code object",
            [1, 1, 1],
            [1, 1, 1],
            vec![hrr_core::testkit::ptr_arg(BUF)],
        )
        .write(tmp.path().join("cap.hrr"))
        .unwrap();
    play()
        .arg(&cap)
        .assert()
        .code(1)
        .stderr(contains("kernel scale"));
    play()
        .arg(&cap)
        .args(["--kernel-filter", "gemm"])
        .assert()
        .success()
        .stdout(contains("filtered : 1 launches"));
}

#[test]
fn continue_on_error_reports_every_failing_event() {
    let tmp = TempDir::new().unwrap();
    let data = pattern(64);
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .h2d(SEG, &data)
        .h2d(SEG + 0x1000, &data)
        .h2d(BUF, &data)
        .d2h(BUF, &data)
        .write(tmp.path().join("cap.hrr"))
        .unwrap();
    play()
        .arg(&cap)
        .arg("--continue-on-error")
        .assert()
        .code(1)
        .stderr(contains(format!(
            "event 1 (hipMemcpy): h2d dst {SEG:#x} not mapped"
        )))
        .stderr(contains(format!(
            "event 2 (hipMemcpy): h2d dst {:#x} not mapped",
            SEG + 0x1000
        )))
        .stdout(contains("errors : 2"))
        .stdout(contains("d2h : 1 pass"));
}

#[test]
fn broken_sidecar_is_a_warning_or_with_regions_strict_an_error() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    std::fs::write(
        cap.join("regions/bad.ndjson"),
        "{\"op\":\"add\",\"kind\":\"segment\"}\n{not json}\n",
    )
    .unwrap();
    play()
        .arg(&cap)
        .assert()
        .success()
        .stderr(contains("bad.ndjson"))
        .stdout(contains("region segs : 1 materialised"));
    play()
        .arg(&cap)
        .arg("--regions-strict")
        .assert()
        .code(2)
        .stderr(contains("bad.ndjson"));
}

#[test]
fn region_times_outside_the_capture_are_warned_about() {
    let tmp = TempDir::new().unwrap();
    let data = pattern(64);
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .h2d(BUF, &data)
        .d2h(BUF, &data)
        .segment(SEG, 4096, 1 << 50)
        .write(tmp.path().join("cap.hrr"))
        .unwrap();
    play()
        .arg(&cap)
        .assert()
        .success()
        .stderr(contains("outside the archive's event span"));
}

#[test]
fn timing_reports_copy_bandwidth() {
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    play()
        .arg(&cap)
        .arg("--timing")
        .assert()
        .success()
        .stdout(contains("copies : h2d 4096 bytes in "))
        .stdout(contains(", d2h 4096 bytes in "));
    let out = play().arg(&cap).arg("--json").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["copies"]["h2d_bytes"], 4096);
    assert_eq!(v["copies"]["d2h_bytes"], 4096);
}

#[test]
fn an_error_prints_its_cause_once() {
    // The replay archive cannot be created inside a file: the io error is
    // the cause of the writer's error, printed once after the context.
    let tmp = TempDir::new().unwrap();
    let cap = seed(tmp.path(), true);
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let a = play()
        .arg(&cap)
        .arg("-o")
        .arg(file.join("replay.hrr"))
        .assert()
        .code(2)
        .stderr(contains(format!(
            "hrr-play: error: creating the replay archive: {}: Not a directory",
            file.join("replay.hrr").display()
        )));
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert_eq!(err.matches("Not a directory").count(), 1, "{err}");
}

#[test]
fn a_malformed_event_stops_replay_after_the_events_before_it() {
    let tmp = TempDir::new().unwrap();
    let data = pattern(64);
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .h2d(BUF, &data)
        .d2h(BUF, &data)
        .write(tmp.path().join("cap.hrr"))
        .unwrap();
    let events = cap.join("events.ndjson");
    let text = std::fs::read_to_string(&events).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, r#"{"seq":9,"api":"hipFree","op":"free"}"#);
    std::fs::write(&events, lines.join("\n") + "\n").unwrap();
    play()
        .arg(&cap)
        .assert()
        .code(2)
        // The reader's error names the events file, inside the archive: the
        // archive is not named twice.
        .stderr(contains(format!(
            "hrr-play: error: {}:3: malformed event: op `free` lacks required field `ptr`",
            events.display()
        )))
        .stdout(contains("events : 2 read, 2 replayed"));
}

#[test]
fn unrecorded_calls_are_reported_and_strict_refuses_them() {
    let tmp = TempDir::new().unwrap();
    let data = pattern(64);
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .h2d(BUF, &data)
        .d2h(BUF, &data)
        .manifest_field(
            "unrecorded",
            serde_json::json!({"cuGraphLaunch": 3, "cuMemcpy2D_v2": 1}),
        )
        .write(tmp.path().join("cap.hrr"))
        .unwrap();
    play()
        .arg(&cap)
        .assert()
        .success()
        .stdout(contains(
            "unrecorded : 4 calls (cuGraphLaunch ×3, cuMemcpy2D_v2 ×1)\n",
        ))
        .stdout(contains("PASS"));
    play()
        .arg(&cap)
        .arg("--strict")
        .assert()
        .code(1)
        .stdout(contains("PASS").not())
        .stderr(contains(
            "(4 calls (cuGraphLaunch ×3, cuMemcpy2D_v2 ×1)); --strict refuses",
        ));
    // A complete capture says 0 and replays under --strict.
    let other = TempDir::new().unwrap();
    play()
        .arg(seed(other.path(), true))
        .arg("--strict")
        .assert()
        .success()
        .stdout(contains("unrecorded : 0 calls\n"));
}
