//! `SegmentSet`: the live declared segments of a [`crate::region_timeline`],
//! with the declarations of every stream merged.
//!
//! Several producers may declare the same memory: the capture library's
//! built-in HSA producer (`regions/hsa.ndjson`, `hrr-cap --hsa-regions`) and a
//! hand-made sidecar (`hrr-sidecar` fed the application's `HRR_SEGMENT`
//! lines), or a `--size auto` lower bound inside a producer's exact extent.
//! Replay must back such memory once: two backings of one recorded range
//! collide in the allocation map (the second one fails), and which of two
//! overlapping declarations an operand hits first would decide whether the
//! run replays at all. So declarations that overlap form one segment:
//!
//! - **add.** A declaration overlapping live segments that are only declared
//!   so far merges with them into one segment spanning their union. One that
//!   overlaps a segment already backed (materialised, or whose backing
//!   failed) joins that segment's lifetime but not its extent: the backing
//!   can neither grow nor move under addresses replay has handed out, so
//!   bytes of the declaration outside it stay unbacked (an operand there
//!   fails, naming the segment). Adjacent segments do not merge.
//! - **del** ends one declaration: the deleting stream's own at that base,
//!   else any declaration at that base (a timeline of one stream never
//!   needed to say whose). The segment stays live while any declaration
//!   does. A segment that is only declared shrinks, or splits, back to what
//!   its remaining declarations cover; a backed one keeps its extent.
//! - An **add at a base the same stream already declares** replaces that
//!   declaration (a producer re-declaring its segment), as it did before
//!   streams were merged.
//!
//! Invariant: live segments are pairwise disjoint, so the one that contains
//! an address is the one with the greatest base at or below it.

use std::collections::BTreeMap;
use std::ops::Bound::Excluded;

use crate::region_timeline::{Segment, SegmentState};
use hrr_core::region_record::RegionRecord;

/// One stream's declaration of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decl {
    stream: u32,
    base: u64,
    size: u64,
    device: u32,
    tag: u32,
}

impl Decl {
    /// One past the last byte (records are validated against overflow when
    /// loaded; saturating keeps a hand-built record from wrapping).
    fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }
}

#[derive(Debug, Clone)]
struct Entry {
    seg: Segment,
    /// In the order they were declared: the first one names the segment's
    /// device and tag.
    decls: Vec<Decl>,
}

/// Live segments, keyed by base, each with the declarations that keep it live.
#[derive(Debug, Default)]
pub struct SegmentSet {
    live: BTreeMap<u64, Entry>,
    /// (declared base, stream) → base of the live segment holding that declaration.
    index: BTreeMap<(u64, u32), u64>,
}

impl SegmentSet {
    /// Applies an `add segment` record of stream `stream`.
    pub fn add(&mut self, stream: u32, r: &RegionRecord) {
        let decl = Decl {
            stream,
            base: r.base,
            size: r.size,
            device: r.device,
            tag: r.tag,
        };
        if let Some(&key) = self.index.get(&(r.base, stream)) {
            let entry = self.live.get_mut(&key).expect("index names a live segment");
            if entry.seg.state != SegmentState::Declared {
                // Backed: its extent is fixed; the new size only matters for
                // what the declaration says, not for the backing.
                if let Some(d) = entry
                    .decls
                    .iter_mut()
                    .find(|d| d.stream == stream && d.base == r.base)
                {
                    *d = decl;
                }
                return;
            }
            // Declared only: nothing to free, so the old declaration just goes.
            self.remove_decl(r.base, stream);
        }
        self.insert(decl);
    }

    /// Applies a `del segment` record of stream `stream`. Returns the segment
    /// when this ended its last declaration (the caller frees its backing).
    pub fn del(&mut self, stream: u32, base: u64) -> Option<Segment> {
        let stream = if self.index.contains_key(&(base, stream)) {
            stream
        } else {
            self.index
                .range((base, 0)..=(base, u32::MAX))
                .next()
                .map(|(&(_, s), _)| s)?
        };
        self.remove_decl(base, stream)
    }

