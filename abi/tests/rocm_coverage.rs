//! Every HIP entry point ROCm 5.2 exports is interposed: each symbol
//! `libamdhip64.so.5` defines with a `hip`/`__hip` prefix that a header
//! declares (Debian's `hip_runtime_api.h`, by bindgen, or — for what no C
//! header declares — `abi/src/reference.rs`) is exported by
//! `libhrr_intercept.so`. The declared set is read from those files here,
//! not from the signature table, so a table that lost an entry fails.
//!
//! The exports deliberately left out are listed below with the reason; the
//! list may only name symbols that no header we take signatures from
//! declares, so it cannot hide one.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::Path;

const ROCM_HIP: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
/// bindgen of Debian's hip_runtime_api.h (abi/build.rs).
const DEBIAN_HIP: &str = include_str!(concat!(env!("OUT_DIR"), "/debian_hip.rs"));
const REFERENCE: &str = include_str!("../src/reference.rs");

/// hip-prefixed exports of libamdhip64.so.5 the interposer does not define.
/// An entry ending in `*` is a prefix.
const LEFT_OUT: &[(&str, &str)] = &[
    (
        "hiprtc*",
        "hiprtc.h, the runtime compiler: it changes no device state; the code \
         it produces reaches the device through hipModuleLoadData, which is recorded",
    ),
    (
        "hipInitActivityCallback",
        "amd_detail/hip_runtime_prof.h: roctracer's profiling hook, not part of \
         the HIP API (hip_runtime_api.h does not declare it)",
    ),
    (
        "hipEnableActivityCallback",
        "amd_detail/hip_runtime_prof.h: roctracer's profiling hook",
    ),
    (
        "hipGetCmdName",
        "amd_detail/hip_runtime_prof.h: roctracer's profiling hook",
    ),
];

/// Function names of every `pub fn NAME(` in Rust source.
fn declared_in(src: &str) -> BTreeSet<String> {
    src.match_indices("pub fn ")
        .filter_map(|(i, _)| {
            let rest = &src[i + "pub fn ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest[name.len()..].starts_with('(').then_some(name)
        })
        .collect()
}

fn left_out_reason(name: &str) -> Option<&'static str> {
    LEFT_OUT.iter().find_map(|(pat, why)| {
        let hit = match pat.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *pat,
        };
        hit.then_some(*why)
    })
}

#[test]
fn every_declared_rocm_hip_export_is_interposed() {
    assert!(
        Path::new(ROCM_HIP).exists(),
        "needs Debian's libamdhip64-5 (apt-get install libamdhip64-5)"
    );
    let rocm: BTreeSet<String> = dyn_syms(Path::new(ROCM_HIP))
        .into_iter()
        .filter(|(_, defined)| *defined)
        .map(|(n, _)| n.split('@').next().unwrap_or("").to_string())
        .filter(|n| n.starts_with("hip") || n.starts_with("__hip"))
        .collect();
    let declared: BTreeSet<String> = declared_in(DEBIAN_HIP)
        .into_iter()
        .chain(declared_in(REFERENCE))
        .collect();
    let ours: BTreeSet<String> = c_exports(&artefact("libhrr_intercept.so"))
        .into_iter()
        .collect();

    let missing: Vec<&String> = rocm
        .iter()
        .filter(|n| declared.contains(*n) && !ours.contains(*n))
        .collect();
    assert!(
        missing.is_empty(),
        "libamdhip64.so.5 exports {} declared HIP entry point(s) libhrr_intercept.so does not: {missing:?}\n\
         regenerate the table (scripts/gen-hip-signatures.sh) and classify them",
        missing.len()
    );

    let mut left_out = Vec::new();
    let mut unexplained = Vec::new();
    for n in rocm.iter().filter(|n| !ours.contains(*n)) {
        match left_out_reason(n) {
            Some(why) => {
                assert!(
                    !declared.contains(n),
                    "{n} is declared by a header we read, so it may not be left out ({why})"
                );
                left_out.push(n.as_str());
            }
            None => unexplained.push(n.as_str()),
        }
    }
    assert!(
        unexplained.is_empty(),
        "libamdhip64.so.5 exports {unexplained:?}, which no header we read declares and \
         the list of deliberately left-out symbols does not explain"
    );
    let interposed = rocm.iter().filter(|n| ours.contains(*n)).count();
    println!(
        "libamdhip64.so.5: {} hip*/__hip* exports; {interposed} interposed, {} left out: {}",
        rocm.len(),
        left_out.len(),
        left_out.join(", ")
    );
    for (pat, why) in LEFT_OUT {
        println!("  left out {pat}: {why}");
    }
}

/// The C++-mangled HIP symbols ROCm 5.2 exports are interposed as well
/// (`hip_ext.h` and the C++ part of `hip_runtime_api.h` declare them without
/// `extern "C"`), except the runtime's internal `hip_impl` one.
#[test]
fn mangled_hip_exports_are_interposed() {
    let mangled: BTreeSet<String> = dyn_syms(Path::new(ROCM_HIP))
        .into_iter()
        .filter(|(n, defined)| *defined && n.starts_with("_Z") && n.contains("hip"))
        .map(|(n, _)| n.split('@').next().unwrap_or("").to_string())
        .filter(|n| !n.starts_with("_ZN8hip_impl"))
        .collect();
    let ours: BTreeSet<String> = c_exports(&artefact("libhrr_intercept.so"))
        .into_iter()
        .collect();
    let missing: Vec<&String> = mangled.iter().filter(|n| !ours.contains(*n)).collect();
    assert!(missing.is_empty(), "not interposed: {missing:?}");
    assert!(
        mangled
            .iter()
            .any(|n| n.starts_with("_Z24hipExtModuleLaunchKernel")),
        "{mangled:?}"
    );
}
