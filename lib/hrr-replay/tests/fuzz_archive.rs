//! The whole-archive fuzz target (`hrr_replay::fuzzing::archive`) on stable
//! Rust: every seed of `fuzz/seeds/archive/` (real captures packed by
//! `scripts/fuzz-corpus.sh --seeds`), every past crash in
//! `fuzz/regressions/archive/`, and random mutations of the seeds; and
//! the same inputs in memory (how the target runs) and on disk give the
//! same results.

use std::path::Path;

use hrr_core::fuzzing::Mutation;
use hrr_replay::fuzzing::{archive, outcome};
use proptest::prelude::*;

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

#[test]
fn seeds_and_regressions_run() {
    let seeds = inputs("seeds");
    assert!(!seeds.is_empty(), "fuzz/seeds/archive/ is empty");
    for data in seeds.iter().chain(&inputs("regressions")) {
        archive(data);
    }
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

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, x)| Mutation::Flip(i, x)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, t)| Mutation::Token(i, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, n)| Mutation::Delete(i, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(a, b, c)| Mutation::Splice(a, b, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_archives(i in any::<usize>(), ms in proptest::collection::vec(mutation(), 1..6), opts in any::<u8>()) {
        let seeds = inputs("seeds");
        let mut data = seeds[i % seeds.len()].clone();
        for m in &ms {
            m.apply(&mut data);
        }
        data.extend_from_slice(b"\n@@options\n");
        data.push(opts);
        archive(&data);
    }

    #[test]
    fn mutated_archives_in_memory_as_on_disk(i in any::<usize>(), ms in proptest::collection::vec(mutation(), 1..6), opts in any::<u8>()) {
        let seeds = inputs("seeds");
        let mut data = seeds[i % seeds.len()].clone();
        for m in &ms {
            m.apply(&mut data);
        }
        data.extend_from_slice(b"\n@@options\n");
        data.push(opts);
        same_in_memory_and_on_disk(&data);
    }
}
