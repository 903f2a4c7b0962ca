//! Memory: device, managed and pinned allocations, host registration, and
//! what the runtime answers about a pointer.

use std::ffi::{c_int, c_void};

use ::hip_api::args;

use super::put;
use crate::error::guard;
use crate::ffi::{self, HipError, HipPointerAttribute, err};
use crate::memory::{Class, DevKind, HostKind};
use crate::runtime::rt;

/// `*ptr` = what `alloc` allocates, or null for 0 bytes (`alloc` is not
/// called then).
///
/// # Safety
/// `ptr` is null or valid for a write.
unsafe fn alloc_out(
    ptr: *mut *mut c_void,
    size: usize,
    alloc: impl FnOnce() -> Result<usize, HipError>,
) -> Result<(), HipError> {
    if ptr.is_null() {
        return Err(err::INVALID_VALUE);
    }
    let p = if size == 0 { 0 } else { alloc()? };
    // SAFETY: checked non-null; valid per this function's contract.
    unsafe { put(ptr, p as *mut c_void) }
}

pub(super) unsafe fn hipMalloc(a: args::hipMalloc) -> HipError {
    let args::hipMalloc { ptr, size } = a;

    // SAFETY: HIP contract for the out-parameter.
    guard(|| unsafe {
        alloc_out(ptr, size, || {
            rt()?.mem().alloc_device(size, DevKind::Device, 0)
        })
    })
}

pub(super) unsafe fn hipFree(a: args::hipFree) -> HipError {
    let args::hipFree { ptr } = a;

    guard(|| {
        if ptr.is_null() {
            return Ok(());
        }
        let rt = rt()?;
        let _ = rt.device_synchronize();
        // A pool block freed synchronously goes back to its pool.
        if super::pools::give_back(ptr as usize)? {
            return Ok(());
        }
        rt.mem()
            .free_device(ptr as usize, &[DevKind::Device, DevKind::Managed])
    })
}

/// Stream-ordered allocation: allocated at once (the stream must exist), so
/// it is ready for any later work on any stream.
pub(super) unsafe fn hipMallocAsync(a: args::hipMallocAsync) -> HipError {
    let args::hipMallocAsync {
        dev_ptr,
        size,
        stream,
    } = a;
    if let Err(e) = rt().and_then(|rt| rt.target(stream as usize).map(drop)) {
        return crate::error::record(e);
    }
    if let Some(pool) = super::pools::current_pool() {
        return guard(|| {
            if dev_ptr.is_null() {
                return Err(err::INVALID_VALUE);
            }
            let p = super::pools::alloc_from(pool, size)?;
            // SAFETY: HIP contract for the out-parameter (checked non-null).
            unsafe { put(dev_ptr, p as *mut c_void) }
        });
    }
    // SAFETY: same contract as hipMalloc.
    unsafe { hipMalloc(args::hipMalloc { ptr: dev_ptr, size }) }
}

/// Stream-ordered release: once the work queued on `stream` before it has
/// run (the stream is synchronised, then the memory freed).
pub(super) unsafe fn hipFreeAsync(a: args::hipFreeAsync) -> HipError {
    let args::hipFreeAsync { dev_ptr, stream } = a;
    guard(|| {
        if dev_ptr.is_null() {
            return Ok(());
        }
        let rt = rt()?;
        rt.stream_synchronize(stream as usize)?;
        if super::pools::give_back(dev_ptr as usize)? {
            return Ok(());
        }
        rt.mem()
            .free_device(dev_ptr as usize, &[DevKind::Device, DevKind::Managed])
    })
}

