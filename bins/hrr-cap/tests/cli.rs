//! hrr-cap as a command: exit statuses, pass-through, environment, errors.
//! (Recording itself is tested with real HIP programs in hrr-intercept.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use assert_cmd::prelude::*;
use predicates::prelude::*;

/// hrr-cap with the capture library it preloads built next to it.
fn cap() -> Command {
    static BUILT: OnceLock<()> = OnceLock::new();
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_hrr-cap"));
    BUILT.get_or_init(|| {
        let profile = exe.parent().unwrap();
        let name = profile.file_name().unwrap().to_string_lossy().into_owned();
        let st = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "build",
                "-q",
                "-p",
                "hrr-intercept",
                "--profile",
                if name == "debug" { "dev" } else { &name },
            ])
            .arg("--target-dir")
            .arg(profile.parent().unwrap())
            .status()
            .unwrap();
        assert!(st.success());
    });
    let mut c = Command::new(exe);
    c.env_remove("LD_PRELOAD")
        .env_remove("HRR_OUT")
        .env_remove("HRR_INTERCEPT")
        .env_remove("HRR_PLATFORM");
    c
}

fn summary(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.starts_with("hrr-cap: "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn exit_status_and_stdout_pass_through() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("a.hrr");
    let out = cap()
        .arg("-o")
        .arg(&dir)
        .args(["--", "sh", "-c", r"printf 'x\000y\n'; exit 5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(out.stdout, b"x\0y\n", "stdout untouched");
    let s = summary(&out.stderr);
    assert_eq!(s.lines().count(), 1, "one summary line: {s}");
    assert!(
        s.contains("0 events, 0 blobs, 0 bytes ->") && s.contains("nothing recorded"),
        "{s}"
    );
    assert!(
        !dir.exists(),
        "an empty archive directory is not left behind"
    );
}

#[test]
fn death_by_signal_is_128_plus_signal() {
    let t = tempfile::tempdir().unwrap();
    let out = cap()
        .arg("-o")
        .arg(t.path().join("k.hrr"))
        .args(["--", "sh", "-c", "kill -TERM $$"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(128 + 15));
    assert!(
        summary(&out.stderr).ends_with("(incomplete: app died by signal 15)"),
        "{}",
        summary(&out.stderr)
    );
}

#[test]
fn environment_of_the_application() {
    let t = tempfile::tempdir().unwrap();
    let out = cap()
        .current_dir(t.path())
        .env("LD_PRELOAD", "/nonexistent/libother.so")
        .args(["-o", "rel.hrr", "--platform", "cuda", "--", "sh", "-c"])
        .arg(r#"printf '%s|%s|%s' "$LD_PRELOAD" "$HRR_OUT" "$HRR_PLATFORM""#)
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    let parts: Vec<&str> = s.split('|').collect();
    assert!(
        parts[0].ends_with("/libhrr_intercept.so:/nonexistent/libother.so"),
        "prepended: {s}"
    );
    assert!(Path::new(parts[0].split(':').next().unwrap()).is_absolute());
    assert_eq!(
        Path::new(parts[1]),
        t.path().canonicalize().unwrap().join("rel.hrr"),
        "absolute HRR_OUT"
    );
    assert_eq!(parts[2], "nvidia");
}

#[test]
fn hsa_regions_flag_is_the_only_way_to_turn_the_producer_on() {
    let t = tempfile::tempdir().unwrap();
    let seen = |flag: bool, inherited: Option<&str>| {
        let mut c = cap();
        c.current_dir(t.path()).env_remove("HRR_HSA_REGIONS");
        if let Some(v) = inherited {
            c.env("HRR_HSA_REGIONS", v);
        }
        let out_dir = format!("{flag}-{}.hrr", inherited.is_some());
        c.args(["-o", &out_dir]);
        if flag {
            c.arg("--hsa-regions");
        }
        let out = c
            .args([
                "--",
                "sh",
                "-c",
                r#"printf '%s' "${HRR_HSA_REGIONS-unset}""#,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(seen(true, None), "1");
    assert_eq!(seen(false, None), "unset");
    assert_eq!(
        seen(false, Some("1")),
        "unset",
        "an inherited value is dropped"
    );
    assert_eq!(seen(true, Some("0")), "1");
}

#[test]
fn default_archive_name_is_app_and_time() {
    let t = tempfile::tempdir().unwrap();
    let out = cap()
        .current_dir(t.path())
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = summary(&out.stderr);
    let re =
        predicate::str::is_match(r"-> /.*/hrr-true-\d{8}T\d{6}Z\.hrr \(nothing recorded").unwrap();
    assert!(re.eval(&s), "{s}");
}

#[test]
fn own_failures_exit_2_without_a_summary() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("m.hrr");
    cap()
        .arg("-o")
        .arg(&missing)
        .args(["--", "/nonexistent/app"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "hrr-cap: error: cannot run /nonexistent/app:",
        ));
    assert!(!missing.exists());
    cap()
        .args(["-o", "/proc/hrr-cap-test.hrr", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "hrr-cap: error: archive directory /proc/hrr-cap-test.hrr",
        ));
    let full = t.path().join("full.hrr");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("x"), b"").unwrap();
    cap()
        .arg("-o")
        .arg(&full)
        .args(["--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not empty"));
    cap()
        .env("HRR_INTERCEPT", "/nonexistent/lib.so")
        .args(["--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "HRR_INTERCEPT=/nonexistent/lib.so",
        ));
    cap()
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Usage"));
}

/// Compiles `src` with the system C compiler into `dir/name`.
fn cc(dir: &Path, name: &str, src: &str, extra: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    let st = Command::new("cc")
        .arg(&c)
        .arg("-o")
        .arg(&out)
        .args(extra)
        .status()
        .expect("a C compiler (cc)");
    assert!(st.success(), "cc {name}");
    out
}

#[test]
fn an_empty_capture_says_what_the_app_had_loaded() {
    let t = tempfile::tempdir().unwrap();
    let said = |exe: &Path, lib_dir: Option<&Path>| {
        let mut c = cap();
        let dir = t.path().join("cap.hrr");
        c.arg("-o").arg(&dir).arg("--").arg(exe);
        if let Some(d) = lib_dir {
            c.env("LD_LIBRARY_PATH", d);
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        assert!(
            !dir.exists(),
            "nothing recorded: no archive is left, notes included"
        );
        assert!(
            !err.contains("statically"),
            "no static-runtime guess: {err}"
        );
        summary(err.as_bytes())
    };
    // Device code (what nvcc embeds) and a static runtime that never gets
    // to load a driver (none here): nothing GPU was loaded.
    let fatbin = r#"__attribute__((section(".nv_fatbin"), used)) static const char fb[16] = {1};
int main(void) { return 0; }"#;
    let static_exe = cc(t.path(), "static_rt", fatbin, &[]);
    let s = said(&static_exe, None);
    assert!(
        s.contains("(nothing recorded: expected a HIP runtime")
            && s.contains("but the app loaded none"),
        "{s}"
    );
    // A stand-in driver, loaded as the CUDA runtime loads it, and only
    // initialised (no call the capture library records).
    let driver = "int cuInit(unsigned f) { (void)f; return 0; }";
    cc(
        t.path(),
        "libcuda.so.1",
        driver,
        &["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1"],
    );
    let loads = r#"#include <dlfcn.h>
int main(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : 0;
    return init ? init(0) : 3;
}"#;
    let loads_exe = cc(t.path(), "loads_driver", loads, &["-ldl"]);
    let s = said(&loads_exe, Some(t.path()));
    assert!(
        s.contains("(nothing recorded: the app loaded the CUDA driver ")
            && s.contains("libcuda.so.1 but made no CUDA call the capture library records"),
        "{s}"
    );
    // A shared CUDA runtime (a one-function stand-in), never called.
    let stand_in = "void **__cudaRegisterFatBinary(void *p) { (void)p; return 0; }\n\
                    int cudaMalloc(void **p, unsigned long n) { (void)p; (void)n; return 0; }";
    cc(t.path(), "libcudart.so", stand_in, &["-shared", "-fPIC"]);
    let shared = r#"extern void **__cudaRegisterFatBinary(void *);
int main(int argc, char **argv) { (void)argv; if (argc > 5) __cudaRegisterFatBinary(0); return 0; }"#;
    let dir = t.path().to_str().unwrap();
    let shared_exe = cc(t.path(), "shared_rt", shared, &["-L", dir, "-lcudart"]);
    let s = said(&shared_exe, Some(t.path()));
    assert!(
        s.contains("(nothing recorded: the app loaded the CUDA runtime ")
            && s.contains("libcudart.so but made no CUDA call"),
        "{s}"
    );
}
