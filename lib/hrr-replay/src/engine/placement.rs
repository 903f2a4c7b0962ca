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
//! Placed are device allocations (`MemKind::Device`) and materialised
//! segments; host, pinned and managed memory, module globals and virtual
//! memory reservations are always translated.

use std::collections::BTreeMap;

use crate::device::Device;
use crate::region_timeline::RegionTimeline;
use hrr_core::archive::Archive;
use hrr_core::event::{MemKind, Op};
use hrr_core::event_reader::ReadOptions;

/// The recorded `(base, size)` of every device allocation of the archive
/// (successful `alloc` events) and every declared region segment. A read
/// error ends the scan with what was found: the replay reports it.
pub fn plan(archive: &Archive, read: ReadOptions, regions: &RegionTimeline) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = regions.segments().map(|s| (s.base, s.size)).collect();
    if let Ok(events) = archive.events(read) {
        for e in events {
            let Ok(e) = e else { break };
            if let Op::Alloc {
                ptr,
                size,
                mem: MemKind::Device,
            } = e.op
                && e.ret == 0
                && ptr.0 != 0
            {
                ranges.push((ptr.0, size));
            }
        }
    }
    ranges
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

    /// Reserves `ranges` (recorded `(base, size)`, see [`plan`]) on `dev`,
    /// rounded out to its granularity; overlapping ranges are reserved as one.
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
        let mut p = Placement {
            enabled: true,
            ..Placement::default()
        };
        for (b, e) in merged {
            match dev.reserve_at(b, e - b) {
                Ok(true) => {
                    p.reserved.insert(b, e);
                }
                Ok(false) | Err(_) => p.refused += 1,
            }
        }
        p
    }

    /// Whether placement was asked for (it may still place nothing).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Granule-rounded recorded ranges the device refused to reserve.
    pub fn refused(&self) -> u64 {
        self.refused
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
                "the device could not map it there (a granule it needs is in use)".into(),
            ),
            Err(e) => Placed::Fallback(e.to_string()),
        }
    }
}
