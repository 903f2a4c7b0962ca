//! Every C entry point the built cdylibs export has a compile-time ABI check
//! in abi/src/lib.rs, and every check names a real export. The export lists
//! come from the libraries themselves (`nm -D --defined-only`), so adding an
//! export without a check fails here.
//!
//! A HIP export is checked through the signature table: the libraries
//! generate their HIP exports from it (with the table's exact type, asserted
//! where they are generated), and abi/ checks every table entry against
//! Debian's header. So a HIP export must be a table entry *and* one the
//! library generated: its own list of generated exports (`EXPORTED`) must be
//! exactly its HIP symbols (a hand-written `#[no_mangle]` export would not
//! be on it). Other exports need a check of their own (HSA, `_exit`).

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

/// `lib`'s exports against the table (`generated`: the HIP exports the
/// library says it generated from it) and the other checks (`lists`).
fn compare(lib: &str, generated: &[&str], lists: &[&[Check]]) {
    let path = artefact(lib);
    // The CUDA family (runtime cuda*, __cuda*; driver cu*) follows CUDA's
    // headers, not HIP's: it is checked on the NVIDIA machine
    // (scripts/gpu-pass.sh), not here. The driver's signatures are declared
    // once, in lib/capture/intercept/src/cuda/driver/api.rs.
    // The NCCL family (nccl*) follows nccl.h, which no Debian package
    // here provides: its signatures are declared once, in nccl-api's table
    // (lib/api/nccl), from which the interposer's exports are generated.
    let exported: BTreeSet<String> = c_exports(&path)
        .into_iter()
        .filter(|n| !n.starts_with("cu") && !n.starts_with("__cuda") && !n.starts_with("nccl"))
        .collect();
    let table: BTreeSet<&str> = hip_api::HIP_FNS.iter().copied().collect();
    let generated: BTreeSet<&str> = generated.iter().copied().collect();
    let not_in_table: Vec<&&str> = generated.iter().filter(|g| !table.contains(**g)).collect();
    assert!(
        not_in_table.is_empty(),
        "{lib} generated exports that are not table entries: {not_in_table:?}"
    );
    let hip_exports: BTreeSet<&str> = exported
        .iter()
        .map(String::as_str)
        .filter(|e| table.contains(e))
        .collect();
    assert_eq!(
        hip_exports, generated,
        "{lib}: its table-entry exports and the exports it generated from the table differ"
    );
    let checked = names(lists);
    let unchecked: Vec<&String> = exported
        .iter()
        .filter(|e| !table.contains(e.as_str()) && !checked.contains(e.as_str()))
        .collect();
    let stale: Vec<&&str> = checked.iter().filter(|c| !exported.contains(**c)).collect();
    assert!(
        unchecked.is_empty(),
        "{lib} exports {} function(s) without an ABI check: {unchecked:?}\n\
         a HIP entry point must be generated from the table (lib/api/hip); any other \
         export needs a check in abi/src/lib.rs",
        unchecked.len()
    );
    assert!(
        stale.is_empty(),
        "abi/src/lib.rs checks {stale:?}, which {lib} does not export"
    );
    println!(
        "{lib}: {} exports, all ABI-checked ({} HIP table entries, {} others)",
        exported.len(),
        generated.len(),
        exported.len() - generated.len()
    );
}

#[cfg(feature = "cpu")]
#[test]
fn every_cpu_runtime_export_is_checked() {
    compare(
        "libhrr_hip_cpu.so",
        hrr_hip_cpu::hip_api::EXPORTED,
        hrr_abi_check::CPU_RUNTIME,
    );
}

#[test]
fn every_interposer_export_is_checked() {
    #[cfg(feature = "intercept")]
    {
        // The interposer exports the whole table.
        assert_eq!(hrr_intercept::hip::exports::EXPORTED, hip_api::HIP_FNS);
        compare(
            "libhrr_intercept.so",
            hrr_intercept::hip::exports::EXPORTED,
            hrr_abi_check::INTERCEPT,
        );
    }
    #[cfg(not(feature = "intercept"))]
    {
        assert!(
            std::env::var_os("HRR_ABI_REQUIRE_INTERCEPT").is_none(),
            "built without --features intercept, but HRR_ABI_REQUIRE_INTERCEPT is set"
        );
        eprintln!("SKIP: built without --features intercept (scripts/abi-check.sh turns it on)");
    }
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
