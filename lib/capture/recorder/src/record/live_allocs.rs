//! `LiveAllocs`: the allocations the application holds right now, as the
//! recorder saw them succeed.
//!
//! Used to find device pointers embedded in by-value kernel arguments (a word
//! that lands inside a live allocation is a pointer) and to resolve
//! `hipMemcpyDefault` without asking the runtime. Ordered by base, so a
//! lookup is one `BTreeMap::range` probe; a read-write lock, because launches
//! (readers) vastly outnumber allocations (writers).
//!
//! The live texture and surface objects are kept here too: an argument
//! word equal to one is marked as an object (`objs`), which replay maps to
//! its own object. CUDA's objects are small integers, so they cannot be
//! told from numbers by value alone; only whole, aligned 8-byte words of
//! an argument are compared, and only while some object is live.

use std::collections::BTreeMap;
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

use hrr_core::MemKind;

/// Words below this are never taken for pointers (small integers, sizes).
pub const MIN_POINTER: u64 = 0x10000;

/// Live allocations by base address.
#[derive(Default)]
pub struct LiveAllocs {
    map: RwLock<Live>,
}

#[derive(Default)]
struct Live {
    /// Base → size, kind, and the device current when it was made (what a
    /// device reset frees).
    map: BTreeMap<u64, (u64, MemKind, u32)>,
    /// An upper bound of every live allocation's last byte (never lowered
    /// on remove; only used to reject words quickly).
    max_last: u64,
    /// Live texture and surface objects (few: a linear search).
    objects: Vec<u64>,
}

/// A read view for many lookups under one lock acquisition.
pub struct AllocView<'a> {
    map: RwLockReadGuard<'a, Live>,
    /// Words outside `[lo, hi]` lie in no live allocation: the scan rejects
    /// them without a map lookup.
    lo: u64,
    hi: u64,
}

impl LiveAllocs {
    /// No live allocations.
    pub fn new() -> LiveAllocs {
        LiveAllocs::default()
    }

    /// Records a live allocation.
    pub fn insert(&self, base: u64, size: u64, mem: MemKind) {
        let mut live = self.map.write().unwrap_or_else(PoisonError::into_inner);
        // A zero-sized allocation contains its base.
        let last = base.saturating_add(size.max(1) - 1);
        live.max_last = live.max_last.max(last);
        live.map
            .insert(base, (size, mem, crate::record::current_device::current()));
        // A kept launch line's pointers were found in the old map.
        crate::record::launch_memo::invalidate("epoch moved: an allocation");
    }

    /// Removes the allocation based at `base`, returning its kind.
    pub fn remove(&self, base: u64) -> Option<MemKind> {
        let mut live = self.map.write().unwrap_or_else(PoisonError::into_inner);
        let removed = live.map.remove(&base).map(|(_, m, _)| m);
        crate::record::launch_memo::invalidate("epoch moved: a free");
        removed
    }

    /// Removes every allocation made on `device` (a device reset freed
    /// them), host memory (pinned, registered) only `with_host`, returning
    /// their bases.
    pub fn remove_device(&self, device: u32, with_host: bool) -> Vec<u64> {
        let mut live = self.map.write().unwrap_or_else(PoisonError::into_inner);
        let gone: Vec<u64> = live
            .map
            .iter()
            .filter(|(_, (_, m, d))| *d == device && (with_host || m.is_device()))
            .map(|(&b, _)| b)
            .collect();
        for b in &gone {
            live.map.remove(b);
        }
        crate::record::launch_memo::invalidate("epoch moved: a device reset");
        gone
    }

    /// Records a live texture or surface object.
    pub fn insert_object(&self, handle: u64) {
        let mut live = self.map.write().unwrap_or_else(PoisonError::into_inner);
        if !live.objects.contains(&handle) {
            live.objects.push(handle);
        }
        // A kept launch line's objects were found among the old ones.
        crate::record::launch_memo::invalidate("epoch moved: an object");
    }

