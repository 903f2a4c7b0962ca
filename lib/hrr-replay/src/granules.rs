//! `Granules`: the bookkeeping a backend needs to place allocations with a
//! virtual memory API (reserve address space, map physical memory in whole
//! granules), shared by the HIP and CUDA backends, which only make the calls.
//!
//! Recorded allocations are rarely granule-sized: runtimes pack small ones
//! (256-byte aligned in a 4 KiB page, or many in a 2 MiB GPU page), so
//! neighbours share granules. A granule is mapped once, for the first live
//! allocation with bytes in it, and shared by the others; it is unmapped when
//! the last one is freed. A new allocation therefore maps only the gaps of
//! its granule range, and must zero its bytes in the granules it shares
//! (a freed neighbour may have left data there).
//!
//! A gap is mapped a [`SLAB`] at a time where the granule is smaller
//! (the CPU runtime's 4 KiB pages): one mapping per small allocation would
//! run a process past the kernel's limit on mappings (`vm.max_map_count`,
//! 65530) after some 65 thousand allocations, while a slab serves hundreds
//! of neighbours. Its bytes beyond the allocation are zeroed by whichever
//! allocation lands there later, as in any shared granule.

use std::collections::{BTreeMap, HashMap};

/// The smallest length a gap is mapped in, where the reservation has room.
pub const SLAB: u64 = 2 << 20;

/// One mapping: whole granules, and what the backend keeps of it (`H`: its
/// physical allocation's handle, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping<H> {
    /// Its first byte (granule-aligned).
    pub start: u64,
    /// Its length (whole granules).
    pub len: u64,
    /// What the backend keeps of it.
    pub handle: H,
}

/// What placing one allocation takes: the gaps to map afresh, and which of
/// its bytes lie in shared granules (`reused`) or in fresh ones (`fresh`),
/// as `(start, end)` ranges, for zeroing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Granule ranges no mapping covers yet: to map.
    pub gaps: Vec<(u64, u64)>,
    /// The allocation's bytes in granules already mapped.
    pub reused: Vec<(u64, u64)>,
    /// Its bytes in the gaps.
    pub fresh: Vec<(u64, u64)>,
    shared: Vec<u64>,
}

#[derive(Debug)]
struct Entry<H> {
    len: u64,
    handle: H,
    users: u32,
}

/// Reservations, mappings and placed allocations of one device.
#[derive(Debug)]
pub struct Granules<H> {
    granularity: u64,
    /// Reservations: base → size.
    reserved: BTreeMap<u64, u64>,
    maps: BTreeMap<u64, Entry<H>>,
    /// Placed allocations: address → starts of the mappings they use.
    placed: HashMap<u64, Vec<u64>>,
}

impl<H: Copy> Granules<H> {
    /// `granularity` must be a power of two.
    pub fn new(granularity: u64) -> Granules<H> {
        Granules {
            granularity,
            reserved: BTreeMap::new(),
            maps: BTreeMap::new(),
            placed: HashMap::new(),
        }
    }

    /// The granule size.
    pub fn granularity(&self) -> u64 {
        self.granularity
    }

    /// Whether an allocation is placed at `addr`.
    pub fn is_placed(&self, addr: u64) -> bool {
        self.placed.contains_key(&addr)
    }

    /// Records a reservation the backend made.
    pub fn reserved(&mut self, base: u64, size: u64) {
        self.reserved.insert(base, size);
    }

    /// What placing `[addr, addr + size)` takes, or `None` when its granules
    /// are not all reserved (or it is placed already).
    pub fn plan(&self, addr: u64, size: u64) -> Option<Plan> {
        if self.placed.contains_key(&addr) {
            return None;
        }
        let g = self.granularity;
        let end = addr.checked_add(size.max(1))?;
        let (start, gend) = (addr & !(g - 1), end.checked_next_multiple_of(g)?);
        let reservation_end = self
            .reserved
            .range(..=start)
            .next_back()
            .map(|(&b, &s)| b + s)
            .filter(|&e| gend <= e)?;
        let slab = SLAB.max(g);
        let clip = |b: u64, e: u64| (b.max(addr), e.min(end));
        let mut plan = Plan::default();
        let mut at = start;
        while at < gend {
            let covering = self
                .maps
                .range(..=at)
                .next_back()
                .filter(|(b, m)| at < **b + m.len)
                .map(|(&b, m)| (b, b + m.len));
            if let Some((b, e)) = covering {
                plan.shared.push(b);
                plan.reused.push(clip(at, e));
                at = e;
                continue;
            }
            let next = self.maps.range(at..gend).next().map_or(gend, |(&b, _)| b);
            // The last gap runs on to its slab's end, short of the next
            // mapping and of the reservation's end.
            let mapped_end = if next == gend {
                let limit = self
                    .maps
                    .range(gend..)
                    .next()
                    .map_or(reservation_end, |(&b, _)| b.min(reservation_end));
                gend.max((at + 1).next_multiple_of(slab).min(limit))
            } else {
                next
            };
            plan.gaps.push((at, mapped_end - at));
            plan.fresh.push(clip(at, next));
            at = mapped_end;
        }
        Some(plan)
    }

