//! `RegionTimeline`: the sidecar-declared memory the recorder could not see,
//! replayed in capture time order (DESIGN.md §4–5).
//!
//! Records from every sidecar are merged by `t` (stable, so one producer's
//! order is kept). Segments that several declarations cover (two producers
//! declaring the same memory) are one segment, backed once: see
//! [`crate::region_segments`]. Replay calls [`RegionTimeline::advance_to`] with each
//! event's `t` before dispatching it, so every handler sees the same live set.
//! A declared segment costs nothing until a device operand fails to translate
//! into it; then [`RegionTimeline::materialise_for`] backs it once.

use std::collections::BTreeMap;

use crate::region_segments::SegmentSet;
use hrr_core::region_record::{RegionKind, RegionOp, RegionRecord};

/// Where an unmapped address falls among the declared regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionClass {
    /// Inside a live block (and so inside its segment, if any).
    InBlock {
        /// The block's base.
        base: u64,
        /// Its size.
        size: u64,
    },
    /// Inside a declared segment but in no live block.
    InSegment {
        /// The segment's base.
        base: u64,
        /// Its size.
        size: u64,
    },
    /// Outside every declared region.
    None,
}

/// A declared segment's materialisation state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentState {
    /// Declared, not backed yet.
    Declared,
    /// Backed by a live allocation at this address.
    Materialised {
        /// The live base.
        live: u64,
    },
    /// Backing it failed once; it is not retried.
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// A declared segment: memory a sidecar says exists, backed on first touch.
pub struct Segment {
    /// Recorded base address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Device it was declared on.
    pub device: u32,
    /// The sidecar's tag.
    pub tag: u32,
    /// Whether it is backed.
    pub state: SegmentState,
}

/// What a caller must do after the timeline moved: segments that were
/// materialised and are now deleted must be freed and unregistered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retired {
    /// The segment's recorded base.
    pub base: u64,
    /// Its live base, to free.
    pub live: u64,
}

/// Records merged by time, with the live set at the current cursor.
#[derive(Debug, Default)]
pub struct RegionTimeline {
    records: Vec<RegionRecord>,
    /// The stream (sidecar file, in load order) of each record.
    sources: Vec<u32>,
    streams: usize,
    cursor: usize,
    now: u64,
    segments: SegmentSet,
    blocks: BTreeMap<u64, u64>,
    materialised: u64,
    failed: u64,
    /// Lowest base and highest end over every record: a fast reject for
    /// values that no region can ever contain.
    bounds: (u64, u64),
}

impl RegionTimeline {
    /// Merges the records of several streams (one `Vec` per sidecar file) by `t`.
    pub fn new(streams: Vec<Vec<RegionRecord>>) -> RegionTimeline {
        let n = streams.len();
        let mut tagged: Vec<(RegionRecord, u32)> = streams
            .into_iter()
            .enumerate()
            .flat_map(|(i, s)| s.into_iter().map(move |r| (r, i as u32)))
            .collect();
        // Stable: records of equal `t` keep file order, then in-file order.
        tagged.sort_by_key(|(r, _)| r.t);
        let (records, sources): (Vec<RegionRecord>, Vec<u32>) = tagged.into_iter().unzip();
        let bounds = records.iter().fold((u64::MAX, 0), |(lo, hi), r| {
            (lo.min(r.base), hi.max(r.base.saturating_add(r.size)))
        });
        RegionTimeline {
            records,
            sources,
            streams: n,
            bounds,
            ..RegionTimeline::default()
        }
    }

    /// Every record, merged by time.
    pub fn records(&self) -> &[RegionRecord] {
        &self.records
    }

    /// How many sidecar streams fed the timeline.
    pub fn streams(&self) -> usize {
        self.streams
    }

    /// Segments materialised so far.
    pub fn materialised(&self) -> u64 {
        self.materialised
    }

    /// Segments whose materialisation failed.
    pub fn failed(&self) -> u64 {
        self.failed
    }

    /// The declared segments the timeline holds, with their state.
    pub fn segments(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter()
    }

