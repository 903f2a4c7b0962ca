//! Virtual memory management: reserve address space (at a requested address
//! when it is free), create physical memory, map it, make it accessible.
//! The work is `memory::vmm`'s; this module reads and checks HIP's C
//! structures, laid out as in Debian's ROCm 5.2 headers (this runtime's
//! `HIP_VERSION`).

use std::ffi::{c_int, c_void};

use ::hip_api::args;
use ::hip_api::types::hipMemAllocationProp;

use super::put;
use crate::error::guard;
use crate::ffi::{HipError, err};
use crate::runtime::rt;

/// `hipMemLocation`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Location {
    kind: c_int,
    id: c_int,
}

/// `hipMemAllocationProp` of ROCm 5.2's `hip_runtime_api.h`.
#[repr(C)]
#[derive(Clone, Copy)]
struct AllocationProp {
    compression_type: u8,
    location: Location,
    requested_handle_type: c_int,
    kind: c_int,
    usage: u16,
    win32_handle_meta_data: *mut c_void,
}

/// `hipMemAccessDesc`.
#[repr(C)]
#[derive(Clone, Copy)]
struct AccessDesc {
    location: Location,
    flags: c_int,
}

const _: () = {
    assert!(std::mem::size_of::<AllocationProp>() == 32);
    assert!(std::mem::size_of::<AccessDesc>() == 12);
};

const LOCATION_DEVICE: c_int = 1;
const ALLOCATION_PINNED: c_int = 1;
const ACCESS_NONE: c_int = 0;
const ACCESS_READ_WRITE: c_int = 3;

/// Device memory of device 0 is all this runtime has.
///
/// # Safety
/// `prop` is null or points to a `hipMemAllocationProp`.
unsafe fn check_prop(prop: *const hipMemAllocationProp) -> Result<(), HipError> {
    if prop.is_null() {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: per the contract, a readable hipMemAllocationProp (5.2 layout).
    let p = unsafe { prop.cast::<AllocationProp>().read_unaligned() };
    if p.kind != ALLOCATION_PINNED || p.location.kind != LOCATION_DEVICE || p.location.id != 0 {
        return Err(err::INVALID_VALUE);
    }
    Ok(())
}

pub(super) unsafe fn hipMemGetAllocationGranularity(
    a: args::hipMemGetAllocationGranularity,
) -> HipError {
    let args::hipMemGetAllocationGranularity {
        granularity,
        prop,
        option: _,
    } = a;
    guard(|| {
        // SAFETY: HIP contract for `prop`.
        unsafe { check_prop(prop) }?;
        let g = rt()?.mem().vmm_granularity();
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(granularity, g) }
    })
}

pub(super) unsafe fn hipMemAddressReserve(a: args::hipMemAddressReserve) -> HipError {
    let args::hipMemAddressReserve {
        ptr,
        size,
        alignment,
        addr,
        flags,
    } = a;
    guard(|| {
        if ptr.is_null() || flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        let p = rt()?.mem().vmm_reserve(size, alignment, addr as usize)?;
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(ptr, p as *mut c_void) }
    })
}

pub(super) unsafe fn hipMemAddressFree(a: args::hipMemAddressFree) -> HipError {
    let args::hipMemAddressFree { devPtr, size } = a;
    guard(|| rt()?.mem().vmm_free(devPtr as usize, size))
}

pub(super) unsafe fn hipMemCreate(a: args::hipMemCreate) -> HipError {
    let args::hipMemCreate {
        handle,
        size,
        prop,
        flags,
    } = a;
    guard(|| {
        if handle.is_null() || flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract for `prop`.
        unsafe { check_prop(prop) }?;
        let h = rt()?.mem().vmm_create(size)?;
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(handle, h as *mut c_void) }
    })
}

pub(super) unsafe fn hipMemRelease(a: args::hipMemRelease) -> HipError {
    let args::hipMemRelease { handle } = a;
    guard(|| rt()?.mem().vmm_release(handle as usize))
}

pub(super) unsafe fn hipMemMap(a: args::hipMemMap) -> HipError {
    let args::hipMemMap {
        ptr,
        size,
        offset,
        handle,
        flags,
    } = a;
    guard(|| {
        if flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        rt()?
            .mem()
            .vmm_map(ptr as usize, size, offset, handle as usize)
    })
}

