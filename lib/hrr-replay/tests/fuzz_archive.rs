//! The whole-archive fuzz target (`hrr_replay::fuzzing::archive`) on stable
//! Rust, its fuzzing smoke: every seed of `fuzz/seeds/archive/` (real
//! captures packed by `scripts/fuzz-corpus.sh --seeds`), every past crash in
//! `fuzz/regressions/archive/`, and a fixed number of seeded mutations of
//! the seeds (`HRR_FUZZ_ITERS`, `HRR_FUZZ_SEED`: docs/FUZZING.md); and the
//! same inputs in memory (how the target runs) and on disk give the same
//! results.

use std::path::Path;

use hrr_core::fuzzing::smoke::{BoundedAlloc, Rng, Smoke};
use hrr_replay::fuzzing::{archive, outcome};

// An input that makes the engine allocate without bound ends the run.
#[global_allocator]
static ALLOC: BoundedAlloc = BoundedAlloc;

fn inputs(kind: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
        .join("archive");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// One input in memory and on disk (a fresh scratch directory): the same
/// outcome, every field.
fn same_in_memory_and_on_disk(data: &[u8]) -> hrr_replay::fuzzing::Outcome {
    let t = tempfile::tempdir().unwrap();
    let mem = outcome(data, None);
    let disk = outcome(data, Some(t.path()));
    assert_eq!(mem, disk, "in memory vs on disk");
    mem
}

#[test]
fn archives_in_memory_replay_and_repair_as_on_disk() {
    let mut repaired = 0;
    for data in inputs("seeds").iter().chain(&inputs("regressions")) {
        let o = same_in_memory_and_on_disk(data);
        // The seeds are real captures: they open, replay and repair.
        assert_eq!(o.open_error, None);
        repaired += usize::from(o.repaired.is_some_and(|(events, _, _)| events > 0));
        // As a capture that died leaves them (what repair is for).
        let text =
            String::from_utf8_lossy(data).replace("\"complete\": true", "\"complete\": false");
        let o = same_in_memory_and_on_disk(text.as_bytes());
        assert!(o.incomplete.is_some(), "{o:?}");
    }
    assert!(repaired > 0, "no seed was repaired with events");
}

/// The options byte the target reads from an `@@options` section.
fn with_options(data: &mut Vec<u8>, rng: &mut Rng) {
    data.extend_from_slice(b"\n@@options\n");
    data.push(rng.next_u64() as u8);
}

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz"))
}

/// The fuzzing smoke (docs/FUZZING.md): the seeds, the regressions and a
/// fixed number of seeded mutations of the seeds, each with an options
/// byte.
#[test]
fn archive_smoke() {
    Smoke::new("archive", archive, fuzz_dir(), 5000)
        .finish_input(with_options)
        .save_to(Path::new(env!("CARGO_TARGET_TMPDIR")))
        .run();
}

/// Mutated inputs in memory and on disk give the same outcome.
#[test]
fn archive_smoke_in_memory_as_on_disk() {
    Smoke::new(
        "archive",
        |data| {
            same_in_memory_and_on_disk(data);
        },
        fuzz_dir(),
        300,
    )
    .finish_input(with_options)
    .save_to(Path::new(env!("CARGO_TARGET_TMPDIR")))
    .run();
}
