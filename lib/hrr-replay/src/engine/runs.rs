//! `merge`: one verdict per D2H over several replays of one archive
//! (`hrr-play --runs N`), telling a replay mismatch from nondeterminism.
//!
//! Each replay keeps a [`D2hRecord`] per checked D2H: its verdict against
//! the capture and a hash of its bytes. Per D2H (its `seq`, and node for a
//! graph's device-to-host node):
//!
//! - **pass** when every replay matched the capture (exact when every one
//!   was exact, else within tolerance);
//! - **nondeterministic** when the replays differ among themselves: their
//!   bytes differ, or, where the bytes of results that failed were kept
//!   ([`crate::engine::D2hRecords::FailedBytes`]: a tolerance was given),
//!   they differ beyond the tolerance or some replays matched the capture
//!   and others did not;
//! - **fail** when the replays agree with each other but not with the
//!   capture (the first replay's mismatch is reported).
//!
//! Agreeing replays prove nothing about determinism (a race may show once
//! in a thousand runs); DESIGN.md §5 says what `--runs` does and does not
//! tell.

use std::collections::BTreeMap;

use crate::compare::{Tolerance, Verdict, compare};
use crate::engine::summary::{D2hMismatch, D2hRecord, NondeterministicD2h};

/// The merged verdicts of several replays.
#[derive(Debug, Clone, Default)]
pub struct RunsVerdict {
    /// D2H that matched the capture byte for byte in every replay.
    pub exact: u64,
    /// D2H that matched within tolerance in every replay (and not exactly
    /// in at least one).
    pub within_tolerance: u64,
    /// D2H whose replays agree with each other but not with the capture.
    pub fail: u64,
    /// Their mismatches (the first replay's).
    pub mismatches: Vec<D2hMismatch>,
    /// D2H whose replays differ among themselves.
    pub nondeterministic: Vec<NondeterministicD2h>,
}

/// Merges the records of each replay (`runs[i]`: the i-th replay's, in
/// the order it checked them) into one verdict per D2H. A D2H that only
/// some replays reached (one stopped early) is judged over those.
pub fn merge(runs: &[Vec<D2hRecord>], tol: &Tolerance) -> RunsVerdict {
    // (seq, node, occurrence) → the records of every replay, in run order.
    let mut by_d2h: BTreeMap<(u64, Option<u32>, u32), Vec<&D2hRecord>> = BTreeMap::new();
    for run in runs {
        let mut seen: BTreeMap<(u64, Option<u32>), u32> = BTreeMap::new();
        for r in run {
            let k = seen.entry((r.seq, r.node)).or_default();
            by_d2h.entry((r.seq, r.node, *k)).or_default().push(r);
            *k += 1;
        }
    }
    let mut v = RunsVerdict::default();
    for recs in by_d2h.into_values() {
        let first = recs[0];
        if recs.iter().all(|r| r.verdict != Verdict::Mismatch) {
            if recs.iter().all(|r| r.verdict == Verdict::Exact) {
                v.exact += 1;
            } else {
                v.within_tolerance += 1;
            }
            continue;
        }
        let differing = recs[1..].iter().filter(|r| differs(first, r, tol)).count() as u32;
        if differing == 0 {
            v.fail += 1;
            v.mismatches
                .extend(recs.iter().find_map(|r| r.mismatch.clone()));
        } else {
            v.nondeterministic.push(NondeterministicD2h {
                seq: first.seq,
                node: first.node,
                api: first.api.clone(),
                size: first.size,
                runs: recs.len() as u32,
                differing,
            });
        }
    }
    v
}

