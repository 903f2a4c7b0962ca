//! Placement on the CUDA driver: each recorded range is reserved with
//! `cuMemAddressReserve(addr = the recorded base)`; an answer at another
//! address is released and the range left to translation. An allocation is
//! then backed at its recorded address with `cuMemCreate` + `cuMemMap` +
//! `cuMemSetAccess`, in whole granules (`cuMemGetAllocationGranularity`,
//! 2 MiB on current GPUs). `cudaMalloc` packs small allocations into one
//! granule: neighbours share the granule's mapping ([`Granules`]).
//!
//! The driver honours the address when it is [`RESERVATION_ALIGNMENT`]-
//! aligned (it rounds others up) and the range is free now and was free when
//! `cuInit` ran (measured on the H100 with driver 580: it takes whatever was
//! mapped then as in use for good, and answers the next free range). So the
//! engine aligns its reservations to that; `hrr-cli` kept the driver's own
//! mappings clear of the ranges from its start and held them free after it
//! (`hrr-va-arenas`); each is given up right before it is reserved.

use cuda_api::{
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_ALLOC_GRANULARITY_MINIMUM,
    CU_MEM_LOCATION_TYPE_DEVICE, CUmemLocation,
};
use hrr_replay::device::DeviceError;
use hrr_replay::granules::{Granules, Mapping, Plan};

use crate::driver::CudaDriver;
use crate::ffi::{
    CUdevice, CUdeviceptr, CUmemAccessDesc, CUmemAllocationProp, CUmemGenericAllocationHandle,
};

/// The granularity placement assumes before the device is open (that of
/// every current GPU); the device's own is used once it is.
pub const GRANULARITY: u64 = 2 << 20;

/// What a reservation's address must be aligned to for the driver to
/// honour it (it rounds others up to this).
pub const RESERVATION_ALIGNMENT: u64 = 32 << 20;

/// A CUDA device's placement state: the calls; the bookkeeping is
/// [`Granules`]'.
pub(crate) struct Placer {
    prop: CUmemAllocationProp,
    map: Granules<CUmemGenericAllocationHandle>,
}

/// The VMM entry points placement needs, or `None` when the driver lacks one.
struct Calls {
    reserve: cuda_api::fns::cuMemAddressReserve,
    free_va: cuda_api::fns::cuMemAddressFree,
    create: cuda_api::fns::cuMemCreate,
    release: cuda_api::fns::cuMemRelease,
    map: cuda_api::fns::cuMemMap,
    unmap: cuda_api::fns::cuMemUnmap,
    access: cuda_api::fns::cuMemSetAccess,
}

fn calls(drv: &CudaDriver) -> Option<Calls> {
    let a = drv.api();
    Some(Calls {
        reserve: a.cuMemAddressReserve?,
        free_va: a.cuMemAddressFree?,
        create: a.cuMemCreate?,
        release: a.cuMemRelease?,
        map: a.cuMemMap?,
        unmap: a.cuMemUnmap?,
        access: a.cuMemSetAccess?,
    })
}

impl Placer {
    /// The device's granularity, or `None` when the driver cannot place.
    /// The context must be current.
    pub fn new(drv: &CudaDriver, dev: CUdevice) -> Option<Placer> {
        calls(drv)?;
        let query = drv.granularity_fn()?;
        let prop = CUmemAllocationProp::device(dev);
        let mut g = 0usize;
        // SAFETY: valid out-pointer and a complete CUmemAllocationProp.
        let code = unsafe { query(&mut g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) };
        let g = g as u64;
        (drv.check("cuMemGetAllocationGranularity", code).is_ok() && g.is_power_of_two()).then(
            || Placer {
                prop,
                map: Granules::new(g),
            },
        )
    }

    pub fn granularity(&self) -> u64 {
        self.map.granularity()
    }

    pub fn is_placed(&self, addr: u64) -> bool {
        self.map.is_placed(addr)
    }

    /// `cuMemAddressReserve` at exactly `base`; an answer elsewhere is given
    /// back and is an error saying where it was.
    pub fn reserve_at(
        &mut self,
        drv: &CudaDriver,
        base: u64,
        size: u64,
    ) -> Result<bool, DeviceError> {
        let Some(c) = calls(drv) else {
            return Ok(false);
        };
        // Held free since before the driver started: free now, for the
        // driver to map its range there.
        let held = hrr_va_arenas::unhold(base, size);
        let mut p: CUdeviceptr = 0;
        // SAFETY: valid out-pointer; alignment 0 (the granularity); `base`
        // is a hint the driver checks; flags must be 0.
        let code = unsafe { (c.reserve)(&mut p, size as usize, 0, base, 0) };
        drv.check("cuMemAddressReserve", code)?;
        if p != base {
            // SAFETY: the reservation just made, unused.
            unsafe { (c.free_va)(p, size as usize) };
            let before = if held {
                "held free until then"
            } else {
                "not held free for it: in use when replay started"
            };
            return Err(DeviceError::Call {
                call: "cuMemAddressReserve",
                code: -1,
                message: format!("answered {p:#x}, not the address asked ({before})"),
            });
        }
        self.map.reserved(base, size);
        Ok(true)
    }

