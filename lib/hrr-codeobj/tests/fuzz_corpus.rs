//! The fuzzing smoke of hrr-codeobj's targets (`hrr_codeobj::fuzzing`) on
//! stable Rust: every seed of `fuzz/seeds/<target>/` (real code objects,
//! see the `fuzz_seeds` example), every past crash in
//! `fuzz/regressions/<target>/`, and a fixed number of seeded mutations of
//! the seeds (`HRR_FUZZ_ITERS` for more, `HRR_FUZZ_SEED` for others; the
//! driver is hrr-core's). libFuzzer runs the same bodies for hours
//! (`scripts/fuzz.sh`); docs/FUZZING.md says which is which.

use std::path::Path;

use hrr_codeobj::fuzzing::{TARGETS, TOKENS, Target};
use hrr_core::fuzzing::smoke::{BoundedAlloc, Smoke};

// An input that makes a parser allocate without bound ends the run.
#[global_allocator]
static ALLOC: BoundedAlloc = BoundedAlloc;

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz"))
}

fn target(name: &str) -> Target {
    TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no fuzz target {name}"))
}

/// The smoke of target `name`, `iterations` new inputs by default.
fn smoke(name: &'static str, iterations: u64) {
    Smoke::new(name, target(name), fuzz_dir(), iterations)
        .tokens(TOKENS)
        .save_to(Path::new(env!("CARGO_TARGET_TMPDIR")))
        .run();
}

#[test]
fn every_target_has_a_smoke_and_seeds() {
    let smoked = ["bundle", "amdgpu_note", "cuda_fatbin", "any_image"];
    for (name, _) in TARGETS {
        assert!(smoked.contains(name), "{name} has no smoke test here");
        let seeds = fuzz_dir().join("seeds").join(name);
        assert!(
            std::fs::read_dir(&seeds).is_ok_and(|mut d| d.next().is_some()),
            "{} is empty",
            seeds.display()
        );
    }
}

#[test]
fn bundle_smoke() {
    smoke("bundle", 30_000);
}

#[test]
fn amdgpu_note_smoke() {
    smoke("amdgpu_note", 30_000);
}

#[test]
fn cuda_fatbin_smoke() {
    smoke("cuda_fatbin", 30_000);
}

#[test]
fn any_image_smoke() {
    smoke("any_image", 30_000);
}
