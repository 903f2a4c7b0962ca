//! Recorded handlers: allocations, copies, memsets and host registration.
//! Each entry point is one line of a macro table below: which arguments are
//! the pointer, the size, the direction and the stream (fields of the
//! table's `args::NAME`), and how the shared body records it.

use std::ffi::c_void;

use api_table::Entry;
use hip_api::args;
use hrr_core::{Dir, MemKind};

use super::{intercept, resolve_dir};
use crate::capture::Guard;
use crate::hip::types::{self as hip, HipError, HipPointerAttribute, HipStream};
use hrr_interpose::call_args::{bytes, out_addr};
use hrr_interpose::exports::missing;
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::recorder::Order;
use hrr_recorder::record::recorder::{Copy, Recorder};

/// Whether the runtime calls `p` device memory (false for pageable host
/// memory, which the query rejects).
pub fn runtime_says_device(p: u64) -> bool {
    static REAL: Real<args::hipPointerGetAttributes> = Real::new();
    let Some(f) = REAL.get() else {
        return false;
    };
    let mut attr = HipPointerAttribute::default();
    let a = args::hipPointerGetAttributes {
        attributes: &mut attr,
        ptr: p as *const c_void,
    };
    // SAFETY: attr is ours; the runtime only looks `p` up, never dereferences it.
    let ret = unsafe { a.call(f) };
    ret == hip::err::SUCCESS && (attr.memory_type != hip::MEMORY_TYPE_HOST || attr.is_managed != 0)
}

/// Waits for `stream` through the real runtime (an async D2H's result is
/// read only once it has landed).
pub(super) fn sync_stream(stream: HipStream) {
    static REAL: Real<args::hipStreamSynchronize> = Real::new();
    if let Some(f) = REAL.get() {
        // SAFETY: the application's own stream handle, just used successfully.
        unsafe { args::hipStreamSynchronize { stream }.call(f) };
    }
}

// ---------------------------------------------------------------- allocation

fn alloc(
    api: &'static str,
    ret: HipError,
    ptr: *mut *mut c_void,
    size: usize,
    mem: MemKind,
    r: &Recorder,
) {
    // SAFETY: read only after success, when the runtime has written *ptr.
    let p = unsafe { out_addr(ret, ptr) };
    r.alloc(api, ret, p, size as u64, mem);
}

/// `NAME(OUT_PTR, SIZE) => KIND`: an allocation recorded as `alloc`.
macro_rules! allocs {
    ($($name:ident($ptr:ident, $size:ident) => $mem:ident;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, a: args::$name) -> HipError {
            // SAFETY: the export's contract: the application's arguments.
            unsafe {
                intercept(real, a, Order::Lifecycle, |r, api, ret| {
                    alloc(api, ret, a.$ptr, a.$size, MemKind::$mem, r)
                })
            }
        }
    )*};
}

allocs! {
    hipMalloc(ptr, size) => Device;
    hipExtMallocWithFlags(ptr, sizeBytes) => Device;
    hipHostMalloc(ptr, size) => Pinned;
    hipMallocHost(ptr, size) => Pinned;
    hipMemAllocHost(ptr, size) => Pinned;
    hipHostAlloc(ptr, size) => Pinned;
    hipMallocManaged(dev_ptr, size) => Managed;
    // Stream-ordered, recorded as allocated at the call (replay allocates
    // synchronously, which serves every later use on any stream).
    hipMallocAsync(dev_ptr, size) => Device;
}

/// `NAME(PTR) => KIND hint`: a release recorded as `free`.
macro_rules! frees {
    ($($name:ident($ptr:ident) => $hint:expr;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, a: args::$name) -> HipError {
            crate::capture::untrack_host_memory(a.$ptr as u64);
            // SAFETY: the export's contract: the application's arguments.
            unsafe {
                intercept(real, a, Order::Lifecycle, |r, api, ret| {
                    r.free(api, ret, a.$ptr as u64, $hint)
                })
            }
        }
    )*};
}

frees! {
    hipFree(ptr) => None;
    hipHostFree(ptr) => Some(MemKind::Pinned);
    hipFreeHost(ptr) => Some(MemKind::Pinned);
    // Stream-ordered: recorded at the call; replay frees after the work
    // recorded before it, which is all the stream could still be running.
    hipFreeAsync(dev_ptr) => None;
}

#[inline]
pub unsafe fn hipHostRegister(
    real: &'static Real<args::hipHostRegister>,
    a: args::hipHostRegister,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.host_register(api, ret, a.hostPtr as u64, a.sizeBytes as u64)
        })
    }
}

#[inline]
pub unsafe fn hipHostUnregister(
    real: &'static Real<args::hipHostUnregister>,
    a: args::hipHostUnregister,
) -> HipError {
    crate::capture::untrack_host_memory(a.hostPtr as u64);
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            r.host_unregister(api, ret, a.hostPtr as u64)
        })
    }
}

// ---------------------------------------------------------------- copies