    /// Applies every record with `t <= now`. Returns the materialised
    /// segments that were deleted, for the caller to free.
    pub fn advance_to(&mut self, now: u64) -> Vec<Retired> {
        let mut retired = Vec::new();
        self.now = self.now.max(now);
        while let Some(r) = self.records.get(self.cursor) {
            if r.t > self.now {
                break;
            }
            let stream = self.sources[self.cursor];
            self.cursor += 1;
            let r = *r;
            match (r.op, r.kind) {
                (RegionOp::Add, RegionKind::Segment) => self.segments.add(stream, &r),
                (RegionOp::Del, RegionKind::Segment) => {
                    if let Some(Segment {
                        base,
                        state: SegmentState::Materialised { live },
                        ..
                    }) = self.segments.del(stream, r.base)
                    {
                        retired.push(Retired { base, live });
                    }
                }
                (RegionOp::Add, RegionKind::Block) => {
                    self.blocks.insert(r.base, r.size);
                }
                (RegionOp::Del, RegionKind::Block) => {
                    self.blocks.remove(&r.base);
                }
            }
        }
        retired
    }

    /// Whether any record (live or not) could contain `addr`.
    pub fn may_contain(&self, addr: u64) -> bool {
        addr >= self.bounds.0 && addr < self.bounds.1
    }

    /// The live segment containing `addr`.
    pub fn segment_at(&self, addr: u64) -> Option<&Segment> {
        self.segments.at(addr)
    }

    /// Where `addr` falls among the regions live at the cursor.
    pub fn classify(&self, addr: u64) -> RegionClass {
        let block = self
            .blocks
            .range(..=addr)
            .next_back()
            .filter(|(b, s)| addr - **b < **s);
        if let Some((&base, &size)) = block {
            return RegionClass::InBlock { base, size };
        }
        match self.segment_at(addr) {
            Some(s) => RegionClass::InSegment {
                base: s.base,
                size: s.size,
            },
            None => RegionClass::None,
        }
    }

    /// Backs the live segment containing `addr` through `back` (which
    /// allocates zero-filled memory of the segment's size and registers it),
    /// once. Returns the segment's live base, or `None` when no live segment
    /// contains `addr` or backing it failed (now or before: not retried).
    pub fn materialise_for<E>(
        &mut self,
        addr: u64,
        back: impl FnOnce(&Segment) -> Result<u64, E>,
    ) -> Option<Result<u64, E>> {
        let base = self.segment_at(addr)?.base;
        let seg = self.segments.get_mut(base).expect("segment found above");
        match seg.state {
            SegmentState::Materialised { live } => Some(Ok(live)),
            SegmentState::Failed => None,
            SegmentState::Declared => match back(seg) {
                Ok(live) => {
                    seg.state = SegmentState::Materialised { live };
                    self.materialised += 1;
                    Some(Ok(live))
                }
                Err(e) => {
                    seg.state = SegmentState::Failed;
                    self.failed += 1;
                    Some(Err(e))
                }
            },
        }
    }

