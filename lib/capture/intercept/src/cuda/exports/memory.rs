//! CUDA allocations, copies, memsets and host registration, including the
//! per-thread default-stream variants (`_ptds` synchronous, `_ptsz`
//! stream-ordered) that `--default-stream per-thread` builds call. Handlers
//! of the runtime table's entries (signatures: `cuda_api::cudart_fn!`).

#![allow(non_snake_case)]

use std::ffi::c_void;

use api_table::Entry;
use cuda_api::runtime::types::*;
use hrr_core::{Dir, MemKind};

use super::{cuda_handlers, intercept};
use crate::cuda::dir;
use crate::cuda::ffi::{enter, missing, pointer_type, sync_stream};
use crate::cuda::types::{self as cu, stream_id};
use hrr_interpose::call_args::{bytes, out_addr};
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::recorder::Order;
use hrr_recorder::record::recorder::{Copy, Recorder};

// ---------------------------------------------------------------- allocation

fn alloc(
    api: &'static str,
    ret: cudaError_t,
    ptr: *mut *mut c_void,
    size: usize,
    mem: MemKind,
    r: &Recorder,
) {
    // SAFETY: read only after success, when the runtime has written *ptr.
    let p = unsafe { out_addr(ret, ptr) };
    r.alloc(api, ret, p, size as u64, mem);
}

cuda_handlers! {
    [cudaMalloc] |real, a, api| {
        // SAFETY: the export's contract: `a` holds the application's arguments.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| alloc(api, ret, a.ptr, a.size, MemKind::Device, r)) }
    }
    [cudaMallocHost] |real, a, api| {
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| alloc(api, ret, a.ptr, a.size, MemKind::Pinned, r)) }
    }
    [cudaHostAlloc] |real, a, api| {
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| alloc(api, ret, a.ptr, a.size, MemKind::Pinned, r)) }
    }
    [cudaMallocManaged] |real, a, api| {
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| alloc(api, ret, a.ptr, a.size, MemKind::Managed, r)) }
    }
    // Stream-ordered: recorded as a plain device `alloc` (replay allocates
    // at that point of the stream of events).
    [cudaMallocAsync, cudaMallocAsync_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| alloc(api, ret, a.ptr, a.size, MemKind::Device, r)) }
    }
    [cudaFree] |real, a, api| {
        crate::capture::untrack_host_memory(a.ptr as u64);
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| r.free(api, ret, a.ptr as u64, None)) }
    }
    [cudaFreeHost] |real, a, api| {
        crate::capture::untrack_host_memory(a.ptr as u64);
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| r.free(api, ret, a.ptr as u64, Some(MemKind::Pinned))) }
    }
    [cudaFreeAsync, cudaFreeAsync_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| r.free(api, ret, a.ptr as u64, None)) }
    }
    [cudaHostRegister] |real, a, api| {
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| r.host_register(api, ret, a.ptr as u64, a.size as u64)) }
    }
    [cudaHostUnregister] |real, a, api| {
        crate::capture::untrack_host_memory(a.ptr as u64);
        // SAFETY: as above.
        unsafe { intercept(real, a, Order::Lifecycle, |r, ret| r.host_unregister(api, ret, a.ptr as u64)) }
    }
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
pub(super) enum DefaultStream {
    Legacy,
    PerThread,
}

