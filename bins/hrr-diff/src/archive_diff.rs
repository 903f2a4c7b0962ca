//! `diff`: compares the D2H outputs of two archives, paired by `seq`.
//!
//! Both event streams are read once and only the D2H `memcpy` events are kept,
//! as small `(seq, api, size, blob)` tuples, so memory is bounded by the number
//! of D2H events, not the archive size. Blob bytes are fetched one pair at a
//! time (large blobs are memory-mapped).
//!
//! Two D2H events naming the same blob id are identical by content
//! addressing, so they count as exact without reading either blob. Otherwise
//! both blobs are read (hash-checked) and compared by [`compare`].
//!
//! Pairing: events are ordered by `seq`; when one side holds several D2H events
//! with the same `seq` (a replay looped N times), the k-th of A pairs with the
//! k-th of B. Whatever is left is reported as present on one side only, and
//! counts as a failure: a replay that stopped early must not pass.
//!
//! Nondeterminism ([`diff_against`]): given C, a second capture of the same
//! program, a D2H of A whose bytes C does not reproduce (beyond the
//! tolerance) differs from run to run of the program itself. It is counted
//! as nondeterministic and listed, and not compared with B; every other D2H
//! is compared A against B as without C.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use hrr_core::archive::{Archive, ArchiveError};
use hrr_core::blob_store::{Blob, BlobError};
use hrr_core::event::{Dir, Op};
use hrr_core::event_reader::{ReadError, ReadOptions};
use hrr_core::hex::BlobId;
use hrr_replay::compare::{Comparison, DType, Tolerance, Verdict, compare};

/// One D2H event as the diff keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct D2hEntry {
    /// The event's `seq`.
    pub seq: u64,
    /// Its entry point.
    pub api: String,
    /// Bytes copied.
    pub size: u64,
    /// The bytes' blob, when recorded.
    pub blob: Option<BlobId>,
    /// For a graph launch's device-to-host node: the node's index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
}

/// A pair of D2H events whose bytes differ beyond the tolerance.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    /// The events' `seq`.
    pub seq: u64,
    /// A's entry point.
    pub api: String,
    /// For a graph launch's device-to-host node: the node's index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Bytes of A's blob.
    pub size: u64,
    /// Bytes of B's blob, when it differs from `size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_b: Option<u64>,
    /// Offset of the first differing byte.
    pub first_diff: Option<u64>,
    /// Bytes that differ.
    pub bytes_differing: u64,
    /// Largest absolute error (0 without an element type).
    pub max_abs: f64,
    /// Largest relative error.
    pub max_rel: f64,
    /// The element type compared in.
    pub dtype: Option<DType>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seq {} {}", self.seq, self.api)?;
        if let Some(n) = self.node {
            write!(f, " node {n}")?;
        }
        write!(f, ": size {}", self.size)?;
        if let Some(b) = self.size_b {
            write!(f, " vs {b}")?;
        }
        if let Some(off) = self.first_diff {
            write!(f, ", first diff at byte {off}")?;
        }
        write!(f, ", {} bytes differ", self.bytes_differing)?;
        if let Some(dt) = self.dtype {
            write!(
                f,
                ", max abs {:.6e}, max rel {:.6e} (as {dt})",
                self.max_abs, self.max_rel
            )?;
        }
        Ok(())
    }
}

/// A D2H whose bytes differ between A and the second capture C
/// ([`diff_against`]): nondeterministic.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Nondeterministic {
    /// The event's `seq`.
    pub seq: u64,
    /// A's entry point.
    pub api: String,
    /// For a graph launch's device-to-host node: the node's index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Bytes of A's blob.
    pub size: u64,
    /// Offset of the first byte that differs between A and C.
    pub first_diff: Option<u64>,
    /// Bytes that differ between A and C.
    pub bytes_differing: u64,
}

impl fmt::Display for Nondeterministic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seq {} {}", self.seq, self.api)?;
        if let Some(n) = self.node {
            write!(f, " node {n}")?;
        }
        write!(f, ": size {}", self.size)?;
        if let Some(off) = self.first_diff {
            write!(f, ", first diff at byte {off}")?;
        }
        write!(f, ", {} bytes differ between A and C", self.bytes_differing)
    }
}

