//! CUDA allocations, copies, memsets and host registration, with the exact
//! signatures of CUDA 13's `cuda_runtime_api.h`, including the per-thread
//! default-stream variants (`_ptds` synchronous, `_ptsz` stream-ordered)
//! that `--default-stream per-thread` builds call.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::{c_int, c_uint, c_void};

use hrr_core::{Dir, MemKind};

use super::dir;
use super::ffi::{
    Order, bytes, cuda_real, enter, intercept, missing, out_addr, pointer_type, sync_stream,
};
use super::types::{self as cu, CudaError, CudaStream, MemcpyKind, stream_id};
use crate::record::recorder::{Copy, Recorder};

// ---------------------------------------------------------------- allocation

fn alloc(
    api: &'static str,
    ret: CudaError,
    ptr: *mut *mut c_void,
    size: usize,
    mem: MemKind,
    r: &Recorder,
) {
    // SAFETY: read only after success, when the runtime has written *ptr.
    let p = unsafe { out_addr(ret, ptr) };
    r.alloc(api, ret, p, size as u64, mem);
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> CudaError {
    let real = cuda_real!(cudaMalloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> CudaError);
    intercept(
        "cudaMalloc",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size) },
        |r, ret| alloc("cudaMalloc", ret, ptr, size, MemKind::Device, r),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> CudaError {
    let real =
        cuda_real!(cudaMallocHost: unsafe extern "C" fn(*mut *mut c_void, usize) -> CudaError);
    intercept(
        "cudaMallocHost",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size) },
        |r, ret| alloc("cudaMallocHost", ret, ptr, size, MemKind::Pinned, r),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaHostAlloc(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> CudaError {
    let real = cuda_real!(cudaHostAlloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> CudaError);
    intercept(
        "cudaHostAlloc",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size, flags) },
        |r, ret| alloc("cudaHostAlloc", ret, ptr, size, MemKind::Pinned, r),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> CudaError {
    let real = cuda_real!(cudaMallocManaged: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> CudaError);
    intercept(
        "cudaMallocManaged",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size, flags) },
        |r, ret| alloc("cudaMallocManaged", ret, ptr, size, MemKind::Managed, r),
    )
}

/// `cudaMallocAsync` (+`_ptsz`): recorded as a plain device `alloc` (replay
/// allocates at that point of the stream of events).
macro_rules! malloc_async_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(ptr: *mut *mut c_void, size: usize, stream: CudaStream) -> CudaError {
            let real = cuda_real!($name: unsafe extern "C" fn(*mut *mut c_void, usize, CudaStream) -> CudaError);
            intercept(
                stringify!($name),
                real,
                Order::Lifecycle,
                // SAFETY: the application's arguments, forwarded unchanged.
                |f| unsafe { f(ptr, size, stream) },
                |r, ret| alloc(stringify!($name), ret, ptr, size, MemKind::Device, r),
            )
        }
    };
}
malloc_async_fn!(cudaMallocAsync);
malloc_async_fn!(cudaMallocAsync_ptsz);

macro_rules! free_fn {
    ($name:ident, $hint:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(ptr: *mut c_void) -> CudaError {
            let real = cuda_real!($name: unsafe extern "C" fn(*mut c_void) -> CudaError);
            crate::record::recorder::untrack_host_memory(ptr as u64);
            // SAFETY: the application's argument, forwarded unchanged.
            intercept(stringify!($name), real, Order::Lifecycle, |f| unsafe { f(ptr) }, |r, ret| {
                r.free(stringify!($name), ret, ptr as u64, $hint)
            })
        }
    };
}
free_fn!(cudaFree, None);
free_fn!(cudaFreeHost, Some(MemKind::Pinned));

