//! The fuzz targets (`hrr_core::fuzzing`) on stable Rust: every seed of
//! `fuzz/seeds/<target>/` (inputs taken from real captures, see
//! `scripts/fuzz-corpus.sh`), every past crash in `fuzz/regressions/<target>/`,
//! and random mutations of the seeds. libFuzzer runs the same bodies for
//! hours (`scripts/fuzz.sh`); this keeps them exercised in CI.

use std::path::{Path, PathBuf};

use hrr_core::fuzzing::{Mutation, TARGETS};
use proptest::prelude::*;

fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
        .join(target);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_file()) {
            out.push((e.path(), std::fs::read(e.path()).unwrap()));
        }
    }
    out.sort();
    out
}

fn target(name: &str) -> fn(&[u8]) {
    TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("no fuzz target {name}"))
}

#[test]
fn every_target_has_seeds_and_runs_them_and_its_regressions() {
    for (name, f) in TARGETS {
        let seeds = inputs("seeds", name);
        assert!(!seeds.is_empty(), "fuzz/seeds/{name}/ is empty");
        for (path, data) in seeds.iter().chain(&inputs("regressions", name)) {
            eprintln!("{name}: {}", path.display());
            f(data);
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, x)| Mutation::Flip(i, x)),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, t)| Mutation::Token(i, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, n)| Mutation::Delete(i, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(a, b, c)| Mutation::Splice(a, b, c)),
    ]
}

fn mutated(name: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let seeds: Vec<Vec<u8>> = inputs("seeds", name).into_iter().map(|(_, d)| d).collect();
    let n = seeds.len().max(1);
    (0..n, proptest::collection::vec(mutation(), 1..8)).prop_map(move |(i, ms)| {
        let mut data = seeds.get(i).cloned().unwrap_or_default();
        for m in &ms {
            m.apply(&mut data);
        }
        data
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_event_files(data in mutated("event_reader")) {
        target("event_reader")(&data);
    }

    #[test]
    fn mutated_manifests(data in mutated("manifest")) {
        target("manifest")(&data);
    }

    #[test]
    fn mutated_sidecars(data in mutated("sidecar")) {
        target("sidecar")(&data);
    }

    #[test]
    fn mutated_hrrr_streams(data in mutated("hrrr")) {
        target("hrrr")(&data);
    }
}
