//! `Placement`: replay at the recorded addresses.
//!
//! Translation rewrites every pointer replay can see (operands, kernel
//! arguments, pointers in by-value structs), but not pointers the program
//! stored *inside* device memory: a table of device pointers copied to the
//! GPU, or one a kernel builds. Those stay valid only when each allocation
//! lives at its recorded address. So, before replaying, [`plan`] scans the
//! archive for device allocations and declared region segments and
//! [`Placement::reserve`] reserves their address ranges on the device
//! (rounded out to its granularity, overlapping ones merged): from then on
//! neither the runtime nor `hrr-play` can put anything else there. Each
//! allocation is then made at its recorded address ([`Placement::place`])
//! where the device can; where it cannot (the range was taken before it could
//! be reserved, a granule it needs is held by a neighbour) it falls back to an
//! ordinary allocation and translation, with the reason.
//!
//! A placed allocation is an ordinary entry of the allocation map whose live
//! address is its recorded one: translation stays the rule (it is the
//! identity there), so a replay that places some allocations and translates
//! others is correct wherever pure translation was.
//!
//! Placed are device allocations (`MemKind::Device`, pools included),
//! materialised segments and the program's own virtual-memory reservations
//! (see `VirtualMemory`); host, pinned and managed memory and module globals
//! are always translated.

use std::collections::BTreeMap;

use crate::device::Device;
use crate::region_timeline::RegionTimeline;
use hrr_core::archive::Archive;
use hrr_core::event::{MemKind, Op};
use hrr_core::event_reader::ReadOptions;
use hrr_core::region_record::{RegionKind, RegionOp};

/// The recorded `(base, size)` of every device allocation of the archive
/// (successful `alloc` and `pool_alloc` events) and every declared region
/// segment. A read
/// error ends the scan with what was found: the replay reports it.
pub fn plan(archive: &Archive, read: ReadOptions, regions: &RegionTimeline) -> Vec<(u64, u64)> {
    // Every segment the sidecars ever declare (the timeline's live set is
    // still empty before replay).
    let mut ranges: Vec<(u64, u64)> = regions
        .records()
        .iter()
        .filter(|r| r.op == RegionOp::Add && r.kind == RegionKind::Segment)
        .map(|r| (r.base, r.size))
        .collect();
    // Only allocation lines are parsed ("alloc" is in `alloc` and
    // `pool_alloc`, and in the names of the calls that make them): a
    // launch-heavy archive's other lines are passed over unparsed.
    if let Ok(events) = archive
        .events(read)
        .map(|r| r.mentioning(&["alloc", "va_reserve"]))
    {
        for e in events {
            let Ok(e) = e else { break };
            // Allocations from a pool are placed too where the backend has
            // no pools of its own (they are plain allocations there).
            let range = match e.op {
                Op::Alloc {
                    ptr,
                    size,
                    mem: MemKind::Device,
                }
                | Op::PoolAlloc { ptr, size, .. }
                | Op::VaReserve { ptr, size } => Some((ptr, size)),
                _ => None,
            };
            if let Some((ptr, size)) = range
                && e.ret == 0
                && ptr.0 != 0
            {
                ranges.push((ptr.0, size));
            }
        }
    }
    ranges
}

/// How many reservations placement makes at most, short of retries: each
/// is a mapping of the process, and the kernel allows about 65 thousand
/// (`vm.max_map_count`), threads' stacks and the runtime's own included.
pub const MAX_RESERVATIONS: usize = 4096;

/// `ranges` (sorted, disjoint) in at most `max` groups of neighbours, each
/// reserved as one range from its first start to its last end: the
/// smallest gaps are spanned first. Address space costs nothing; a mapping
/// per allocation would run out.
fn coalesce(ranges: &[(u64, u64)], max: usize) -> Vec<&[(u64, u64)]> {
    let max = max.max(1);
    let mut cut = vec![true; ranges.len().saturating_sub(1)];
    if ranges.len() > max {
        // Keep the `max - 1` widest gaps as cuts.
        let mut gaps: Vec<(u64, usize)> = ranges
            .windows(2)
            .enumerate()
            .map(|(i, w)| (w[1].0 - w[0].1, i))
            .collect();
        gaps.sort_unstable_by(|a, b| b.cmp(a));
        cut.fill(false);
        for &(_, i) in &gaps[..max - 1] {
            cut[i] = true;
        }
    }
    let mut groups = Vec::new();
    let mut start = 0;
    for (i, &c) in cut.iter().enumerate() {
        if c {
            groups.push(&ranges[start..=i]);
            start = i + 1;
        }
    }
    if start < ranges.len() {
        groups.push(&ranges[start..]);
    }
    groups
}

