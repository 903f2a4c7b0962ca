//! Allocations, copies, memsets and host registration.

use std::ffi::{c_int, c_uint, c_void};

use hrr_core::{Dir, MemKind};

use super::{Order, bytes, intercept, out_addr, real, resolve_dir};
use crate::hip::types::{
    self as hip, HipDevicePtr, HipError, HipMemcpyKind, HipPointerAttribute, HipStream,
};
use crate::interpose::guard::Guard;
use crate::record::recorder::Copy;

/// Whether the runtime calls `p` device memory (false for pageable host
/// memory, which the query rejects).
pub fn runtime_says_device(p: u64) -> bool {
    let Some(f) = real!(hipPointerGetAttributes: unsafe extern "C" fn(*mut HipPointerAttribute, *const c_void) -> HipError)
    else {
        return false;
    };
    let mut attr = HipPointerAttribute::default();
    // SAFETY: attr is ours; the runtime only looks `p` up, never dereferences it.
    let ret = unsafe { f(&mut attr, p as *const c_void) };
    ret == hip::err::SUCCESS && (attr.memory_type != hip::MEMORY_TYPE_HOST || attr.is_managed != 0)
}

/// Waits for `stream` through the real runtime (an async D2H's result is
/// read only once it has landed).
fn sync_stream(stream: HipStream) {
    if let Some(f) = real!(hipStreamSynchronize: unsafe extern "C" fn(HipStream) -> HipError) {
        // SAFETY: the application's own stream handle, just used successfully.
        unsafe { f(stream) };
    }
}

// ---------------------------------------------------------------- allocation

fn alloc(
    api: &'static str,
    ret: HipError,
    ptr: *mut *mut c_void,
    size: usize,
    mem: MemKind,
    r: &crate::record::recorder::Recorder,
) {
    // SAFETY: read only after success, when the runtime has written *ptr.
    let p = unsafe { out_addr(ret, ptr) };
    r.alloc(api, ret, p, size as u64, mem);
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> HipError {
    let real = real!(hipMalloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError);
    intercept(
        "hipMalloc",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size) },
        |r, ret| alloc("hipMalloc", ret, ptr, size, MemKind::Device, r),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipExtMallocWithFlags(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> HipError {
    let real = real!(hipExtMallocWithFlags: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError);
    intercept(
        "hipExtMallocWithFlags",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size, flags) },
        |r, ret| alloc("hipExtMallocWithFlags", ret, ptr, size, MemKind::Device, r),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipHostMalloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> HipError {
    let real =
        real!(hipHostMalloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError);
    intercept(
        "hipHostMalloc",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size, flags) },
        |r, ret| alloc("hipHostMalloc", ret, ptr, size, MemKind::Pinned, r),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMallocHost(ptr: *mut *mut c_void, size: usize) -> HipError {
    let real = real!(hipMallocHost: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError);
    intercept(
        "hipMallocHost",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size) },
        |r, ret| alloc("hipMallocHost", ret, ptr, size, MemKind::Pinned, r),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> HipError {
    let real =
        real!(hipMallocManaged: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError);
    intercept(
        "hipMallocManaged",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size, flags) },
        |r, ret| alloc("hipMallocManaged", ret, ptr, size, MemKind::Managed, r),
    )
}

macro_rules! free_fn {
    ($name:ident, $hint:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(ptr: *mut c_void) -> HipError {
            let real = real!($name: unsafe extern "C" fn(*mut c_void) -> HipError);
            // SAFETY: the application's argument, forwarded unchanged.
            intercept(stringify!($name), real, Order::Lifecycle, |f| unsafe { f(ptr) }, |r, ret| {
                r.free(stringify!($name), ret, ptr as u64, $hint)
            })
        }
    };
}
free_fn!(hipFree, None);
free_fn!(hipHostFree, Some(MemKind::Pinned));
free_fn!(hipFreeHost, Some(MemKind::Pinned));

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipHostRegister(ptr: *mut c_void, size: usize, flags: c_uint) -> HipError {
    let real = real!(hipHostRegister: unsafe extern "C" fn(*mut c_void, usize, c_uint) -> HipError);
    intercept(
        "hipHostRegister",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size, flags) },
        |r, ret| r.host_register("hipHostRegister", ret, ptr as u64, size as u64),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipHostUnregister(ptr: *mut c_void) -> HipError {
    let real = real!(hipHostUnregister: unsafe extern "C" fn(*mut c_void) -> HipError);
    intercept(
        "hipHostUnregister",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr) },
        |r, ret| r.host_unregister("hipHostUnregister", ret, ptr as u64),
    )
}

// ---------------------------------------------------------------- copies

