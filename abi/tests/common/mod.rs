//! Shared helpers of abi/'s integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Where the main workspace's artefacts are: `$HRR_ABI_LIBDIR`, else
/// `<repo>/target/debug` (scripts/abi-check.sh builds them there first).
pub fn lib_dir() -> PathBuf {
    std::env::var_os("HRR_ABI_LIBDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug"))
}

pub fn artefact(name: &str) -> PathBuf {
    let p = lib_dir().join(name);
    assert!(
        p.exists(),
        "{} missing: build the main workspace first (cargo build -p hrr-runtime-cpu -p hrr-intercept -p hrr-cap -p hrr-play), or run scripts/abi-check.sh",
        p.display()
    );
    p
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `readelf --dyn-syms -W` FUNC rows as (name with version suffix, defined?).
pub fn dyn_syms(lib: &Path) -> Vec<(String, bool)> {
    let o = run(Command::new("readelf").args(["--dyn-syms", "-W"]).arg(lib));
    stdout(&o)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // Num: Value Size Type Bind Vis Ndx Name [(version index)]
            if f.len() >= 8
                && f[0].ends_with(':')
                && f[0] != "Num:"
                && matches!(f[3], "FUNC" | "IFUNC")
            {
                Some((f[7].to_string(), f[6] != "UND"))
            } else {
                None
            }
        })
        .collect()
}

/// Exported function names of a cdylib that are C entry points (not Rust's own).
pub fn c_exports(lib: &Path) -> Vec<String> {
    let o = run(Command::new("nm").args(["-D", "--defined-only"]).arg(lib));
    stdout(&o)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (kind, name) = (*f.get(1)?, *f.get(2)?);
            let internal = name.starts_with("_ZN")
                || name.starts_with("_R")
                || name.starts_with("rust_")
                || name.starts_with("__rust");
            (matches!(kind, "T" | "W" | "i") && !internal).then(|| name.to_string())
        })
        .collect()
}
