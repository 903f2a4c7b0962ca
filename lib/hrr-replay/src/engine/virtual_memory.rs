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
    /// A physical handle no `mem_create` made.
    #[error("{op} of handle {handle:#x}, which was never created")]
    UnknownHandle {
        /// `mem_map` or `mem_release`.
        op: &'static str,
        /// The recorded handle.
        handle: u64,
    },
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
    /// The recorded physical handle mapped there.
    pub handle: u64,
    /// The offset into it of the mapping's first byte.
    pub offset: u64,
    /// The physical allocation's size and kind when it was mapped (it may
    /// be released while mapped: its memory lives as long as the mapping).
    pub physical_size: u64,
    /// Where its memory lives.
    pub mem: MemKind,
}

/// The recorded reservations, physical allocations and mappings, and their
/// replay counterparts.
#[derive(Debug, Default)]
pub struct VirtualMemory {
    /// Recorded base → the replay's reservation.
    reservations: HashMap<u64, Reservation>,
    /// Recorded physical handle → the replay's.
    handles: HashMap<u64, Physical>,
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

    /// The live physical allocation recorded as `handle`.
    pub fn physical(&self, handle: u64) -> Option<&Physical> {
        self.handles.get(&handle)
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
        if let Some(old) = self.handles.insert(handle, Physical { live, size, mem }) {
            // The capture's handle was reused without a release we saw.
            let _ = dev.mem_release(old.live);
        }
        Ok(())
    }

    /// Replays `mem_release`.
    pub fn release(&mut self, dev: &mut dyn Device, handle: u64) -> Result<(), VmmError> {
        let h = self
            .handles
            .remove(&handle)
            .ok_or(VmmError::UnknownHandle {
                op: "mem_release",
                handle,
            })?;
        Ok(dev.mem_release(h.live)?)
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
        let h = self.handles.get(&handle).ok_or(VmmError::UnknownHandle {
            op: "mem_map",
            handle,
        })?;
        dev.mem_map(live, size, offset, h.live)?;
        let m = Mapped {
            va,
            live,
            size,
            handle,
            offset,
            physical_size: h.size,
            mem: h.mem,
        };
        self.mappings.insert(va, m);
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
        self.mappings.remove(&va);
        Ok(())
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
        for (_, h) in self.handles.drain() {
            let _ = dev.mem_release(h.live);
        }
        for (_, r) in self.reservations.drain() {
            if !r.placed {
                let _ = dev.va_free(r.live, r.size);
            }
        }
    }
}
