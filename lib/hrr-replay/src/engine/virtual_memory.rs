//! `VirtualMemory`: replay of CUDA's virtual memory management
//! (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`, …), as PyTorch's
//! expandable segments use it.
//!
//! The reservation is the unit of address translation: `va_reserve`
//! reserves a range of the same size on the replay device and enters it in
//! the [`AddressSpace`] as one allocation, so every recorded address inside
//! it translates to the same offset in the replay's range. Pieces mapped
//! into it at capture (`mem_map`) are mapped at those offsets at replay; a
//! buffer spanning two pieces that were adjacent at capture is adjacent at
//! replay too, whatever physical memory backs them. A reservation holds no
//! memory, so PyTorch's reservation of the whole GPU costs nothing.
//!
//! Where placement reserved the recorded range ([`Placement`]), the
//! reservation is made *there*: its live base is its recorded one, no call
//! reaches the device (the range is reserved already), and freeing it gives
//! nothing back (placement keeps the range for the device's life). Pointers
//! the program stored into its own mapped memory then stay right.
//!
//! `mem_access` needs nothing: the backend makes every mapping readable and
//! writable by its device as it maps it.
//!
//! A physical allocation is counted as the driver counts it: every handle
//! to it (`mem_create`, `mem_retain` of an address mapped from it,
//! `mem_import` of it exported) is one reference that a `mem_release`
//! drops, and every mapping of it keeps its memory too. The replay's
//! allocation is released when the last of both goes, so a handle retained
//! and released twice (NCCL's frees) releases it once, and one released
//! while mapped can still be retained from the mapping.
//!
//! [`Placement`]: crate::engine::placement::Placement

use std::collections::{BTreeMap, HashMap};

use crate::alloc_map::{Alloc, AllocMapError};
use crate::device::{Device, DeviceError, Handle};
use crate::engine::address_space::AddressSpace;
use hrr_core::event::MemKind;

/// Why a virtual-memory event could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum VmmError {
    /// The backend refused the call.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The reservation contradicts the recorded allocations.
    #[error(transparent)]
    Alloc(#[from] AllocMapError),
    /// `va_free` of a range that is not reserved.
    #[error("va_free of {0:#x}, which is not a live reservation")]
    NotReserved(u64),
    /// A physical handle no `mem_create` made, or one released already.
    #[error("{op} of handle {handle:#x}, which was never created")]
    UnknownHandle {
        /// `mem_map`, `mem_release` or `mem_export`.
        op: &'static str,
        /// The recorded handle.
        handle: u64,
    },
    /// `mem_retain` of an address nothing is mapped at.
    #[error("mem_retain of {0:#x}, where nothing is mapped")]
    NotMapped(u64),
    /// `mem_import` of a shareable handle no `mem_export` made.
    #[error("mem_import of shareable handle {0:#x}, which was never exported")]
    NotExported(u64),
    /// A mapping that is not inside a reservation.
    #[error("{va:#x}+{size} is not inside a reserved range")]
    Outside {
        /// The recorded address.
        va: u64,
        /// The mapping's length.
        size: u64,
    },
    /// A mapping that starts in a reservation and runs past it.
    #[error("{va:#x}+{size} runs past its reservation {base:#x}+{len}")]
    PastReservation {
        /// The recorded address.
        va: u64,
        /// The mapping's length.
        size: u64,
        /// The reservation's recorded base.
        base: u64,
        /// Its length.
        len: u64,
    },
}

/// A replayed reservation (`va_reserve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reservation {
    /// The replay's base.
    live: u64,
    /// Its size.
    size: u64,
    /// Inside a range placement reserved: the device made no reservation of
    /// its own, so there is none to free.
    placed: bool,
}

/// A recorded physical allocation (`mem_create`) and the replay's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Physical {
    /// The replay's handle.
    pub live: Handle,
    /// Its size.
    pub size: u64,
    /// Where its memory lives.
    pub mem: MemKind,
    /// The recorded handle `mem_create` returned for it.
    pub created: u64,
    /// Handle references not yet released.
    pub refs: u32,
    /// Live mappings of it.
    pub maps: u32,
}

/// A live mapping (`mem_map`), by recorded address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapped {
    /// The recorded address of its first byte.
    pub va: u64,
    /// The replay's address of it.
    pub live: u64,
    /// Its length.
    pub size: u64,
    /// The recorded handle `mem_create` returned for the physical
    /// allocation mapped there (whichever handle to it the mapping named).
    pub handle: u64,
    /// The offset into it of the mapping's first byte.
    pub offset: u64,
    /// The physical allocation's size and kind when it was mapped (it may
    /// be released while mapped: its memory lives as long as the mapping).
    pub physical_size: u64,
    /// Where its memory lives.
    pub mem: MemKind,
    /// The physical allocation's key in [`VirtualMemory`].
    physical: u64,
}

/// A recorded handle: the physical allocation it refers to and how many of
/// its references are not yet released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    physical: u64,
    count: u32,
}

