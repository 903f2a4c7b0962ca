//! Ordered map of live address ranges: interior pointers resolve to their
//! allocation in O(log n).
#![forbid(unsafe_code)]

use std::collections::BTreeMap;

#[derive(Debug, Clone)]
/// A live range: its size and what the owner keeps with it.
pub struct Entry<V> {
    /// Bytes.
    pub size: usize,
    /// The owner's data.
    pub value: V,
}

/// Non-overlapping `[base, base + size)` ranges, each with a value.
#[derive(Debug, Clone)]
pub struct AddressMap<V> {
    map: BTreeMap<usize, Entry<V>>,
}

impl<V> Default for AddressMap<V> {
    fn default() -> Self {
        AddressMap {
            map: BTreeMap::new(),
        }
    }
}

/// A found range: its base, size and value.
#[derive(Debug, PartialEq, Eq)]
pub struct Found<'a, V> {
    /// Start of the range.
    pub base: usize,
    /// Its size.
    pub size: usize,
    /// The owner's data.
    pub value: &'a V,
}

impl<V> AddressMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }
    /// Ranges held.
    pub fn len(&self) -> usize {
        self.map.len()
    }
    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Inserts a range of `size >= 1` bytes; refuses overlap (and wrap-around).
    pub fn insert(&mut self, base: usize, size: usize, value: V) -> Result<(), V> {
        let Some(end) = base.checked_add(size) else {
            return Err(value);
        };
        if size == 0 {
            return Err(value);
        }
        if let Some((&b, e)) = self.map.range(..end).next_back()
            && b + e.size > base
        {
            return Err(value);
        }
        self.map.insert(base, Entry { size, value });
        Ok(())
    }

    /// Removes the range starting exactly at `base`.
    pub fn remove(&mut self, base: usize) -> Option<Entry<V>> {
        self.map.remove(&base)
    }

    /// The range containing `addr`, if any.
    pub fn find(&self, addr: usize) -> Option<Found<'_, V>> {
        let (&base, e) = self.map.range(..=addr).next_back()?;
        (addr - base < e.size).then_some(Found {
            base,
            size: e.size,
            value: &e.value,
        })
    }

    /// The range wholly containing `[addr, addr + len)` (`len == 0` is treated as 1).
    pub fn find_span(&self, addr: usize, len: usize) -> Option<Found<'_, V>> {
        let f = self.find(addr)?;
        let end = addr.checked_add(len.max(1))?;
        (end <= f.base + f.size).then_some(f)
    }

    /// The range starting at `base`.
    pub fn get_mut(&mut self, base: usize) -> Option<&mut Entry<V>> {
        self.map.get_mut(&base)
    }

    /// Every range, by base.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Entry<V>)> {
        self.map.iter().map(|(&b, e)| (b, e))
    }

    /// Takes every range out.
    pub fn drain(&mut self) -> Vec<(usize, Entry<V>)> {
        std::mem::take(&mut self.map).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(usize, usize),
        Remove(usize),
        Find(usize),
        Span(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0usize..4000, 0usize..300).prop_map(|(b, s)| Op::Insert(b, s)),
            (0usize..64).prop_map(Op::Remove),
            (0usize..4400).prop_map(Op::Find),
            (0usize..4400, 0usize..400).prop_map(|(a, l)| Op::Span(a, l)),
        ]
    }

    proptest! {
        #[test]
        fn matches_naive_model(ops in proptest::collection::vec(op(), 1..300)) {
            let mut m: AddressMap<u32> = AddressMap::new();
            let mut naive: Vec<(usize, usize, u32)> = Vec::new();
            let mut tag = 0u32;
            for op in ops {
                match op {
                    Op::Insert(b, s) => {
                        tag += 1;
                        let overlaps = s == 0 || naive.iter().any(|&(nb, ns, _)| b < nb + ns && nb < b + s);
                        let r = m.insert(b, s, tag);
                        prop_assert_eq!(r.is_ok(), !overlaps);
                        if !overlaps { naive.push((b, s, tag)); }
                    }
                    Op::Remove(i) => {
                        if naive.is_empty() { continue; }
                        let (b, s, t) = naive.swap_remove(i % naive.len());
                        let e = m.remove(b).unwrap();
                        prop_assert_eq!((e.size, e.value), (s, t));
                        prop_assert!(m.remove(b).is_none());
                    }
                    Op::Find(a) => {
                        let want = naive.iter().find(|&&(b, s, _)| a >= b && a < b + s);
                        let got = m.find(a).map(|f| (f.base, f.size, *f.value));
                        prop_assert_eq!(got, want.copied());
                    }
                    Op::Span(a, l) => {
                        let want = naive.iter().find(|&&(b, s, _)| a >= b && a + l.max(1) <= b + s);
                        let got = m.find_span(a, l).map(|f| (f.base, f.size, *f.value));
                        prop_assert_eq!(got, want.copied());
                    }
                }
                prop_assert_eq!(m.len(), naive.len());
            }
        }
    }

    #[test]
    fn edges() {
        let mut m = AddressMap::new();
        assert!(m.insert(usize::MAX - 1, 4, ()).is_err());
        m.insert(100, 10, ()).unwrap();
        assert!(m.find(99).is_none());
        assert!(m.find(100).is_some());
        assert!(m.find(109).is_some());
        assert!(m.find(110).is_none());
        assert!(m.find_span(105, 5).is_some());
        assert!(m.find_span(105, 6).is_none());
        assert!(m.find_span(usize::MAX, 6).is_none());
    }
}