/// Everything `hrr-diff` prints, in one serialisable document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffReport {
    /// The expected archive.
    pub a: PathBuf,
    /// The actual archive.
    pub b: PathBuf,
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// Pairs found on both sides.
    pub paired: u64,
    /// Pairs byte-identical.
    pub exact: u64,
    /// Pairs within tolerance.
    pub within_tolerance: u64,
    /// Mismatched pairs plus events present on one side only.
    pub failed: u64,
    /// Pairs where a side recorded no blob (nothing to compare).
    pub unchecked: u64,
    /// The second capture D2H were checked against for nondeterminism
    /// (`--against`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<PathBuf>,
    /// Pairs whose A differs from C: nondeterministic, not compared.
    pub nondeterministic: u64,
    /// Each of them.
    pub nondeterministic_d2h: Vec<Nondeterministic>,
    /// Pairs whose A has no partner in C (compared as without C).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_in_against: Option<u64>,
    /// Bytes actually compared (pairs with identical blob ids need no reading).
    pub bytes_compared: u64,
    /// Each failing pair.
    pub mismatches: Vec<Mismatch>,
    /// D2H events of A without a partner in B.
    pub only_in_a: Vec<D2hEntry>,
    /// D2H events of B without a partner in A.
    pub only_in_b: Vec<D2hEntry>,
    /// What was recovered from while reading.
    pub warnings: Vec<String>,
}

impl DiffReport {
    /// Whether nothing failed.
    pub fn passed(&self) -> bool {
        self.failed == 0
    }

    /// `d2h : P pass (E exact, T within tolerance), F fail` — the same
    /// greppable line `hrr-play` prints (DESIGN.md §5), with
    /// `, K nondeterministic` when [`diff_against`] found any.
    pub fn summary_line(&self) -> String {
        let mut line = format!(
            "d2h : {} pass ({} exact, {} within tolerance), {} fail",
            self.exact + self.within_tolerance,
            self.exact,
            self.within_tolerance,
            self.failed
        );
        if self.nondeterministic > 0 {
            line += &format!(", {} nondeterministic", self.nondeterministic);
        }
        line
    }
}

/// The diff could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error(transparent)]
    /// An archive could not be opened.
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    /// An archive's events could not be read.
    Read(#[from] ReadError),
    #[error("{}: event {seq}", archive.display())]
    /// A blob of a D2H event could not be read.
    Blob {
        /// The archive.
        archive: PathBuf,
        /// The event's `seq`.
        seq: u64,
        /// Why.
        source: BlobError,
    },
}

/// Where a diff is, for a progress bar: `done` of `total` in this step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Reading A's events (bytes of its `events.ndjson`).
    ReadA,
    /// Reading B's events (bytes).
    ReadB,
    /// Reading C's events (bytes; [`diff_against`]).
    ReadC,
    /// Comparing paired D2H outputs (pairs).
    Compare,
}

/// Compares the D2H outputs of `a` (expected) and `b` (actual).
pub fn diff(a: &Archive, b: &Archive, tol: &Tolerance) -> Result<DiffReport, DiffError> {
    diff_with_progress(a, b, tol, |_, _, _| {})
}

/// [`diff`], calling `progress(step, done, total)` as it goes.
pub fn diff_with_progress(
    a: &Archive,
    b: &Archive,
    tol: &Tolerance,
    progress: impl FnMut(Step, u64, u64),
) -> Result<DiffReport, DiffError> {
    diff_against(a, b, None, tol, progress)
}

