//! The driver entry points this library wraps, and what each records. Their
//! C signatures are declared once, in `cuda-api`'s table (`cuda_fn!`): each
//! wrapper is generated from its table line, with the table's parameters,
//! and its closures read the arguments through the table's argument struct
//! (`a.dptr`, `a.size`: `cuda_api::args::NAME`). A `cuda.h` version or
//! per-thread variant recorded the same way shares a line with the others.
//! [`entries`] lists them all with their wrappers for the routing table;
//! `Sym` indexes them.
//!
//! Every wrapper: finds the real function (`libcuda`), enters the `Guard`
//! (first level only), holds the lifecycle lock for calls that make or
//! destroy an address or handle, forwards the arguments unchanged, runs its
//! `track` closure at any depth (bookkeeping), and its `record` closure on a
//! first-level call. `Count` entries forward a function no event records
//! and count its first-level calls (`hrr_interpose::unrecorded`).

#![allow(non_snake_case, clippy::too_many_arguments)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use api_table::Entry;
use cuda_api::types::*;
use cuda_api::{CUDA_ERROR_NOT_FOUND, CUDA_ERROR_STUB_LIBRARY, CUDA_SUCCESS};
use hrr_core::{Addr, Dir, MemKind, Op};

use super::arrays::{self as ar, Flat};
use super::code::FnKind;
use super::graphs;
use super::libcuda;
use super::proc::{cuGetProcAddress, cuGetProcAddress_v2};
use super::record::{self as rec, bookkeeping, out, s};
use super::rect_pools as rp;
use crate::capture::Guard;
use crate::cuda::device_hash;
use crate::cuda::ffi::{driver_layer_on, note_cuda_call};
use hrr_interpose::guard;
use hrr_recorder::record::pools::PoolOp;
use hrr_recorder::record::recorder::Recorder;
use hrr_recorder::record::window::Trigger;

/// What a wrapper answers when the driver lacks the function (not loaded:
/// a stub library's answer; loaded: not found).
pub fn missing(api: &str) -> CUresult {
    static SAID: AtomicBool = AtomicBool::new(false);
    let loaded = libcuda::get().is_some();
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!(
            "hrr-intercept: {api}: {}",
            if loaded {
                "not exported by this libcuda.so.1"
            } else {
                "no libcuda.so.1 is loaded"
            }
        );
    }
    if loaded {
        CUDA_ERROR_NOT_FOUND
    } else {
        CUDA_ERROR_STUB_LIBRARY
    }
}

/// The real function of entry `sym` (table entry `A`).
pub fn real<A: Entry>(sym: Sym) -> Option<A::Fn> {
    let p = std::ptr::NonNull::new(libcuda::real(sym as usize)? as *mut std::ffi::c_void)?;
    // SAFETY: the driver's export of the same name as `A`, whose C signature
    // is `A`'s table line.
    Some(unsafe { A::fn_at(p) })
}

/// Gives a `track` closure its parameter types.
fn tracker<A, F: FnOnce(&'static str, CUresult, A)>(f: F) -> F {
    f
}

/// Gives a `stream` closure (the stream the call's work goes to) its types.
fn stream_of<A, F: FnOnce(A) -> CUstream>(f: F) -> F {
    f
}

/// Gives a `wrap` closure its types: the arguments with a function
/// replaced, and the trampoline's data when it was.
/// The closure also learns whether the call joins a stream capture (then
/// it is not recorded, and a host function becomes a graph's host node).
fn wrapper<A, F: FnOnce(A, bool) -> (A, Option<*mut std::ffi::c_void>)>(f: F) -> F {
    f
}