macro_rules! free_async_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(ptr: *mut c_void, stream: CudaStream) -> CudaError {
            let real = cuda_real!($name: unsafe extern "C" fn(*mut c_void, CudaStream) -> CudaError);
            // SAFETY: the application's arguments, forwarded unchanged.
            intercept(stringify!($name), real, Order::Lifecycle, |f| unsafe { f(ptr, stream) }, |r, ret| {
                r.free(stringify!($name), ret, ptr as u64, None)
            })
        }
    };
}
free_async_fn!(cudaFreeAsync);
free_async_fn!(cudaFreeAsync_ptsz);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaHostRegister(
    ptr: *mut c_void,
    size: usize,
    flags: c_uint,
) -> CudaError {
    let real =
        cuda_real!(cudaHostRegister: unsafe extern "C" fn(*mut c_void, usize, c_uint) -> CudaError);
    intercept(
        "cudaHostRegister",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(ptr, size, flags) },
        |r, ret| r.host_register("cudaHostRegister", ret, ptr as u64, size as u64),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaHostUnregister(ptr: *mut c_void) -> CudaError {
    let real = cuda_real!(cudaHostUnregister: unsafe extern "C" fn(*mut c_void) -> CudaError);
    crate::record::recorder::untrack_host_memory(ptr as u64);
    intercept(
        "cudaHostUnregister",
        real,
        Order::Lifecycle,
        // SAFETY: the application's argument, forwarded unchanged.
        |f| unsafe { f(ptr) },
        |r, ret| r.host_unregister("cudaHostUnregister", ret, ptr as u64),
    )
}

// ---------------------------------------------------------------- copies

/// Whether `p` is device-side: the recorder's allocations first, then the
/// runtime's pointer attributes.
fn is_device(r: &Recorder, p: u64) -> bool {
    dir::device_side(r.is_device(p), || pointer_type(p))
}

/// How an async copy's stream is waited on before a D2H result is read:
/// `Legacy` for the plain API, `PerThread` for `_ptsz` (whose null stream is
/// the calling thread's default stream).
#[derive(Clone, Copy, PartialEq, Eq)]
enum DefaultStream {
    Legacy,
    PerThread,
}

/// The shared body of every copy: direction resolved before the call, the
/// blob (H2D source / D2H result) read after a successful one.
fn copy<F: std::marker::Copy>(
    api: &'static str,
    real: Option<F>,
    call: impl FnOnce(F) -> CudaError,
    (dst, src, size): (*mut c_void, *const c_void, usize),
    kind: MemcpyKind,
    stream: Option<(CudaStream, DefaultStream)>,
) -> CudaError {
    let Some(f) = real else {
        return missing(api);
    };
    let Some(g) = enter(api) else {
        return call(f);
    };
    let (d, s) = (dst as u64, src as u64);
    let dir = g
        .run(|r| dir::resolve(kind, || is_device(r, d), || is_device(r, s)))
        .unwrap_or(Dir::H2h);
    let ret = call(f);
    g.run(|r| {
        let c = Copy {
            dir,
            dst: d,
            src: s,
            size: size as u64,
            stream: stream.map(|(st, _)| stream_id(st as u64)),
        };
        // Never read a side the recorder knows to be device memory, whatever
        // the kind claims (not host-addressable).
        let data = match dir {
            _ if ret != cu::SUCCESS => None,
            Dir::H2d if r.is_device(s) != Some(true) => {
                // SAFETY: the runtime accepted and read `size` bytes at src.
                Some(unsafe { bytes(src, size) })
            }
            Dir::D2h if r.is_device(d) != Some(true) => {
                if let Some((st, default)) = stream {
                    let st = match (st as u64, default) {
                        (0, DefaultStream::PerThread) => cu::STREAM_PER_THREAD,
                        (h, _) => h,
                    };
                    sync_stream(st);
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

macro_rules! memcpy_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            dst: *mut c_void,
            src: *const c_void,
            size: usize,
            kind: MemcpyKind,
        ) -> CudaError {
            type F = unsafe extern "C" fn(*mut c_void, *const c_void, usize, MemcpyKind) -> CudaError;
            let real = cuda_real!($name: F);
            copy(
                stringify!($name),
                real,
                // SAFETY: the application's arguments, forwarded unchanged.
                |f| unsafe { f(dst, src, size, kind) },
                (dst, src, size),
                kind,
                None,
            )
        }
    };
}
memcpy_fn!(cudaMemcpy);
memcpy_fn!(cudaMemcpy_ptds);

macro_rules! memcpy_async_fn {
    ($name:ident, $default:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            dst: *mut c_void,
            src: *const c_void,
            size: usize,
            kind: MemcpyKind,
            stream: CudaStream,
        ) -> CudaError {
            type F =
                unsafe extern "C" fn(*mut c_void, *const c_void, usize, MemcpyKind, CudaStream) -> CudaError;
            let real = cuda_real!($name: F);
            copy(
                stringify!($name),
                real,
                // SAFETY: the application's arguments, forwarded unchanged.
                |f| unsafe { f(dst, src, size, kind, stream) },
                (dst, src, size),
                kind,
                Some((stream, $default)),
            )
        }
    };
}
memcpy_async_fn!(cudaMemcpyAsync, DefaultStream::Legacy);
memcpy_async_fn!(cudaMemcpyAsync_ptsz, DefaultStream::PerThread);

// ---------------------------------------------------------------- memsets

macro_rules! memset_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(dst: *mut c_void, value: c_int, size: usize) -> CudaError {
            let real = cuda_real!($name: unsafe extern "C" fn(*mut c_void, c_int, usize) -> CudaError);
            intercept(
                stringify!($name),
                real,
                Order::Free,
                // SAFETY: the application's arguments, forwarded unchanged.
                |f| unsafe { f(dst, value, size) },
                |r, ret| r.memset(stringify!($name), ret, dst as u64, u32::from(value as u8), size as u64, 1, None),
            )
        }
    };
}
memset_fn!(cudaMemset);
memset_fn!(cudaMemset_ptds);

macro_rules! memset_async_fn {
    ($name:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            dst: *mut c_void,
            value: c_int,
            size: usize,
            stream: CudaStream,
        ) -> CudaError {
            let real =
                cuda_real!($name: unsafe extern "C" fn(*mut c_void, c_int, usize, CudaStream) -> CudaError);
            intercept(
                stringify!($name),
                real,
                Order::Free,
                // SAFETY: the application's arguments, forwarded unchanged.
                |f| unsafe { f(dst, value, size, stream) },
                |r, ret| {
                    r.memset(
                        stringify!($name),
                        ret,
                        dst as u64,
                        u32::from(value as u8),
                        size as u64,
                        1,
                        Some(stream_id(stream as u64)),
                    )
                },
            )
        }
    };
}
memset_async_fn!(cudaMemsetAsync);
memset_async_fn!(cudaMemsetAsync_ptsz);
