//! Every C entry point the built cdylibs export has a compile-time ABI check
//! in abi/src/lib.rs, and every check names a real export. The export lists
//! come from the libraries themselves (`nm -D --defined-only`), so adding an
//! export without a check fails here.

#[cfg(all(feature = "cpu", feature = "intercept"))]
compile_error!(
    "the CPU runtime and the interposer define the same #[no_mangle] symbols: test them separately \
     (cargo test; cargo test --no-default-features --features intercept)"
);

mod common;

use common::*;
use hrr_abi_check::abi::{Check, same_sig};
use std::collections::BTreeSet;

fn names(lists: &[&[Check]]) -> BTreeSet<&'static str> {
    lists
        .iter()
        .flat_map(|l| l.iter().map(|c| c.name))
        .collect()
}

fn compare(lib: &str, lists: &[&[Check]]) {
    let path = artefact(lib);
    // The CUDA family (cuda*, __cuda*) follows CUDA's headers, not HIP's:
    // it is checked on the NVIDIA machine (scripts/gpu-pass.sh), not here.
    let exported: BTreeSet<String> = c_exports(&path)
        .into_iter()
        .filter(|n| !n.starts_with("cuda") && !n.starts_with("__cuda"))
        .collect();
    let checked = names(lists);
    let unchecked: Vec<&String> = exported
        .iter()
        .filter(|e| !checked.contains(e.as_str()))
        .collect();
    let stale: Vec<&&str> = checked.iter().filter(|c| !exported.contains(**c)).collect();
    assert!(
        unchecked.is_empty(),
        "{lib} exports {} function(s) without an ABI check: {unchecked:?}\n\
         add each to the lists in abi/src/lib.rs (against hip_runtime_sys / debian_hip / debian_hsa / reference)",
        unchecked.len()
    );
    assert!(
        stale.is_empty(),
        "abi/src/lib.rs checks {stale:?}, which {lib} does not export"
    );
    println!("{lib}: {} exports, all ABI-checked", exported.len());
}

#[test]
fn every_cpu_runtime_export_is_checked() {
    if hrr_abi_check::CPU_RUNTIME.is_empty() {
        eprintln!("SKIP: built without the cpu feature");
        return;
    }
    compare("libhrr_hip_cpu.so", hrr_abi_check::CPU_RUNTIME);
}

#[test]
fn every_interposer_export_is_checked() {
    if hrr_abi_check::INTERCEPT.is_empty() {
        assert!(
            std::env::var_os("HRR_ABI_REQUIRE_INTERCEPT").is_none(),
            "built without --features intercept, but HRR_ABI_REQUIRE_INTERCEPT is set"
        );
        eprintln!("SKIP: built without --features intercept (scripts/abi-check.sh turns it on)");
        return;
    }
    compare("libhrr_intercept.so", hrr_abi_check::INTERCEPT);
}

#[test]
fn hsa_sys_covers_its_symbol_table() {
    let checked = names(&[hrr_abi_check::HSA_SYS]);
    let table: BTreeSet<&str> = hsa_sys::raw::SYMBOLS.into_iter().collect();
    assert_eq!(
        checked, table,
        "every symbol hsa-sys resolves has a PFN type check"
    );
}

/// Every HIP entry point of the CPU runtime is checked against Debian's own
/// headers (or a transcribed reference), not only against hip-runtime-sys's
/// HIP 5.4 bindings.
#[cfg(feature = "cpu")]
#[test]
fn cpu_runtime_checked_against_debian_headers() {
    let debian = names(&[
        hrr_abi_check::cpu_runtime::VS_DEBIAN_HIP,
        hrr_abi_check::cpu_runtime::VS_DEBIAN_HSA,
        hrr_abi_check::cpu_runtime::VS_REFERENCE,
    ]);
    let all = names(hrr_abi_check::CPU_RUNTIME);
    assert_eq!(debian, all);
}

/// Every entry of the HIP signature table has a check against Debian's
/// header or the transcribed reference (the table's own consumers are
/// generated from it).
#[test]
fn every_table_entry_is_checked() {
    let checked = names(hrr_abi_check::TABLE);
    let table: BTreeSet<&str> = hip_api::HIP_FNS.iter().copied().collect();
    assert_eq!(checked, table);
    let vs_hrs = hrr_abi_check::TABLE_VS_HIP_RUNTIME_SYS
        .iter()
        .flatten()
        .count();
    println!(
        "HIP table: {} entries checked against Debian's headers / the reference, {vs_hrs} also against hip-runtime-sys",
        table.len()
    );
}

#[test]
fn report() {
    let mut n = 0;
    let hrs: Vec<Check> = hrr_abi_check::TABLE_VS_HIP_RUNTIME_SYS
        .iter()
        .flatten()
        .copied()
        .collect();
    for (what, lists) in [
        ("table", hrr_abi_check::TABLE),
        ("table", &[&hrs[..]][..]),
        ("cpu runtime", hrr_abi_check::CPU_RUNTIME),
        ("interposer", hrr_abi_check::INTERCEPT),
        ("hsa-sys", &[hrr_abi_check::HSA_SYS][..]),
    ] {
        for c in lists.iter().flat_map(|l| l.iter()) {
            // Already proven at compile time; re-checked so the report cannot lie.
            assert!(same_sig(&c.reference_sig, &c.ours_sig), "{}", c.name);
            let tidy = |s: &str| s.replace(" :: ", "::");
            println!(
                "{what:12} {:34} {} == {}  {}",
                c.name,
                tidy(c.ours),
                tidy(c.reference),
                c.ours_sig
            );
            n += 1;
        }
    }
    println!("{n} signature checks");
}