    /// Records with a non-zero `t` outside `[first, last]`: usually a sidecar
    /// from another run or another clock.
    pub fn outside_span(&self, first: u64, last: u64) -> usize {
        self.records
            .iter()
            .filter(|r| r.t != 0 && (r.t < first || r.t > last))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(op: RegionOp, kind: RegionKind, base: u64, size: u64, t: u64) -> RegionRecord {
        RegionRecord {
            op,
            kind,
            base,
            size,
            device: 0,
            t,
            tag: 0,
        }
    }

    #[test]
    fn merges_streams_by_time_stably() {
        let a = vec![rec(RegionOp::Add, RegionKind::Segment, 0x1000, 0x100, 5)];
        let b = vec![
            rec(RegionOp::Add, RegionKind::Segment, 0x2000, 0x100, 1),
            rec(RegionOp::Del, RegionKind::Segment, 0x2000, 0x100, 5),
        ];
        let tl = RegionTimeline::new(vec![a, b]);
        let ts: Vec<_> = tl.records().iter().map(|r| (r.t, r.base)).collect();
        assert_eq!(ts, vec![(1, 0x2000), (5, 0x1000), (5, 0x2000)]);
        assert_eq!(tl.streams(), 2);
    }

    #[test]
    fn materialises_once_and_retires_on_delete() {
        let mut tl = RegionTimeline::new(vec![vec![
            rec(RegionOp::Add, RegionKind::Segment, 0x1000, 0x100, 0),
            rec(RegionOp::Del, RegionKind::Segment, 0x1000, 0x100, 10),
        ]]);
        assert!(tl.advance_to(1).is_empty());
        let mut calls = 0;
        let mut back = |_: &Segment| -> Result<u64, ()> {
            calls += 1;
            Ok(0xa000)
        };
        assert_eq!(tl.materialise_for(0x1080, &mut back), Some(Ok(0xa000)));
        assert_eq!(tl.materialise_for(0x1000, &mut back), Some(Ok(0xa000)));
        assert_eq!(calls, 1);
        assert_eq!(tl.materialised(), 1);
        assert_eq!(
            tl.advance_to(10),
            vec![Retired {
                base: 0x1000,
                live: 0xa000
            }]
        );
        assert!(tl.materialise_for(0x1000, |_| Ok::<u64, ()>(1)).is_none());
    }

    #[test]
    fn failure_is_remembered() {
        let mut tl = RegionTimeline::new(vec![vec![rec(
            RegionOp::Add,
            RegionKind::Segment,
            0x1000,
            0x100,
            0,
        )]]);
        tl.advance_to(0);
        assert_eq!(
            tl.materialise_for(0x1000, |_| Err::<u64, &str>("oom")),
            Some(Err("oom"))
        );
        assert!(tl.materialise_for(0x1000, |_| Ok::<u64, &str>(1)).is_none());
        assert_eq!((tl.materialised(), tl.failed()), (0, 1));
    }

    #[test]
    fn identical_and_overlapping_segments_of_two_streams_materialise_once() {
        // Stream 0: the HSA producer's exact extent, live from t=10 to t=50.
        // Stream 1: a hand-made sidecar, live from the start, for the same
        // base (identical) and for an inner range (a `--size auto` bound).
        let hsa = vec![
            rec(RegionOp::Add, RegionKind::Segment, 0x10000, 0x4000, 10),
            rec(RegionOp::Del, RegionKind::Segment, 0x10000, 0x4000, 50),
        ];
        let manual = vec![
            rec(RegionOp::Add, RegionKind::Segment, 0x10000, 0x4000, 0),
            rec(RegionOp::Add, RegionKind::Segment, 0x11000, 0x1000, 0),
        ];
        let mut tl = RegionTimeline::new(vec![hsa, manual]);
        let mut backed = Vec::new();
        let mut back = |s: &Segment| -> Result<u64, ()> {
            backed.push((s.base, s.size));
            Ok(0xa0000 + 0x10000 * backed.len() as u64)
        };
        tl.advance_to(5);
        // First touch inside the inner declaration, before the producer's add.
        let live = tl.materialise_for(0x11800, &mut back);
        assert_eq!(live, Some(Ok(0xb0000)));
        assert!(tl.advance_to(20).is_empty());
        assert_eq!(tl.materialise_for(0x10000, &mut back), live);
        assert_eq!(tl.materialise_for(0x13fff, &mut back), live);
        // The producer's del ends its declaration only: the sidecar's lives on.
        assert!(tl.advance_to(50).is_empty());
        assert_eq!(tl.materialise_for(0x10000, &mut back), live);
        assert_eq!(backed, vec![(0x10000, 0x4000)], "backed once, whole");
        assert_eq!(tl.materialised(), 1);
        assert_eq!(tl.segments().count(), 1);
    }

    #[test]
    fn classify_blocks_and_segments() {
        let mut tl = RegionTimeline::new(vec![vec![
            rec(RegionOp::Add, RegionKind::Segment, 0x1000, 0x1000, 0),
            rec(RegionOp::Add, RegionKind::Block, 0x1200, 0x100, 0),
        ]]);
        tl.advance_to(0);
        assert_eq!(
            tl.classify(0x1250),
            RegionClass::InBlock {
                base: 0x1200,
                size: 0x100
            }
        );
        assert_eq!(
            tl.classify(0x1300),
            RegionClass::InSegment {
                base: 0x1000,
                size: 0x1000
            }
        );
        assert_eq!(tl.classify(0x2000), RegionClass::None);
        assert!(tl.may_contain(0x1fff) && !tl.may_contain(0x2000) && !tl.may_contain(0xfff));
    }
}
