//! `AddressSpace`: the one shared translate-or-materialise path (DESIGN.md §5).
//!
//! Every *device* operand of every handler goes through
//! [`AddressSpace::translate_or_materialise`]: H2D dst, D2H src, D2D dst and
//! src, memset dst, kernel pointer arguments and pointers embedded in by-value
//! arguments. Host operands never come here: materialisation has side effects
//! (a new allocation, a counted segment), so a host pointer value that happens
//! to fall inside a declared segment must not trigger it.
//!
//! It also makes the replay's allocations ([`AddressSpace::allocate`]): at
//! their recorded addresses where [`Placement`] can, elsewhere otherwise, and
//! counts which.

use crate::alloc_map::{Alloc, AllocMap, AllocMapError};
use crate::device::{Device, DeviceError};
use crate::engine::placement::{Placed, Placement};
use crate::region_timeline::{RegionClass, RegionTimeline};
use hrr_core::event::MemKind;

/// Recorded address space of the capture, as seen by replay.
#[derive(Debug, Default)]
pub struct AddressSpace {
    /// The recorded allocations and their live copies.
    pub allocs: AllocMap,
    /// Memory the region sidecars declare, over time.
    pub regions: RegionTimeline,
    /// Whether declared regions may be materialised (`--no-regions` clears it).
    pub regions_enabled: bool,
    /// Reserved recorded ranges; [`Placement::off`] translates everything.
    pub placement: Placement,
    /// What placement did in this replay.
    pub placed: PlacementCount,
}

/// Allocations placed at their recorded addresses, of those placement
/// applies to (device allocations and materialised segments).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PlacementCount {
    /// Allocations at their recorded addresses.
    pub placed: u64,
    /// Allocations placement applies to.
    pub allocations: u64,
    /// Whether placement was asked for (`--no-placement` clears it).
    pub enabled: bool,
    /// One line per allocation that fell back to translation, with why.
    #[serde(skip)]
    pub fallbacks: Vec<String>,
}

impl PlacementCount {
    /// Counts a program's own reservation (`va_reserve`): placement applies
    /// to it as to an allocation, so that pointers into its mappings stay
    /// right.
    pub fn count_reservation(&mut self, placement: &Placement, base: u64, size: u64, placed: bool) {
        self.enabled = placement.enabled();
        if !placement.enabled() || placement.unable().is_some() {
            return;
        }
        self.allocations += 1;
        if placed {
            self.placed += 1;
        } else {
            self.fallbacks.push(format!(
                "reservation {base:#x}+{size}: translated, not placed: {}",
                placement.why_not(base, size)
            ));
        }
    }
}

/// A device operand that could not be translated, with what replay knows of it.
#[derive(Debug)]
pub struct Unmapped {
    /// The recorded address.
    pub addr: u64,
    /// What the region sidecars declare at `addr`.
    pub class: RegionClass,
    /// Set when a declared segment held it but backing the segment failed.
    pub materialise_error: Option<MaterialiseError>,
}

/// Why a declared segment could not back an operand.
#[derive(Debug, thiserror::Error)]
pub enum MaterialiseError {
    /// Allocating the segment's memory failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The segment overlaps an allocation the archive recorded.
    #[error(transparent)]
    Collides(#[from] AllocMapError),
    /// The segment was backed, but the operand runs past its end.
    #[error("operand extends past its segment")]
    PastEnd,
}

impl AddressSpace {
    /// Translates a device operand of `len` bytes (0 for a bare pointer such as
    /// a kernel argument), materialising the declared segment holding it on the
    /// first miss.
    pub fn translate_or_materialise(
        &mut self,
        dev: &mut dyn Device,
        addr: u64,
        len: u64,
    ) -> Result<u64, Unmapped> {
        if let Some(live) = self.translate(addr, len) {
            return Ok(live);
        }
        let class = self.regions.classify(addr);
        if !self.regions_enabled {
            return Err(Unmapped {
                addr,
                class,
                materialise_error: None,
            });
        }
        let allocs = &mut self.allocs;
        let (placement, placed) = (&self.placement, &mut self.placed);
        let outcome = self
            .regions
            .materialise_for(addr, |seg| -> Result<u64, MaterialiseError> {
                let live = Self::allocate_in(
                    placement,
                    placed,
                    dev,
                    seg.base,
                    seg.size,
                    MemKind::Device,
                    || format!("segment {:#x}+{}", seg.base, seg.size),
                )?;
                let alloc = Alloc {
                    base: seg.base,
                    size: seg.size,
                    mem: MemKind::Device,
                    live,
                    materialised: true,
                };
                if let Err(e) = allocs.insert(alloc) {
                    // Give the memory back: the segment collides with a recorded allocation.
                    let _ = dev.free(live, MemKind::Device);
                    return Err(e.into());
                }
                Ok(live)
            });
        match outcome {
            Some(Ok(_)) => self.translate(addr, len).ok_or(Unmapped {
                addr,
                class,
                materialise_error: Some(MaterialiseError::PastEnd),
            }),
            Some(Err(e)) => Err(Unmapped {
                addr,
                class,
                materialise_error: Some(e),
            }),
            None => Err(Unmapped {
                addr,
                class,
                materialise_error: None,
            }),
        }
    }

    /// Memory for the allocation recorded at `[base, base + size)`: at that
    /// address when placement can, else wherever the device puts it. `what`
    /// names it in a fallback note.
    pub fn allocate(
        &mut self,
        dev: &mut dyn Device,
        base: u64,
        size: u64,
        mem: MemKind,
        what: impl FnOnce() -> String,
    ) -> Result<u64, DeviceError> {
        Self::allocate_in(
            &self.placement,
            &mut self.placed,
            dev,
            base,
            size,
            mem,
            what,
        )
    }

    fn allocate_in(
        placement: &Placement,
        count: &mut PlacementCount,
        dev: &mut dyn Device,
        base: u64,
        size: u64,
        mem: MemKind,
        what: impl FnOnce() -> String,
    ) -> Result<u64, DeviceError> {
        count.enabled = placement.enabled();
        if mem == MemKind::Device {
            count.allocations += 1;
        }
        match placement.place(dev, base, size, mem) {
            Placed::At(live) => {
                // A backend that mapped it elsewhere is still right: translated.
                if live == base {
                    count.placed += 1;
                }
                Ok(live)
            }
            Placed::Fallback(why) => {
                let live = dev.alloc(size, mem)?;
                // The runtime's own allocator may give the recorded address
                // back (the CUDA driver does, in arenas reserved at their
                // recorded bases): placed all the same.
                if live == base {
                    count.placed += 1;
                } else {
                    count
                        .fallbacks
                        .push(format!("{}: translated, not placed: {why}", what()));
                }
                Ok(live)
            }
            Placed::Off => dev.alloc(size, mem),
        }
    }

    fn translate(&self, addr: u64, len: u64) -> Option<u64> {
        if len == 0 {
            self.allocs.translate(addr)
        } else {
            self.allocs.translate_range(addr, len)
        }
    }

    /// Moves the region timeline to `t`, freeing segments deleted meanwhile.
    pub fn advance_to(&mut self, dev: &mut dyn Device, t: u64) -> Vec<DeviceError> {
        let mut errors = Vec::new();
        for r in self.regions.advance_to(t) {
            if self.allocs.remove(r.base).is_ok()
                && let Err(e) = dev.free(r.live, MemKind::Device)
            {
                errors.push(e);
            }
        }
        errors
    }
}