/// The shared body of every copy: direction resolved before the call, the
/// blob (H2D source / D2H result) read after a successful one.
///
/// # Safety
/// `a` holds the application's arguments; `(dst, src, size)` are its copy's
/// operands.
#[inline(always)]
unsafe fn copy<A: Entry<Ret = HipError>>(
    real: &Real<A>,
    a: A,
    (dst, src, size): (*mut c_void, *const c_void, usize),
    kind: hip::HipMemcpyKind,
    stream: Option<HipStream>,
) -> HipError {
    let api = A::NAME;
    let Some(f) = real.get() else {
        return missing::<A>();
    };
    let Some(g) = Guard::enter(api) else {
        // SAFETY: per this function's contract.
        return unsafe { a.call(f) };
    };
    let dir = g
        .run(|r| resolve_dir(r, kind, dst as u64, src as u64))
        .unwrap_or(Dir::H2h);
    let (ret, pre) = if stream.is_none() && dir == Dir::H2d {
        // SAFETY: per this function's contract.
        unsafe { crate::upload::forward_h2d(&g, src, size, || a.call(f)) }
    } else {
        // SAFETY: per this function's contract.
        (unsafe { a.call(f) }, None)
    };
    g.run(|r| {
        if stream.is_some_and(|s| super::graph::captured(s as u64)) {
            // Captured into a graph, not run: recorded when the graph is.
            return;
        }
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
        r.memcpy_hashed(api, ret, &c, data, pre);
    });
    ret
}

/// `NAME: (DST, SRC, SIZE), kind KIND, stream STREAM;` in terms of the
/// arguments `a`: a copy recorded as `memcpy`.
macro_rules! copies {
    ($a:ident; $($name:ident: ($dst:expr, $src:expr, $size:expr), kind $kind:expr, stream $stream:expr;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, $a: args::$name) -> HipError {
            // SAFETY: the export's contract: the application's arguments,
            // whose copy operands these are.
            unsafe { copy(real, $a, ($dst as *mut c_void, $src as *const c_void, $size), $kind, $stream) }
        }
    )*};
}

copies! { a;
    hipMemcpy: (a.dst, a.src, a.sizeBytes), kind a.kind, stream None;
    // Synchronous despite the stream: recorded without one (DESIGN.md §4).
    hipMemcpyWithStream: (a.dst, a.src, a.sizeBytes), kind a.kind, stream None;
    hipMemcpyAsync: (a.dst, a.src, a.sizeBytes), kind a.kind, stream Some(a.stream);
    hipMemcpyHtoD: (a.dst, a.src, a.sizeBytes), kind hip::MEMCPY_HOST_TO_DEVICE, stream None;
    hipMemcpyDtoH: (a.dst, a.src, a.sizeBytes), kind hip::MEMCPY_DEVICE_TO_HOST, stream None;
    hipMemcpyDtoD: (a.dst, a.src, a.sizeBytes), kind hip::MEMCPY_DEVICE_TO_DEVICE, stream None;
    hipMemcpyHtoDAsync: (a.dst, a.src, a.sizeBytes), kind hip::MEMCPY_HOST_TO_DEVICE, stream Some(a.stream);
    hipMemcpyDtoHAsync: (a.dst, a.src, a.sizeBytes), kind hip::MEMCPY_DEVICE_TO_HOST, stream Some(a.stream);
    hipMemcpyDtoDAsync: (a.dst, a.src, a.sizeBytes), kind hip::MEMCPY_DEVICE_TO_DEVICE, stream Some(a.stream);
}

// ---------------------------------------------------------------- memsets

/// `NAME: (DST, VALUE, COUNT, WIDTH), stream STREAM;` in terms of `a`: a
/// memset recorded with its byte size and pattern width (1, 2 or 4).
macro_rules! memsets {
    ($a:ident; $($name:ident: ($dst:expr, $value:expr, $count:expr, $width:expr), stream $stream:expr;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, $a: args::$name) -> HipError {
            let (dst, value, count, width): (*mut c_void, u32, usize, u8) = ($dst, $value, $count, $width);
            let stream: Option<HipStream> = $stream;
            // SAFETY: the export's contract: the application's arguments.
            unsafe {
                intercept(real, $a, Order::Free, |r, api, ret| {
                    if stream.is_some_and(|s| super::graph::captured(s as u64)) {
                        // Captured into a graph, not run.
                        return;
                    }
                    let size = (count as u64).saturating_mul(u64::from(width));
                    r.memset(api, ret, dst as u64, value, size, width, stream.map(|s| s as u64))
                })
            }
        }
    )*};
}

memsets! { a;
    hipMemset: (a.dst, a.value as u8 as u32, a.sizeBytes, 1), stream None;
    hipMemsetAsync: (a.dst, a.value as u8 as u32, a.sizeBytes, 1), stream Some(a.stream);
    hipMemsetD8: (a.dest, u32::from(a.value), a.count, 1), stream None;
    hipMemsetD8Async: (a.dest, u32::from(a.value), a.count, 1), stream Some(a.stream);
    hipMemsetD16: (a.dest, u32::from(a.value), a.count, 2), stream None;
    hipMemsetD16Async: (a.dest, u32::from(a.value), a.count, 2), stream Some(a.stream);
    hipMemsetD32: (a.dest, a.value as u32, a.count, 4), stream None;
    hipMemsetD32Async: (a.dst, a.value as u32, a.count, 4), stream Some(a.stream);
}