/// One reservation placement makes: its parts (recorded ranges rounded out
/// to the granularity, overlapping ones merged), reserved as one range
/// from the first part's start to the last part's end, aligned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// Sorted and disjoint.
    pub parts: Vec<(u64, u64)>,
}

impl Reservation {
    /// `[start, end)` of the range reserved for it, aligned to `align`.
    pub fn span(&self, align: u64) -> (u64, u64) {
        span(&self.parts, align)
    }
}

fn span(parts: &[(u64, u64)], align: u64) -> (u64, u64) {
    let (b, e) = (parts[0].0, parts[parts.len() - 1].1);
    (
        b & !(align - 1),
        e.checked_next_multiple_of(align).unwrap_or(e),
    )
}

/// The reservations placement makes for the recorded `ranges` (see
/// [`plan`]) on a device of granularity `granularity` whose reservations
/// must be aligned to `align` (both powers of two): at most
/// [`MAX_RESERVATIONS`] (neighbours grouped), none overlapping another
/// once aligned. A backend that needs the recorded address space kept free
/// before it starts (the CUDA driver) holds these spans.
pub fn reservations(ranges: &[(u64, u64)], granularity: u64, align: u64) -> Vec<Reservation> {
    let g = granularity;
    let mut rounded: Vec<(u64, u64)> = ranges
        .iter()
        .filter_map(|&(base, size)| {
            let end = base.checked_add(size.max(1))?.checked_add(g - 1)? & !(g - 1);
            Some((base & !(g - 1), end))
        })
        .collect();
    rounded.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(rounded.len());
    for (b, e) in rounded {
        match merged.last_mut() {
            Some(last) if b < last.1 => last.1 = last.1.max(e),
            _ => merged.push((b, e)),
        }
    }
    let mut out: Vec<Reservation> = Vec::new();
    for group in coalesce(&merged, MAX_RESERVATIONS) {
        let (b, _) = span(group, align);
        match out.last_mut() {
            // Aligned, it would overlap the one before: one reservation.
            Some(last) if b < last.span(align).1 => last.parts.extend_from_slice(group),
            _ => out.push(Reservation {
                parts: group.to_vec(),
            }),
        }
    }
    out
}

/// Where placement stands for one device: the recorded ranges it reserved.
/// Cloned into each replay (`--loop`): reservations last as long as the device.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    enabled: bool,
    /// Reserved ranges, disjoint: base → end.
    reserved: BTreeMap<u64, u64>,
    /// Granule-rounded ranges the device refused to reserve.
    refused: u64,
    /// The first of those, and the device's reason.
    first_refusal: Option<String>,
    /// Why nothing can be placed at all, when so (said once, not per allocation).
    unable: Option<String>,
}

/// What [`Placement::place`] did with one allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placed {
    /// At its recorded address, which is its live address.
    At(u64),
    /// Not placed, for this reason: allocate and translate as usual.
    Fallback(String),
    /// Placement is off (`--no-placement`) or the device cannot place:
    /// allocate and translate, nothing to say per allocation.
    Off,
}

impl Placement {
    /// Pure translation (`--no-placement`).
    pub fn off() -> Placement {
        Placement::default()
    }

    /// Reserves `ranges` (recorded `(base, size)`, see [`plan`]) on `dev`:
    /// the [`reservations`] its granularity and reservation alignment make
    /// of them.
    pub fn reserve(dev: &mut dyn Device, ranges: &[(u64, u64)]) -> Placement {
        let Some(g) = dev.placement_granularity().filter(|g| g.is_power_of_two()) else {
            return Placement {
                enabled: true,
                unable: Some(format!(
                    "{} cannot map memory at a requested address",
                    dev.name()
                )),
                ..Placement::default()
            };
        };
        let align = dev.reservation_alignment().max(g);
        let mut p = Placement {
            enabled: true,
            ..Placement::default()
        };
        for group in reservations(ranges, g, align) {
            p.reserve_group(dev, &group.parts, align);
        }
        p
    }