/// Gives an `around` closure (forwards the call through `call` and
/// records it) its parameter types.
fn arounder<
    A,
    C: FnOnce() -> CUresult,
    F: FnOnce(&crate::capture::Guard, &'static str, A, C) -> CUresult,
>(
    f: F,
) -> F {
    f
}

/// Gives a `record` closure its parameter types.
fn recorder_fn<A, F: FnOnce(&'static Recorder, &'static str, CUresult, A)>(f: F) -> F {
    f
}

macro_rules! driver_api {
    (
        manual [ $( $mname:ident ),* ];
        $(
            $order:ident $( $name:ident )|+
                $( , stream $stream:expr )?
                $( , wrap $wrap:expr )?
                $( , before $before:expr )?
                $( , around $around:expr )?
                $( , track $track:expr )?
                $( , record $record:expr )? ;
        )*
    ) => {
        /// Index of each wrapped entry point in [`entries`].
        #[allow(non_camel_case_types, clippy::enum_variant_names)]
        #[derive(Clone, Copy, Debug)]
        pub enum Sym { $( $( #[doc = concat!("`", stringify!($name), "`.")] $name, )+ )* $( #[doc = concat!("`", stringify!($mname), "`.")] $mname, )* }

        /// Every wrapped driver entry point: its exported name and this
        /// library's wrapper, in `Sym` order.
        pub fn entries() -> Vec<(&'static str, usize)> {
            vec![
                $( $( (stringify!($name), $name as *const () as usize), )+ )*
                $( (stringify!($mname), $mname as *const () as usize), )*
            ]
        }

        $( driver_api!(@entry $order [ $( $name )+ ] { $( stream $stream )? } { $( wrap $wrap )? } { $( before $before )? } { $( around $around )? } { $( track $track )? } { $( record $record )? }); )*
    };
    (@entry $order:ident [ $( $name:ident )+ ] $stream:tt $wrap:tt $before:tt $around:tt $track:tt $record:tt) => {
        $( cuda_api::cuda_fn!($name, self::driver_wrapper, [$order $stream $wrap $before $around $track $record]); )+
    };
    (@lock Lifecycle, $g:ident) => { $g.as_ref().and_then(|g| g.run(|r| r.lifecycle())) };
    (@lock $o:ident, $g:ident) => { None::<std::sync::MutexGuard<'static, ()>> };
    (@count Count, $api:ident) => {{
        static CALLS: hrr_interpose::unrecorded::Counter = hrr_interpose::unrecorded::Counter::new($api);
        CALLS.bump();
    }};
    (@count $o:ident, $api:ident) => { () };
}

/// The table's callback: one exported wrapper, with the table line's
/// parameters (see the module docs).
macro_rules! driver_wrapper {
    ($order:ident { $( stream $stream:expr )? } { $( wrap $wrap:expr )? } { $( before $before:expr )? } { $( around $around:expr )? } { $( track $track:expr )? } { $( record $record:expr )? }
        $name:ident ( $( $p:ident : $t:ty ),* $(,)? ) -> $r:ty) => {
        #[doc = concat!("`", stringify!($name), "`, interposed: forwarded unchanged to the driver; recorded as its table line says.")]
        ///
        /// # Safety
        /// The driver's: the arguments must meet this entry point's C contract
        /// in `cuda.h`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name( $( $p: $t ),* ) -> $r {
            const API: &str = stringify!($name);
            const IS_LAUNCH: bool = crate::cuda::window::is_kernel_launch(API);
            let a = cuda_api::args::$name { $( $p ),* };
            // The driver's function, looked up once (the table is fixed
            // once the driver is loaded).
            static REAL: AtomicUsize = AtomicUsize::new(0);
            let real = match std::ptr::NonNull::new(REAL.load(Ordering::Relaxed) as *mut std::ffi::c_void) {
                // SAFETY: stored below from `real`, this entry's function.
                Some(p) => unsafe { <cuda_api::args::$name as Entry>::fn_at(p) },
                None => match real::<cuda_api::args::$name>(Sym::$name) {
                    Some(f) => {
                        REAL.store(f as usize, Ordering::Relaxed);
                        f
                    }
                    None => return missing(API),
                },
            };
            // Nested (the runtime's own call inside a recorded one, or the
            // recorder's): forwarded before anything else is looked at. A
            // `<<<>>>` launch passes through here once per launch.
            if !Guard::first_level() {
                hrr_recorder::self_profile::count(concat!("nested ", stringify!($name)));
                // SAFETY: the application's arguments, forwarded unchanged.
                let ret = unsafe { a.call(real) };
                $(
                    let t = tracker::<cuda_api::args::$name, _>($track);
                    bookkeeping(API, || t(API, ret, a));
                )?
                return ret;
            }
            let g = if driver_layer_on() {
                note_cuda_call();
                Guard::enter_first(API)
            } else {
                guard::unmark();
                None
            };
            // Work issued to a capturing stream joins a graph and does not
            // run now: nothing of it is recorded (one load without captures).
            let st: Option<u64> =
                None $( .or(Some(graphs::raw(API, stream_of::<cuda_api::args::$name, _>($stream)(a)))) )?;
            let joins_capture = |g: &Option<crate::capture::Guard>| {
                g.is_some() && st.is_some_and(graphs::captured)
            };
            let joined = joins_capture(&g);
            let g = if joined { None } else { g };
            let held = driver_api!(@lock $order, g);
            // A recorded call's function argument replaced by this
            // library's trampoline (`crate::host_funcs`), with its data
            // (a captured call's by a graph trampoline, data kept for good).
            let (a, wrapped) = match () {
                $( () if g.is_some() || joined => wrapper::<cuda_api::args::$name, _>($wrap)(a, joined), )?
                _ => (a, None::<*mut std::ffi::c_void>),
            };
            if IS_LAUNCH
                && let Some(g) = &g
                && g.recorder().windowed()
            {
                // A capture window may open or close before this launch.
                g.run(crate::cuda::window::before_launch);
            }
            $(
                // Host memory the call may read, before it runs (one check
                // when there is none).
                if let Some(g) = &g
                    && g.recorder().watches_host_memory()
                {
                    let b = recorder_fn::<cuda_api::args::$name, _>($before);
                    g.run(|r| b(r, API, 0, a));
                }
            )?
            // SAFETY: the application's arguments, forwarded unchanged to
            // the driver's function of the same name (a function argument
            // possibly wrapped: the trampoline calls it as the driver would).
            let forward = || unsafe { a.call(real) };
            let ret = match &g {
                // A recorded call whose recording goes with the call
                // itself (a synchronous upload hashed while it runs): the
                // `around` closure forwards it, once, and records it.
                $( Some(g) => arounder::<cuda_api::args::$name, _, _>($around)(g, API, a, forward), )?
                _ => forward(),
            };
            if ret != CUDA_SUCCESS
                && let Some(data) = wrapped
            {
                // SAFETY: the trampoline's data, handed to a call that failed.
                unsafe { crate::host_funcs::refused(data) };
            }
            $(
                let t = tracker::<cuda_api::args::$name, _>($track);
                bookkeeping(API, || t(API, ret, a));
            )?
            // Again after the call: a stream joins a capture by this very
            // call (`cuStreamWaitEvent` on an event recorded in one).
            let g = if joins_capture(&g) { None } else { g };
            if let Some(g) = &g {
                driver_api!(@count $order, API);
                $(
                    let rec = recorder_fn::<cuda_api::args::$name, _>($record);
                    g.run(|r| rec(r, API, ret, a));
                )?
                let _ = g;
            }
            drop(held);
            ret
        }
        // The export has exactly the table's type.
        const _: cuda_api::fns::$name = $name;
    };
}
use driver_wrapper;

driver_api! {
    // In `proc` (exports generated from their table lines, handlers that
    // route the answer): the lookups themselves.
    manual [cuGetProcAddress, cuGetProcAddress_v2];


    // ------------------------------------------------------------ contexts
    Lifecycle cuDevicePrimaryCtxRetain,
        track |_, ret, a| {
            // SAFETY: `pctx` is this call's out-parameter, read only after the driver reported success (having written it).
            let ctx = unsafe { out(ret, a.pctx.cast::<u64>()) };
            rec::track_context(ret, ctx, a.dev);
            if ret == CUDA_SUCCESS {
                device_hash::primary_retained(ctx, a.dev);
            }
        },
        // SAFETY: `pctx` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::ctx_create(r, api, ret, unsafe { out(ret, a.pctx.cast::<u64>()) }, a.dev);
    // The v1 symbol: what CUDA 13's static runtime still asks for at exit.
    Lifecycle cuDevicePrimaryCtxRelease_v2 | cuDevicePrimaryCtxRelease,
        // The last holder's release destroys the context, and the device hash's state in it.
        track |_, ret, a| if ret == CUDA_SUCCESS { device_hash::primary_released(a.dev) },
        record |r, api, ret, a| rec::primary_ctx_release(r, api, ret, a.dev);
    // What the runtime's `cudaDeviceReset` calls: everything of the
    // device's primary context is destroyed (its handle lives on), its
    // page-locked host memory included. The
    // device hash forgets its module and scratch there, at any depth.
    Lifecycle cuDevicePrimaryCtxReset_v2 | cuDevicePrimaryCtxReset,
        track |_, ret, a| rec::track_reset(ret, a.dev),
        record |r, api, ret, a| r.device_reset(api, ret, a.dev, true);
    Lifecycle cuCtxCreate_v2,
        // A created context is made current on the calling thread.
        track |_, ret, a| {
            // SAFETY: `pctx` is this call's out-parameter, read only after the driver reported success (having written it).
            let ctx = unsafe { out(ret, a.pctx.cast::<u64>()) };
            rec::track_context(ret, ctx, a.dev);
            rec::track_current(ret, ctx);
        },
        // SAFETY: `pctx` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::ctx_create(r, api, ret, unsafe { out(ret, a.pctx.cast::<u64>()) }, a.dev);
    Lifecycle cuCtxCreate_v3,
        // A created context is made current on the calling thread.
        track |_, ret, a| {
            // SAFETY: `pctx` is this call's out-parameter, read only after the driver reported success (having written it).
            let ctx = unsafe { out(ret, a.pctx.cast::<u64>()) };
            rec::track_context(ret, ctx, a.dev);
            rec::track_current(ret, ctx);
        },
        // SAFETY: `pctx` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::ctx_create(r, api, ret, unsafe { out(ret, a.pctx.cast::<u64>()) }, a.dev);
    Lifecycle cuCtxCreate_v4,
        // A created context is made current on the calling thread.
        track |_, ret, a| {
            // SAFETY: `pctx` is this call's out-parameter, read only after the driver reported success (having written it).
            let ctx = unsafe { out(ret, a.pctx.cast::<u64>()) };
            rec::track_context(ret, ctx, a.dev);
            rec::track_current(ret, ctx);
        },
        // SAFETY: `pctx` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::ctx_create(r, api, ret, unsafe { out(ret, a.pctx.cast::<u64>()) }, a.dev);
    Lifecycle cuCtxDestroy_v2,
        // The device hash's module, scratch and result page go with the context.
        track |_, ret, a| if ret == CUDA_SUCCESS { device_hash::destroyed(a.ctx as u64) },
        record |r, api, ret, a| r.op(api, ret, &Op::CtxDestroy { ctx: Addr(a.ctx as u64) });
    Free cuCtxSetCurrent | cuCtxPushCurrent_v2,
        track |_, ret, a| rec::track_current(ret, a.ctx as u64),
        record |r, api, ret, a| rec::ctx_set(r, api, ret, a.ctx as u64);
    Free cuCtxPopCurrent_v2,
        track |_, ret, _| rec::track_pop(ret),
        record |r, api, ret, _| rec::ctx_pop(r, api, ret);
    // `_v2` (CUDA 13, what the runtime's `cudaDeviceSynchronize` asks
    // for) names the context; replay has one.
    Free cuCtxSynchronize | cuCtxSynchronize_v2,
        record |r, api, ret, _| r.op(api, ret, &Op::DeviceSync);
    // The capture window's trigger (`crate::cuda::window`); no event.
    Free cuProfilerStart,
        record |_, _, _, _| crate::cuda::window::trigger_global(Trigger::ProfilerStart);
    Free cuProfilerStop,
        record |_, _, _, _| crate::cuda::window::trigger_global(Trigger::ProfilerStop);

    // ------------------------------------------------------------ allocations
    Lifecycle cuMemAlloc_v2,
        // SAFETY: `dptr` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.alloc(api, ret, unsafe { out(ret, a.dptr) }, a.size as u64, MemKind::Device);
    Lifecycle cuMemAllocPitch_v2,
        record |r, api, ret, a| {
            // SAFETY: `pitch` is this call's out-parameter, read only after the driver reported success (having written it).
            let p = unsafe { out(ret, a.pitch) };
            // SAFETY: `dptr` is this call's out-parameter, read only after the driver reported success (having written it).
            r.alloc(api, ret, unsafe { out(ret, a.dptr) }, (p * a.height) as u64, MemKind::Device)
        };
    Lifecycle cuMemAllocManaged,
        // SAFETY: `dptr` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.alloc(api, ret, unsafe { out(ret, a.dptr) }, a.size as u64, MemKind::Managed);
    Lifecycle cuMemAllocAsync | cuMemAllocAsync_ptsz,
        // SAFETY: `dptr` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.alloc(api, ret, unsafe { out(ret, a.dptr) }, a.size as u64, MemKind::Device);
    Lifecycle cuMemAllocFromPoolAsync | cuMemAllocFromPoolAsync_ptsz,
        // SAFETY: `dptr` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.pool_alloc(api, ret, unsafe { out(ret, a.dptr) }, a.size as u64, a.pool as u64, s(a.stream));
    Lifecycle cuMemFree_v2,
        before |r, _, _, a| r.host_memory().untrack(a.dptr),
        record |r, api, ret, a| r.free(api, ret, a.dptr, None);
    Lifecycle cuMemFreeAsync | cuMemFreeAsync_ptsz,
        record |r, api, ret, a| r.free(api, ret, a.dptr, None);
    Lifecycle cuMemAllocHost_v2,
        // SAFETY: `pp` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.alloc(api, ret, unsafe { out(ret, a.pp.cast::<u64>()) }, a.size as u64, MemKind::Pinned);
    Lifecycle cuMemHostAlloc,
        // SAFETY: `pp` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.alloc(api, ret, unsafe { out(ret, a.pp.cast::<u64>()) }, a.size as u64, MemKind::Pinned);
    Lifecycle cuMemFreeHost,
        before |r, _, _, a| r.host_memory().untrack(a.p as u64),
        record |r, api, ret, a| r.free(api, ret, a.p as u64, Some(MemKind::Pinned));
    Lifecycle cuMemHostRegister_v2,
        record |r, api, ret, a| r.host_register(api, ret, a.p as u64, a.size as u64);
    Lifecycle cuMemHostUnregister,
        before |r, _, _, a| r.host_memory().untrack(a.p as u64),
        record |r, api, ret, a| r.host_unregister(api, ret, a.p as u64);

    // ------------------------------------------------------------ virtual memory
    Lifecycle cuMemAddressReserve,
        // SAFETY: `ptr` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.va_reserve(api, ret, unsafe { out(ret, a.ptr) }, a.size as u64);
    Lifecycle cuMemAddressFree,
        record |r, api, ret, a| r.va_free(api, ret, a.ptr, a.size as u64);
    Lifecycle cuMemCreate,
        // SAFETY: `handle` is this call's out-parameter, read only after success; `prop` is the property struct the driver just read.
        record |r, api, ret, a| unsafe { rec::vmm_create(r, api, ret, out(ret, a.handle), a.size, a.prop) };
    Lifecycle cuMemRelease,
        record |r, api, ret, a| r.op(api, ret, &Op::MemRelease { handle: Addr(a.handle) });
    Lifecycle cuMemRetainAllocationHandle,
        // SAFETY: `handle` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.op(api, ret, &Op::MemRetain { ptr: Addr(a.addr as u64), handle: Addr(unsafe { out(ret, a.handle) }) });
    Free cuMemExportToShareableHandle,
        record |r, api, ret, a| {
            // SAFETY: `shareable` is this call's out-parameter of the handle type's shape, read only after the driver reported success (having written it).
            let shareable = if ret == CUDA_SUCCESS { unsafe { rec::shareable(a.kind, a.shareable, true) } } else { 0 };
            r.op(api, ret, &Op::MemExport { handle: Addr(a.handle), shareable })
        };
    Lifecycle cuMemImportFromShareableHandle,
        record |r, api, ret, a| {
            // SAFETY: `os_handle` is the handle the driver just imported, of the handle type's shape; `handle` is this call's out-parameter, read only after success.
            let (shareable, handle) = unsafe { (rec::shareable(a.kind, a.os_handle, false), out(ret, a.handle)) };
            r.op(api, ret, &Op::MemImport { handle: Addr(handle), shareable })
        };
    Lifecycle cuMemMap,
        record |r, api, ret, a| r.op(api, ret, &Op::MemMap { ptr: Addr(a.ptr), size: a.size as u64, offset: a.offset as u64, handle: Addr(a.handle) });
    Lifecycle cuMemUnmap,
        record |r, api, ret, a| r.op(api, ret, &Op::MemUnmap { ptr: Addr(a.ptr), size: a.size as u64 });
    Free cuMemSetAccess,
        record |r, api, ret, a| r.op(api, ret, &Op::MemAccess { ptr: Addr(a.ptr), size: a.size as u64 });

    // ------------------------------------------------------------ copies
    Free cuMemcpyHtoD_v2 | cuMemcpyHtoD_v2_ptds,
        // SAFETY: the copy's own operands and call: `copy_around` reads its source before the call only where the recorder knows the memory, else once it succeeded.
        around |g, api, a, call| unsafe { rec::copy_around(g, api, Some(Dir::H2d), a.dst, a.src as u64, a.n, None, call) };
    Free cuMemcpyDtoH_v2 | cuMemcpyDtoH_v2_ptds,
        // SAFETY: the copy's own operands and call: `copy_around` hashes a large source on the device before the call (memory it checked), and reads host memory only once it succeeded.
        around |g, api, a, call| unsafe { rec::copy_around(g, api, Some(Dir::D2h), a.dst as u64, a.src, a.n, None, call) };
    Free cuMemcpyDtoD_v2 | cuMemcpyDtoD_v2_ptds,
        // SAFETY: the copy's own operands: when it succeeded the driver read `n` bytes at `src` and wrote them at `dst`, and `copy` reads host memory only then.
        record |r, api, ret, a| unsafe { rec::copy(r, api, ret, Some(Dir::D2d), a.dst, a.src, a.n, None) };
    Free cuMemcpy | cuMemcpy_ptds,
        // SAFETY: as for cuMemcpyHtoD_v2.
        around |g, api, a, call| unsafe { rec::copy_around(g, api, None, a.dst, a.src, a.n, None, call) };
    Free cuMemcpyPeer | cuMemcpyPeer_ptds,
        record |r, api, ret, a| rec::copy_peer(r, api, ret, (a.dst, a.dst_ctx as u64), (a.src, a.src_ctx as u64), a.n, None);
    Free cuMemcpyHtoDAsync_v2 | cuMemcpyHtoDAsync_v2_ptsz,
        stream |a| a.stream,
        // SAFETY: the copy's own operands: when it succeeded the driver read `n` bytes at `src` and wrote them at `dst`, and `copy` reads host memory only then.
        record |r, api, ret, a| unsafe { rec::copy(r, api, ret, Some(Dir::H2d), a.dst, a.src as u64, a.n, Some(a.stream)) };
    Free cuMemcpyDtoHAsync_v2 | cuMemcpyDtoHAsync_v2_ptsz,
        stream |a| a.stream,
        // SAFETY: as for cuMemcpyDtoH_v2.
        around |g, api, a, call| unsafe { rec::copy_around(g, api, Some(Dir::D2h), a.dst as u64, a.src, a.n, Some(a.stream), call) };
    Free cuMemcpyDtoDAsync_v2 | cuMemcpyDtoDAsync_v2_ptsz,
        stream |a| a.stream,
        // SAFETY: the copy's own operands: when it succeeded the driver read `n` bytes at `src` and wrote them at `dst`, and `copy` reads host memory only then.
        record |r, api, ret, a| unsafe { rec::copy(r, api, ret, Some(Dir::D2d), a.dst, a.src, a.n, Some(a.stream)) };
    Free cuMemcpyAsync | cuMemcpyAsync_ptsz,
        stream |a| a.stream,
        // SAFETY: as for cuMemcpyDtoH_v2.
        around |g, api, a, call| unsafe { rec::copy_around(g, api, None, a.dst, a.src, a.n, Some(a.stream), call) };
    Free cuMemcpyPeerAsync | cuMemcpyPeerAsync_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| rec::copy_peer(r, api, ret, (a.dst, a.dst_ctx as u64), (a.src, a.src_ctx as u64), a.n, Some(a.stream));

    // ------------------------------------------------------------ memsets
    Free cuMemsetD8_v2 | cuMemsetD8_v2_ptds,
        record |r, api, ret, a| rec::memset(r, api, ret, a.dst, u32::from(a.v), a.n, 1, None);
    Free cuMemsetD16_v2 | cuMemsetD16_v2_ptds,
        record |r, api, ret, a| rec::memset(r, api, ret, a.dst, u32::from(a.v), a.n, 2, None);
    Free cuMemsetD32_v2 | cuMemsetD32_v2_ptds,
        record |r, api, ret, a| rec::memset(r, api, ret, a.dst, a.v, a.n, 4, None);
    Free cuMemsetD8Async | cuMemsetD8Async_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| rec::memset(r, api, ret, a.dst, u32::from(a.v), a.n, 1, Some(a.stream));
    Free cuMemsetD16Async | cuMemsetD16Async_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| rec::memset(r, api, ret, a.dst, u32::from(a.v), a.n, 2, Some(a.stream));
    Free cuMemsetD32Async | cuMemsetD32Async_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| rec::memset(r, api, ret, a.dst, a.v, a.n, 4, Some(a.stream));

    // ------------------------------------------------------------ 2D/3D copies and memsets
    Free cuMemcpy2D_v2 | cuMemcpy2DUnaligned_v2 | cuMemcpy2D_v2_ptds | cuMemcpy2DUnaligned_v2_ptds,
        // SAFETY: `copy` is the description the application handed the driver; after success every host row it names was read or written, and `copy_rect` reads only then.
        record |r, api, ret, a| unsafe { rp::copy_rect(r, api, ret, rp::describe_2d(a.copy.cast()), None) };
    Free cuMemcpy2DAsync_v2 | cuMemcpy2DAsync_v2_ptsz,
        stream |a| a.stream,
        // SAFETY: `copy` is the description the application handed the driver; after success every host row it names was read or written, and `copy_rect` reads only then.
        record |r, api, ret, a| unsafe { rp::copy_rect(r, api, ret, rp::describe_2d(a.copy.cast()), Some(a.stream)) };
    Free cuMemcpy3D_v2 | cuMemcpy3D_v2_ptds,
        // SAFETY: `copy` is the description the application handed the driver; after success every host row it names was read or written, and `copy_rect` reads only then.
        record |r, api, ret, a| unsafe { rp::copy_rect(r, api, ret, rp::describe_3d(a.copy.cast()), None) };
    Free cuMemcpy3DAsync_v2 | cuMemcpy3DAsync_v2_ptsz,
        stream |a| a.stream,
        // SAFETY: `copy` is the description the application handed the driver; after success every host row it names was read or written, and `copy_rect` reads only then.
        record |r, api, ret, a| unsafe { rp::copy_rect(r, api, ret, rp::describe_3d(a.copy.cast()), Some(a.stream)) };
    Free cuMemsetD2D8_v2 | cuMemsetD2D8_v2_ptds,
        record |r, api, ret, a| rp::memset_2d(r, api, ret, (a.dst, a.pitch), (u32::from(a.v), 1), (a.w, a.h), None);
    Free cuMemsetD2D16_v2 | cuMemsetD2D16_v2_ptds,
        record |r, api, ret, a| rp::memset_2d(r, api, ret, (a.dst, a.pitch), (u32::from(a.v), 2), (a.w, a.h), None);
    Free cuMemsetD2D32_v2 | cuMemsetD2D32_v2_ptds,
        record |r, api, ret, a| rp::memset_2d(r, api, ret, (a.dst, a.pitch), (a.v, 4), (a.w, a.h), None);
    Free cuMemsetD2D8Async | cuMemsetD2D8Async_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| rp::memset_2d(r, api, ret, (a.dst, a.pitch), (u32::from(a.v), 1), (a.w, a.h), Some(a.stream));
    Free cuMemsetD2D16Async | cuMemsetD2D16Async_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| rp::memset_2d(r, api, ret, (a.dst, a.pitch), (u32::from(a.v), 2), (a.w, a.h), Some(a.stream));
    Free cuMemsetD2D32Async | cuMemsetD2D32Async_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| rp::memset_2d(r, api, ret, (a.dst, a.pitch), (a.v, 4), (a.w, a.h), Some(a.stream));

    // ------------------------------------------------------------ arrays, texture and surface objects
    Lifecycle cuArrayCreate_v2,
        // SAFETY: `handle` is this call's out-parameter (read only after success), `desc` the descriptor the driver read.
        record |r, api, ret, a| unsafe { ar::create_2d(r, api, ret, a.handle.cast(), a.desc) };
    Lifecycle cuArray3DCreate_v2,
        // SAFETY: `handle` is this call's out-parameter (read only after success), `desc` the descriptor the driver read.
        record |r, api, ret, a| unsafe { ar::create_3d(r, api, ret, a.handle.cast(), a.desc) };
    Lifecycle cuArrayDestroy,
        record |r, api, ret, a| r.array_destroy(api, ret, a.array as u64);
    Lifecycle cuMipmappedArrayCreate,
        // SAFETY: `handle` is this call's out-parameter (read only after success), `desc` the descriptor the driver read.
        record |r, api, ret, a| unsafe { ar::mipmap_create(r, api, ret, a.handle.cast(), a.desc, a.levels) };
    Lifecycle cuMipmappedArrayGetLevel,
        // SAFETY: `level_array` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.mipmap_level(api, ret, unsafe { out(ret, a.level_array.cast::<u64>()) }, a.mipmap as u64, a.level);
    Lifecycle cuMipmappedArrayDestroy,
        record |r, api, ret, a| r.mipmap_destroy(api, ret, a.mipmap as u64);
    Lifecycle cuArrayGetPlane,
        // SAFETY: `plane` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.array_plane(api, ret, unsafe { out(ret, a.plane.cast::<u64>()) }, a.array as u64, a.index);
    Free cuMemcpyHtoA_v2 | cuMemcpyHtoA_v2_ptds,
        // SAFETY: the copy's own operands: when it succeeded the driver read `n` bytes at `src`.
        record |r, api, ret, a| unsafe { ar::copy_1d(r, api, ret, (Flat::Array(a.dst as u64, a.dst_offset), Flat::Host(a.src as u64)), a.n, None) };
    Free cuMemcpyHtoAAsync_v2 | cuMemcpyHtoAAsync_v2_ptsz,
        stream |a| a.stream,
        // SAFETY: the copy's own operands: when it succeeded the driver read `n` bytes at `src`.
        record |r, api, ret, a| unsafe { ar::copy_1d(r, api, ret, (Flat::Array(a.dst as u64, a.dst_offset), Flat::Host(a.src as u64)), a.n, Some(a.stream)) };
    Free cuMemcpyAtoH_v2 | cuMemcpyAtoH_v2_ptds,
        // SAFETY: the copy's own operands: when it succeeded the driver wrote `n` bytes at `dst`.
        record |r, api, ret, a| unsafe { ar::copy_1d(r, api, ret, (Flat::Host(a.dst as u64), Flat::Array(a.src as u64, a.src_offset)), a.n, None) };
    Free cuMemcpyAtoHAsync_v2 | cuMemcpyAtoHAsync_v2_ptsz,
        stream |a| a.stream,
        // SAFETY: the copy's own operands: when it succeeded the driver wrote `n` bytes at `dst` (read once the stream finished).
        record |r, api, ret, a| unsafe { ar::copy_1d(r, api, ret, (Flat::Host(a.dst as u64), Flat::Array(a.src as u64, a.src_offset)), a.n, Some(a.stream)) };
    Free cuMemcpyDtoA_v2 | cuMemcpyDtoA_v2_ptds,
        // SAFETY: no host memory is read.
        record |r, api, ret, a| unsafe { ar::copy_1d(r, api, ret, (Flat::Array(a.dst as u64, a.dst_offset), Flat::Device(a.src)), a.n, None) };
    Free cuMemcpyAtoD_v2 | cuMemcpyAtoD_v2_ptds,
        // SAFETY: no host memory is read.
        record |r, api, ret, a| unsafe { ar::copy_1d(r, api, ret, (Flat::Device(a.dst), Flat::Array(a.src as u64, a.src_offset)), a.n, None) };
    Free cuMemcpyAtoA_v2 | cuMemcpyAtoA_v2_ptds,
        // SAFETY: no host memory is read.
        record |r, api, ret, a| unsafe { ar::copy_1d(r, api, ret, (Flat::Array(a.dst as u64, a.dst_offset), Flat::Array(a.src as u64, a.src_offset)), a.n, None) };
    Lifecycle cuTexObjectCreate,
        // SAFETY: `obj` is this call's out-parameter; after success the driver read the whole descriptions.
        record |r, api, ret, a| unsafe { ar::object_create(r, api, ret, a.obj, a.res.cast(), Some((a.tex.cast(), a.view.cast()))) };
    Lifecycle cuTexObjectDestroy,
        record |r, api, ret, a| r.object_destroy(api, ret, a.obj, false);
    Lifecycle cuSurfObjectCreate,
        // SAFETY: `obj` is this call's out-parameter; after success the driver read the whole description.
        record |r, api, ret, a| unsafe { ar::object_create(r, api, ret, a.obj, a.res.cast(), None) };
    Lifecycle cuSurfObjectDestroy,
        record |r, api, ret, a| r.object_destroy(api, ret, a.obj, true);

    // ------------------------------------------------------------ memory pools
    Lifecycle cuMemPoolCreate,
        // SAFETY: `pool` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.pool(api, ret, PoolOp::Create(unsafe { out(ret, a.pool.cast::<u64>()) }));
    Lifecycle cuMemPoolDestroy,
        record |r, api, ret, a| r.pool(api, ret, PoolOp::Destroy(a.pool as u64));
    Free cuMemPoolTrimTo,
        record |r, api, ret, a| r.pool(api, ret, PoolOp::Trim(a.pool as u64, a.keep as u64));
    Free cuMemPoolSetAttribute,
        // SAFETY: `value` points at the attribute's value, which the driver read; `pool_attr` reads it only after success.
        record |r, api, ret, a| unsafe { rp::pool_attr(r, api, ret, a.pool as u64, a.attr, a.value) };
    Free cuDeviceSetMemPool,
        record |r, api, ret, a| r.pool(api, ret, PoolOp::Device(a.dev, a.pool as u64));

    // ------------------------------------------------------------ modules and libraries
    Lifecycle cuModuleLoad,
        // SAFETY: `fname` is the path the driver just opened; `module` is this call's out-parameter, read only after the driver reported success (having written it).
        track |_, ret, a| unsafe { rec::track_file(ret, out(ret, a.module.cast::<u64>()), a.fname) },
        // SAFETY: `module` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::module_load(r, api, ret, unsafe { out(ret, a.module.cast::<u64>()) });
    Lifecycle cuModuleLoadData | cuModuleLoadFatBinary,
        // SAFETY: `image` is the image the driver just loaded; `module` is this call's out-parameter, read only after the driver reported success (having written it).
        track |_, ret, a| unsafe { rec::track_image(ret, out(ret, a.module.cast::<u64>()), a.image) },
        // SAFETY: `module` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::module_load(r, api, ret, unsafe { out(ret, a.module.cast::<u64>()) });
    Lifecycle cuModuleLoadDataEx,
        // SAFETY: `image` is the image the driver just loaded; `module` is this call's out-parameter, read only after the driver reported success (having written it).
        track |_, ret, a| unsafe { rec::track_image(ret, out(ret, a.module.cast::<u64>()), a.image) },
        // SAFETY: `module` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::module_load(r, api, ret, unsafe { out(ret, a.module.cast::<u64>()) });
    Lifecycle cuLibraryLoadData,
        // SAFETY: `code` is the image the driver just loaded; `lib` is this call's out-parameter, read only after the driver reported success (having written it).
        track |_, ret, a| unsafe { rec::track_image(ret, out(ret, a.lib.cast::<u64>()), a.code) },
        // SAFETY: `lib` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::module_load(r, api, ret, unsafe { out(ret, a.lib.cast::<u64>()) });
    Lifecycle cuLibraryLoadFromFile,
        // SAFETY: `fname` is the path the driver just opened; `lib` is this call's out-parameter, read only after the driver reported success (having written it).
        track |_, ret, a| unsafe { rec::track_file(ret, out(ret, a.lib.cast::<u64>()), a.fname) },
        // SAFETY: `lib` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::module_load(r, api, ret, unsafe { out(ret, a.lib.cast::<u64>()) });
    Lifecycle cuModuleUnload | cuLibraryUnload,
        track |_, ret, a| rec::track_unload(ret, a.module as u64),
        record |r, api, ret, a| r.op(api, ret, &Op::ModuleUnload { module: Addr(a.module as u64) });
    Free cuModuleGetFunction,
        // SAFETY: `name` is the C string the driver just looked up; `func` is this call's out-parameter, read only after the driver reported success (having written it).
        track |_, ret, a| unsafe { rec::track_function(ret, out(ret, a.func.cast::<u64>()), a.module as u64, a.name, FnKind::Function) },
        // SAFETY: `name` is the C string the driver just looked up; `func` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| unsafe { rec::function(r, api, ret, out(ret, a.func.cast::<u64>()), a.module as u64, a.name) };
    Free cuLibraryGetKernel,
        // SAFETY: `name` is the C string the driver just looked up; `kernel` is this call's out-parameter, read only after the driver reported success (having written it).
        track |_, ret, a| unsafe { rec::track_function(ret, out(ret, a.kernel.cast::<u64>()), a.lib as u64, a.name, FnKind::Kernel) },
        // SAFETY: `name` is the C string the driver just looked up; `kernel` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| unsafe { rec::function(r, api, ret, out(ret, a.kernel.cast::<u64>()), a.lib as u64, a.name) };
    Free cuKernelGetFunction,
        // SAFETY: `func` is this call's out-parameter, read only after the driver reported success (having written it).
        track |_, ret, a| rec::track_kernel_function(ret, unsafe { out(ret, a.func.cast::<u64>()) }, a.kernel as u64),
        // SAFETY: `func` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| rec::kernel_function(r, api, ret, unsafe { out(ret, a.func.cast::<u64>()) }, a.kernel as u64);
    Free cuLibraryGetModule,
        track |_, ret, a| {
            // SAFETY: `module` is this call's out-parameter, read only after the driver reported success (having written it).
            let m = unsafe { out(ret, a.module.cast::<u64>()) };
            if ret == CUDA_SUCCESS {
                super::code().alias_module(m, a.lib as u64);
            }
        };
    Free cuModuleGetGlobal_v2,
        // SAFETY: `name` is the C string the driver just looked up; `dptr` and `bytes` are this call's out-parameters, read only after the driver reported success (having written it).
        track |api, ret, a| unsafe { rec::global(api, ret, a.module as u64, a.name, out(ret, a.dptr), out(ret, a.bytes)) };
    Free cuLibraryGetGlobal,
        // SAFETY: `name` is the C string the driver just looked up; `dptr` and `bytes` are this call's out-parameters, read only after the driver reported success (having written it).
        track |api, ret, a| unsafe { rec::global(api, ret, a.lib as u64, a.name, out(ret, a.dptr), out(ret, a.bytes)) };

    // ------------------------------------------------------------ launches
    Free cuLaunchKernel | cuLaunchKernel_ptsz,
        stream |a| a.stream,
        // SAFETY: the launch's own arguments, about to be handed to the driver, which reads `params` per the kernel's parameters (or `extra`); `host_writes` reads no more.
        before |r, api, _, a| unsafe { rec::host_writes(r, api, a.f as u64, s(a.stream), a.params, a.extra) },
        // SAFETY: the launch's own arguments, which the driver accepted when `ret` is success; `launch` reads them only then.
        record |r, api, ret, a| unsafe {
            rec::launch(r, api, ret, a.f as u64, rec::dims(a.gx, a.gy, a.gz, a.bx, a.by, a.bz, a.shmem, a.stream), a.params, a.extra, &[])
        };
    Free cuLaunchKernelEx | cuLaunchKernelEx_ptsz,
        // SAFETY: `config` is null or the launch configuration the application hands the driver, valid for reads.
        stream |a| unsafe { a.config.as_ref() }.map_or(std::ptr::null_mut(), |c| c.h_stream),
        // SAFETY: `config` is null or the configuration about to be handed to the driver; `params` and `extra` are the launch's own, read as the driver reads them.
        before |r, api, _, a| unsafe {
            let stream = a.config.as_ref().map_or(0, |c| s(c.h_stream));
            rec::host_writes(r, api, a.f as u64, stream, a.params, a.extra)
        },
        // SAFETY: the launch's own arguments (and configuration), which the driver accepted when `ret` is success; `launch` and `config` read them only then.
        record |r, api, ret, a| unsafe {
            let (dims, attrs) = match rec::config(a.config) {
                Some(c) => c,
                None => (rec::dims(0, 0, 0, 0, 0, 0, 0, std::ptr::null_mut()), Vec::new()),
            };
            rec::launch(r, api, ret, a.f as u64, dims, a.params, a.extra, &attrs)
        };
    Free cuLaunchCooperativeKernel | cuLaunchCooperativeKernel_ptsz,
        stream |a| a.stream,
        // SAFETY: the launch's own arguments, about to be handed to the driver, which reads `params` per the kernel's parameters (or `extra`); `host_writes` reads no more.
        before |r, api, _, a| unsafe { rec::host_writes(r, api, a.f as u64, s(a.stream), a.params, std::ptr::null_mut()) },
        // SAFETY: the launch's own arguments (and configuration), which the driver accepted when `ret` is success; `launch` and `config` read them only then.
        record |r, api, ret, a| unsafe {
            let dims = rec::dims(a.gx, a.gy, a.gz, a.bx, a.by, a.bz, a.shmem, a.stream);
            rec::launch(r, api, ret, a.f as u64, dims, a.params, std::ptr::null_mut(), &rec::cooperative())
        };

    // ------------------------------------------------------------ streams and events
    Lifecycle cuStreamCreate,
        // SAFETY: `stream` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.op(api, ret, &Op::StreamCreate { stream: Addr(unsafe { out(ret, a.stream.cast::<u64>()) }) });
    Lifecycle cuStreamCreateWithPriority,
        // SAFETY: `stream` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.op(api, ret, &Op::StreamCreate { stream: Addr(unsafe { out(ret, a.stream.cast::<u64>()) }) });
    Lifecycle cuStreamDestroy_v2,
        record |r, api, ret, a| r.op(api, ret, &Op::StreamDestroy { stream: Addr(s(a.stream)) });
    Free cuStreamSynchronize | cuStreamSynchronize_ptsz,
        record |r, api, ret, a| r.op(api, ret, &Op::StreamSync { stream: Addr(s(a.stream)) });
    Free cuStreamWaitEvent | cuStreamWaitEvent_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| r.op(api, ret, &Op::StreamWaitEvent { stream: Addr(s(a.stream)), event: Addr(a.event as u64) });
    Lifecycle cuEventCreate,
        // SAFETY: `event` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| r.op(api, ret, &Op::EventCreate { event: Addr(unsafe { out(ret, a.event.cast::<u64>()) }) });
    Lifecycle cuEventDestroy_v2,
        record |r, api, ret, a| r.op(api, ret, &Op::EventDestroy { event: Addr(a.event as u64) });
    Free cuEventRecord | cuEventRecord_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| r.op(api, ret, &Op::EventRecord { event: Addr(a.event as u64), stream: Addr(s(a.stream)) });
    Free cuEventRecordWithFlags | cuEventRecordWithFlags_ptsz,
        stream |a| a.stream,
        record |r, api, ret, a| r.op(api, ret, &Op::EventRecord { event: Addr(a.event as u64), stream: Addr(s(a.stream)) });
    Free cuEventSynchronize,
        record |r, api, ret, a| r.op(api, ret, &Op::EventSync { event: Addr(a.event as u64) });

    // ------------------------------------------------------------ not recorded, counted
    // The runtime's private interface tables: noted (at any depth: the
    // runtime asks at its initialisation), never wrapped.
    Free cuGetExportTable,
        track |_, _, _| hrr_interpose::unrecorded::export_table();
    // Host functions: ordering points (replay enqueues a no-op in their
    // place). Into a capturing stream they become a graph's host node.
    // The function runs through this library's trampoline, so that a
    // launch after it waits for it and sees what it wrote to host memory.
    Free cuLaunchHostFunc | cuLaunchHostFunc_ptsz,
        stream |a| a.stream,
        wrap |mut a, captured| match a.func {
            // Into a capturing stream: a graph host node, run at each launch.
            Some(f) if captured => {
                let (t, data) = crate::host_funcs::wrap_graph_host_fn(f, a.data);
                (a.func, a.data) = (Some(t), data);
                (a, None)
            }
            Some(f) => {
                let (t, data) = crate::host_funcs::wrap_host_fn(f, a.data);
                (a.func, a.data) = (Some(t), data);
                (a, Some(data))
            }
            None => (a, None),
        },
        record |r, api, ret, a| r.op(api, ret, &Op::HostFunc { stream: Addr(s(a.stream)) });
    Free cuStreamAddCallback | cuStreamAddCallback_ptsz,
        stream |a| a.stream,
        wrap |mut a, captured| match a.callback {
            Some(f) if !captured => {
                let (t, data) = crate::host_funcs::wrap_callback(f, a.data);
                (a.callback, a.data) = (Some(t), data);
                (a, Some(data))
            }
            // The driver refuses a callback into a capturing stream.
            _ => (a, None),
        },
        record |r, api, ret, a| r.op(api, ret, &Op::HostFunc { stream: Addr(s(a.stream)) });
    // Peer access: recorded with the peer's device (replay on one device
    // has none to enable).
    Free cuCtxEnablePeerAccess,
        record |r, api, ret, a| r.op(api, ret, &Op::PeerAccess { peer: rec::ctx_device(a.peer as u64).unwrap_or(-1) });

    // ------------------------------------------------------------ stream capture and graphs
    // Capture is tracked at any depth (the runtime's cudaStreamBeginCapture
    // lands here); building a graph passes through unwrapped (`graphs`).
    Free cuStreamBeginCapture_v2 | cuStreamBeginCapture_v2_ptsz | cuStreamBeginCaptureToGraph | cuStreamBeginCaptureToGraph_ptsz,
        track |api, ret, a| graphs::capture_begun(ret, graphs::raw(api, a.stream));
    Free cuStreamEndCapture | cuStreamEndCapture_ptsz,
        track |api, _, a| graphs::capture_ended(graphs::raw(api, a.stream));
    Lifecycle cuGraphInstantiateWithFlags | cuGraphInstantiateWithParams | cuGraphInstantiateWithParams_ptsz | cuGraphInstantiate_v2,
        // SAFETY: `exec` is this call's out-parameter, read only after the driver reported success (having written it).
        record |r, api, ret, a| graphs::instantiated(r, api, ret, unsafe { out(ret, a.exec.cast::<u64>()) }, a.graph as u64);
    Lifecycle cuGraphExecUpdate_v2,
        record |r, api, ret, a| graphs::instantiated(r, api, ret, a.exec as u64, a.graph as u64);
    Free cuGraphExecKernelNodeSetParams_v2,
        // SAFETY: the launch's own arguments (and configuration), which the driver accepted when `ret` is success; `launch` and `config` read them only then.
        record |r, api, ret, a| unsafe { graphs::set_kernel(r, api, ret, a.exec as u64, a.node as u64, a.params) };
    Free cuGraphExecMemcpyNodeSetParams,
        // SAFETY: the launch's own arguments (and configuration), which the driver accepted when `ret` is success; `launch` and `config` read them only then.
        record |r, api, ret, a| unsafe { graphs::set_memcpy(r, api, ret, a.exec as u64, a.node as u64, a.copy.cast()) };
    Free cuGraphExecMemsetNodeSetParams,
        // SAFETY: the launch's own arguments, which the driver accepted when `ret` is success; `launch` reads them only then.
        record |r, api, ret, a| unsafe { graphs::set_memset(r, api, ret, a.exec as u64, a.node as u64, a.params) };
    // The generic node API (the runtime's cudaGraphAddNode and
    // cudaGraphExecNodeSetParams reach these): adding a node builds a graph
    // (read back at instantiation); the kinds the walk cannot describe are
    // counted. Setting one in an executable graph is a node setter.
    // A host node's function is replaced by the graph trampoline
    // (`graphs::wrap_node_params`) before the driver sees it.
    Free cuGraphAddNode | cuGraphAddNode_v2,
        // SAFETY: the call's own description, read during the call.
        wrap |mut a, _| { a.params = unsafe { graphs::wrap_node_params(a.params) }; (a, None) },
        // SAFETY: `params` is null or the node description the application handed the driver.
        record |r, api, ret, a| unsafe { graphs::node_added(r, api, ret, a.params) };
    Free cuGraphNodeSetParams,
        // SAFETY: the call's own description, read during the call.
        wrap |mut a, _| { a.params = unsafe { graphs::wrap_node_params(a.params) }; (a, None) };
    Free cuGraphExecNodeSetParams,
        // SAFETY: the call's own description, read during the call.
        wrap |mut a, _| { a.params = unsafe { graphs::wrap_node_params(a.params) }; (a, None) },
        // SAFETY: `params` is null or the parameters the driver accepted when `ret` is success; `set_node` reads them only then.
        record |r, api, ret, a| unsafe { graphs::set_node(r, api, ret, a.exec as u64, a.node as u64, a.params) };
    Free cuGraphExecChildGraphNodeSetParams,
        record |r, api, ret, a| graphs::set_child(r, api, ret, a.exec as u64, a.node as u64, a.child as u64);
    Free cuGraphNodeSetEnabled,
        record |r, api, ret, a| graphs::set_enabled(r, api, ret, a.exec as u64, a.node as u64, a.enabled != 0);
    Lifecycle cuGraphExecDestroy,
        record |r, api, ret, a| graphs::exec_destroyed(r, api, ret, a.exec as u64);
    // A host node's function runs through a graph trampoline, which reads
    // the device-to-host copies before it first (`graphs::wrap_host_node`).
    Free cuGraphAddHostNode | cuGraphHostNodeSetParams,
        // SAFETY: the call's own parameters, read during the call.
        wrap |mut a, _| { a.params = unsafe { graphs::wrap_host_node(a.params) }; (a, None) };
    Free cuGraphExecHostNodeSetParams,
        // SAFETY: the call's own parameters, read during the call.
        wrap |mut a, _| { a.params = unsafe { graphs::wrap_host_node(a.params) }; (a, None) },
        // SAFETY: `params` is null or the parameters handed to the driver (wrapped above); read only on success.
        record |r, api, ret, a| unsafe { graphs::host_node_set(r, api, ret, a.exec as u64, a.node as u64, a.params) };
    Free cuGraphLaunch | cuGraphLaunch_ptsz,
        stream |a| a.stream,
        before |r, api, _, a| graphs::host_writes(r, api, a.exec as u64, graphs::raw(api, a.stream)),
        record |r, api, ret, a| graphs::launched(r, api, ret, a.exec as u64, graphs::raw(api, a.stream));
}