pub(super) unsafe fn hipMallocManaged(a: args::hipMallocManaged) -> HipError {
    let args::hipMallocManaged {
        dev_ptr: ptr,
        size,
        flags,
    } = a;

    guard(|| {
        if flags != ffi::MEM_ATTACH_GLOBAL && flags != ffi::MEM_ATTACH_HOST {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract for the out-parameter.
        unsafe {
            alloc_out(ptr, size, || {
                rt()?.mem().alloc_device(size, DevKind::Managed, flags)
            })
        }
    })
}

pub(super) unsafe fn hipHostMalloc(a: args::hipHostMalloc) -> HipError {
    let args::hipHostMalloc { ptr, size, flags } = a;

    // SAFETY: HIP contract for the out-parameter.
    guard(|| unsafe {
        alloc_out(ptr, size, || {
            rt()?.mem().alloc_host(size, HostKind::Pinned, flags)
        })
    })
}

pub(super) unsafe fn hipMallocHost(a: args::hipMallocHost) -> HipError {
    let args::hipMallocHost { ptr, size } = a;
    // SAFETY: same contract as hipHostMalloc.
    unsafe {
        hipHostMalloc(args::hipHostMalloc {
            ptr,
            size,
            flags: 0,
        })
    }
}

/// The deprecated name of `hipHostMalloc` without flags.
pub(super) unsafe fn hipMemAllocHost(a: args::hipMemAllocHost) -> HipError {
    let args::hipMemAllocHost { ptr, size } = a;
    // SAFETY: same contract as hipHostMalloc.
    unsafe {
        hipHostMalloc(args::hipHostMalloc {
            ptr,
            size,
            flags: 0,
        })
    }
}

/// The deprecated name of `hipHostMalloc`.
pub(super) unsafe fn hipHostAlloc(a: args::hipHostAlloc) -> HipError {
    let args::hipHostAlloc { ptr, size, flags } = a;
    // SAFETY: same contract as hipHostMalloc.
    unsafe { hipHostMalloc(args::hipHostMalloc { ptr, size, flags }) }
}

pub(super) unsafe fn hipHostFree(a: args::hipHostFree) -> HipError {
    let args::hipHostFree { ptr } = a;

    guard(|| {
        if ptr.is_null() {
            return Ok(());
        }
        let rt = rt()?;
        let _ = rt.device_synchronize();
        rt.mem().free_host(ptr as usize, &[HostKind::Pinned])
    })
}

pub(super) unsafe fn hipFreeHost(a: args::hipFreeHost) -> HipError {
    let args::hipFreeHost { ptr } = a;
    // SAFETY: same contract as hipHostFree.
    unsafe { hipHostFree(args::hipHostFree { ptr }) }
}

pub(super) unsafe fn hipHostRegister(a: args::hipHostRegister) -> HipError {
    let args::hipHostRegister {
        hostPtr: ptr,
        sizeBytes: size,
        flags,
    } = a;

    guard(|| {
        if ptr.is_null() || size == 0 {
            return Err(err::INVALID_VALUE);
        }
        rt()?.mem().register_host(ptr as usize, size, flags)
    })
}

pub(super) unsafe fn hipHostUnregister(a: args::hipHostUnregister) -> HipError {
    let args::hipHostUnregister { hostPtr: ptr } = a;

    guard(|| {
        let rt = rt()?;
        let _ = rt.device_synchronize();
        rt.mem().unregister_host(ptr as usize)
    })
}

pub(super) unsafe fn hipHostGetDevicePointer(a: args::hipHostGetDevicePointer) -> HipError {
    let args::hipHostGetDevicePointer {
        devPtr: dev,
        hstPtr: host,
        flags,
    } = a;

    guard(|| {
        if flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        match rt()?.mem().classify(host as usize) {
            Class::Host { .. }
            | Class::Device {
                kind: DevKind::Managed,
                ..
            } => {}
            _ => return Err(err::INVALID_VALUE),
        }
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(dev, host) }
    })
}

pub(super) unsafe fn hipMemGetInfo(a: args::hipMemGetInfo) -> HipError {
    let args::hipMemGetInfo { free, total } = a;

    guard(|| {
        // The current device's share (`Memory::device_info`).
        let (f, t) = {
            let rt = rt()?;
            let n = rt.devices.count();
            rt.mem().device_info(crate::devices::current(), n)
        };
        // SAFETY: HIP contract for the out-parameters.
        unsafe {
            put(free, f)?;
            put(total, t)
        }
    })
}

pub(super) unsafe fn hipPointerGetAttributes(a: args::hipPointerGetAttributes) -> HipError {
    let args::hipPointerGetAttributes { attributes, ptr } = a;

    guard(|| {
        if ptr.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let p = ptr as *mut c_void;
        let a = match rt()?.mem().classify(ptr as usize) {
            Class::Device {
                kind,
                flags,
                device,
                ..
            } => HipPointerAttribute {
                memory_type: ffi::MEMORY_TYPE_DEVICE,
                device: device as c_int,
                device_pointer: p,
                host_pointer: if kind == DevKind::Managed {
                    p
                } else {
                    std::ptr::null_mut()
                },
                is_managed: c_int::from(kind == DevKind::Managed),
                allocation_flags: flags,
            },
            Class::Host { flags, .. } => HipPointerAttribute {
                memory_type: ffi::MEMORY_TYPE_HOST,
                device: 0,
                device_pointer: p,
                host_pointer: p,
                is_managed: 0,
                allocation_flags: flags,
            },
            Class::Stale | Class::Unknown => return Err(err::INVALID_VALUE),
        };
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(attributes, a) }
    })
}

pub(super) unsafe fn hipMemGetAddressRange(a: args::hipMemGetAddressRange) -> HipError {
    let args::hipMemGetAddressRange {
        pbase: base,
        psize: size,
        dptr: ptr,
    } = a;

    guard(|| {
        let (b, s) = match rt()?.mem().classify(ptr as usize) {
            Class::Device { base, size, .. } | Class::Host { base, size, .. } => (base, size),
            _ => return Err(err::NOT_FOUND),
        };
        // SAFETY: HIP contract: each out-parameter is null or writable.
        unsafe {
            if !base.is_null() {
                put(base, b as *mut c_void)?;
            }
            if !size.is_null() {
                put(size, s)?;
            }
        }
        Ok(())
    })
}

pub(super) unsafe fn hipMemPtrGetInfo(a: args::hipMemPtrGetInfo) -> HipError {
    let args::hipMemPtrGetInfo { ptr, size } = a;

    guard(|| {
        let s = match rt()?.mem().classify(ptr as usize) {
            Class::Device { size, .. } | Class::Host { size, .. } => size,
            _ => return Err(err::INVALID_VALUE),
        };
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(size, s) }
    })
}

/// `hipMemAdvise`: a placement hint; this runtime's memory is all the
/// host's, so there is nothing to place. Checked and accepted.
pub(super) unsafe fn hipMemAdvise(a: args::hipMemAdvise) -> HipError {
    let args::hipMemAdvise {
        dev_ptr,
        count,
        advice: _,
        device,
    } = a;
    guard(|| {
        if dev_ptr.is_null() || count == 0 || !(-1..=0).contains(&device) {
            return Err(err::INVALID_VALUE);
        }
        Ok(())
    })
}