    /// Forgets a texture or surface object.
    pub fn remove_object(&self, handle: u64) {
        let mut live = self.map.write().unwrap_or_else(PoisonError::into_inner);
        live.objects.retain(|&h| h != handle);
        crate::record::launch_memo::invalidate("epoch moved: an object destroyed");
    }

    /// A consistent view for scanning arguments.
    pub fn view(&self) -> AllocView<'_> {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        let (lo, hi) = match map.map.first_key_value() {
            Some((&base, _)) => (base, map.max_last),
            None => (u64::MAX, 0),
        };
        AllocView { map, lo, hi }
    }

    /// Live allocations.
    pub fn len(&self) -> usize {
        self.view().map.map.len()
    }

    /// Whether none is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl AllocView<'_> {
    /// The byte offsets in `bytes` of aligned 8-byte words equal to a live
    /// texture or surface object (none, without allocating, while no
    /// object is live).
    pub fn objects_in(&self, bytes: &[u8]) -> Vec<u32> {
        let objects = &self.map.objects;
        if objects.is_empty() {
            return Vec::new();
        }
        bytes
            .chunks_exact(8)
            .enumerate()
            .filter(|(_, w)| {
                let w = u64::from_le_bytes((*w).try_into().expect("8 bytes"));
                w != 0 && objects.contains(&w)
            })
            .map(|(i, _)| (i * 8) as u32)
            .collect()
    }

    /// The kind of the live allocation containing `addr` (interior pointers
    /// included; a zero-sized allocation contains its base).
    pub fn find(&self, addr: u64) -> Option<MemKind> {
        self.range_of(addr).map(|(_, _, mem)| mem)
    }

    /// Whether `[addr, addr + len)` lies inside one live host-side
    /// allocation the runtime made or registered (host or pinned memory):
    /// memory the process can read while it stays live.
    pub fn is_host_range(&self, addr: u64, len: u64) -> bool {
        self.range_of(addr).is_some_and(|(base, extent, mem)| {
            matches!(mem, MemKind::Host | MemKind::Pinned)
                && len > 0
                && (addr - base)
                    .checked_add(len)
                    .is_some_and(|end| end <= extent)
        })
    }

    /// The live allocation containing `addr`: `(base, extent, kind)`, the
    /// extent at least 1.
    fn range_of(&self, addr: u64) -> Option<(u64, u64, MemKind)> {
        let (&base, &(size, mem, _)) = self.map.map.range(..=addr).next_back()?;
        let extent = size.max(1);
        (addr - base < extent).then_some((base, extent, mem))
    }

    /// Appends to `out` the byte offsets in `bytes` of 8-byte little-endian
    /// words that point into a live allocation. Every byte offset is tried
    /// (structs may be packed); words below [`MIN_POINTER`], or whose low 32
    /// bits are (an `int` pair such as `{0, n}` is not a pointer), are
    /// skipped; after a hit the scan resumes past it, so reported pointers
    /// never overlap.
    pub fn scan(&self, bytes: &[u8], out: &mut Vec<u32>) {
        self.scan_each(bytes, |off| out.push(off));
    }

    /// [`AllocView::scan`], handing each offset to `hit` as it is found.
    pub fn scan_each(&self, bytes: &[u8], mut hit: impl FnMut(u32)) {
        if self.map.map.is_empty() || bytes.len() < 8 {
            return;
        }
        // Below `lo` or above `hi` no allocation can contain the word.
        let (lo, hi) = (self.lo.max(MIN_POINTER), self.hi);
        // The allocation of the last pointer found: the pointers of one
        // argument mostly lie in one (a framework's tensors are pieces of
        // its allocator's few large segments), so most words are checked
        // against it alone, not looked up in the map (measured: the lookup
        // was most of recording a launch with a 4 KiB list of tensors).
        let (mut last_base, mut last_extent) = (0u64, 0u64);
        let top = TopBytes::of(lo, hi);
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let mut off = 0;
        let mut missed = true;
        while off + 8 <= bytes.len() {
            // Past a word that is no pointer, eight offsets at once: those
            // whose word's top bytes no live allocation has are skipped
            // (most offsets of a struct's numbers and stale bytes). After a
            // pointer, the next word is likely one too: checked at once.
            if missed && off + 15 <= bytes.len() {
                let skip = top.first_candidate(word(off + 5), word(off + 6), word(off + 7));
                if skip > 0 {
                    off += skip;
                    continue;
                }
            }
            let w = word(off);
            let live = w >= lo
                && w <= hi
                && (w & 0xffff_ffff) >= MIN_POINTER
                && (w.wrapping_sub(last_base) < last_extent
                    || self.range_of(w).is_some_and(|(base, extent, _)| {
                        (last_base, last_extent) = (base, extent);
                        true
                    }));
            missed = !live;
            if live {
                hit(off as u32);
                off += 8;
            } else {
                off += 1;
            }
        }
    }
}