/// The shared body of every copy: direction resolved before the call, the
/// blob (H2D source / D2H result) read after a successful one.
fn copy<F: std::marker::Copy>(
    api: &'static str,
    real: Option<F>,
    call: impl FnOnce(F) -> HipError,
    (dst, src, size): (*mut c_void, *const c_void, usize),
    kind: HipMemcpyKind,
    stream: Option<HipStream>,
) -> HipError {
    let Some(f) = real else {
        return super::missing(api);
    };
    let Some(g) = Guard::enter(api) else {
        return call(f);
    };
    let dir = g
        .run(|r| resolve_dir(r, kind, dst as u64, src as u64))
        .unwrap_or(Dir::H2h);
    let ret = call(f);
    g.run(|r| {
        let c = Copy {
            dir,
            dst: dst as u64,
            src: src as u64,
            size: size as u64,
            stream: stream.map(|s| s as u64),
        };
        // Never read a side the recorder knows to be device memory, whatever
        // the kind claims (not host-addressable on a GPU).
        let data = match dir {
            _ if ret != hip::err::SUCCESS => None,
            Dir::H2d if r.is_device(src as u64) != Some(true) => {
                // SAFETY: the runtime accepted and read `size` bytes at src.
                Some(unsafe { bytes(src, size) })
            }
            Dir::D2h if r.is_device(dst as u64) != Some(true) => {
                if let Some(s) = stream {
                    sync_stream(s);
                }
                // SAFETY: the runtime accepted `size` bytes at dst as the
                // destination, and the copy has completed.
                Some(unsafe { bytes(dst, size) })
            }
            _ => None,
        };
        r.memcpy(api, ret, &c, data);
    });
    ret
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: HipMemcpyKind,
) -> HipError {
    let real = real!(hipMemcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, HipMemcpyKind) -> HipError);
    copy(
        "hipMemcpy",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size, kind) },
        (dst, src, size),
        kind,
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyWithStream(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: HipMemcpyKind,
    stream: HipStream,
) -> HipError {
    type F = unsafe extern "C" fn(
        *mut c_void,
        *const c_void,
        usize,
        HipMemcpyKind,
        HipStream,
    ) -> HipError;
    let real = real!(hipMemcpyWithStream: F);
    // Synchronous despite the stream: recorded without one (DESIGN.md §4).
    copy(
        "hipMemcpyWithStream",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size, kind, stream) },
        (dst, src, size),
        kind,
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: HipMemcpyKind,
    stream: HipStream,
) -> HipError {
    type F = unsafe extern "C" fn(
        *mut c_void,
        *const c_void,
        usize,
        HipMemcpyKind,
        HipStream,
    ) -> HipError;
    let real = real!(hipMemcpyAsync: F);
    copy(
        "hipMemcpyAsync",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size, kind, stream) },
        (dst, src, size),
        kind,
        Some(stream),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyHtoD(
    dst: HipDevicePtr,
    src: *mut c_void,
    size: usize,
) -> HipError {
    let real =
        real!(hipMemcpyHtoD: unsafe extern "C" fn(HipDevicePtr, *mut c_void, usize) -> HipError);
    let kind = hip::MEMCPY_HOST_TO_DEVICE;
    copy(
        "hipMemcpyHtoD",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size) },
        (dst, src, size),
        kind,
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyDtoH(
    dst: *mut c_void,
    src: HipDevicePtr,
    size: usize,
) -> HipError {
    let real =
        real!(hipMemcpyDtoH: unsafe extern "C" fn(*mut c_void, HipDevicePtr, usize) -> HipError);
    let kind = hip::MEMCPY_DEVICE_TO_HOST;
    copy(
        "hipMemcpyDtoH",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size) },
        (dst, src, size),
        kind,
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyDtoD(
    dst: HipDevicePtr,
    src: HipDevicePtr,
    size: usize,
) -> HipError {
    let real =
        real!(hipMemcpyDtoD: unsafe extern "C" fn(HipDevicePtr, HipDevicePtr, usize) -> HipError);
    let kind = hip::MEMCPY_DEVICE_TO_DEVICE;
    copy(
        "hipMemcpyDtoD",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size) },
        (dst, src, size),
        kind,
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyHtoDAsync(
    dst: HipDevicePtr,
    src: *mut c_void,
    size: usize,
    stream: HipStream,
) -> HipError {
    let real = real!(hipMemcpyHtoDAsync: unsafe extern "C" fn(HipDevicePtr, *mut c_void, usize, HipStream) -> HipError);
    let kind = hip::MEMCPY_HOST_TO_DEVICE;
    copy(
        "hipMemcpyHtoDAsync",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size, stream) },
        (dst, src, size),
        kind,
        Some(stream),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyDtoHAsync(
    dst: *mut c_void,
    src: HipDevicePtr,
    size: usize,
    stream: HipStream,
) -> HipError {
    let real = real!(hipMemcpyDtoHAsync: unsafe extern "C" fn(*mut c_void, HipDevicePtr, usize, HipStream) -> HipError);
    let kind = hip::MEMCPY_DEVICE_TO_HOST;
    copy(
        "hipMemcpyDtoHAsync",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size, stream) },
        (dst, src, size),
        kind,
        Some(stream),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyDtoDAsync(
    dst: HipDevicePtr,
    src: HipDevicePtr,
    size: usize,
    stream: HipStream,
) -> HipError {
    let real = real!(hipMemcpyDtoDAsync: unsafe extern "C" fn(HipDevicePtr, HipDevicePtr, usize, HipStream) -> HipError);
    let kind = hip::MEMCPY_DEVICE_TO_DEVICE;
    copy(
        "hipMemcpyDtoDAsync",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, src, size, stream) },
        (dst, src, size),
        kind,
        Some(stream),
    )
}