/// [`diff_with_progress`], with `c` (a second capture of the program A
/// captured) telling nondeterministic D2H apart: a pair whose A differs
/// from C's D2H of the same `seq` (and node, and occurrence) beyond `tol`
/// is counted in [`DiffReport::nondeterministic`] instead of compared.
pub fn diff_against(
    a: &Archive,
    b: &Archive,
    c: Option<&Archive>,
    tol: &Tolerance,
    mut progress: impl FnMut(Step, u64, u64),
) -> Result<DiffReport, DiffError> {
    let mut warnings = Vec::new();
    let da = d2h_entries(a, &mut warnings, |d, t| progress(Step::ReadA, d, t))?;
    let db = d2h_entries(b, &mut warnings, |d, t| progress(Step::ReadB, d, t))?;
    let mut dc = match c {
        Some(c) => Some(Against::new(
            c,
            d2h_entries(c, &mut warnings, |d, t| progress(Step::ReadC, d, t))?,
        )),
        None => None,
    };
    // Every pair or one-sided entry is one step of the comparison.
    let total = da.len().max(db.len()) as u64;
    let mut done = 0u64;
    let mut report = DiffReport {
        a: a.path().to_path_buf(),
        b: b.path().to_path_buf(),
        tolerance: *tol,
        paired: 0,
        exact: 0,
        within_tolerance: 0,
        failed: 0,
        unchecked: 0,
        against: c.map(|c| c.path().to_path_buf()),
        nondeterministic: 0,
        nondeterministic_d2h: Vec::new(),
        not_in_against: c.map(|_| 0),
        bytes_compared: 0,
        mismatches: Vec::new(),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        warnings,
    };
    let (mut ia, mut ib) = (da.into_iter().peekable(), db.into_iter().peekable());
    loop {
        if done.is_multiple_of(64) {
            progress(Step::Compare, done.min(total), total);
        }
        done += 1;
        match (ia.peek(), ib.peek()) {
            (None, None) => break,
            (Some(_), None) => report.only_in_a.push(ia.next().expect("peeked")),
            (None, Some(_)) => report.only_in_b.push(ib.next().expect("peeked")),
            (Some(x), Some(y)) if (x.seq, x.node) < (y.seq, y.node) => {
                report.only_in_a.push(ia.next().expect("peeked"))
            }
            (Some(x), Some(y)) if (x.seq, x.node) > (y.seq, y.node) => {
                report.only_in_b.push(ib.next().expect("peeked"))
            }
            (Some(_), Some(_)) => {
                let (x, y) = (ia.next().expect("peeked"), ib.next().expect("peeked"));
                if let Some(against) = &mut dc
                    && against.nondeterministic(a, &x, tol, &mut report)?
                {
                    report.paired += 1;
                    continue;
                }
                compare_pair(a, b, x, y, tol, &mut report)?;
            }
        }
    }
    if let Some(n) = report.not_in_against.filter(|&n| n > 0) {
        report.warnings.push(format!(
            "{n} D2H of A have no partner in C ({}): compared with B without it",
            report.against.as_deref().unwrap_or(Path::new("")).display()
        ));
    }
    progress(Step::Compare, total, total);
    report.failed += (report.only_in_a.len() + report.only_in_b.len()) as u64;
    Ok(report)
}

/// The D2H of C (`--against`), by `(seq, node, occurrence)`.
struct Against<'c> {
    archive: &'c Archive,
    entries: HashMap<(u64, Option<u32>, u32), D2hEntry>,
    /// Occurrences of each `(seq, node)` of A seen so far.
    seen: HashMap<(u64, Option<u32>), u32>,
}