    /// Reserves `parts` (granule-rounded, sorted, disjoint) as one range
    /// aligned to `align`; where that is refused (something lies in a gap
    /// it spans), each half on its own, down to single ranges: a few
    /// obstacles cost a few reservations each, not one per range.
    fn reserve_group(&mut self, dev: &mut dyn Device, parts: &[(u64, u64)], align: u64) {
        let (b, e) = span(parts, align);
        if self.reserved_for(b, e - b) {
            return;
        }
        let answer = dev.reserve_at(b, e - b);
        if matches!(answer, Ok(true)) {
            self.reserved.insert(b, e);
        } else if parts.len() == 1 {
            self.refused += 1;
            if self.first_refusal.is_none() {
                let why = answer
                    .err()
                    .map_or_else(|| "not available".into(), |e| e.to_string());
                self.first_refusal = Some(format!("{b:#x}+{}: {why}", e - b));
            }
        } else {
            let (left, right) = parts.split_at(parts.len() / 2);
            self.reserve_group(dev, left, align);
            self.reserve_group(dev, right, align);
        }
    }

    /// Whether placement was asked for (it may still place nothing).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Granule-rounded recorded ranges the device refused to reserve.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// What a user should know before the replay starts: why nothing can be
    /// placed, or which reservation the device refused first and why.
    pub fn note(&self) -> Option<String> {
        if let Some(why) = &self.unable {
            return Some(format!("{why}; every allocation is translated"));
        }
        self.first_refusal.as_ref().map(|first| {
            format!(
                "the device refused {} of the recorded ranges' reservations; the first: {first}",
                self.refused
            )
        })
    }

    /// Why no allocation can be placed, when none can.
    pub fn unable(&self) -> Option<&str> {
        self.unable.as_deref()
    }

    /// Whether `[base, base + size)` lies inside one reserved range.
    fn reserved_for(&self, base: u64, size: u64) -> bool {
        let Some(end) = base.checked_add(size.max(1)) else {
            return false;
        };
        self.reserved
            .range(..=base)
            .next_back()
            .is_some_and(|(_, &e)| end <= e)
    }

    /// Whether `[base, base + size)` lies in a range this placement reserved
    /// on the device: something recorded there can be made at its address.
    pub fn holds(&self, base: u64, size: u64) -> bool {
        self.enabled && self.unable.is_none() && self.reserved_for(base, size)
    }

