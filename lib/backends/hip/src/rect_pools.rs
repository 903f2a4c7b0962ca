//! [`HipDevice`]'s 2D/3D copies and memsets (`hipMemcpy2D`, `hipMemset2D`;
//! a 3D one slice by slice), memory pools (`hipMemPoolCreate`, …) and module
//! globals (`hipModuleGetGlobal`). Each group is used when the runtime
//! exports all of its entry points; otherwise copies fall back to one 1D
//! call per row and pools to plain allocations, as the `Device` defaults do.

use std::ffi::{c_int, c_void};

use hrr_core::MemKind;
use hrr_core::event::rect_rows;
use hrr_replay::device::{Device, DeviceError, Handle, PoolCall};

use crate::ffi::HipMemcpyKind;
use crate::hip_device::{HipDevice, ptr};

/// `hipMemPoolProps` (ROCm 5.2): pinned device memory of device 0.
#[repr(C)]
struct PoolProps {
    alloc_type: c_int,
    handle_types: c_int,
    location_type: c_int,
    location_id: c_int,
    win32_security_attributes: *mut c_void,
    reserved: [u8; 64],
}
const _: () = assert!(std::mem::size_of::<PoolProps>() == 88);
/// `hipMemAllocationTypePinned`.
const ALLOCATION_TYPE_PINNED: c_int = 1;
/// `hipMemLocationTypeDevice`.
const LOCATION_TYPE_DEVICE: c_int = 1;
/// `hipMemPoolAttrReleaseThreshold` and the others from it on are u64s;
/// the reuse flags before it are ints.
const FIRST_U64_ATTR: u32 = 4;

/// One side of a rectangular copy: address and [row, slice] pitch.
pub(crate) type Side = (u64, [u64; 2]);

impl HipDevice {
    /// A rectangular copy of `extent` from `src` to `dst`; `host_borrowed`:
    /// a host side is a slice borrowed for this call only, so an
    /// asynchronous copy is waited for.
    pub(crate) fn rect_copy(
        &mut self,
        call: &'static str,
        kind: HipMemcpyKind,
        (dst, src): (Side, Side),
        extent: [u64; 3],
        (s, host_borrowed): (Option<Handle>, bool),
    ) -> Result<(), DeviceError> {
        let [w, h, d] = extent;
        let Some(api) = self.rt.rect.as_ref() else {
            // No 2D entry points: one 1D copy per row.
            for (doff, soff) in rect_rows(dst.1, extent).zip(rect_rows(src.1, extent)) {
                let code = self.copy_1d(kind, dst.0 + doff, src.0 + soff, w, s);
                self.check(call, code)?;
            }
            return self.wait_if(call, s, host_borrowed);
        };
        for z in 0..d {
            let (dz, sz) = (dst.0 + z * dst.1[1], src.0 + z * src.1[1]);
            // SAFETY: device sides are translated addresses the runtime
            // validates; host sides are live slices holding every row.
            let code = unsafe {
                match s {
                    None => (api.hipMemcpy2D)(
                        ptr(dz),
                        dst.1[0] as usize,
                        ptr(sz),
                        src.1[0] as usize,
                        w as usize,
                        h as usize,
                        kind,
                    ),
                    Some(st) => (api.hipMemcpy2DAsync)(
                        ptr(dz),
                        dst.1[0] as usize,
                        ptr(sz),
                        src.1[0] as usize,
                        w as usize,
                        h as usize,
                        kind,
                        ptr(st),
                    ),
                }
            };
            self.check(call, code).map_err(|e| {
                operands(
                    e,
                    format!(
                        "dst {dz:#x} pitch {}, src {sz:#x} pitch {}, {w}×{h}",
                        dst.1[0], src.1[0]
                    ),
                )
            })?;
        }
        self.wait_if(call, s, host_borrowed)
    }

    fn copy_1d(&self, kind: HipMemcpyKind, dst: u64, src: u64, n: u64, s: Option<Handle>) -> i32 {
        let api = &self.rt.api;
        // SAFETY: as in `rect_copy`.
        unsafe {
            match s {
                None => (api.hipMemcpy)(ptr(dst), ptr(src), n as usize, kind),
                Some(st) => (api.hipMemcpyAsync)(ptr(dst), ptr(src), n as usize, kind, ptr(st)),
            }
        }
    }

    fn wait_if(
        &self,
        call: &'static str,
        s: Option<Handle>,
        borrowed: bool,
    ) -> Result<(), DeviceError> {
        match s {
            Some(st) if borrowed => {
                // SAFETY: a stream handle the runtime gave.
                let code = unsafe { (self.rt.api.hipStreamSynchronize)(ptr(st)) };
                self.check(call, code)
            }
            _ => Ok(()),
        }
    }