pub(super) unsafe fn hipMemUnmap(a: args::hipMemUnmap) -> HipError {
    let args::hipMemUnmap { ptr, size } = a;
    guard(|| {
        let rt = rt()?;
        // Work queued on it finishes first, as a GPU runtime's unmap waits.
        let _ = rt.device_synchronize();
        rt.mem().vmm_unmap(ptr as usize, size)
    })
}

pub(super) unsafe fn hipMemSetAccess(a: args::hipMemSetAccess) -> HipError {
    let args::hipMemSetAccess {
        ptr,
        size,
        desc,
        count,
    } = a;
    guard(|| {
        if desc.is_null() || count == 0 {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: `desc` points to `count` descriptors.
        let descs = unsafe { std::slice::from_raw_parts(desc.cast::<AccessDesc>(), count) };
        let mut rw = None;
        for d in descs {
            if d.location.kind != LOCATION_DEVICE || d.location.id != 0 {
                return Err(err::INVALID_DEVICE);
            }
            rw = Some(match d.flags {
                ACCESS_READ_WRITE => true,
                ACCESS_NONE => false,
                // Read-only is not enforced apart from read-write.
                _ => return Err(err::NOT_SUPPORTED),
            });
        }
        let rw = rw.ok_or(err::INVALID_VALUE)?;
        rt()?.mem().vmm_set_access(ptr as usize, size, rw)
    })
}

/// `hipMemHandleTypePosixFileDescriptor`: the one shareable handle type
/// this runtime has (its physical memory is a `memfd`).
const HANDLE_TYPE_POSIX_FD: c_int = 1;

pub(super) unsafe fn hipMemRetainAllocationHandle(
    a: args::hipMemRetainAllocationHandle,
) -> HipError {
    let args::hipMemRetainAllocationHandle { handle, addr } = a;
    guard(|| {
        if handle.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let h = rt()?.mem().vmm_retain(addr as usize)?;
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(handle, h as *mut c_void) }
    })
}

pub(super) unsafe fn hipMemGetAllocationPropertiesFromHandle(
    a: args::hipMemGetAllocationPropertiesFromHandle,
) -> HipError {
    let args::hipMemGetAllocationPropertiesFromHandle { prop, handle } = a;
    guard(|| {
        rt()?.mem().vmm_size(handle as usize)?;
        let p = AllocationProp {
            compression_type: 0,
            location: Location {
                kind: LOCATION_DEVICE,
                id: 0,
            },
            requested_handle_type: HANDLE_TYPE_POSIX_FD,
            kind: ALLOCATION_PINNED,
            usage: 0,
            win32_handle_meta_data: std::ptr::null_mut(),
        };
        // SAFETY: HIP contract: `prop` points to a writable
        // hipMemAllocationProp (5.2 layout, the size asserted above).
        unsafe { put(prop.cast::<AllocationProp>(), p) }
    })
}

pub(super) unsafe fn hipMemExportToShareableHandle(
    a: args::hipMemExportToShareableHandle,
) -> HipError {
    let args::hipMemExportToShareableHandle {
        shareableHandle,
        handle,
        handleType,
        flags,
    } = a;
    guard(|| {
        if handleType != HANDLE_TYPE_POSIX_FD || flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        if shareableHandle.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let fd = rt()?.mem().vmm_export(handle as usize)?;
        // SAFETY: HIP contract: a POSIX descriptor is written as an int.
        unsafe { put(shareableHandle.cast::<c_int>(), fd) }
    })
}

/// The descriptor travels as the pointer's value, `(void *)(uintptr_t)fd`,
/// as CUDA's `cuMemImportFromShareableHandle` takes it.
pub(super) unsafe fn hipMemImportFromShareableHandle(
    a: args::hipMemImportFromShareableHandle,
) -> HipError {
    let args::hipMemImportFromShareableHandle {
        handle,
        osHandle,
        shHandleType,
    } = a;
    guard(|| {
        if handle.is_null() || shHandleType != HANDLE_TYPE_POSIX_FD {
            return Err(err::INVALID_VALUE);
        }
        let fd = c_int::try_from(osHandle as usize).map_err(|_| err::INVALID_VALUE)?;
        let h = rt()?.mem().vmm_import(fd)?;
        // SAFETY: HIP contract for the out-parameter (checked non-null).
        unsafe { put(handle, h as *mut c_void) }
    })
}
