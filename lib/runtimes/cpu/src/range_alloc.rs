//! First-fit range allocator over `[0, capacity)`: a BTreeMap of free ranges
//! (start → length), coalesced on free. Hands out offsets aligned to `align`.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;

/// Why a free was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreeError {
    /// The range is not inside the managed space or not aligned.
    OutOfRange,
    /// Part of the range is already free.
    DoubleFree,
}

#[derive(Debug, Clone)]
/// First-fit allocator of aligned ranges in `[0, capacity)`.
pub struct RangeAllocator {
    capacity: u64,
    align: u64,
    free: BTreeMap<u64, u64>,
    free_bytes: u64,
}

impl RangeAllocator {
    /// `align` must be a power of two; `capacity` is rounded down to it.
    pub fn new(capacity: u64, align: u64) -> Self {
        assert!(align.is_power_of_two(), "alignment must be a power of two");
        let capacity = capacity & !(align - 1);
        let mut free = BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        RangeAllocator {
            capacity,
            align,
            free,
            free_bytes: capacity,
        }
    }

    /// Bytes managed.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Bytes not allocated.
    pub fn free_bytes(&self) -> u64 {
        self.free_bytes
    }
    /// The alignment of every range.
    pub fn align(&self) -> u64 {
        self.align
    }
    /// Number of disjoint free ranges (1 when everything is free).
    pub fn fragments(&self) -> usize {
        self.free.len()
    }

    /// The size actually reserved for a request of `size` bytes (at least one granule).
    pub fn rounded(&self, size: u64) -> Option<u64> {
        let size = size.max(1);
        size.checked_add(self.align - 1)
            .map(|s| s & !(self.align - 1))
    }

    /// First fit: the lowest-addressed free range that can hold `size` bytes.
    pub fn alloc(&mut self, size: u64) -> Option<u64> {
        self.alloc_aligned(size, self.align)
    }

    /// First fit with a stronger alignment (a power of two; at least `align`).
    /// The lowest address aligned to `align` with `rounded(size)` free bytes.
    pub fn alloc_aligned(&mut self, size: u64, align: u64) -> Option<u64> {
        let need = self.rounded(size)?;
        let align = align.max(self.align);
        if !align.is_power_of_two() {
            return None;
        }
        let (start, len, at) = self.free.iter().find_map(|(&start, &len)| {
            let at = start.checked_add(align - 1)? & !(align - 1);
            let end = at.checked_add(need)?;
            (end <= start + len).then_some((start, len, at))
        })?;
        self.free.remove(&start);
        if at > start {
            self.free.insert(start, at - start);
        }
        let tail = start + len - (at + need);
        if tail > 0 {
            self.free.insert(at + need, tail);
        }
        self.free_bytes -= need;
        Some(at)
    }

    /// Takes exactly `[start, start + rounded(size))` out of the free set (an
    /// address asked for by the caller); `false`, and nothing taken, when
    /// any of it is in use, unaligned or out of range.
    pub fn take(&mut self, start: u64, size: u64) -> bool {
        let Some(need) = self.rounded(size) else {
            return false;
        };
        let Some(end) = start.checked_add(need) else {
            return false;
        };
        if !start.is_multiple_of(self.align) || end > self.capacity {
            return false;
        }
        let Some((fs, fl)) = self.free.range(..=start).next_back().map(|(&s, &l)| (s, l)) else {
            return false;
        };
        if fs + fl < end {
            return false;
        }
        self.free.remove(&fs);
        if start > fs {
            self.free.insert(fs, start - fs);
        }
        if fs + fl > end {
            self.free.insert(end, fs + fl - end);
        }
        self.free_bytes -= need;
        true
    }

