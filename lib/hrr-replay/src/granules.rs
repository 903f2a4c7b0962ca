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

use std::collections::{BTreeMap, HashMap};

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
        let inside = self
            .reserved
            .range(..=start)
            .next_back()
            .is_some_and(|(&b, &s)| gend <= b + s);
        if !inside {
            return None;
        }
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
            plan.gaps.push((at, next - at));
            plan.fresh.push(clip(at, next));
            at = next;
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
        let mut g: Granules<u32> = Granules::new(0x1000);
        g.reserved(0x10_000, 0x10_000);
        assert!(g.plan(0x2_0000, 8).is_none(), "outside every reservation");
        assert!(
            g.plan(0x1f_800, 0x1000).is_none(),
            "runs past the reservation"
        );

        // A: [0x10100, 0x11100) maps two granules.
        let a = g.plan(0x10_100, 0x1000).unwrap();
        assert_eq!(a.gaps, [(0x10_000, 0x2000)]);
        assert_eq!(a.fresh, [(0x10_100, 0x11_100)]);
        assert!(a.reused.is_empty());
        g.commit(0x10_100, a, &[1]);
        assert!(g.plan(0x10_100, 1).is_none(), "placed already");

        // B: [0x11200, 0x13000) shares A's second granule, maps one more.
        let b = g.plan(0x11_200, 0x1e00).unwrap();
        assert_eq!(b.reused, [(0x11_200, 0x12_000)]);
        assert_eq!(b.gaps, [(0x12_000, 0x1000)]);
        assert_eq!(b.fresh, [(0x12_000, 0x13_000)]);
        g.commit(0x11_200, b, &[2]);

        // Freeing A keeps its mapping: B still uses it.
        assert_eq!(g.free(0x10_100), Some(vec![]));
        // C lands in the middle of A's old mapping: shares it.
        let c = g.plan(0x10_000, 0x10).unwrap();
        assert!(c.gaps.is_empty());
        assert_eq!(c.reused, [(0x10_000, 0x10_010)]);
        g.commit(0x10_000, c, &[]);
        assert_eq!(
            g.free(0x11_200),
            Some(vec![Mapping {
                start: 0x12_000,
                len: 0x1000,
                handle: 2
            }])
        );
        assert_eq!(
            g.free(0x10_000),
            Some(vec![Mapping {
                start: 0x10_000,
                len: 0x2000,
                handle: 1
            }])
        );
        assert_eq!(g.free(0x10_000), None);
        let (maps, res) = g.drain();
        assert!(maps.is_empty());
        assert_eq!(res, [(0x10_000, 0x10_000)]);
    }
}