/// The shared body of every copy: direction resolved before the call, the
/// blob (H2D source / D2H result) read after a successful one.
///
/// # Safety
/// `a` holds the application's arguments for entry point `A`, valid under
/// its C contract; `dst`, `src`, `size` are its copy's.
pub(super) unsafe fn copy<A: Entry<Ret = cudaError_t>>(
    real: &Real<A>,
    a: A,
    (dst, src, size): (*mut c_void, *const c_void, usize),
    kind: cudaMemcpyKind,
    stream: Option<(cudaStream_t, DefaultStream)>,
) -> cudaError_t {
    let api = A::NAME;
    let Some(f) = real.get() else {
        return missing(api);
    };
    let Some(g) = enter(api) else {
        // SAFETY: per this function's contract.
        return unsafe { a.call(f) };
    };
    let (d, s) = (dst as u64, src as u64);
    let dir = g
        .run(|r| dir::resolve(kind, || is_device(r, d), || is_device(r, s)))
        .unwrap_or(Dir::H2h);
    // The stream the copy goes to, as the driver names it.
    let on = match stream {
        None if api.ends_with("_ptds") => cu::STREAM_PER_THREAD,
        None => 0,
        Some((st, DefaultStream::PerThread)) if st.is_null() => cu::STREAM_PER_THREAD,
        Some((st, _)) => st as u64,
    };
    // A large D2H's source hashed on the device, on its stream, before it.
    let hashing = crate::cuda::device_hash::before_copy(&g, dir, (d, s, size), on);
    let (ret, pre) = if stream.is_none() && dir == Dir::H2d {
        // SAFETY: per this function's contract.
        unsafe { crate::upload::forward_h2d(&g, src, size, || a.call(f)) }
    } else {
        // SAFETY: per this function's contract.
        (unsafe { a.call(f) }, None)
    };
    if let Some((st, _)) = stream
        && super::joins_capture(api, st)
    {
        if let Some(h) = hashing {
            h.finish(false, dst.cast());
        }
        return ret;
    }
    let mut hashing = hashing;
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
        let mut pre = pre;
        let data = match dir {
            _ if ret != cu::SUCCESS => None,
            Dir::H2d if r.is_device(s) != Some(true) => {
                // SAFETY: the runtime accepted and read `size` bytes at src.
                Some(unsafe { bytes(src, size) })
            }
            Dir::D2h if r.is_device(d) != Some(true) => {
                if stream.is_some() {
                    sync_stream(on);
                }
                if let Some(h) = hashing.take() {
                    pre = h.finish(true, dst.cast());
                }
                // SAFETY: the runtime accepted `size` bytes at dst as the
                // destination, and the copy has completed.
                Some(unsafe { bytes(dst, size) })
            }
            _ => None,
        };
        if let Some(h) = hashing.take() {
            h.finish(false, dst.cast());
        }
        r.memcpy_hashed(api, ret, &c, data, pre);
    });
    ret
}

cuda_handlers! {
    [cudaMemcpy, cudaMemcpy_ptds] |real, a, api| {
        // SAFETY: the export's contract: `a` holds the application's arguments.
        unsafe { copy(real, a, (a.dst, a.src, a.size), a.kind, None) }
    }
    [cudaMemcpyAsync] |real, a, api| {
        // SAFETY: as above.
        unsafe { copy(real, a, (a.dst, a.src, a.size), a.kind, Some((a.stream, DefaultStream::Legacy))) }
    }
    [cudaMemcpyAsync_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe { copy(real, a, (a.dst, a.src, a.size), a.kind, Some((a.stream, DefaultStream::PerThread))) }
    }
}

// ---------------------------------------------------------------- memsets

cuda_handlers! {
    [cudaMemset, cudaMemset_ptds] |real, a, api| {
        // SAFETY: the export's contract: `a` holds the application's arguments.
        unsafe {
            intercept(real, a, Order::Free, |r, ret| {
                r.memset(api, ret, a.dst as u64, u32::from(a.value as u8), a.size as u64, 1, None)
            })
        }
    }
    [cudaMemsetAsync, cudaMemsetAsync_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe {
            intercept(real, a, Order::Free, |r, ret| {
                if super::joins_capture(api, a.stream) {
                    return;
                }
                r.memset(
                    api,
                    ret,
                    a.dst as u64,
                    u32::from(a.value as u8),
                    a.size as u64,
                    1,
                    Some(stream_id(a.stream as u64)),
                )
            })
        }
    }
}