/// Whether replay `b`'s bytes differ from replay `a`'s: by hash, or, when
/// both failed and their bytes were kept, beyond the tolerance. A replay
/// that matched the capture and one that did not differ.
fn differs(a: &D2hRecord, b: &D2hRecord, tol: &Tolerance) -> bool {
    if a.digest == b.digest {
        return false;
    }
    let failed = |r: &D2hRecord| r.verdict == Verdict::Mismatch;
    if failed(a) != failed(b) {
        return true;
    }
    match (&a.bytes, &b.bytes) {
        (Some(x), Some(y)) => compare(x, y, tol).verdict == Verdict::Mismatch,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::hex::BlobId;

    fn rec(seq: u64, bytes: &[u8], verdict: Verdict, keep: bool) -> D2hRecord {
        D2hRecord {
            seq,
            node: None,
            api: "hipMemcpy".into(),
            size: bytes.len() as u64,
            digest: BlobId::of(bytes),
            verdict,
            mismatch: (verdict == Verdict::Mismatch).then(|| D2hMismatch {
                seq,
                api: "hipMemcpy".into(),
                size: bytes.len() as u64,
                ..D2hMismatch::default()
            }),
            bytes: (keep && verdict == Verdict::Mismatch).then(|| bytes.to_vec()),
        }
    }

    use Verdict::{Exact, Mismatch, WithinTolerance};

    #[test]
    fn agreeing_runs_pass_or_fail_and_differing_runs_are_nondeterministic() {
        let runs = vec![
            vec![
                rec(1, b"same", Exact, false),
                rec(2, b"bad!", Mismatch, false),
                rec(3, b"tick-1", Mismatch, false),
                rec(4, b"near", WithinTolerance, false),
            ],
            vec![
                rec(1, b"same", Exact, false),
                rec(2, b"bad!", Mismatch, false),
                rec(3, b"tick-2", Mismatch, false),
                rec(4, b"near", Exact, false),
            ],
            vec![
                rec(1, b"same", Exact, false),
                rec(2, b"bad!", Mismatch, false),
                rec(3, b"tick-2", Mismatch, false),
                rec(4, b"near", Exact, false),
            ],
        ];
        let v = merge(&runs, &Tolerance::default());
        assert_eq!((v.exact, v.within_tolerance, v.fail), (1, 1, 1));
        assert_eq!(v.mismatches.len(), 1);
        assert_eq!(v.mismatches[0].seq, 2);
        assert_eq!(
            v.nondeterministic,
            [NondeterministicD2h {
                seq: 3,
                node: None,
                api: "hipMemcpy".into(),
                size: 6,
                runs: 3,
                differing: 2,
            }]
        );
        assert_eq!(
            v.nondeterministic[0].to_string(),
            "event 3 (hipMemcpy) size 6: 2 of 3 runs differ from the first"
        );
    }

    #[test]
    fn a_run_that_passed_and_one_that_failed_differ() {
        let runs = vec![
            vec![rec(1, b"ok", Exact, true)],
            vec![rec(1, b"no", Mismatch, true)],
        ];
        let v = merge(&runs, &Tolerance::allclose());
        assert_eq!((v.exact, v.fail, v.nondeterministic.len()), (0, 0, 1));
    }

    #[test]
    fn failed_runs_within_tolerance_of_each_other_agree() {
        let f = |x: f32| x.to_le_bytes().to_vec();
        let runs = vec![
            vec![rec(1, &f(2.0), Mismatch, true)],
            vec![rec(1, &f(2.000_001), Mismatch, true)],
        ];
        // Within the tolerance of each other: one wrong answer, a failure.
        let v = merge(&runs, &Tolerance::allclose());
        assert_eq!((v.fail, v.nondeterministic.len()), (1, 0));
        // Byte for byte, they differ.
        let v = merge(&runs, &Tolerance::default());
        assert_eq!((v.fail, v.nondeterministic.len()), (0, 1));
    }

    #[test]
    fn graph_nodes_and_runs_that_stopped_early_are_judged_apart() {
        let node = |n: u32, b: &[u8]| {
            let mut r = rec(7, b, Mismatch, false);
            r.node = Some(n);
            r
        };
        let runs = vec![
            vec![node(0, b"a"), node(1, b"x")],
            vec![node(0, b"a"), node(1, b"y")],
            vec![node(0, b"a")],
        ];
        let v = merge(&runs, &Tolerance::default());
        assert_eq!(v.fail, 1);
        assert_eq!(v.nondeterministic.len(), 1);
        assert_eq!(
            (v.nondeterministic[0].node, v.nondeterministic[0].runs),
            (Some(1), 2)
        );
    }
}
