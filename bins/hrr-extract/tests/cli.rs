//! `hrr-extract`'s command line on archives written by hrr-core's testkit,
//! through the real binary on the CPU runtime: selections that find no
//! launch, and failures, are clear errors with the documented exit status.
//! (Extractions of real kernels: tests/e2e/extract.rs.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use assert_cmd::prelude::*;
use hrr_core::manifest::Platform;
use hrr_core::testkit::{ArchiveBuilder, ptr_arg};
use predicates::prelude::*;
use predicates::str::contains;
use tempfile::TempDir;

const BUF: u64 = 0x7f00_0000_1000;

/// `hrr-extract`, with `libhrr_hip_cpu.so` built next to it.
fn extract() -> Command {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-q", "-p", "hrr-runtime-cpu"])
            .status()
            .expect("running cargo build");
        assert!(status.success(), "building the CPU runtime failed");
    });
    let mut cmd = Command::cargo_bin("hrr-extract").unwrap();
    cmd.env_remove("HRR_HIP_RUNTIME");
    cmd
}

/// alloc, h2d, a launch that failed at capture, a launch of code that is
/// not a code object, d2h.
fn archive(dir: &Path) -> PathBuf {
    ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .h2d(BUF, &[7; 64])
        .launch("k", b"not an ELF", [1; 3], [1; 3], vec![ptr_arg(BUF)])
        .ret(1)
        .launch("k", b"not an ELF", [1; 3], [1; 3], vec![ptr_arg(BUF)])
        .d2h(BUF, &[7; 64])
        .write(dir.join("cap.hrr"))
        .unwrap()
}

fn fails(args: &[&str], code: i32, want: &str) {
    let t = TempDir::new().unwrap();
    let cap = archive(t.path());
    extract()
        .arg(&cap)
        .args(args)
        .arg("-o")
        .arg(t.path().join("x.hrr"))
        .assert()
        .code(code)
        .stderr(contains("hrr-extract: error: ").and(contains(want)))
        .stdout("");
    assert!(!t.path().join("x.hrr").exists());
    let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only cap.hrr remains: {left:?}");
}

#[test]
fn a_seq_past_the_end_is_named() {
    let t = TempDir::new().unwrap();
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .h2d(BUF, &[7; 64])
        .write(t.path().join("cap.hrr"))
        .unwrap();
    extract()
        .arg(&cap)
        .args(["--launch", "40", "-o"])
        .arg(t.path().join("x.hrr"))
        .assert()
        .code(2)
        .stderr(contains("cap.hrr: no event has seq 40 (its last is 2)"));
}

#[test]
fn a_seq_that_is_not_a_launch_is_named() {
    fails(
        &["--launch", "1"],
        2,
        "event 1 (hipMemcpy) is a `memcpy`, not a launch",
    );
}

#[test]
fn a_launch_that_failed_at_capture_is_refused() {
    fails(
        &["--launch", "2"],
        2,
        "launch 2 (k) failed at capture (ret 1)",
    );
}

#[test]
fn a_launch_that_cannot_run_is_a_replay_failure() {
    fails(
        &["--launch", "3"],
        1,
        "event 3 (hipModuleLaunchKernel): kernel k:",
    );
    // k#0 is seq 3: the launch that failed at capture is not counted.
    fails(
        &["--kernel", "k"],
        1,
        "event 3 (hipModuleLaunchKernel): kernel k:",
    );
}

#[test]
fn an_archive_without_launches_says_so() {
    let t = TempDir::new().unwrap();
    let cap = ArchiveBuilder::new(Platform::Cpu)
        .alloc(BUF, 64)
        .write(t.path().join("cap.hrr"))
        .unwrap();
    extract()
        .arg(&cap)
        .args(["--kernel", "k", "-o"])
        .arg(t.path().join("x.hrr"))
        .assert()
        .code(2)
        .stderr(contains(
            "no launch of kernel `k`: the archive launches no kernels",
        ));
}

#[test]
fn usage_errors_exit_2() {
    let t = TempDir::new().unwrap();
    let cap = archive(t.path());
    let out = t.path().join("x.hrr");
    // Neither selection, then both.
    extract().arg(&cap).arg("-o").arg(&out).assert().code(2);
    extract()
        .arg(&cap)
        .args(["--launch", "3", "--kernel", "k", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("cannot be used with"));
    extract()
        .arg(t.path().join("missing.hrr"))
        .args(["--launch", "3", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("missing.hrr: no such archive"));
    assert!(!out.exists());
}
