//! What device memory a launch can reach, and which words of it are
//! pointers.
//!
//! A kernel reaches memory through its pointer arguments (and pointers
//! embedded in by-value arguments): it may index anywhere in the allocation
//! a pointer falls in, so whole allocations are taken. It also reaches
//! memory through pointers stored *in* device memory (pointer tables, linked
//! structures). Those cannot be known from the launch, so each snapshot is
//! scanned: every 8-byte aligned word whose value falls inside a live
//! allocation is taken to be a pointer to it, and that allocation is taken
//! too, transitively up to a bound. A word can hold either kind of address:
//!
//! - a *live* address (of this replay's device memory): written by an
//!   earlier kernel from the pointers the replay gave it. It must be
//!   translated again wherever the extracted archive is replayed, so it is
//!   stored as the recorded address and listed in a `relocate` event;
//! - a *recorded* address (the capture's): uploaded from the application's
//!   host memory. The original replay handed the kernel exactly these bytes,
//!   so they are kept verbatim.
//!
//! A data word that happens to equal an address is treated as a pointer too;
//! the cost is an allocation too many and, for live values, a rewritten
//! word, which the D2H checks of the extracted archive would show.

/// One allocation of the replay's address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Recorded base address.
    pub base: u64,
    pub size: u64,
    /// Where the replay put it.
    pub live: u64,
}

impl Region {
    fn end(&self) -> u64 {
        self.base.saturating_add(self.size.max(1))
    }
    fn live_end(&self) -> u64 {
        self.live.saturating_add(self.size.max(1))
    }
}

/// Allocations by recorded and by live address.
pub struct Index {
    /// Sorted by `base`.
    regions: Vec<Region>,
    /// Indices into `regions`, sorted by `live`.
    by_live: Vec<usize>,
}

/// A word of a snapshot whose value points into an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerWord {
    /// Byte offset of the word in its allocation.
    pub offset: u64,
    /// Index of the allocation it points into.
    pub target: usize,
    /// A live address (relocated) rather than a recorded one (kept).
    pub live: bool,
}

impl Index {
    /// `regions` must be sorted by base and disjoint, as the replay's
    /// allocation map is.
    pub fn new(regions: Vec<Region>) -> Index {
        debug_assert!(regions.windows(2).all(|w| w[0].base < w[1].base));
        let mut by_live: Vec<usize> = (0..regions.len()).collect();
        by_live.sort_by_key(|&i| regions[i].live);
        Index { regions, by_live }
    }

    pub fn get(&self, i: usize) -> &Region {
        &self.regions[i]
    }

    pub fn len(&self) -> usize {
        self.regions.len()
    }

    /// The allocation holding recorded address `v`.
    pub fn by_recorded(&self, v: u64) -> Option<usize> {
        let i = self
            .regions
            .partition_point(|r| r.base <= v)
            .checked_sub(1)?;
        (v < self.regions[i].end()).then_some(i)
    }

    /// The allocation a kernel argument `v` points into: the one holding
    /// it, or the one it is one past the end of (a loop bound), as the
    /// replay's translation accepts.
    pub fn for_argument(&self, v: u64) -> Option<usize> {
        self.by_recorded(v).or_else(|| {
            let i = self.by_recorded(v.checked_sub(1)?)?;
            (self.regions[i].base + self.regions[i].size == v).then_some(i)
        })
    }

    /// The allocation holding live address `v`.
    pub fn by_live(&self, v: u64) -> Option<usize> {
        let k = self
            .by_live
            .partition_point(|&i| self.regions[i].live <= v)
            .checked_sub(1)?;
        let i = self.by_live[k];
        (v < self.regions[i].live_end()).then_some(i)
    }

    /// The pointer words of `bytes` (an allocation's contents): aligned
    /// words inside some allocation, live addresses before recorded ones.
    pub fn pointer_words(&self, bytes: &[u8]) -> Vec<PointerWord> {
        let mut found = Vec::new();
        for (k, w) in bytes.chunks_exact(8).enumerate() {
            let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            if v == 0 {
                continue;
            }
            let offset = k as u64 * 8;
            if let Some(target) = self.by_live(v) {
                found.push(PointerWord {
                    offset,
                    target,
                    live: true,
                });
            } else if let Some(target) = self.by_recorded(v) {
                found.push(PointerWord {
                    offset,
                    target,
                    live: false,
                });
            }
        }
        found
    }

    /// Rewrites the live pointer words of `bytes` as the recorded addresses
    /// they stand for.
    pub fn to_recorded(&self, bytes: &mut [u8], words: &[PointerWord]) {
        for w in words.iter().filter(|w| w.live) {
            let o = w.offset as usize;
            let v = u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
            let r = &self.regions[w.target];
            let recorded = r.base + (v - r.live);
            bytes[o..o + 8].copy_from_slice(&recorded.to_le_bytes());
        }
    }
}

/// The byte ranges `(start, len)` of `[0, size)` outside the 8-byte words
/// at `words` (sorted offsets).
pub fn ranges_between(size: u64, words: &[u64]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = 0;
    for &w in words {
        if w > at {
            out.push((at, w - at));
        }
        at = at.max(w + 8);
    }
    if size > at {
        out.push((at, size - at));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> Index {
        Index::new(vec![
            Region {
                base: 0x1000,
                size: 0x100,
                live: 0x9000,
            },
            Region {
                base: 0x2000,
                size: 0x40,
                live: 0x8000,
            },
        ])
    }

    fn words(w: &[u64]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn lookups_by_recorded_and_live_address() {
        let ix = index();
        assert_eq!(ix.by_recorded(0x1000), Some(0));
        assert_eq!(ix.by_recorded(0x10ff), Some(0));
        assert_eq!(ix.by_recorded(0x1100), None);
        assert_eq!(ix.for_argument(0x1100), Some(0), "one past the end");
        assert_eq!(ix.for_argument(0x2040), Some(1));
        assert_eq!(ix.by_recorded(0xfff), None);
        assert_eq!(ix.by_live(0x8000), Some(1));
        assert_eq!(ix.by_live(0x90ff), Some(0));
        assert_eq!(ix.by_live(0x9100), None);
        assert_eq!(ix.by_live(0x7fff), None);
    }

    #[test]
    fn pointer_words_prefer_live_addresses_and_convert_them() {
        let ix = index();
        // live ptr into region 1, data, recorded ptr into region 0, null,
        // live ptr into region 0 at +8.
        let mut bytes = words(&[0x8010, 12345, 0x1004, 0, 0x9008]);
        bytes.extend_from_slice(&[0x10, 0x80, 0, 0]); // a tail shorter than a word
        let found = ix.pointer_words(&bytes);
        assert_eq!(
            found,
            [
                PointerWord {
                    offset: 0,
                    target: 1,
                    live: true
                },
                PointerWord {
                    offset: 16,
                    target: 0,
                    live: false
                },
                PointerWord {
                    offset: 32,
                    target: 0,
                    live: true
                },
            ]
        );
        ix.to_recorded(&mut bytes, &found);
        assert_eq!(
            &bytes[..40],
            &words(&[0x2010, 12345, 0x1004, 0, 0x1008])[..]
        );
    }

    #[test]
    fn ranges_skip_pointer_words() {
        assert_eq!(ranges_between(32, &[]), [(0, 32)]);
        assert_eq!(ranges_between(32, &[0, 8, 16, 24]), []);
        assert_eq!(ranges_between(40, &[8, 16]), [(0, 8), (24, 16)]);
        assert_eq!(ranges_between(0, &[]), []);
    }
}