    /// Why `[base, base + size)` cannot be had at its recorded address.
    pub fn why_not(&self, base: u64, size: u64) -> &'static str {
        if self.reserved_for(base, size) {
            "the device could not map it at that address"
        } else {
            "its recorded range was taken before replay could reserve it"
        }
    }

    /// Makes the allocation recorded at `[base, base + size)` at that address
    /// when it can. Only device memory is placed.
    pub fn place(&self, dev: &mut dyn Device, base: u64, size: u64, mem: MemKind) -> Placed {
        if !self.enabled || self.unable.is_some() || mem != MemKind::Device {
            return Placed::Off;
        }
        if !self.reserved_for(base, size) {
            return Placed::Fallback(
                "its recorded range was taken before replay could reserve it".into(),
            );
        }
        match dev.alloc_at(base, size, mem) {
            Ok(Some(live)) => Placed::At(live),
            Ok(None) => Placed::Fallback(
                "the device could not map it at that address (a granule it needs is in use)".into(),
            ),
            Err(e) => Placed::Fallback(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mem_device::MemDevice;
    use crate::engine::{AddressSpace, PinnedHost, ReplayOptions, Replayer};
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::{ArchiveBuilder, ptr_arg};

    const A: u64 = 0x7f00_0000_0000;
    const B: u64 = 0x7f00_0010_0000;
    /// Shares A's 4 KiB granule.
    const C: u64 = A + 0x400;

    /// Three allocations, a launch taking each as a pointer argument, and a
    /// D2H of each (zero-filled): placed or translated, replay is correct.
    fn archive() -> ArchiveBuilder {
        ArchiveBuilder::new(Platform::Cpu)
            .alloc(A, 0x400)
            .alloc(B, 0x2000)
            .alloc(C, 0x100)
            .launch(
                "k",
                b"code",
                [1, 1, 1],
                [1, 1, 1],
                vec![ptr_arg(A + 8), ptr_arg(B), ptr_arg(C)],
            )
            .d2h(A, &[0; 0x400])
            .d2h(B, &[0; 0x2000])
            .d2h(C, &[0; 0x100])
    }

    fn replay(dev: &mut MemDevice, place: bool) -> crate::engine::ReplaySummary {
        let t = tempfile::tempdir().unwrap();
        let archive = Archive::open(archive().write(t.path().join("a.hrr")).unwrap()).unwrap();
        let regions = RegionTimeline::default();
        let ranges = plan(&archive, ReadOptions::default(), &regions);
        let placement = if place {
            Placement::reserve(dev, &ranges)
        } else {
            Placement::off()
        };
        let space = AddressSpace {
            placement,
            ..AddressSpace::default()
        };
        let mut pinned = PinnedHost::new(0);
        let opts = ReplayOptions::default();
        let (s, e) = Replayer::new(dev, &archive, &opts, space, None, &mut pinned).run(|_| {});
        assert!(e.is_none(), "{e:?}");
        assert_eq!((s.d2h_exact, s.d2h_fail), (3, 0), "{s:?}");
        s
    }

    fn words(launch: &[u8]) -> Vec<u64> {
        launch
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    #[test]
    fn many_ranges_are_reserved_in_few_groups_spanning_the_smallest_gaps() {
        let ranges: Vec<(u64, u64)> = (0..10u64)
            .map(|i| {
                (
                    i * 0x10_000 + if i >= 5 { 0x100_0000 } else { 0 },
                    i * 0x10_000 + 0x1000,
                )
            })
            .map(|(b, e)| (b, e.max(b + 0x1000)))
            .collect();
        let groups = coalesce(&ranges, 2);
        assert_eq!(groups.len(), 2);
        assert_eq!(
            (groups[0].len(), groups[1].len()),
            (5, 5),
            "cut at the widest gap"
        );
        assert_eq!(
            coalesce(&ranges, 100).len(),
            10,
            "under the limit: one each"
        );
        assert!(coalesce(&[], 4).is_empty());
    }

    /// Aligned to a coarser block (the CUDA driver's 32 MiB), neighbours
    /// that would share a block are one reservation, and every span is
    /// whole blocks.
    #[test]
    fn reservations_are_whole_blocks_that_never_overlap() {
        const M: u64 = 1 << 20;
        let ranges = [
            (100 * M, 1),
            (110 * M, 3 * M),
            (200 * M, 64 * M),
            (1000 * M, 4 * M),
        ];
        let r = reservations(&ranges, 2 * M, 32 * M);
        let spans: Vec<(u64, u64)> = r.iter().map(|r| r.span(32 * M)).collect();
        assert_eq!(
            spans,
            [(96 * M, 128 * M), (192 * M, 288 * M), (992 * M, 1024 * M)]
        );
        assert_eq!(r[0].parts, [(100 * M, 102 * M), (110 * M, 114 * M)]);
    }

    /// A group refused as a whole (something lies in a gap it spans) is
    /// reserved range by range.
    #[test]
    fn a_refused_group_is_reserved_range_by_range() {
        let mut dev = MemDevice::new(false);
        dev.granularity = Some(0x1000);
        dev.taken.push((0x3000, 0x1000));
        let ranges: Vec<(u64, u64)> = (0..2 * MAX_RESERVATIONS as u64)
            .map(|i| (0x1000 + i * 0x4000, 0x1000))
            .collect();
        let p = Placement::reserve(&mut dev, &ranges);
        assert!(p.holds(0x1000, 0x1000) && p.holds(0x5000, 0x1000), "{p:?}");
        assert_eq!(p.refused(), 0);
        assert!(
            dev.place_reserved.len() <= MAX_RESERVATIONS + 16,
            "{}",
            dev.place_reserved.len()
        );
    }

    /// A range the device will not reserve is counted, and the first is
    /// named once with the device's answer.
    #[test]
    fn a_refused_range_is_named_once() {
        let mut dev = MemDevice::new(false);
        dev.granularity = Some(0x1000);
        dev.taken.push((0x9000, 0x1000));
        let p = Placement::reserve(&mut dev, &[(0x1000, 0x1000), (0x9000, 0x100)]);
        assert_eq!(p.refused(), 1);
        assert!(p.holds(0x1000, 0x1000));
        let note = p.note().expect("a refusal is told");
        assert!(
            note.contains("refused 1 ") && note.contains("0x9000+4096: not available"),
            "{note}"
        );
        assert_eq!(Placement::reserve(&mut dev, &[]).note(), None);
    }

    #[test]
    fn placed_allocations_translate_to_themselves() {
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        dev.granularity = Some(0x1000);
        let s = replay(&mut dev, true);
        // C shares A's granule: only A can have it.
        assert_eq!((s.placement.placed, s.placement.allocations), (2, 3));
        assert!(s.placement.enabled);
        assert_eq!(
            s.placement.fallbacks.len(),
            1,
            "{:?}",
            s.placement.fallbacks
        );
        assert!(
            s.placement.fallbacks[0].contains("0x7f0000000400+256: translated, not placed"),
            "{:?}",
            s.placement.fallbacks
        );
        let w = words(&dev.launches[0]);
        assert_eq!(&w[..2], &[A + 8, B], "placed: the recorded addresses");
        assert_ne!(w[2], C, "C was translated");
    }

    #[test]
    fn a_taken_range_falls_back_to_translation() {
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        dev.granularity = Some(0x1000);
        dev.taken = vec![(B + 0x1000, 1)];
        let s = replay(&mut dev, true);
        assert_eq!((s.placement.placed, s.placement.allocations), (1, 3));
        assert!(
            s.placement.fallbacks.iter().any(|f| f.contains(
                "0x7f0000100000+8192: translated, not placed: its recorded \
                                    range was taken"
            )),
            "{:?}",
            s.placement.fallbacks
        );
        let w = words(&dev.launches[0]);
        assert_eq!(w[0], A + 8);
        assert_ne!(w[1], B, "B was translated, and its argument with it");
    }

    #[test]
    fn an_allocator_that_gives_the_recorded_address_back_counts_as_placed() {
        // The device's own allocator starts at 0x1000_0000 and rounds to
        // 4 KiB: recorded there, the allocations come back at their
        // recorded addresses although their ranges could not be reserved
        // (as the CUDA driver's allocator does in arenas at their recorded
        // bases).
        const P: u64 = 0x1000_0000;
        let t = tempfile::tempdir().unwrap();
        let b = ArchiveBuilder::new(Platform::Cpu)
            .alloc(P, 0x400)
            .alloc(P + 0x1000, 0x100)
            .launch(
                "k",
                b"code",
                [1, 1, 1],
                [1, 1, 1],
                vec![ptr_arg(P), ptr_arg(P + 0x1000)],
            )
            .d2h(P, &[0; 0x400]);
        let archive = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        dev.granularity = Some(0x1000);
        dev.taken = vec![(P, 0x2000)];
        let regions = RegionTimeline::default();
        let ranges = plan(&archive, ReadOptions::default(), &regions);
        let space = AddressSpace {
            placement: Placement::reserve(&mut dev, &ranges),
            ..AddressSpace::default()
        };
        let mut pinned = PinnedHost::new(0);
        let opts = ReplayOptions::default();
        let (s, e) = Replayer::new(&mut dev, &archive, &opts, space, None, &mut pinned).run(|_| {});
        assert!(e.is_none(), "{e:?}");
        assert_eq!((s.placement.placed, s.placement.allocations), (2, 2));
        assert!(
            s.placement.fallbacks.is_empty(),
            "{:?}",
            s.placement.fallbacks
        );
        assert_eq!(&words(&dev.launches[0])[..2], &[P, P + 0x1000]);
    }

    #[test]
    fn off_or_unable_translates_everything_quietly() {
        for (granularity, place) in [(Some(0x1000), false), (None, true)] {
            let mut dev = MemDevice::new(false);
            dev.accept_code = true;
            dev.granularity = granularity;
            let s = replay(&mut dev, place);
            assert_eq!((s.placement.placed, s.placement.allocations), (0, 3));
            assert!(s.placement.fallbacks.is_empty());
            assert!(dev.place_reserved.is_empty());
        }
    }

    #[test]
    fn the_plan_holds_device_allocations_and_declared_segments() {
        let t = tempfile::tempdir().unwrap();
        let b = ArchiveBuilder::new(Platform::Cpu)
            .segment(0x7e00_0000_0000, 0x4_0000, 5)
            .alloc(A, 0x400)
            .alloc_mem(B, 0x100, MemKind::Pinned)
            .alloc(C, 0x100)
            .ret(1);
        let archive = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        let regions = crate::engine::load_regions(&archive, true, &mut Vec::new()).unwrap();
        let ranges = plan(&archive, ReadOptions::default(), &regions);
        // Not the pinned allocation, nor the one that failed at capture.
        assert_eq!(ranges, [(0x7e00_0000_0000, 0x4_0000), (A, 0x400)]);
    }

    #[test]
    fn overlapping_ranges_are_reserved_once_rounded_to_granules() {
        let mut dev = MemDevice::new(false);
        dev.granularity = Some(0x1000);
        let p = Placement::reserve(
            &mut dev,
            &[
                (0x1_0010, 0x10),
                (0x1_0f00, 0x200),
                (0x3_0000, 0),
                (0x5_0000, 0x1000),
            ],
        );
        assert_eq!(p.refused(), 0);
        let got: Vec<(u64, u64)> = dev.place_reserved.iter().map(|(&b, &e)| (b, e)).collect();
        assert_eq!(
            got,
            [
                (0x1_0000, 0x1_2000),
                (0x3_0000, 0x3_1000),
                (0x5_0000, 0x5_1000)
            ]
        );
    }
}
