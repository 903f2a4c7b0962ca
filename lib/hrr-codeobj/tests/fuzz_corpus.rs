//! The fuzzing smoke of hrr-codeobj's targets (`hrr_codeobj::fuzzing`) on
//! stable Rust: every seed of `fuzz/seeds/<target>/` (real code objects,
//! see the `fuzz_seeds` example), every past crash in
//! `fuzz/regressions/<target>/`, and a fixed number of seeded mutations of
//! the seeds (`HRR_FUZZ_ITERS` for more, `HRR_FUZZ_SEED` for others; the
//! driver is hrr-core's). libFuzzer runs the same bodies for hours
//! (`scripts/fuzz.sh`); docs/FUZZING.md says which is which.

use std::path::Path;

use hrr_codeobj::fuzzing::{TARGETS, TOKENS};
use hrr_core::fuzzing::smoke::{BoundedAlloc, Smoke, assert_smoked_and_seeded, target};

// An input that makes a parser allocate without bound ends the run.
#[global_allocator]
static ALLOC: BoundedAlloc = BoundedAlloc;

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz"))
}

/// The smoke of target `name`, `iterations` new inputs by default.
fn smoke(name: &'static str, iterations: u64) {
    Smoke::new(name, target(TARGETS, name), fuzz_dir(), iterations)
        .tokens(TOKENS)
        .save_to(Path::new(env!("CARGO_TARGET_TMPDIR")))
        .run();
}

#[test]
fn every_target_has_a_smoke_and_seeds() {
    let smoked = ["bundle", "amdgpu_note", "cuda_fatbin", "any_image"];
    assert_smoked_and_seeded(TARGETS, &smoked, fuzz_dir());
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
