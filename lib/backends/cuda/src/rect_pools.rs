//! [`CudaDevice`]'s 2D/3D copies and memsets (`cuMemcpy2D_v2` and
//! `cuMemsetD2D8_v2`, a 3D one slice by slice) and memory pools
//! (`cuMemPoolCreate`, `cuMemAllocFromPoolAsync`, …). A driver without an
//! entry point falls back to what the `Device` defaults do: one 1D call per
//! row, plain allocations.

use std::ffi::{c_int, c_void};

use cuda_api::CU_MEMORYTYPE_DEVICE;
use cuda_api::CU_MEMORYTYPE_HOST;
use cuda_api::rect::CUDA_MEMCPY2D;
use hrr_core::MemKind;
use hrr_core::event::rect_rows;
use hrr_replay::device::{Device, DeviceError, Handle, PoolCall};

use crate::device::{CudaDevice, ptr};
use crate::ffi::{CUdeviceptr, CUstream};

fn stream(s: Option<Handle>) -> CUstream {
    ptr(s.unwrap_or(0))
}

/// One side of a rectangular copy: address, [row, slice] pitch, and
/// whether it is host memory.
pub(crate) type Side = (u64, [u64; 2], bool);

/// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`: this and later attributes are
/// u64s, the reuse flags before it ints.
const FIRST_U64_ATTR: u32 = 4;

impl CudaDevice {
    /// A rectangular copy of `extent` from `src` to `dst`; an asynchronous
    /// one with a host side is waited for (the host slice is borrowed).
    pub(crate) fn rect_copy(
        &mut self,
        (dst, src): (Side, Side),
        extent: [u64; 3],
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let [w, h, d] = extent;
        let api = self.driver().api();
        let (Some(sync2d), Some(async2d)) = (api.cuMemcpy2D, api.cuMemcpy2DAsync) else {
            for (doff, soff) in rect_rows(dst.1, extent).zip(rect_rows(src.1, extent)) {
                self.row_copy((dst.0 + doff, dst.2), (src.0 + soff, src.2), w, s)?;
            }
            return Ok(());
        };
        for z in 0..d {
            let (dz, sz) = (dst.0 + z * dst.1[1], src.0 + z * src.1[1]);
            let side = |host: bool| {
                if host {
                    CU_MEMORYTYPE_HOST
                } else {
                    CU_MEMORYTYPE_DEVICE
                }
            };
            let c = CUDA_MEMCPY2D {
                src_x_in_bytes: 0,
                src_y: 0,
                src_memory_type: side(src.2),
                src_host: ptr(sz),
                src_device: sz as CUdeviceptr,
                src_array: std::ptr::null_mut(),
                src_pitch: src.1[0] as usize,
                dst_x_in_bytes: 0,
                dst_y: 0,
                dst_memory_type: side(dst.2),
                dst_host: ptr(dz),
                dst_device: dz as CUdeviceptr,
                dst_array: std::ptr::null_mut(),
                dst_pitch: dst.1[0] as usize,
                width_in_bytes: w as usize,
                height: h as usize,
            };
            let p = (&raw const c).cast::<c_void>();
            match s {
                // SAFETY: a description of this layout; device sides are
                // translated addresses the driver validates, host sides
                // live slices holding every row.
                None => self.call("cuMemcpy2D_v2", |_| unsafe { sync2d(p.cast()) })?,
                // SAFETY: as above; waited for below while the host slice lives.
                Some(_) => self.call("cuMemcpy2DAsync_v2", |_| unsafe {
                    async2d(p.cast(), stream(s))
                })?,
            }
        }
        if s.is_some() && (dst.2 || src.2) {
            self.stream_sync(s.unwrap_or(0))?;
        }
        Ok(())
    }

    fn row_copy(
        &mut self,
        (dst, dst_host): (u64, bool),
        (src, src_host): (u64, bool),
        n: u64,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let len = n as usize;
        match (src_host, dst_host) {
            (true, false) => {
                // SAFETY: the caller's packed host slice holds this row.
                let bytes = unsafe { std::slice::from_raw_parts(src as usize as *const u8, len) };
                self.copy_h2d(dst, bytes, s)
            }
            (false, true) => {
                // SAFETY: the caller's packed host slice holds this row, writable.
                let bytes = unsafe { std::slice::from_raw_parts_mut(dst as usize as *mut u8, len) };
                self.copy_d2h(bytes, src, s)
            }
            _ => self.copy_d2d(dst, src, n, s),
        }
    }