    /// Returns `[start, start + rounded(size))` to the free set, coalescing neighbours.
    pub fn free(&mut self, start: u64, size: u64) -> Result<(), FreeError> {
        let len = self.rounded(size).ok_or(FreeError::OutOfRange)?;
        let end = start.checked_add(len).ok_or(FreeError::OutOfRange)?;
        if !start.is_multiple_of(self.align) || end > self.capacity {
            return Err(FreeError::OutOfRange);
        }
        let prev = self.free.range(..=start).next_back().map(|(&s, &l)| (s, l));
        if let Some((ps, pl)) = prev
            && ps + pl > start
        {
            return Err(FreeError::DoubleFree);
        }
        let next = self.free.range(start..).next().map(|(&s, &l)| (s, l));
        if let Some((ns, _)) = next
            && ns < end
        {
            return Err(FreeError::DoubleFree);
        }
        let mut new_start = start;
        let mut new_len = len;
        if let Some((ps, pl)) = prev
            && ps + pl == start
        {
            self.free.remove(&ps);
            new_start = ps;
            new_len += pl;
        }
        if let Some((ns, nl)) = next
            && ns == end
        {
            self.free.remove(&ns);
            new_len += nl;
        }
        self.free.insert(new_start, new_len);
        self.free_bytes += len;
        Ok(())
    }

    /// Frees everything.
    pub fn reset(&mut self) {
        self.free.clear();
        if self.capacity > 0 {
            self.free.insert(0, self.capacity);
        }
        self.free_bytes = self.capacity;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Naive model: one bool per granule, first fit by linear scan.
    struct Naive {
        used: Vec<bool>,
        align: u64,
    }
    impl Naive {
        fn alloc(&mut self, size: u64, align: u64) -> Option<u64> {
            let n = size.max(1).div_ceil(self.align) as usize;
            let step = (align / self.align) as usize;
            let mut s = 0;
            while s + n <= self.used.len() {
                if self.used[s..s + n].iter().all(|u| !*u) {
                    self.used[s..s + n].iter_mut().for_each(|u| *u = true);
                    return Some(s as u64 * self.align);
                }
                s += step;
            }
            None
        }
        fn free(&mut self, start: u64, size: u64) {
            let s = (start / self.align) as usize;
            let n = size.max(1).div_ceil(self.align) as usize;
            self.used[s..s + n].iter_mut().for_each(|u| *u = false);
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Alloc(u64, u64),
        Free(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u64..5000, prop_oneof![Just(256u64), Just(512), Just(4096)])
                .prop_map(|(s, a)| Op::Alloc(s, a)),
            2 => any::<usize>().prop_map(Op::Free),
        ]
    }

    proptest! {
        #[test]
        fn matches_naive_first_fit(ops in proptest::collection::vec(op(), 1..200)) {
            let cap = 64 * 1024;
            let mut a = RangeAllocator::new(cap, 256);
            let mut m = Naive { used: vec![false; (cap / 256) as usize], align: 256 };
            let mut live: Vec<(u64, u64)> = Vec::new();
            for op in ops {
                match op {
                    Op::Alloc(size, align) => {
                        let got = if align == 256 { a.alloc(size) } else { a.alloc_aligned(size, align) };
                        let want = m.alloc(size, align);
                        prop_assert_eq!(got, want);
                        if let Some(s) = got {
                            prop_assert_eq!(s % align, 0);
                            live.push((s, size));
                        }
                    }
                    Op::Free(i) => {
                        if live.is_empty() { continue; }
                        let (s, size) = live.swap_remove(i % live.len());
                        prop_assert_eq!(a.free(s, size), Ok(()));
                        m.free(s, size);
                        // freeing again must be refused
                        prop_assert_eq!(a.free(s, size), Err(FreeError::DoubleFree));
                    }
                }
                let used: u64 = m.used.iter().filter(|u| **u).count() as u64 * 256;
                prop_assert_eq!(a.free_bytes(), cap - used);
            }
            for (s, size) in live.drain(..) {
                prop_assert_eq!(a.free(s, size), Ok(()));
            }
            prop_assert_eq!(a.fragments(), 1);
            prop_assert_eq!(a.free_bytes(), cap);
        }
    }

    #[test]
    fn exhaustion_and_bounds() {
        let mut a = RangeAllocator::new(1024, 256);
        assert_eq!(a.alloc(1024), Some(0));
        assert_eq!(a.alloc(1), None);
        assert_eq!(a.free(0, 1024), Ok(()));
        assert_eq!(a.free(2048, 1), Err(FreeError::OutOfRange));
        assert_eq!(a.free(3, 1), Err(FreeError::OutOfRange));
        assert_eq!(a.alloc(u64::MAX), None);
        assert_eq!(a.alloc(0), Some(0));
        assert_eq!(a.alloc(0), Some(256));
    }
}