    /// The live segment containing `addr`.
    pub fn at(&self, addr: u64) -> Option<&Segment> {
        self.live
            .range(..=addr)
            .next_back()
            .map(|(_, e)| &e.seg)
            .filter(|s| addr - s.base < s.size)
    }

    /// The live segment whose base is `base`.
    pub fn get_mut(&mut self, base: u64) -> Option<&mut Segment> {
        self.live.get_mut(&base).map(|e| &mut e.seg)
    }

    /// The live segments, by base address.
    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        self.live.values().map(|e| &e.seg)
    }

    /// How many declarations keep the segment at `base` live (0: none is).
    pub fn declarations(&self, base: u64) -> usize {
        self.live.get(&base).map_or(0, |e| e.decls.len())
    }

    /// Bases of the live segments that `[base, end)` overlaps, in order.
    fn overlapping(&self, base: u64, end: u64) -> Vec<u64> {
        let mut hits = Vec::new();
        if let Some((&k, e)) = self.live.range(..=base).next_back()
            && k.saturating_add(e.seg.size) > base
        {
            hits.push(k);
        }
        if base < end {
            hits.extend(
                self.live
                    .range((Excluded(base), Excluded(end)))
                    .map(|(&k, _)| k),
            );
        }
        hits
    }

    fn insert(&mut self, decl: Decl) {
        let hits = self.overlapping(decl.base, decl.end());
        if let Some(&key) = hits
            .iter()
            .find(|k| self.live[*k].seg.state != SegmentState::Declared)
        {
            self.live
                .get_mut(&key)
                .expect("hit is live")
                .decls
                .push(decl);
            self.index.insert((decl.base, decl.stream), key);
            return;
        }
        let (mut lo, mut hi) = (decl.base, decl.end());
        let mut decls = Vec::new();
        for k in hits {
            let e = self.live.remove(&k).expect("hit is live");
            lo = lo.min(e.seg.base);
            hi = hi.max(e.seg.base.saturating_add(e.seg.size));
            decls.extend(e.decls);
        }
        decls.push(decl);
        let first = decls[0];
        for d in &decls {
            self.index.insert((d.base, d.stream), lo);
        }
        self.live.insert(
            lo,
            Entry {
                seg: Segment {
                    base: lo,
                    size: hi - lo,
                    device: first.device,
                    tag: first.tag,
                    state: SegmentState::Declared,
                },
                decls,
            },
        );
    }

    fn remove_decl(&mut self, base: u64, stream: u32) -> Option<Segment> {
        let key = self.index.remove(&(base, stream))?;
        let entry = self.live.get_mut(&key)?;
        let i = entry
            .decls
            .iter()
            .position(|d| d.base == base && d.stream == stream)?;
        entry.decls.remove(i);
        if entry.decls.is_empty() {
            return self.live.remove(&key).map(|e| e.seg);
        }
        if entry.seg.state == SegmentState::Declared {
            // Re-merge what is left: the extent shrinks, or the segment
            // splits where the removed declaration was the only bridge.
            let e = self.live.remove(&key).expect("entry is live");
            for d in e.decls {
                self.insert(d);
            }
        }
        None
    }

    /// Checks the invariant (tests).
    #[cfg(test)]
    fn assert_disjoint(&self) {
        let mut prev_end = 0u64;
        for (k, e) in &self.live {
            assert_eq!(*k, e.seg.base);
            assert!(
                *k >= prev_end,
                "segments overlap at {k:#x}: {:?}",
                self.live
            );
            prev_end = k + e.seg.size;
            for d in &e.decls {
                assert_eq!(self.index.get(&(d.base, d.stream)), Some(k));
            }
        }
        let n: usize = self.live.values().map(|e| e.decls.len()).sum();
        assert_eq!(n, self.index.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(base: u64, size: u64) -> RegionRecord {
        RegionRecord::segment(base, size, 0)
    }

    fn extents(s: &SegmentSet) -> Vec<(u64, u64)> {
        s.iter().map(|g| (g.base, g.size)).collect()
    }

    #[test]
    fn identical_declarations_of_two_streams_are_one_segment() {
        let mut s = SegmentSet::default();
        s.add(0, &seg(0x1000, 0x1000));
        s.add(1, &seg(0x1000, 0x1000));
        s.assert_disjoint();
        assert_eq!(extents(&s), vec![(0x1000, 0x1000)]);
        assert_eq!(s.declarations(0x1000), 2);
        assert!(s.del(1, 0x1000).is_none(), "stream 0 still declares it");
        assert!(s.at(0x1800).is_some());
        assert_eq!(s.del(0, 0x1000).map(|g| g.base), Some(0x1000));
        assert!(s.at(0x1800).is_none());
        s.assert_disjoint();
    }

    #[test]
    fn overlapping_declarations_merge_to_their_union_and_split_back() {
        let mut s = SegmentSet::default();
        s.add(0, &seg(0x1000, 0x1000)); // [0x1000, 0x2000)
        s.add(0, &seg(0x3000, 0x1000)); // [0x3000, 0x4000)
        s.add(0, &seg(0x5000, 0x1000)); // adjacent to nothing
        s.add(1, &seg(0x1800, 0x2000)); // bridges the first two
        s.assert_disjoint();
        assert_eq!(extents(&s), vec![(0x1000, 0x3000), (0x5000, 0x1000)]);
        assert_eq!(s.at(0x2800).map(|g| g.base), Some(0x1000));
        // The bridge goes: the two split apart again.
        assert!(s.del(1, 0x1800).is_none());
        s.assert_disjoint();
        assert_eq!(
            extents(&s),
            vec![(0x1000, 0x1000), (0x3000, 0x1000), (0x5000, 0x1000)]
        );
        assert!(s.at(0x2800).is_none());
    }

    #[test]
    fn adjacent_declarations_stay_apart() {
        let mut s = SegmentSet::default();
        s.add(0, &seg(0x1000, 0x1000));
        s.add(1, &seg(0x2000, 0x1000));
        s.assert_disjoint();
        assert_eq!(extents(&s), vec![(0x1000, 0x1000), (0x2000, 0x1000)]);
    }

    #[test]
    fn a_backed_segment_keeps_its_extent() {
        let mut s = SegmentSet::default();
        s.add(0, &seg(0x1000, 0x1000));
        s.get_mut(0x1000).unwrap().state = SegmentState::Materialised { live: 0xa000 };
        // Wider and lower: joins the lifetime, not the extent.
        s.add(1, &seg(0x800, 0x2000));
        s.assert_disjoint();
        assert_eq!(extents(&s), vec![(0x1000, 0x1000)]);
        assert!(s.at(0x900).is_none(), "the backing cannot grow downwards");
        assert!(s.del(0, 0x1000).is_none(), "stream 1 still declares it");
        let gone = s.del(1, 0x800).expect("last declaration ended");
        assert_eq!(gone.state, SegmentState::Materialised { live: 0xa000 });
        assert!(s.iter().next().is_none());
        s.assert_disjoint();
    }

    #[test]
    fn a_del_of_another_streams_declaration_still_ends_it() {
        let mut s = SegmentSet::default();
        s.add(0, &seg(0x1000, 0x1000));
        assert_eq!(s.del(3, 0x1000).map(|g| g.base), Some(0x1000));
        assert!(s.del(3, 0x1000).is_none(), "nothing left to delete");
    }

    #[test]
    fn a_stream_redeclaring_its_base_replaces_its_declaration() {
        let mut s = SegmentSet::default();
        s.add(0, &seg(0x1000, 0x1000));
        s.add(0, &seg(0x1000, 0x4000));
        s.assert_disjoint();
        assert_eq!(extents(&s), vec![(0x1000, 0x4000)]);
        assert_eq!(s.declarations(0x1000), 1);
        assert!(s.del(0, 0x1000).is_some());
        s.assert_disjoint();
    }
}