    /// A rectangular byte memset.
    pub(crate) fn rect_memset(
        &mut self,
        (dst, pitch): Side,
        extent: [u64; 3],
        value: u8,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let [w, h, d] = extent;
        let Some(api) = self.rt.rect.as_ref() else {
            for off in rect_rows(pitch, extent) {
                self.memset(dst + off, value, w, s)?;
            }
            return Ok(());
        };
        for z in 0..d {
            let at = dst + z * pitch[1];
            // SAFETY: a translated device address the runtime validates.
            let code = unsafe {
                match s {
                    None => (api.hipMemset2D)(
                        ptr(at),
                        pitch[0] as usize,
                        c_int::from(value),
                        w as usize,
                        h as usize,
                    ),
                    Some(st) => (api.hipMemset2DAsync)(
                        ptr(at),
                        pitch[0] as usize,
                        c_int::from(value),
                        w as usize,
                        h as usize,
                        ptr(st),
                    ),
                }
            };
            self.check("hipMemset2D", code)
                .map_err(|e| operands(e, format!("dst {at:#x} pitch {}, {w}×{h}", pitch[0])))?;
        }
        Ok(())
    }

    pub(crate) fn hip_pool_create(&mut self) -> Result<Option<Handle>, DeviceError> {
        let Some(api) = self.rt.pools.as_ref() else {
            return Ok(None);
        };
        let props = PoolProps {
            alloc_type: ALLOCATION_TYPE_PINNED,
            handle_types: 0,
            location_type: LOCATION_TYPE_DEVICE,
            location_id: 0,
            win32_security_attributes: std::ptr::null_mut(),
            reserved: [0; 64],
        };
        let mut pool: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a hipMemPoolProps of the header's layout.
        let code = unsafe { (api.hipMemPoolCreate)(&mut pool, (&raw const props).cast()) };
        self.check("hipMemPoolCreate", code)?;
        Ok(Some(pool as Handle))
    }

    pub(crate) fn hip_pool_call(&mut self, op: PoolCall) -> Result<(), DeviceError> {
        let Some(api) = self.rt.pools.as_ref() else {
            // No pools: pool allocations were plain ones (`hip_pool_alloc`).
            return match op {
                PoolCall::Free(p, _) => self.free(p, MemKind::Device),
                _ => Ok(()),
            };
        };
        // SAFETY: pools and pointers the runtime gave; `value` outlives the call.
        let (call, code) = unsafe {
            match op {
                PoolCall::Destroy(p) => ("hipMemPoolDestroy", (api.hipMemPoolDestroy)(ptr(p))),
                PoolCall::Trim(p, keep) => (
                    "hipMemPoolTrimTo",
                    (api.hipMemPoolTrimTo)(ptr(p), keep as usize),
                ),
                PoolCall::SetAttr(p, attr, value) => {
                    let mut wide = value;
                    let mut narrow = value as c_int;
                    let v: *mut c_void = if attr >= FIRST_U64_ATTR {
                        (&raw mut wide).cast()
                    } else {
                        (&raw mut narrow).cast()
                    };
                    (
                        "hipMemPoolSetAttribute",
                        (api.hipMemPoolSetAttribute)(ptr(p), attr as c_int, v),
                    )
                }
                PoolCall::SetDevice(p) => {
                    ("hipDeviceSetMemPool", (api.hipDeviceSetMemPool)(0, ptr(p)))
                }
                PoolCall::Free(p, s) => ("hipFreeAsync", (api.hipFreeAsync)(ptr(p), ptr(s))),
            }
        };
        self.check(call, code)
    }

    pub(crate) fn hip_pool_alloc(
        &mut self,
        pool: Handle,
        size: u64,
        s: Handle,
    ) -> Result<u64, DeviceError> {
        let Some(api) = self.rt.pools.as_ref() else {
            return self.alloc(size, MemKind::Device);
        };
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; pool and stream the runtime gave.
        let code =
            unsafe { (api.hipMallocFromPoolAsync)(&mut p, size as usize, ptr(pool), ptr(s)) };
        self.check("hipMallocFromPoolAsync", code)?;
        Ok(p as u64)
    }
}

fn operands(mut e: DeviceError, what: String) -> DeviceError {
    if let DeviceError::Call { message, .. } = &mut e {
        *message = format!("{message}; called with {what}");
    }
    e
}
