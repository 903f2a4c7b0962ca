//! Shared by the integration tests: expected layouts and toolchain lookup.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use hrr_codeobj::{ArgKind, KernelMeta};

/// Host arguments of the kernels in fixtures/amd/kernels.hip and
/// fixtures/cuda/kernels.cu, as the source declares them:
/// (kernel name, [(offset, size, is_pointer)]).
/// Host arguments as (offset, size, is_pointer).
pub type Layout = &'static [(u32, u32, bool)];

pub const EXPECTED: &[(&str, Layout)] = &[
    // saxpy(float a, const float *x, float *y, int n)
    (
        "saxpy",
        &[(0, 4, false), (8, 8, true), (16, 8, true), (24, 4, false)],
    ),
    // with_struct(Pair{float*,int,double} s, char c, long long *out)
    (
        "with_struct",
        &[(0, 24, false), (24, 1, false), (32, 8, true)],
    ),
    // mangled(short s, double d, unsigned char *b)
    (
        "_Z7mangledsdPh",
        &[(0, 2, false), (8, 8, false), (16, 8, true)],
    ),
    // big(Big{char[100]} b, float4 v, int *out)
    ("big", &[(0, 100, false), (112, 16, false), (128, 8, true)]),
    // noargs()
    ("noargs", &[]),
    // uses_hidden(int *out, unsigned n) + hidden_* args
    ("uses_hidden", &[(0, 8, true), (8, 4, false)]),
];

/// Source-level argument names (AMD with -fhip-kernel-arg-name).
pub const ARG_NAMES: &[(&str, &[&str])] = &[
    ("saxpy", &["a", "x", "y", "n"]),
    ("with_struct", &["s", "c", "out"]),
    ("_Z7mangledsdPh", &["s", "d", "b"]),
    ("big", &["b", "v", "out"]),
];

/// Checks `kernels` against [`EXPECTED`]. `pointers_known`: the format says
/// which arguments are pointers (AMD, CPU); CUDA does not.
pub fn check_layouts(kernels: &[KernelMeta], pointers_known: bool, names: &[&str]) {
    for &(name, want) in EXPECTED.iter().filter(|(n, _)| names.contains(n)) {
        let k = kernels.iter().find(|k| k.name == name).unwrap_or_else(|| {
            panic!(
                "kernel {name} missing; have {:?}",
                kernels.iter().map(|k| &k.name).collect::<Vec<_>>()
            )
        });
        let host: Vec<_> = k.host_args().collect();
        assert_eq!(
            host.len(),
            want.len(),
            "{name}: host arg count; args {:?}",
            k.args
        );
        for (i, (a, &(off, size, ptr))) in host.iter().zip(want).enumerate() {
            assert_eq!((a.offset, a.size), (off, size), "{name} arg {i}");
            if pointers_known {
                assert_eq!(
                    a.kind == ArgKind::GlobalBuffer,
                    ptr,
                    "{name} arg {i} kind {:?}",
                    a.kind
                );
                if !ptr {
                    assert_eq!(a.kind, ArgKind::ByValue, "{name} arg {i}");
                }
            }
        }
        if pointers_known {
            let want_ptrs: Vec<u32> = want.iter().filter(|w| w.2).map(|w| w.0).collect();
            assert_eq!(k.pointer_offsets(), want_ptrs, "{name} pointer offsets");
        }
        // Hidden arguments come after every host argument and inside the segment.
        let host_end = k.host_args_size();
        for a in k.args.iter().filter(|a| a.is_hidden()) {
            assert!(
                a.offset >= host_end,
                "{name}: hidden {:?} before host args end {host_end}",
                a
            );
        }
        for a in &k.args {
            assert!(
                a.end() <= k.kernarg_segment_size,
                "{name}: {a:?} beyond {}",
                k.kernarg_segment_size
            );
        }
    }
}

/// A tool on PATH (or an absolute path), if it runs.
pub fn tool(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(name);
    if p.is_absolute() {
        return p.exists().then_some(p);
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|c| c.is_file())
}

/// Prints the SKIP line the CI log shows when a toolchain is missing.
pub fn skip(test: &str, why: &str) {
    eprintln!("SKIP {test}: {why} (install the packages in scripts/apt-packages.txt)");
}

/// Debian's clang-15 (override with HRR_CLANG).
pub fn clang() -> Option<PathBuf> {
    match std::env::var("HRR_CLANG") {
        Ok(p) => tool(&p),
        Err(_) => tool("clang++-15"),
    }
}

pub fn offload_bundler() -> Option<PathBuf> {
    match std::env::var("HRR_CLANG_OFFLOAD_BUNDLER") {
        Ok(p) => tool(&p),
        Err(_) => tool("clang-offload-bundler-15"),
    }
}

/// Runs a command, panicking with its stderr on failure.
pub fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}