/// The top bytes every word in `[lo, hi]` shares (those above the highest
/// bit where `lo` and `hi` differ, of bytes 5 to 7): user-space addresses
/// on Linux have two zero top bytes, and a process's allocations mostly
/// share the third (`0x7f…`), which small numbers do not. Written by hand
/// (SWAR): no crate offers this eight-offsets-at-a-time test, and it is a
/// few integer operations.
#[derive(Clone, Copy)]
struct TopBytes {
    /// Bytes 5, 6 and 7 of `hi`, repeated in every lane, each with a mask
    /// that keeps it only when it is shared.
    want: [u64; 3],
    mask: [u64; 3],
    /// Whether byte 7 at least is shared (else no offset is skipped).
    on: bool,
}

impl TopBytes {
    const LANES: u64 = 0x0101_0101_0101_0101;

    fn of(lo: u64, hi: u64) -> TopBytes {
        let differ = 64 - (lo ^ hi).leading_zeros();
        let byte = |i: u32| (hi >> (8 * i) & 0xff) * Self::LANES;
        let shared = |i: u32| if differ <= 8 * i { u64::MAX } else { 0 };
        TopBytes {
            want: [byte(5), byte(6), byte(7)],
            mask: [shared(5), shared(6), shared(7)],
            on: lo <= hi && differ <= 56,
        }
    }