// ---------------------------------------------------------------- memsets

/// Memsets record the byte size and the pattern width (1, 2 or 4).
fn set<F: std::marker::Copy>(
    api: &'static str,
    real: Option<F>,
    call: impl FnOnce(F) -> HipError,
    (dst, value, count, width): (*mut c_void, u32, usize, u8),
    stream: Option<HipStream>,
) -> HipError {
    intercept(api, real, Order::Free, call, |r, ret| {
        let size = (count as u64).saturating_mul(u64::from(width));
        r.memset(
            api,
            ret,
            dst as u64,
            value,
            size,
            width,
            stream.map(|s| s as u64),
        )
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemset(dst: *mut c_void, value: c_int, size: usize) -> HipError {
    let real = real!(hipMemset: unsafe extern "C" fn(*mut c_void, c_int, usize) -> HipError);
    set(
        "hipMemset",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, value, size) },
        (dst, value as u8 as u32, size, 1),
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetAsync(
    dst: *mut c_void,
    value: c_int,
    size: usize,
    stream: HipStream,
) -> HipError {
    let real = real!(hipMemsetAsync: unsafe extern "C" fn(*mut c_void, c_int, usize, HipStream) -> HipError);
    set(
        "hipMemsetAsync",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, value, size, stream) },
        (dst, value as u8 as u32, size, 1),
        Some(stream),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD8(dst: HipDevicePtr, value: u8, count: usize) -> HipError {
    let real = real!(hipMemsetD8: unsafe extern "C" fn(HipDevicePtr, u8, usize) -> HipError);
    set(
        "hipMemsetD8",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, value, count) },
        (dst, u32::from(value), count, 1),
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD8Async(
    dst: HipDevicePtr,
    value: u8,
    count: usize,
    stream: HipStream,
) -> HipError {
    let real = real!(hipMemsetD8Async: unsafe extern "C" fn(HipDevicePtr, u8, usize, HipStream) -> HipError);
    set(
        "hipMemsetD8Async",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, value, count, stream) },
        (dst, u32::from(value), count, 1),
        Some(stream),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD16(dst: HipDevicePtr, value: u16, count: usize) -> HipError {
    let real = real!(hipMemsetD16: unsafe extern "C" fn(HipDevicePtr, u16, usize) -> HipError);
    set(
        "hipMemsetD16",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, value, count) },
        (dst, u32::from(value), count, 2),
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD16Async(
    dst: HipDevicePtr,
    value: u16,
    count: usize,
    stream: HipStream,
) -> HipError {
    let real = real!(hipMemsetD16Async: unsafe extern "C" fn(HipDevicePtr, u16, usize, HipStream) -> HipError);
    set(
        "hipMemsetD16Async",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, value, count, stream) },
        (dst, u32::from(value), count, 2),
        Some(stream),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD32(dst: HipDevicePtr, value: c_int, count: usize) -> HipError {
    let real = real!(hipMemsetD32: unsafe extern "C" fn(HipDevicePtr, c_int, usize) -> HipError);
    set(
        "hipMemsetD32",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, value, count) },
        (dst, value as u32, count, 4),
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemsetD32Async(
    dst: HipDevicePtr,
    value: c_int,
    count: usize,
    stream: HipStream,
) -> HipError {
    let real = real!(hipMemsetD32Async: unsafe extern "C" fn(HipDevicePtr, c_int, usize, HipStream) -> HipError);
    set(
        "hipMemsetD32Async",
        real,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, value, count, stream) },
        (dst, value as u32, count, 4),
        Some(stream),
    )
}
