//! Runs `hsa_hidden` on hrr's CPU runtime (`libhrr_hip_cpu.so`, which exports
//! the HSA pool subset too) and checks what it prints.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `target/<profile>/` of this test binary (`target/<profile>/deps/…`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test binary directory");
    if deps.file_name().is_some_and(|n| n == "deps") {
        deps.parent().unwrap().to_path_buf()
    } else {
        deps.to_path_buf()
    }
}

/// `libhrr_hip_cpu.so`, built with `$CARGO build -p hrr-runtime-cpu` when missing.
fn cpu_runtime() -> PathBuf {
    let dir = profile_dir();
    let lib = dir.join("libhrr_hip_cpu.so");
    if !lib.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "hrr-runtime-cpu"]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("run cargo build -p hrr-runtime-cpu");
        assert!(st.success(), "cargo build -p hrr-runtime-cpu failed");
    }
    assert!(
        lib.exists(),
        "{} missing after building hrr-runtime-cpu",
        lib.display()
    );
    lib
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hsa_hidden"))
        .args(args)
        .env_remove("HRR_HIP_RUNTIME")
        .env_remove("HRR_HSA_RUNTIME")
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run hsa_hidden")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Parses `HRR_SEGMENT base=0x… size=N`.
fn segment_line(stdout: &str) -> Option<(u64, u64)> {
    let line = stdout.lines().find(|l| l.starts_with("HRR_SEGMENT "))?;
    let mut base = None;
    let mut size = None;
    for w in line.split_whitespace().skip(1) {
        if let Some(v) = w.strip_prefix("base=0x") {
            base = u64::from_str_radix(v, 16).ok();
        } else if let Some(v) = w.strip_prefix("size=") {
            size = v.parse().ok();
        }
    }
    Some((base?, size?))
}

#[test]
fn runs_on_the_cpu_runtime() {
    let lib = cpu_runtime();
    let o = run(&["--runtime".as_ref(), lib.as_os_str()]);
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "hsa_hidden failed ({}):\n--- stdout\n{out}\n--- stderr\n{err}",
        o.status
    );
    let (base, size) =
        segment_line(&out).unwrap_or_else(|| panic!("no HRR_SEGMENT line in:\n{out}"));
    assert_eq!(size, 262_144);
    assert!(
        base != 0 && base % 4096 == 0,
        "segment base {base:#x} is not a page-aligned device address"
    );
    // The line comes first (flushed before any HIP memory call), in DESIGN's format.
    assert!(
        out.starts_with(&format!("HRR_SEGMENT base={base:#x} size=262144\n")),
        "{out}"
    );
    assert!(
        out.contains("H2D -> segment -> D2D -> D2H ok (first 0xa5, last 0x5a)"),
        "{out}"
    );
    assert!(out.lines().last() == Some("hsa_hidden: OK"), "{out}");
}

#[test]
fn runtime_from_env_and_explicit_hsa() {
    let lib = cpu_runtime();
    let o = Command::new(env!("CARGO_BIN_EXE_hsa_hidden"))
        .env("HRR_HIP_RUNTIME", &lib)
        .env("HRR_HSA_RUNTIME", &lib)
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        segment_line(&out).is_some_and(|(_, s)| s == 262_144),
        "{out}"
    );
}

#[test]
fn missing_runtime_fails_cleanly() {
    let o = run(&[
        "--runtime".as_ref(),
        Path::new("/nonexistent/libamdhip64.so").as_os_str(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("cannot load HIP runtime"), "{err}");
    assert!(!out.contains("HRR_SEGMENT"), "{out}");
}

#[test]
fn hsa_library_without_hsa_fails_cleanly() {
    let lib = cpu_runtime();
    let o = run(&[
        "--runtime".as_ref(),
        lib.as_os_str(),
        "--hsa".as_ref(),
        "libc.so.6".as_ref(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("lacks hsa_init"), "{err}");
}

#[test]
fn usage_error_is_exit_2() {
    let o = run(&["--bogus".as_ref()]);
    assert_eq!(o.status.code(), Some(2));
}
