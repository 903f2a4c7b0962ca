//! Placement over HIP's virtual memory management: a recorded range is
//! reserved with `hipMemAddressReserve` at its address; an allocation is
//! `hipMemCreate`d, `hipMemMap`ped at its recorded address (whole granules)
//! and made read-write with `hipMemSetAccess`. The same calls serve ROCm and
//! hrr's CPU runtime, so the CPU tests exercise this code.
//!
//! `hipMemAllocationProp` changed layout between ROCm 5 and 6: it is written
//! for the version the runtime reports.

use std::ffi::c_void;

use hrr_replay::device::DeviceError;
use hrr_replay::granules::{Granules, Mapping, Plan};

use crate::ffi::{HipError, VmmApi};
use hip_api::types::hipMemGenericAllocationHandle_t;

/// First `HIP_VERSION` with the CUDA-like `hipMemAllocationProp` (6.0).
const ROCM6: i32 = 60_000_000;
const LOCATION_DEVICE: i32 = 1;
const ALLOCATION_PINNED: i32 = 1;
const ACCESS_READ_WRITE: i32 = 3;
const GRANULARITY_MINIMUM: i32 = 0;

/// `hipMemAllocationProp` for device 0 memory, as bytes in the layout of
/// the runtime's version.
fn allocation_prop(version: i32) -> [u8; 32] {
    let mut p = [0u8; 32];
    let mut put = |at: usize, v: i32| p[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    if version >= ROCM6 {
        // type, requestedHandleType, location {type, id}, win32 meta, allocFlags
        put(0, ALLOCATION_PINNED);
        put(8, LOCATION_DEVICE);
    } else {
        // compressionType, location {type, id}, requestedHandleType, type, usage, win32 meta
        put(4, LOCATION_DEVICE);
        put(16, ALLOCATION_PINNED);
    }
    p
}

/// One `hipMemAccessDesc`: device 0 may read and write.
pub(crate) fn access_desc() -> [u8; 12] {
    let mut desc = [0u8; 12];
    desc[0..4].copy_from_slice(&LOCATION_DEVICE.to_ne_bytes());
    desc[8..12].copy_from_slice(&ACCESS_READ_WRITE.to_ne_bytes());
    desc
}

/// A HIP device's placement state: the calls; the bookkeeping is
/// [`Granules`]'.
pub(crate) struct Placer {
    prop: [u8; 32],
    map: Granules<hipMemGenericAllocationHandle_t>,
}

fn err(call: &'static str, code: HipError) -> DeviceError {
    DeviceError::Call {
        call,
        code: i64::from(code),
        message: format!("HIP error {code}"),
    }
}

impl Placer {
    /// The runtime's granularity, or `None` when it has no usable VMM.
    pub fn new(api: &VmmApi) -> Option<Placer> {
        let mut version = 0;
        // SAFETY: a valid out-pointer.
        if unsafe { (api.hipRuntimeGetVersion)(&mut version) } != 0 {
            return None;
        }
        let prop = allocation_prop(version);
        let mut g = 0usize;
        // SAFETY: valid out-pointer; `prop` is a hipMemAllocationProp's bytes.
        let code = unsafe {
            (api.hipMemGetAllocationGranularity)(&mut g, prop.as_ptr().cast(), GRANULARITY_MINIMUM)
        };
        let g = g as u64;
        (code == 0 && g.is_power_of_two()).then(|| Placer {
            prop,
            map: Granules::new(g),
        })
    }

    /// The `hipMemAllocationProp` of device memory, in the runtime's layout.
    pub fn prop(&self) -> &[u8; 32] {
        &self.prop
    }

    pub fn granularity(&self) -> u64 {
        self.map.granularity()
    }

    pub fn is_placed(&self, addr: u64) -> bool {
        self.map.is_placed(addr)
    }

    /// `hipMemAddressReserve` at exactly `base`; an answer elsewhere is given back.
    pub fn reserve_at(&mut self, api: &VmmApi, base: u64, size: u64) -> bool {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the address is a hint the runtime checks.
        let code =
            unsafe { (api.hipMemAddressReserve)(&mut p, size as usize, 0, base as *mut c_void, 0) };
        if code != 0 {
            return false;
        }
        if p as u64 != base {
            // SAFETY: the reservation just made, unused.
            unsafe { (api.hipMemAddressFree)(p, size as usize) };
            return false;
        }
        self.map.reserved(base, size);
        true
    }

    /// Maps fresh memory at `[start, start + len)` (whole granules, inside a
    /// reservation, mapped by no one), read-write.
    fn map(
        &self,
        api: &VmmApi,
        start: u64,
        len: u64,
    ) -> Result<hipMemGenericAllocationHandle_t, DeviceError> {
        let mut h: hipMemGenericAllocationHandle_t = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `prop` is a hipMemAllocationProp's bytes.
        let code =
            unsafe { (api.hipMemCreate)(&mut h, len as usize, self.prop.as_ptr().cast(), 0) };
        if code != 0 {
            return Err(err("hipMemCreate", code));
        }
        let va = start as *mut c_void;
        // SAFETY: per this function's contract the range is reserved and
        // unmapped; `h` is `len` bytes.
        let code = unsafe { (api.hipMemMap)(va, len as usize, 0, h, 0) };
        if code != 0 {
            // SAFETY: the handle just created, mapped nowhere.
            unsafe { (api.hipMemRelease)(h) };
            return Err(err("hipMemMap", code));
        }
        let desc = access_desc();
        // SAFETY: the mapping just made; `desc` is one hipMemAccessDesc.
        let code = unsafe { (api.hipMemSetAccess)(va, len as usize, desc.as_ptr().cast(), 1) };
        if code != 0 {
            // SAFETY: undoing the mapping and handle made above.
            unsafe {
                (api.hipMemUnmap)(va, len as usize);
                (api.hipMemRelease)(h);
            }
            return Err(err("hipMemSetAccess", code));
        }
        // The handle is not needed any more: the memory lives while it is
        // mapped and goes with the unmap (one open handle per placed
        // allocation would run the CPU runtime out of file descriptors).
        // SAFETY: the handle just mapped; its mapping keeps the memory.
        unsafe { (api.hipMemRelease)(h) };
        Ok(h)
    }

    /// Unmaps mappings no allocation uses any more (their memory goes
    /// with them: its handle was released when it was mapped).
    fn unmap(
        api: &VmmApi,
        gone: Vec<Mapping<hipMemGenericAllocationHandle_t>>,
    ) -> Result<(), DeviceError> {
        let mut result = Ok(());
        for m in gone {
            // SAFETY: a mapping made by `map`, used by no one now.
            let code = unsafe { (api.hipMemUnmap)(m.start as *mut c_void, m.len as usize) };
            if result.is_ok() && code != 0 {
                result = Err(err("hipMemUnmap", code));
            }
        }
        result
    }

    /// Backs `[addr, addr + size)` at that address (granules a neighbour
    /// mapped are shared); `None` when its granules are not all reserved.
    /// Returns what must be zeroed.
    pub fn alloc_at(
        &mut self,
        api: &VmmApi,
        addr: u64,
        size: u64,
    ) -> Result<Option<Plan>, DeviceError> {
        let Some(plan) = self.map.plan(addr, size) else {
            return Ok(None);
        };
        let mut handles = Vec::with_capacity(plan.gaps.len());
        for &(start, len) in &plan.gaps {
            match self.map(api, start, len) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    let made = plan
                        .gaps
                        .iter()
                        .zip(&handles)
                        .map(|(&(start, len), &handle)| Mapping { start, len, handle })
                        .collect();
                    let _ = Self::unmap(api, made);
                    return Err(e);
                }
            }
        }
        self.map.commit(addr, plan.clone(), &handles);
        Ok(Some(plan))
    }

    /// Frees the allocation placed at `addr`, unmapping what no one else
    /// uses; `None` when nothing was placed there.
    pub fn free(&mut self, api: &VmmApi, addr: u64) -> Option<Result<(), DeviceError>> {
        let gone = self.map.free(addr)?;
        Some(Self::unmap(api, gone))
    }

    /// Frees every placed allocation and reservation (the device goes away).
    pub fn release_all(&mut self, api: &VmmApi) {
        let (maps, reserved) = self.map.drain();
        let _ = Self::unmap(api, maps);
        for (b, s) in reserved {
            // SAFETY: our reservation, nothing mapped in it any more.
            unsafe { (api.hipMemAddressFree)(b as *mut c_void, s as usize) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_prop_layouts() {
        let p5 = allocation_prop(50_221_153);
        assert_eq!(&p5[4..8], &1i32.to_ne_bytes(), "5.x: location.type at 4");
        assert_eq!(&p5[16..20], &1i32.to_ne_bytes(), "5.x: type at 16");
        let p6 = allocation_prop(60_200_000);
        assert_eq!(&p6[0..4], &1i32.to_ne_bytes(), "6.x: type at 0");
        assert_eq!(&p6[8..12], &1i32.to_ne_bytes(), "6.x: location.type at 8");
    }
}
