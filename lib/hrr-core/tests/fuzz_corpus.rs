//! The fuzzing smoke of hrr-core's targets (`hrr_core::fuzzing`) on stable
//! Rust: every seed of `fuzz/seeds/<target>/` (inputs taken from real
//! captures, see `scripts/fuzz-corpus.sh`), every past crash in
//! `fuzz/regressions/<target>/`, and a fixed number of seeded mutations of
//! the seeds (`HRR_FUZZ_ITERS` for more, `HRR_FUZZ_SEED` for others).
//! libFuzzer runs the same bodies for hours (`scripts/fuzz.sh`); this keeps
//! them exercised in CI. docs/FUZZING.md says which is which.

use std::path::Path;

use hrr_core::fuzzing::TARGETS;
use hrr_core::fuzzing::smoke::{BoundedAlloc, Smoke, assert_smoked_and_seeded, target};

// An input that makes a reader allocate without bound ends the run.
#[global_allocator]
static ALLOC: BoundedAlloc = BoundedAlloc;

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz"))
}

/// The smoke of target `name`, `iterations` new inputs by default.
fn smoke(name: &'static str, iterations: u64) {
    Smoke::new(name, target(TARGETS, name), fuzz_dir(), iterations)
        .save_to(Path::new(env!("CARGO_TARGET_TMPDIR")))
        .run();
}

#[test]
fn every_target_has_a_smoke_and_seeds() {
    let smoked = ["event_reader", "manifest", "sidecar", "hrrr", "archive_dir"];
    assert_smoked_and_seeded(TARGETS, &smoked, fuzz_dir());
}

#[test]
fn event_reader_smoke() {
    smoke("event_reader", 30_000);
}

#[test]
fn manifest_smoke() {
    smoke("manifest", 20_000);
}

#[test]
fn sidecar_smoke() {
    smoke("sidecar", 20_000);
}

#[test]
fn hrrr_smoke() {
    smoke("hrrr", 20_000);
}

#[test]
fn archive_dir_smoke() {
    smoke("archive_dir", 2000);
}
