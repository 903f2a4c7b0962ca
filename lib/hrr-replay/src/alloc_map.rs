//! `AllocMap`: the ordered map of live allocations that replay translates
//! recorded addresses through (DESIGN.md §5).
//!
//! Keyed by recorded base; an interior pointer resolves to `live base + offset`
//! with one `BTreeMap::range` probe, O(log n).

use std::collections::BTreeMap;

use hrr_core::event::MemKind;

/// One live allocation: where it was at capture and where it lives now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alloc {
    /// The recorded base address.
    pub base: u64,
    /// Its size in bytes.
    pub size: u64,
    /// The kind of memory it is.
    pub mem: MemKind,
    /// Address of the replay-side allocation backing it.
    pub live: u64,
    /// Created by region materialisation rather than an `alloc` event.
    pub materialised: bool,
}

impl Alloc {
    /// One past the last recorded byte (saturating).
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }
}

/// Why an insertion or removal was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocMapError {
    #[error("allocation {new_base:#x}+{new_size} overlaps live allocation {base:#x}+{size}")]
    /// The new allocation overlaps a live one.
    Overlap {
        /// The new allocation's recorded base.
        new_base: u64,
        /// Its size.
        new_size: u64,
        /// The live allocation's base.
        base: u64,
        /// Its size.
        size: u64,
    },
    #[error("free of {0:#x}, which is not the base of a live allocation (double free?)")]
    /// The address freed is not a live allocation's base.
    NotLive(u64),
}

/// Ordered range map of live allocations.
#[derive(Debug, Default, Clone)]
pub struct AllocMap {
    by_base: BTreeMap<u64, Alloc>,
}

impl AllocMap {
    /// An empty map.
    pub fn new() -> AllocMap {
        AllocMap::default()
    }

    /// Live allocations.
    pub fn len(&self) -> usize {
        self.by_base.len()
    }

    /// Whether no allocation is live.
    pub fn is_empty(&self) -> bool {
        self.by_base.is_empty()
    }

    /// The live allocations, by recorded base.
    pub fn iter(&self) -> impl Iterator<Item = &Alloc> {
        self.by_base.values()
    }

    /// Registers an allocation; overlapping a live one is refused.
    /// A zero-sized allocation occupies its base byte so it stays findable.
    pub fn insert(&mut self, alloc: Alloc) -> Result<(), AllocMapError> {
        let end = alloc.base.saturating_add(alloc.size.max(1));
        let clash = self
            .by_base
            .range(..end)
            .next_back()
            .filter(|(_, a)| a.base.saturating_add(a.size.max(1)) > alloc.base);
        if let Some((_, a)) = clash {
            return Err(AllocMapError::Overlap {
                new_base: alloc.base,
                new_size: alloc.size,
                base: a.base,
                size: a.size,
            });
        }
        self.by_base.insert(alloc.base, alloc);
        Ok(())
    }

    /// Removes the allocation whose recorded base is exactly `base`.
    pub fn remove(&mut self, base: u64) -> Result<Alloc, AllocMapError> {
        self.by_base
            .remove(&base)
            .ok_or(AllocMapError::NotLive(base))
    }

    /// The allocation containing `addr` (strictly inside `[base, base+size)`).
    pub fn find(&self, addr: u64) -> Option<&Alloc> {
        self.by_base
            .range(..=addr)
            .next_back()
            .map(|(_, a)| a)
            .filter(|a| addr < a.base.saturating_add(a.size.max(1)))
    }

    /// Translates a pointer value. One-past-the-end pointers (loop bounds in
    /// kernel arguments) translate too, when no other allocation starts there.
    pub fn translate(&self, addr: u64) -> Option<u64> {
        let a = self.by_base.range(..=addr).next_back().map(|(_, a)| a)?;
        (addr <= a.end()).then(|| a.live + (addr - a.base))
    }

    /// Translates an operand of `len` bytes, which must lie inside one allocation.
    pub fn translate_range(&self, addr: u64, len: u64) -> Option<u64> {
        let a = self.find(addr)?;
        let end = addr.checked_add(len)?;
        (end <= a.end()).then(|| a.live + (addr - a.base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn alloc(base: u64, size: u64) -> Alloc {
        Alloc {
            base,
            size,
            mem: MemKind::Device,
            live: base ^ 0xff00_0000,
            materialised: false,
        }
    }

    #[test]
    fn interior_and_one_past_end() {
        let mut m = AllocMap::new();
        m.insert(alloc(0x1000, 0x100)).unwrap();
        assert_eq!(m.translate(0x1010), Some((0x1000 ^ 0xff00_0000) + 0x10));
        assert_eq!(m.translate(0x1100), Some((0x1000 ^ 0xff00_0000) + 0x100));
        assert_eq!(m.translate(0x1101), None);
        assert_eq!(
            m.translate_range(0x10f0, 0x10),
            Some((0x1000 ^ 0xff00_0000) + 0xf0)
        );
        assert_eq!(m.translate_range(0x10f0, 0x11), None);
        assert_eq!(m.translate(0xfff), None);
    }

    #[test]
    fn overlap_and_double_free_are_reported() {
        let mut m = AllocMap::new();
        m.insert(alloc(0x1000, 0x100)).unwrap();
        assert!(matches!(
            m.insert(alloc(0x10ff, 1)),
            Err(AllocMapError::Overlap { .. })
        ));
        assert!(matches!(
            m.insert(alloc(0xf00, 0x101)),
            Err(AllocMapError::Overlap { .. })
        ));
        m.insert(alloc(0x1100, 1)).unwrap();
        m.remove(0x1000).unwrap();
        assert_eq!(m.remove(0x1000), Err(AllocMapError::NotLive(0x1000)));
    }

    /// The naive model: a list scanned linearly.
    fn model_translate(live: &[(u64, u64)], addr: u64, len: u64) -> Option<u64> {
        live.iter()
            .find(|(b, s)| addr >= *b && addr < b + (*s).max(1) && addr + len <= b + s)
            .map(|(b, _)| (b ^ 0xff00_0000) + (addr - b))
    }

    proptest! {
        #[test]
        fn agrees_with_linear_model(
            ops in proptest::collection::vec((0u64..64, 1u64..5, any::<bool>()), 1..200),
            probes in proptest::collection::vec((0u64..0x5000, 0u64..64), 1..100),
        ) {
            let mut m = AllocMap::new();
            let mut model: Vec<(u64, u64)> = Vec::new();
            for (slot, pages, add) in ops {
                let base = 0x1000 + slot * 0x100;
                let size = pages * 0x40;
                if add {
                    let overlaps = model.iter().any(|(b, s)| base < b + s && *b < base + size);
                    prop_assert_eq!(m.insert(alloc(base, size)).is_err(), overlaps);
                    if !overlaps { model.push((base, size)); }
                } else {
                    let present = model.iter().position(|(b, _)| *b == base);
                    prop_assert_eq!(m.remove(base).is_ok(), present.is_some());
                    if let Some(i) = present { model.remove(i); }
                }
            }
            for (addr, len) in probes {
                prop_assert_eq!(m.translate_range(addr, len), model_translate(&model, addr, len));
            }
        }
    }
}