impl<'c> Against<'c> {
    fn new(archive: &'c Archive, entries: Vec<D2hEntry>) -> Against<'c> {
        let mut seen: HashMap<(u64, Option<u32>), u32> = HashMap::new();
        let entries = entries
            .into_iter()
            .map(|e| {
                let k = seen.entry((e.seq, e.node)).or_default();
                let key = (e.seq, e.node, *k);
                *k += 1;
                (key, e)
            })
            .collect();
        Against {
            archive,
            entries,
            seen: HashMap::new(),
        }
    }

    /// Whether A's D2H `x` differs from C's (then recorded in `report`); a
    /// D2H C lacks, or holds no blob for, is counted as not in C.
    fn nondeterministic(
        &mut self,
        a: &Archive,
        x: &D2hEntry,
        tol: &Tolerance,
        report: &mut DiffReport,
    ) -> Result<bool, DiffError> {
        let seen = self.seen.entry((x.seq, x.node)).or_default();
        let k = *seen;
        *seen += 1;
        let z = self.entries.get(&(x.seq, x.node, k));
        let (Some(ba), Some(bc)) = (x.blob, z.and_then(|z| z.blob)) else {
            *report.not_in_against.get_or_insert(0) += 1;
            return Ok(false);
        };
        if ba == bc {
            return Ok(false);
        }
        let ea = read_blob(a, &ba, x.seq)?;
        let ec = read_blob(self.archive, &bc, x.seq)?;
        let c = compare(&ea, &ec, tol);
        report.bytes_compared += ea.len().min(ec.len()) as u64;
        if c.verdict != Verdict::Mismatch {
            return Ok(false);
        }
        report.nondeterministic += 1;
        report.nondeterministic_d2h.push(Nondeterministic {
            seq: x.seq,
            api: x.api.clone(),
            node: x.node,
            size: c.expected_size,
            first_diff: c.first_diff,
            bytes_differing: c.bytes_differing,
        });
        Ok(true)
    }
}

/// The bytes of blob `id` of `archive`, for the D2H event `seq`.
fn read_blob(archive: &Archive, id: &BlobId, seq: u64) -> Result<Blob, DiffError> {
    archive.blobs().get(id).map_err(|source| DiffError::Blob {
        archive: archive.path().to_path_buf(),
        seq,
        source,
    })
}

fn compare_pair(
    a: &Archive,
    b: &Archive,
    x: D2hEntry,
    y: D2hEntry,
    tol: &Tolerance,
    report: &mut DiffReport,
) -> Result<(), DiffError> {
    report.paired += 1;
    if x.api != y.api {
        report.warnings.push(format!(
            "seq {}: api differs ({} in A, {} in B)",
            x.seq, x.api, y.api
        ));
    }
    let (Some(ba), Some(bb)) = (x.blob, y.blob) else {
        report.unchecked += 1;
        let side = if x.blob.is_none() { "A" } else { "B" };
        report.warnings.push(format!(
            "seq {} {}: no blob recorded in {side}; not compared",
            x.seq, x.api
        ));
        return Ok(());
    };
    if ba == bb {
        report.exact += 1;
        return Ok(());
    }
    let (ea, eb) = (read_blob(a, &ba, x.seq)?, read_blob(b, &bb, x.seq)?);
    let c: Comparison = compare(&ea, &eb, tol);
    report.bytes_compared += ea.len().min(eb.len()) as u64;
    match c.verdict {
        Verdict::Exact => report.exact += 1,
        Verdict::WithinTolerance => report.within_tolerance += 1,
        Verdict::Mismatch => {
            report.failed += 1;
            report.mismatches.push(Mismatch {
                seq: x.seq,
                api: x.api,
                node: x.node,
                size: c.expected_size,
                size_b: (c.actual_size != c.expected_size).then_some(c.actual_size),
                first_diff: c.first_diff,
                bytes_differing: c.bytes_differing,
                max_abs: c.max_abs,
                max_rel: c.max_rel,
                dtype: c.dtype_used,
            });
        }
    }
    Ok(())
}

/// The D2H copies (and `host_read` results) of one archive, ordered by seq
/// (stable for equal seqs).
fn d2h_entries(
    archive: &Archive,
    warnings: &mut Vec<String>,
    mut progress: impl FnMut(u64, u64),
) -> Result<Vec<D2hEntry>, DiffError> {
    if let Some(why) = archive.incomplete_reason() {
        warnings.push(format!(
            "{}: archive is incomplete ({why})",
            archive.path().display()
        ));
    }
    let total = archive.events_len();
    let mut reader = archive.events(ReadOptions::default())?;
    let mut out = Vec::new();
    let mut n = 0u64;
    // Device-to-host nodes of each executable graph (capture archives hold
    // the topologies; a replay archive's graph launches hold only those).
    let mut graph_d2h: std::collections::HashMap<u64, std::collections::HashMap<u32, u64>> =
        Default::default();
    while let Some(event) = reader.next() {
        n += 1;
        if n.is_multiple_of(1024) {
            progress(reader.bytes_read(), total);
        }
        let event = event?;
        match &event.op {
            Op::GraphExec { exec, nodes, .. } => {
                let d2h = nodes
                    .iter()
                    .enumerate()
                    .filter_map(|(i, n)| match n.op.host_copy() {
                        Some((Dir::D2h, size)) => Some((i as u32, size)),
                        _ => None,
                    })
                    .collect();
                graph_d2h.insert(exec.0, d2h);
                continue;
            }
            Op::GraphLaunch { exec, blobs, .. } => {
                let known = graph_d2h.get(&exec.0);
                for b in blobs {
                    let size = match known {
                        Some(d2h) => match d2h.get(&b.node) {
                            Some(size) => *size,
                            None => continue, // a host-to-device node's source
                        },
                        None => archive.blobs().size(&b.blob).unwrap_or(0),
                    };
                    out.push(D2hEntry {
                        seq: event.seq,
                        api: event.api.clone(),
                        size,
                        blob: Some(b.blob),
                        node: Some(b.node),
                    });
                }
                continue;
            }
            _ => {}
        }
        // Host memory kernels wrote, read at a sync, is a device result too,
        // and a 2D/3D download is a D2H like any other: its blob is the
        // packed bytes.
        let result = match event.op {
            Op::Memcpy {
                dir: Dir::D2h,
                size,
                blob,
                ..
            } => Some((size, blob)),
            Op::HostRead { size, blob, .. } => Some((size, Some(blob))),
            Op::MemcpyRect {
                dir: Dir::D2h,
                extent,
                blob,
                ..
            }
            | Op::MemcpyArray {
                dir: Dir::D2h,
                extent,
                blob,
                ..
            } => Some((hrr_core::event::rect_len(extent).unwrap_or(u64::MAX), blob)),
            _ => None,
        };
        if let Some((size, blob)) = result {
            out.push(D2hEntry {
                seq: event.seq,
                api: event.api,
                size,
                blob,
                node: None,
            });
        }
    }
    progress(reader.bytes_read(), total);
    warnings.extend(reader.warnings().iter().map(|w| w.to_string()));
    out.sort_by_key(|e| (e.seq, e.node));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::ArchiveBuilder;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn capture(dir: &std::path::Path, outs: &[&[u8]]) -> Archive {
        let mut b = ArchiveBuilder::new(Platform::Cpu).alloc(0x1000, 1 << 16);
        for o in outs {
            b = b.d2h(0x1000, o);
        }
        Archive::open(b.write(dir).unwrap()).unwrap()
    }

    /// A replay archive with the given (seq, bytes) D2H results.
    fn replay(dir: &std::path::Path, outs: &[(u64, &[u8])]) -> Archive {
        let mut b = ArchiveBuilder::replay(Platform::Cpu, "cap.hrr");
        for (seq, o) in outs {
            b = b.seq(*seq).d2h(0x1000, o);
        }
        Archive::open(b.write(dir).unwrap()).unwrap()
    }

    #[test]
    fn identical_outputs_pass() {
        let t = tempfile::tempdir().unwrap();
        let one = f32s(&[1.0, 2.0]);
        let a = capture(&t.path().join("a"), &[&one, b"xyz"]);
        let b = replay(&t.path().join("b"), &[(1, &one), (2, b"xyz")]);
        let r = diff(&a, &b, &Tolerance::default()).unwrap();
        assert!(r.passed(), "{r:#?}");
        assert_eq!((r.paired, r.exact, r.failed), (2, 2, 0));
        assert_eq!(r.bytes_compared, 0, "same blob ids need no reading");
        assert_eq!(
            r.summary_line(),
            "d2h : 2 pass (2 exact, 0 within tolerance), 0 fail"
        );
    }

    #[test]
    fn mismatch_and_tolerance_are_reported_per_seq() {
        let t = tempfile::tempdir().unwrap();
        let a = capture(
            &t.path().join("a"),
            &[&f32s(&[1.0, 2.0]), &f32s(&[5.0, 6.0])],
        );
        let b = replay(
            &t.path().join("b"),
            &[(1, &f32s(&[1.0, 2.000001])), (2, &f32s(&[5.0, 7.0]))],
        );
        let r = diff(&a, &b, &Tolerance::allclose()).unwrap();
        assert!(!r.passed());
        assert_eq!((r.exact, r.within_tolerance, r.failed), (0, 1, 1));
        let m = &r.mismatches[0];
        // 6.0f32 = 00 00 c0 40, 7.0f32 = 00 00 e0 40: byte 6 is the first to differ.
        assert_eq!((m.seq, m.size, m.first_diff), (2, 8, Some(6)));
        assert_eq!(m.max_abs, 1.0);
        assert_eq!(m.api, "hipMemcpy");
        assert!(
            m.to_string()
                .starts_with("seq 2 hipMemcpy: size 8, first diff at byte 6"),
            "{m}"
        );

        let r = diff(&a, &b, &Tolerance::exact()).unwrap();
        assert_eq!(r.failed, 2);
    }

    #[test]
    fn host_reads_are_paired_like_d2h_copies() {
        let t = tempfile::tempdir().unwrap();
        let host_read = |b: ArchiveBuilder, seq: u64, bytes: &[u8]| {
            b.seq(seq).event(
                "hipDeviceSynchronize",
                hrr_core::Op::HostRead {
                    ptr: hrr_core::Addr(0x7f00_0000_0000),
                    size: bytes.len() as u64,
                    blob: hrr_core::BlobId::of(bytes),
                },
                vec![bytes.to_vec()],
            )
        };
        let a = host_read(ArchiveBuilder::new(Platform::Cpu), 5, b"kernel wrote this");
        let a = Archive::open(a.write(t.path().join("a")).unwrap()).unwrap();
        let same = host_read(
            ArchiveBuilder::replay(Platform::Cpu, "cap.hrr"),
            5,
            b"kernel wrote this",
        );
        let same = Archive::open(same.write(t.path().join("b")).unwrap()).unwrap();
        let r = diff(&a, &same, &Tolerance::default()).unwrap();
        assert_eq!((r.paired, r.exact, r.failed), (1, 1, 0), "{r:#?}");
        let other = host_read(
            ArchiveBuilder::replay(Platform::Cpu, "cap.hrr"),
            5,
            b"kernel wrote that",
        );
        let other = Archive::open(other.write(t.path().join("c")).unwrap()).unwrap();
        let r = diff(&a, &other, &Tolerance::exact()).unwrap();
        assert_eq!((r.paired, r.failed), (1, 1), "{r:#?}");
        assert_eq!(r.mismatches[0].api, "hipDeviceSynchronize");
    }

    #[test]
    fn one_sided_events_fail() {
        let t = tempfile::tempdir().unwrap();
        let a = capture(&t.path().join("a"), &[b"1", b"2", b"3"]);
        let b = replay(&t.path().join("b"), &[(1, b"1"), (7, b"9")]);
        let r = diff(&a, &b, &Tolerance::default()).unwrap();
        assert_eq!(
            r.only_in_a.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2, 3]
        );
        assert_eq!(r.only_in_b.iter().map(|e| e.seq).collect::<Vec<_>>(), [7]);
        assert_eq!((r.exact, r.failed), (1, 3));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["only_in_a"][0]["seq"], 2);
    }

    #[test]
    fn a_second_capture_sets_nondeterministic_d2h_apart() {
        let t = tempfile::tempdir().unwrap();
        // seq 1 the same every run; seq 2 a clock; seq 3 the same in both
        // captures, wrong in the replay; seq 4 only in A and B.
        let a = capture(&t.path().join("a"), &[b"same", b"t=17", b"good", b"four"]);
        let b = replay(
            &t.path().join("b"),
            &[(1, b"same"), (2, b"t=99"), (3, b"evil"), (4, b"four")],
        );
        let c = capture(&t.path().join("c"), &[b"same", b"t=42", b"good"]);
        let r = diff(&a, &b, &Tolerance::default()).unwrap();
        assert_eq!((r.exact, r.failed, r.nondeterministic), (2, 2, 0));
        assert_eq!(r.not_in_against, None);
        let r = diff_against(&a, &b, Some(&c), &Tolerance::default(), |_, _, _| {}).unwrap();
        assert_eq!(
            (r.paired, r.exact, r.failed, r.nondeterministic),
            (4, 2, 1, 1),
            "{r:#?}"
        );
        assert_eq!(r.mismatches[0].seq, 3);
        let n = &r.nondeterministic_d2h[0];
        assert_eq!(
            n.to_string(),
            "seq 2 hipMemcpy: size 4, first diff at byte 2, 2 bytes differ between A and C"
        );
        assert_eq!(r.not_in_against, Some(1));
        assert!(
            r.warnings
                .iter()
                .any(|w| w.starts_with("1 D2H of A have no partner in C")),
            "{:?}",
            r.warnings
        );
        assert_eq!(
            r.summary_line(),
            "d2h : 2 pass (2 exact, 0 within tolerance), 1 fail, 1 nondeterministic"
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["nondeterministic_d2h"][0]["seq"], 2);
    }

    #[test]
    fn corrupt_blob_is_an_error_naming_archive_and_event() {
        let t = tempfile::tempdir().unwrap();
        let a = capture(&t.path().join("a"), &[b"good"]);
        let b = replay(&t.path().join("b"), &[(1, b"bad!")]);
        std::fs::write(b.blobs().path(&BlobId::of(b"bad!")), b"evil").unwrap();
        let e = diff(&a, &b, &Tolerance::default()).unwrap_err();
        let msg = hrr_core::error_chain::chain(&e).to_string();
        assert!(msg.contains("event 1") && msg.contains("corrupt"), "{msg}");
    }
}