/// The recorded reservations, physical allocations and mappings, and their
/// replay counterparts.
#[derive(Debug, Default)]
pub struct VirtualMemory {
    /// Recorded base → the replay's reservation.
    reservations: HashMap<u64, Reservation>,
    /// Recorded handle → the physical allocation it refers to.
    handles: HashMap<u64, Held>,
    /// Physical allocations alive (referenced or mapped), by a key of
    /// their own (a recorded handle value may be reused once released).
    physicals: HashMap<u64, Physical>,
    next_physical: u64,
    /// Shareable handle → the physical allocation last exported as it.
    exports: HashMap<u64, u64>,
    /// Recorded mapped address → the mapping.
    mappings: BTreeMap<u64, Mapped>,
}

impl VirtualMemory {
    /// Whether `base` is a reservation's recorded base (freed by
    /// [`VirtualMemory::free`], never as an allocation).
    pub fn is_reservation(&self, base: u64) -> bool {
        self.reservations.contains_key(&base)
    }

    /// The size of the reservation at recorded `base`.
    pub fn reservation(&self, base: u64) -> Option<u64> {
        self.reservations.get(&base).map(|r| r.size)
    }

    /// The live mappings, by recorded address.
    pub fn mappings(&self) -> impl Iterator<Item = &Mapped> {
        self.mappings.values()
    }

    /// The live physical allocation recorded `handle` refers to.
    pub fn physical(&self, handle: u64) -> Option<&Physical> {
        self.physicals.get(&self.handles.get(&handle)?.physical)
    }

    /// Replays `va_reserve`: at the recorded base where placement reserved
    /// it, else a range of the same size wherever the device puts it; either
    /// way entered as one allocation.
    pub fn reserve(
        &mut self,
        dev: &mut dyn Device,
        space: &mut AddressSpace,
        base: u64,
        size: u64,
    ) -> Result<(), VmmError> {
        let placed = space.placement.holds(base, size);
        let live = if placed { base } else { dev.va_reserve(size)? };
        let alloc = Alloc {
            base,
            size,
            mem: MemKind::Device,
            live,
            materialised: false,
        };
        if let Err(e) = space.allocs.insert(alloc) {
            if !placed {
                let _ = dev.va_free(live, size);
            }
            return Err(e.into());
        }
        space
            .placed
            .count_reservation(&space.placement, base, size, placed);
        self.reservations
            .insert(base, Reservation { live, size, placed });
        Ok(())
    }

    /// Replays `va_free`.
    pub fn free(
        &mut self,
        dev: &mut dyn Device,
        space: &mut AddressSpace,
        base: u64,
    ) -> Result<(), VmmError> {
        let r = self
            .reservations
            .remove(&base)
            .ok_or(VmmError::NotReserved(base))?;
        space.allocs.remove(base)?;
        if r.placed {
            return Ok(());
        }
        Ok(dev.va_free(r.live, r.size)?)
    }

    /// Replays `mem_create`.
    pub fn create(
        &mut self,
        dev: &mut dyn Device,
        handle: u64,
        size: u64,
        mem: MemKind,
    ) -> Result<(), VmmError> {
        let live = dev.mem_create(size, mem)?;
        // The capture's handle reused without the releases we saw: its old
        // references go.
        while self.handles.contains_key(&handle) {
            self.release(dev, handle)?;
        }
        self.next_physical += 1;
        let key = self.next_physical;
        let p = Physical {
            live,
            size,
            mem,
            created: handle,
            refs: 1,
            maps: 0,
        };
        self.physicals.insert(key, p);
        self.handles.insert(
            handle,
            Held {
                physical: key,
                count: 1,
            },
        );
        Ok(())
    }

    /// One more reference to physical allocation `key`, held as `handle`.
    fn hold(&mut self, handle: u64, key: u64) {
        let held = self.handles.entry(handle).or_insert(Held {
            physical: key,
            count: 0,
        });
        if held.physical != key {
            // A handle value the driver reused for another allocation while
            // references to the old one were unreleased: they are dropped.
            let old = std::mem::replace(
                held,
                Held {
                    physical: key,
                    count: 0,
                },
            );
            if let Some(p) = self.physicals.get_mut(&old.physical) {
                p.refs = p.refs.saturating_sub(old.count);
            }
        }
        held.count += 1;
        if let Some(p) = self.physicals.get_mut(&key) {
            p.refs += 1;
        }
    }

    /// Replays `mem_retain`: `handle` is one more reference to the physical
    /// allocation mapped at `ptr`.
    pub fn retain(&mut self, ptr: u64, handle: u64) -> Result<(), VmmError> {
        let key = self
            .mappings
            .range(..=ptr)
            .next_back()
            .map(|(_, m)| m)
            .filter(|m| ptr - m.va < m.size)
            .ok_or(VmmError::NotMapped(ptr))?
            .physical;
        self.hold(handle, key);
        Ok(())
    }

    /// Replays `mem_export`: `shareable` names `handle`'s allocation.
    pub fn export(&mut self, handle: u64, shareable: u64) -> Result<(), VmmError> {
        let held = self.handles.get(&handle).ok_or(VmmError::UnknownHandle {
            op: "mem_export",
            handle,
        })?;
        self.exports.insert(shareable, held.physical);
        Ok(())
    }