    /// A rectangular byte memset.
    pub(crate) fn rect_memset(
        &mut self,
        (dst, pitch): (u64, [u64; 2]),
        extent: [u64; 3],
        value: u8,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let [w, h, d] = extent;
        let api = self.driver().api();
        let (Some(sync2d), Some(async2d)) = (api.cuMemsetD2D8, api.cuMemsetD2D8Async) else {
            for off in rect_rows(pitch, extent) {
                self.memset(dst + off, value, w, s)?;
            }
            return Ok(());
        };
        for z in 0..d {
            let at = dst + z * pitch[1];
            let (p, w, h) = (pitch[0] as usize, w as usize, h as usize);
            match s {
                // SAFETY: a translated device address the driver validates.
                None => self.call("cuMemsetD2D8_v2", |_| unsafe { sync2d(at, p, value, w, h) })?,
                // SAFETY: as above.
                Some(_) => self.call("cuMemsetD2D8Async", |_| unsafe {
                    async2d(at, p, value, w, h, stream(s))
                })?,
            }
        }
        Ok(())
    }

    pub(crate) fn cu_pool_create(&mut self) -> Result<Option<Handle>, DeviceError> {
        let Some(f) = self.driver().api().cuMemPoolCreate else {
            return Ok(None);
        };
        // `CUmemPoolProps` (88 bytes): allocType at 0 (pinned, 1), the
        // location at 8 (device, 1) with the ordinal at 12, the rest zero.
        let mut props = [0u8; 88];
        props[0..4].copy_from_slice(&1i32.to_le_bytes());
        props[8..12].copy_from_slice(&1i32.to_le_bytes());
        props[12..16].copy_from_slice(&self.ordinal().to_le_bytes());
        let mut pool: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a props block of the header's size.
        self.call("cuMemPoolCreate", |_| unsafe {
            f(&mut pool, props.as_ptr().cast())
        })?;
        Ok(Some(pool as Handle))
    }

    pub(crate) fn cu_pool_call(&mut self, op: PoolCall) -> Result<(), DeviceError> {
        let api = self.driver().api();
        match op {
            PoolCall::Destroy(p) => match api.cuMemPoolDestroy {
                // SAFETY: a pool `cu_pool_create` made.
                Some(f) => self.call("cuMemPoolDestroy", |_| unsafe { f(ptr(p)) }),
                None => Ok(()),
            },
            PoolCall::Trim(p, keep) => match api.cuMemPoolTrimTo {
                // SAFETY: as above.
                Some(f) => self.call("cuMemPoolTrimTo", |_| unsafe { f(ptr(p), keep as usize) }),
                None => Ok(()),
            },
            PoolCall::SetAttr(p, attr, value) => match api.cuMemPoolSetAttribute {
                Some(f) => {
                    let mut wide = value;
                    let mut narrow = value as c_int;
                    let v: *mut c_void = if attr >= FIRST_U64_ATTR {
                        (&raw mut wide).cast()
                    } else {
                        (&raw mut narrow).cast()
                    };
                    // SAFETY: as above; the value outlives the call.
                    self.call("cuMemPoolSetAttribute", |_| unsafe {
                        f(ptr(p), attr as c_int, v)
                    })
                }
                None => Ok(()),
            },
            PoolCall::SetDevice(p) => match api.cuDeviceSetMemPool {
                Some(f) => {
                    let dev = self.ordinal();
                    // SAFETY: this device, a pool made for it.
                    self.call("cuDeviceSetMemPool", |_| unsafe { f(dev, ptr(p)) })
                }
                None => Ok(()),
            },
            PoolCall::Free(p, s) => match api.cuMemFreeAsync {
                // SAFETY: an allocation `cu_pool_alloc` made.
                Some(f) => self.call("cuMemFreeAsync", |_| unsafe { f(p, stream(Some(s))) }),
                None => self.free(p, MemKind::Device),
            },
        }
    }

    pub(crate) fn cu_pool_alloc(
        &mut self,
        pool: Handle,
        size: u64,
        s: Handle,
    ) -> Result<u64, DeviceError> {
        let Some(f) = self.driver().api().cuMemAllocFromPoolAsync else {
            return self.alloc(size, MemKind::Device);
        };
        let mut p: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer; a pool and a stream the driver gave.
        self.call("cuMemAllocFromPoolAsync", |_| unsafe {
            f(&mut p, size.max(1) as usize, ptr(pool), stream(Some(s)))
        })?;
        Ok(p)
    }
}