    /// Maps fresh device memory at `[start, start + len)` (whole granules,
    /// reserved, mapped by no one), read-write for `dev`.
    fn map(
        &self,
        drv: &CudaDriver,
        c: &Calls,
        dev: CUdevice,
        start: u64,
        len: u64,
    ) -> Result<CUmemGenericAllocationHandle, DeviceError> {
        let mut h: CUmemGenericAllocationHandle = 0;
        // SAFETY: valid out-pointer; `prop` is a complete CUmemAllocationProp.
        let code = unsafe { (c.create)(&mut h, len as usize, &self.prop, 0) };
        drv.check("cuMemCreate", code)?;
        // SAFETY: per this function's contract the range is reserved and
        // unmapped; `h` is `len` bytes; flags must be 0.
        let code = unsafe { (c.map)(start, len as usize, 0, h, 0) };
        if let Err(e) = drv.check("cuMemMap", code) {
            // SAFETY: the handle just created, mapped nowhere.
            unsafe { (c.release)(h) };
            return Err(e.into());
        }
        let desc = CUmemAccessDesc {
            location: CUmemLocation {
                kind: CU_MEM_LOCATION_TYPE_DEVICE,
                id: dev,
            },
            flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: the range just mapped; one descriptor.
        let code = unsafe { (c.access)(start, len as usize, &desc, 1) };
        if let Err(e) = drv.check("cuMemSetAccess", code) {
            // SAFETY: undoing the mapping and handle made above.
            unsafe {
                (c.unmap)(start, len as usize);
                (c.release)(h);
            }
            return Err(e.into());
        }
        // The handle is not needed any more: the memory lives while it is
        // mapped and is freed with the unmap.
        // SAFETY: the handle just mapped; its mapping keeps the memory.
        unsafe { (c.release)(h) };
        Ok(h)
    }

    /// Unmaps mappings no allocation uses any more (their memory goes
    /// with them: its handle was released when it was mapped).
    fn unmap(
        drv: &CudaDriver,
        c: &Calls,
        gone: Vec<Mapping<CUmemGenericAllocationHandle>>,
    ) -> Result<(), DeviceError> {
        let mut result = Ok(());
        for m in gone {
            // SAFETY: a mapping made by `map`, used by no one now.
            let code = unsafe { (c.unmap)(m.start, m.len as usize) };
            if result.is_ok() {
                result = drv.check("cuMemUnmap", code).map_err(DeviceError::from);
            }
        }
        result
    }

    /// Backs `[addr, addr + size)` at that address (granules a neighbour
    /// mapped are shared); `None` when its granules are not all reserved.
    /// Returns what must be zeroed.
    pub fn alloc_at(
        &mut self,
        drv: &CudaDriver,
        dev: CUdevice,
        addr: u64,
        size: u64,
    ) -> Result<Option<Plan>, DeviceError> {
        let (Some(c), Some(plan)) = (calls(drv), self.map.plan(addr, size)) else {
            return Ok(None);
        };
        let mut handles = Vec::with_capacity(plan.gaps.len());
        for &(start, len) in &plan.gaps {
            match self.map(drv, &c, dev, start, len) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    let made = plan
                        .gaps
                        .iter()
                        .zip(&handles)
                        .map(|(&(start, len), &handle)| Mapping { start, len, handle })
                        .collect();
                    let _ = Self::unmap(drv, &c, made);
                    return Err(e);
                }
            }
        }
        self.map.commit(addr, plan.clone(), &handles);
        Ok(Some(plan))
    }

    /// Frees the allocation placed at `addr`, unmapping what no one else
    /// uses; `None` when nothing was placed there.
    pub fn free(&mut self, drv: &CudaDriver, addr: u64) -> Option<Result<(), DeviceError>> {
        let gone = self.map.free(addr)?;
        let c = calls(drv)?;
        Some(Self::unmap(drv, &c, gone))
    }

    /// Frees every placed allocation and reservation (the device goes away).
    pub fn release_all(&mut self, drv: &CudaDriver) {
        let (maps, reserved) = self.map.drain();
        let Some(c) = calls(drv) else {
            return;
        };
        let _ = Self::unmap(drv, &c, maps);
        for (b, s) in reserved {
            // SAFETY: our reservation, nothing mapped in it any more.
            unsafe { (c.free_va)(b, s as usize) };
        }
    }
}