    /// Records the allocation at `addr` as placed: `plan`'s gaps are now
    /// mapped, `handles[i]` backing gap `i`.
    pub fn commit(&mut self, addr: u64, plan: Plan, handles: &[H]) {
        let mut used = plan.shared;
        for (&(start, len), &handle) in plan.gaps.iter().zip(handles) {
            self.maps.insert(
                start,
                Entry {
                    len,
                    handle,
                    users: 0,
                },
            );
            used.push(start);
        }
        for b in &used {
            if let Some(m) = self.maps.get_mut(b) {
                m.users += 1;
            }
        }
        self.placed.insert(addr, used);
    }

    /// Forgets the allocation placed at `addr` and returns the mappings no
    /// one uses any more (to unmap and release); `None` when nothing was
    /// placed there.
    pub fn free(&mut self, addr: u64) -> Option<Vec<Mapping<H>>> {
        let used = self.placed.remove(&addr)?;
        let mut gone = Vec::new();
        for b in used {
            let Some(m) = self.maps.get_mut(&b) else {
                continue;
            };
            m.users = m.users.saturating_sub(1);
            if m.users == 0
                && let Some(m) = self.maps.remove(&b)
            {
                gone.push(Mapping {
                    start: b,
                    len: m.len,
                    handle: m.handle,
                });
            }
        }
        Some(gone)
    }

    /// Everything left: mappings, then reservations `(base, size)`.
    pub fn drain(&mut self) -> (Vec<Mapping<H>>, Vec<(u64, u64)>) {
        self.placed.clear();
        let maps = std::mem::take(&mut self.maps)
            .into_iter()
            .map(|(start, m)| Mapping {
                start,
                len: m.len,
                handle: m.handle,
            })
            .collect();
        (
            maps,
            std::mem::take(&mut self.reserved).into_iter().collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_share_granules_until_the_last_is_freed() {
        // Granules of 2 MiB: a slab is one granule.
        const G: u64 = SLAB;
        let mut g: Granules<u32> = Granules::new(G);
        g.reserved(16 * G, 16 * G);
        assert!(g.plan(32 * G, 8).is_none(), "outside every reservation");
        assert!(
            g.plan(32 * G - 8, 16).is_none(),
            "runs past the reservation"
        );

        // A: [16G + 0x100, 17G + 0x100) maps two granules.
        let a = g.plan(16 * G + 0x100, G).unwrap();
        assert_eq!(a.gaps, [(16 * G, 2 * G)]);
        assert_eq!(a.fresh, [(16 * G + 0x100, 17 * G + 0x100)]);
        assert!(a.reused.is_empty());
        g.commit(16 * G + 0x100, a, &[1]);
        assert!(g.plan(16 * G + 0x100, 1).is_none(), "placed already");

        // B: [17G + 0x200, 19G) shares A's second granule, maps one more.
        let b = g.plan(17 * G + 0x200, 2 * G - 0x200).unwrap();
        assert_eq!(b.reused, [(17 * G + 0x200, 18 * G)]);
        assert_eq!(b.gaps, [(18 * G, G)]);
        assert_eq!(b.fresh, [(18 * G, 19 * G)]);
        g.commit(17 * G + 0x200, b, &[2]);

        // Freeing A keeps its mapping: B still uses it.
        assert_eq!(g.free(16 * G + 0x100), Some(vec![]));
        // C lands in the middle of A's old mapping: shares it.
        let c = g.plan(16 * G, 0x10).unwrap();
        assert!(c.gaps.is_empty());
        assert_eq!(c.reused, [(16 * G, 16 * G + 0x10)]);
        g.commit(16 * G, c, &[]);
        assert_eq!(
            g.free(17 * G + 0x200),
            Some(vec![Mapping {
                start: 18 * G,
                len: G,
                handle: 2
            }])
        );
        assert_eq!(
            g.free(16 * G),
            Some(vec![Mapping {
                start: 16 * G,
                len: 2 * G,
                handle: 1
            }])
        );
        assert_eq!(g.free(16 * G), None);
        let (maps, res) = g.drain();
        assert!(maps.is_empty());
        assert_eq!(res, [(16 * G, 16 * G)]);
    }

    /// Small granules are mapped a slab at a time, so that thousands of
    /// small neighbours share a few mappings; a slab stops short of the
    /// next mapping and of the reservation's end.
    #[test]
    fn small_granules_are_mapped_a_slab_at_a_time() {
        const G: u64 = 0x1000;
        let mut g: Granules<u32> = Granules::new(G);
        let base = 4 * SLAB;
        g.reserved(base, SLAB + 3 * G);
        let mut handles = 0;
        for k in 0..(SLAB / G + 3) {
            let addr = base + k * G;
            let p = g.plan(addr, G).unwrap();
            assert_eq!(p.fresh.len() + p.reused.len(), 1, "{p:?}");
            handles += p.gaps.len() as u32;
            let ids: Vec<u32> = (0..p.gaps.len() as u32).map(|i| handles - i).collect();
            g.commit(addr, p, &ids);
        }
        assert_eq!(
            handles, 2,
            "one slab, then the reservation's last 3 granules"
        );
        let (maps, _) = g.drain();
        assert_eq!(
            maps.iter().map(|m| (m.start, m.len)).collect::<Vec<_>>(),
            [(base, SLAB), (base + SLAB, 3 * G)]
        );

        // Short of the next mapping.
        let mut g: Granules<u32> = Granules::new(G);
        g.reserved(base, SLAB);
        let p = g.plan(base + 8 * G, G).unwrap();
        g.commit(base + 8 * G, p, &[1]);
        let p = g.plan(base, G).unwrap();
        assert_eq!(p.gaps, [(base, 8 * G)]);
    }
}