    /// Given the words at `off + 5`, `off + 6` and `off + 7` (their lane
    /// `k`: bytes 5, 6 and 7 of the word at `off + k`), how many of the
    /// offsets `off..off + 8` are certainly not pointers before the first
    /// that may be: 8 when none may, 0 when `off` itself may.
    #[inline(always)]
    fn first_candidate(self, at5: u64, at6: u64, at7: u64) -> usize {
        if !self.on {
            return 0;
        }
        // A lane is zero where its shared bytes match: found as in "has a
        // zero byte", which flags every zero lane (and may flag a lane above
        // one, which only costs a full check).
        let x = ((at5 ^ self.want[0]) & self.mask[0])
            | ((at6 ^ self.want[1]) & self.mask[1])
            | (at7 ^ self.want[2]);
        let zero = x.wrapping_sub(Self::LANES) & !x & (Self::LANES << 7);
        if zero == 0 {
            8
        } else {
            zero.trailing_zeros() as usize / 8
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interior_pointers_and_bounds() {
        let a = LiveAllocs::new();
        a.insert(0x7f00_0000_0000, 0x1000, MemKind::Device);
        a.insert(0x7f00_0001_0000, 0, MemKind::Managed);
        let v = a.view();
        assert_eq!(v.find(0x7f00_0000_0000), Some(MemKind::Device));
        assert_eq!(v.find(0x7f00_0000_0fff), Some(MemKind::Device));
        assert_eq!(v.find(0x7f00_0000_1000), None);
        assert_eq!(v.find(0x7f00_0001_0000), Some(MemKind::Managed));
        assert_eq!(v.find(0x10), None);
        drop(v);
        assert_eq!(a.remove(0x7f00_0000_0000), Some(MemKind::Device));
        assert_eq!(a.view().find(0x7f00_0000_0010), None);
    }

    #[test]
    fn a_device_reset_removes_that_device_s_allocations_only() {
        let a = LiveAllocs::new();
        a.insert(0x7f00_0000_0000, 0x1000, MemKind::Device);
        crate::record::current_device::with(1, || {
            a.insert(0x7f00_0001_0000, 0x1000, MemKind::Device);
            a.insert(0x7f00_0002_0000, 0x1000, MemKind::Managed);
            a.insert(0x7f00_0003_0000, 0x1000, MemKind::Pinned);
        });
        assert_eq!(
            a.remove_device(1, false),
            vec![0x7f00_0001_0000, 0x7f00_0002_0000]
        );
        assert_eq!(a.len(), 2, "host memory stays");
        assert_eq!(a.remove_device(1, true), vec![0x7f00_0003_0000]);
        assert_eq!(a.len(), 1);
        assert_eq!(a.view().find(0x7f00_0000_0010), Some(MemKind::Device));
        assert_eq!(a.view().find(0x7f00_0001_0010), None);
    }

    #[test]
    fn scan_finds_unaligned_embedded_pointers_only() {
        let a = LiveAllocs::new();
        let base = 0x7f12_3456_0000u64;
        a.insert(base, 0x10_0000, MemKind::Device);
        // Packed struct: u8 tag, then a pointer at offset 1, an int, another
        // pointer (interior) at offset 13, then a word with small low half.
        let mut s = vec![7u8];
        s.extend_from_slice(&(base + 16).to_le_bytes());
        s.extend_from_slice(&5u32.to_le_bytes());
        s.extend_from_slice(&(base + 0x400).to_le_bytes());
        s.extend_from_slice(&(0x7f12_3456_0000u64 & !0xffff_ffff).to_le_bytes());
        let mut out = Vec::new();
        a.view().scan(&s, &mut out);
        assert_eq!(out, vec![1, 13]);
    }

    #[test]
    fn scan_skips_small_values_even_if_mapped() {
        let a = LiveAllocs::new();
        a.insert(0x1000, 0x100_0000_0000, MemKind::Device);
        let mut out = Vec::new();
        a.view().scan(&0x8000u64.to_le_bytes(), &mut out);
        a.view().scan(&0x1_0000_0100u64.to_le_bytes(), &mut out);
        assert!(out.is_empty(), "{out:?}");
        a.view().scan(&0x2_0001_0000u64.to_le_bytes(), &mut out);
        assert_eq!(out, vec![0]);
    }

    proptest::proptest! {
        /// The bounds check rejects only words no allocation contains: the
        /// scan reports what a lookup at every byte offset reports.
        #[test]
        fn scan_equals_a_lookup_at_every_offset(
            allocs in proptest::collection::vec((0u64..64, 0u64..0x300, proptest::prelude::any::<bool>()), 0..6),
            words in proptest::collection::vec(0u64..64, 0..6),
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12),
            spread in 0usize..4,
        ) {
            let a = LiveAllocs::new();
            // Allocations that share their top two bytes, one, or none.
            let step = [0x100u64, 0x1_0000_0000_0000 / 64, 0x100_0000_0000_0000 / 64, u64::MAX / 64][spread];
            let at = |i: u64| 0x7f00_0000_0000u64.wrapping_add(i * step) | 0x10_0000;
            for &(i, size, drop) in &allocs {
                a.insert(at(i), size, MemKind::Device);
                if drop {
                    a.remove(at(i));
                }
            }
            let mut bytes = noise.clone();
            for w in &words {
                bytes.extend_from_slice(&(at(*w) + 0x10).to_le_bytes());
                bytes.extend_from_slice(&noise);
            }
            let v = a.view();
            let mut want = Vec::new();
            let mut off = 0;
            while off + 8 <= bytes.len() {
                let w = u64::from_le_bytes(bytes[off..off + 8].try_into().unwrap());
                if w >= MIN_POINTER && (w & 0xffff_ffff) >= MIN_POINTER && v.find(w).is_some() {
                    want.push(off as u32);
                    off += 8;
                } else {
                    off += 1;
                }
            }
            let mut got = Vec::new();
            v.scan(&bytes, &mut got);
            proptest::prop_assert_eq!(got, want);
        }
    }
}