    /// Replays `mem_import`: `handle` is one more reference to the
    /// allocation exported as `shareable` (one process: the same memory).
    pub fn import(&mut self, handle: u64, shareable: u64) -> Result<(), VmmError> {
        let key = *self
            .exports
            .get(&shareable)
            .filter(|k| self.physicals.contains_key(k))
            .ok_or(VmmError::NotExported(shareable))?;
        self.hold(handle, key);
        Ok(())
    }

    /// Replays `mem_release`: drops one reference of `handle`; the replay's
    /// allocation goes with the last reference and the last mapping.
    pub fn release(&mut self, dev: &mut dyn Device, handle: u64) -> Result<(), VmmError> {
        let held = self
            .handles
            .get_mut(&handle)
            .ok_or(VmmError::UnknownHandle {
                op: "mem_release",
                handle,
            })?;
        held.count -= 1;
        let key = held.physical;
        if held.count == 0 {
            self.handles.remove(&handle);
        }
        if let Some(p) = self.physicals.get_mut(&key) {
            p.refs = p.refs.saturating_sub(1);
        }
        self.drop_if_unused(dev, key)
    }

    /// Releases physical allocation `key` on the device once nothing holds
    /// or maps it.
    fn drop_if_unused(&mut self, dev: &mut dyn Device, key: u64) -> Result<(), VmmError> {
        match self.physicals.get(&key) {
            Some(p) if p.refs == 0 && p.maps == 0 => {
                let live = p.live;
                self.physicals.remove(&key);
                self.exports.retain(|_, k| *k != key);
                Ok(dev.mem_release(live)?)
            }
            _ => Ok(()),
        }
    }

    /// Maps `size` bytes of recorded `handle` at recorded `va`, which must
    /// lie in a reservation.
    pub fn map(
        &mut self,
        dev: &mut dyn Device,
        space: &AddressSpace,
        va: u64,
        size: u64,
        offset: u64,
        handle: u64,
    ) -> Result<(), VmmError> {
        let live = self.inside_reservation(space, va, size)?;
        let unknown = VmmError::UnknownHandle {
            op: "mem_map",
            handle,
        };
        let key = self.handles.get(&handle).ok_or(unknown)?.physical;
        let h = self
            .physicals
            .get_mut(&key)
            .ok_or(VmmError::UnknownHandle {
                op: "mem_map",
                handle,
            })?;
        dev.mem_map(live, size, offset, h.live)?;
        h.maps += 1;
        let m = Mapped {
            va,
            live,
            size,
            handle: h.created,
            offset,
            physical_size: h.size,
            mem: h.mem,
            physical: key,
        };
        if let Some(old) = self.mappings.insert(va, m) {
            self.unmapped(dev, old.physical)?;
        }
        Ok(())
    }

    /// Replays `mem_unmap`.
    pub fn unmap(
        &mut self,
        dev: &mut dyn Device,
        space: &AddressSpace,
        va: u64,
        size: u64,
    ) -> Result<(), VmmError> {
        let live = self.inside_reservation(space, va, size)?;
        dev.mem_unmap(live, size)?;
        // Every mapping inside the range goes (one call may unmap several).
        let gone: Vec<u64> = self
            .mappings
            .range(va..va.saturating_add(size))
            .map(|(&b, _)| b)
            .collect();
        for b in gone {
            if let Some(m) = self.mappings.remove(&b) {
                self.unmapped(dev, m.physical)?;
            }
        }
        Ok(())
    }

    /// A mapping of physical allocation `key` is gone.
    fn unmapped(&mut self, dev: &mut dyn Device, key: u64) -> Result<(), VmmError> {
        if let Some(p) = self.physicals.get_mut(&key) {
            p.maps = p.maps.saturating_sub(1);
        }
        self.drop_if_unused(dev, key)
    }

    /// The replay address of `[va, va + size)`, which must lie inside one
    /// reservation.
    fn inside_reservation(
        &self,
        space: &AddressSpace,
        va: u64,
        size: u64,
    ) -> Result<u64, VmmError> {
        match space.allocs.find(va) {
            Some(a) if self.reservations.contains_key(&a.base) => space
                .allocs
                .translate_range(va, size)
                .ok_or(VmmError::PastReservation {
                    va,
                    size,
                    base: a.base,
                    len: a.size,
                }),
            _ => Err(VmmError::Outside { va, size }),
        }
    }

    /// Unmaps, releases and frees everything left (end of a replay).
    pub fn teardown(&mut self, dev: &mut dyn Device) {
        for (_, m) in std::mem::take(&mut self.mappings) {
            let _ = dev.mem_unmap(m.live, m.size);
        }
        self.handles.clear();
        self.exports.clear();
        for (_, p) in self.physicals.drain() {
            let _ = dev.mem_release(p.live);
        }
        for (_, r) in self.reservations.drain() {
            if !r.placed {
                let _ = dev.va_free(r.live, r.size);
            }
        }
    }
}
