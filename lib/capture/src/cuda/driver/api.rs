//! The driver entry points this library wraps, each declared once: its
//! exported name(s) (a `cuda.h` version or per-thread variant with the same
//! C signature shares a line), its C signature as CUDA 13.0's `cuda.h`
//! declares it (the wrapper's parameters *are* the real function's type),
//! and what it records. [`entries`] lists them all with their wrappers for
//! the routing table; `Sym` indexes them.
//!
//! Every wrapper: finds the real function (`libcuda`), enters the `Guard`
//! (first level only), holds the lifecycle lock for calls that make or
//! destroy an address or handle, forwards the arguments unchanged, runs its
//! `track` closure at any depth (bookkeeping), and its `record` closure on a
//! first-level call. `Count` entries forward a function no event records
//! and count its first-level calls (`record::unrecorded`).

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use cuda_api::*;
use hrr_core::{Addr, Dir, MemKind, Op};

use super::code::FnKind;
use super::libcuda;
use super::proc::{cuGetProcAddress, cuGetProcAddress_v2};
use super::record::{self as rec, bookkeeping, out, s};
use crate::cuda::ffi::{driver_layer_on, enter};
use crate::record::recorder::Recorder;

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

/// The real function of entry `sym`, typed `F`.
pub fn real<F: std::marker::Copy>(sym: Sym) -> Option<F> {
    let p = libcuda::real(sym as usize)?;
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<usize>());
    // SAFETY: `F` is the function-pointer type the entry declares, which is
    // the C signature of the export resolved under the same name.
    Some(unsafe { std::mem::transmute_copy::<usize, F>(&p) })
}

/// Gives a `track` closure its parameter types.
fn tracker<F: FnOnce(&'static str, CUresult)>(f: F) -> F {
    f
}

/// Gives a `record` closure its parameter types.
fn recorder_fn<F: FnOnce(&'static Recorder, &'static str, CUresult)>(f: F) -> F {
    f
}

macro_rules! driver_api {
    (
        manual [ $( $mname:ident ),* ];
        $(
            $order:ident $( $name:ident )|+ ( $( $p:tt )* )
                $( , track $track:expr )?
                $( , record $record:expr )? ;
        )*
    ) => {
        /// Index of each wrapped entry point in [`entries`].
        #[allow(non_camel_case_types, clippy::enum_variant_names)]
        #[derive(Clone, Copy, Debug)]
        pub enum Sym { $( $( $name, )+ )* $( $mname, )* }

        /// Every wrapped driver entry point: its exported name and this
        /// library's wrapper, in `Sym` order.
        pub fn entries() -> Vec<(&'static str, usize)> {
            vec![
                $( $( (stringify!($name), $name as *const () as usize), )+ )*
                $( (stringify!($mname), $mname as *const () as usize), )*
            ]
        }

        $( driver_api!(@entry $order [ $( $name )+ ] ( $( $p )* ) { $( track $track )? } { $( record $record )? }); )*
    };
    (@entry $order:ident [ $( $name:ident )+ ] $args:tt $track:tt $record:tt) => {
        $( driver_api!(@wrapper $order $name $args $track $record); )+
    };
    (@wrapper $order:ident $name:ident ( $( $a:ident : $t:ty ),* $(,)? )
        { $( track $track:expr )? } { $( record $record:expr )? }) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name( $( $a: $t ),* ) -> CUresult {
            type F = unsafe extern "C" fn( $( $t ),* ) -> CUresult;
            const API: &str = stringify!($name);
            let Some(real) = real::<F>(Sym::$name) else {
                return missing(API);
            };
            let g = if driver_layer_on() { enter(API) } else { None };
            let held = driver_api!(@lock $order, g);
            // SAFETY: the application's arguments, forwarded unchanged.
            let ret = unsafe { real( $( $a ),* ) };
            $(
                let t = tracker($track);
                bookkeeping(API, || t(API, ret));
            )?
            if let Some(g) = &g {
                driver_api!(@count $order, API);
                $(
                    let rec = recorder_fn($record);
                    g.run(|r| rec(r, API, ret));
                )?
                let _ = g;
            }
            drop(held);
            ret
        }
    };
    (@lock Lifecycle, $g:ident) => { $g.as_ref().and_then(|g| g.run(|r| r.lifecycle())) };
    (@lock $o:ident, $g:ident) => { None::<std::sync::MutexGuard<'static, ()>> };
    (@count Count, $api:ident) => {{
        static CALLS: crate::record::unrecorded::Counter = crate::record::unrecorded::Counter::new($api);
        CALLS.bump();
    }};
    (@count $o:ident, $api:ident) => { () };
}

driver_api! {
    // Hand-written (`proc`): the lookups themselves.
    manual [cuGetProcAddress, cuGetProcAddress_v2];

    // ------------------------------------------------------------ contexts
    Lifecycle cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice),
        track |_, ret| rec::track_context(ret, unsafe { out(ret, pctx.cast::<u64>()) }, dev),
        record |r, api, ret| rec::ctx_create(r, api, ret, unsafe { out(ret, pctx.cast::<u64>()) }, dev);
    Lifecycle cuDevicePrimaryCtxRelease_v2(dev: CUdevice),
        record |r, api, ret| rec::primary_ctx_release(r, api, ret, dev);
    Lifecycle cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice),
        track |_, ret| rec::track_context(ret, unsafe { out(ret, pctx.cast::<u64>()) }, dev),
        record |r, api, ret| rec::ctx_create(r, api, ret, unsafe { out(ret, pctx.cast::<u64>()) }, dev);
    Lifecycle cuCtxCreate_v3(pctx: *mut CUcontext, params: *mut c_void, num_params: c_int, flags: c_uint, dev: CUdevice),
        track |_, ret| rec::track_context(ret, unsafe { out(ret, pctx.cast::<u64>()) }, dev),
        record |r, api, ret| rec::ctx_create(r, api, ret, unsafe { out(ret, pctx.cast::<u64>()) }, dev);
    Lifecycle cuCtxCreate_v4(pctx: *mut CUcontext, params: *mut c_void, flags: c_uint, dev: CUdevice),
        track |_, ret| rec::track_context(ret, unsafe { out(ret, pctx.cast::<u64>()) }, dev),
        record |r, api, ret| rec::ctx_create(r, api, ret, unsafe { out(ret, pctx.cast::<u64>()) }, dev);
    Lifecycle cuCtxDestroy_v2(ctx: CUcontext),
        record |r, api, ret| r.op(api, ret, &Op::CtxDestroy { ctx: Addr(ctx as u64) });
    Free cuCtxSetCurrent | cuCtxPushCurrent_v2(ctx: CUcontext),
        record |r, api, ret| rec::ctx_set(r, api, ret, ctx as u64);
    Free cuCtxPopCurrent_v2(pctx: *mut CUcontext),
        record rec::ctx_pop;
    Free cuCtxSynchronize(),
        record |r, api, ret| r.op(api, ret, &Op::DeviceSync);

    // ------------------------------------------------------------ allocations
    Lifecycle cuMemAlloc_v2(dptr: *mut CUdeviceptr, size: usize),
        record |r, api, ret| r.alloc(api, ret, unsafe { out(ret, dptr) }, size as u64, MemKind::Device);
    Lifecycle cuMemAllocPitch_v2(dptr: *mut CUdeviceptr, pitch: *mut usize, width: usize, height: usize, elem: c_uint),
        record |r, api, ret| {
            let p = unsafe { out(ret, pitch) };
            r.alloc(api, ret, unsafe { out(ret, dptr) }, (p * height) as u64, MemKind::Device)
        };
    Lifecycle cuMemAllocManaged(dptr: *mut CUdeviceptr, size: usize, flags: c_uint),
        record |r, api, ret| r.alloc(api, ret, unsafe { out(ret, dptr) }, size as u64, MemKind::Managed);
    Lifecycle cuMemAllocAsync | cuMemAllocAsync_ptsz(dptr: *mut CUdeviceptr, size: usize, stream: CUstream),
        record |r, api, ret| r.alloc(api, ret, unsafe { out(ret, dptr) }, size as u64, MemKind::Device);
    Lifecycle cuMemAllocFromPoolAsync | cuMemAllocFromPoolAsync_ptsz(dptr: *mut CUdeviceptr, size: usize, pool: CUmemoryPool, stream: CUstream),
        record |r, api, ret| r.alloc(api, ret, unsafe { out(ret, dptr) }, size as u64, MemKind::Device);
    Lifecycle cuMemFree_v2(dptr: CUdeviceptr),
        record |r, api, ret| r.free(api, ret, dptr, None);
    Lifecycle cuMemFreeAsync | cuMemFreeAsync_ptsz(dptr: CUdeviceptr, stream: CUstream),
        record |r, api, ret| r.free(api, ret, dptr, None);
    Lifecycle cuMemAllocHost_v2(pp: *mut *mut c_void, size: usize),
        record |r, api, ret| r.alloc(api, ret, unsafe { out(ret, pp.cast::<u64>()) }, size as u64, MemKind::Pinned);
    Lifecycle cuMemHostAlloc(pp: *mut *mut c_void, size: usize, flags: c_uint),
        record |r, api, ret| r.alloc(api, ret, unsafe { out(ret, pp.cast::<u64>()) }, size as u64, MemKind::Pinned);
    Lifecycle cuMemFreeHost(p: *mut c_void),
        record |r, api, ret| r.free(api, ret, p as u64, Some(MemKind::Pinned));
    Lifecycle cuMemHostRegister_v2(p: *mut c_void, size: usize, flags: c_uint),
        record |r, api, ret| r.host_register(api, ret, p as u64, size as u64);
    Lifecycle cuMemHostUnregister(p: *mut c_void),
        record |r, api, ret| r.host_unregister(api, ret, p as u64);

    // ------------------------------------------------------------ virtual memory
    Lifecycle cuMemAddressReserve(ptr: *mut CUdeviceptr, size: usize, align: usize, addr: CUdeviceptr, flags: c_ulonglong),
        record |r, api, ret| r.va_reserve(api, ret, unsafe { out(ret, ptr) }, size as u64);
    Lifecycle cuMemAddressFree(ptr: CUdeviceptr, size: usize),
        record |r, api, ret| r.va_free(api, ret, ptr, size as u64);
    Lifecycle cuMemCreate(handle: *mut CUmemGenericAllocationHandle, size: usize, prop: *const CUmemAllocationProp, flags: c_ulonglong),
        record |r, api, ret| unsafe { rec::vmm_create(r, api, ret, out(ret, handle), size, prop) };
    Lifecycle cuMemRelease(handle: CUmemGenericAllocationHandle),
        record |r, api, ret| r.op(api, ret, &Op::MemRelease { handle: Addr(handle) });
    Lifecycle cuMemMap(ptr: CUdeviceptr, size: usize, offset: usize, handle: CUmemGenericAllocationHandle, flags: c_ulonglong),
        record |r, api, ret| r.op(api, ret, &Op::MemMap { ptr: Addr(ptr), size: size as u64, offset: offset as u64, handle: Addr(handle) });
    Lifecycle cuMemUnmap(ptr: CUdeviceptr, size: usize),
        record |r, api, ret| r.op(api, ret, &Op::MemUnmap { ptr: Addr(ptr), size: size as u64 });
    Free cuMemSetAccess(ptr: CUdeviceptr, size: usize, desc: *const CUmemAccessDesc, count: usize),
        record |r, api, ret| r.op(api, ret, &Op::MemAccess { ptr: Addr(ptr), size: size as u64 });

    // ------------------------------------------------------------ copies
    Free cuMemcpyHtoD_v2 | cuMemcpyHtoD_v2_ptds(dst: CUdeviceptr, src: *const c_void, n: usize),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, Some(Dir::H2d), dst, src as u64, n, None) };
    Free cuMemcpyDtoH_v2 | cuMemcpyDtoH_v2_ptds(dst: *mut c_void, src: CUdeviceptr, n: usize),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, Some(Dir::D2h), dst as u64, src, n, None) };
    Free cuMemcpyDtoD_v2 | cuMemcpyDtoD_v2_ptds(dst: CUdeviceptr, src: CUdeviceptr, n: usize),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, Some(Dir::D2d), dst, src, n, None) };
    Free cuMemcpy | cuMemcpy_ptds(dst: CUdeviceptr, src: CUdeviceptr, n: usize),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, None, dst, src, n, None) };
    Free cuMemcpyPeer | cuMemcpyPeer_ptds(dst: CUdeviceptr, dst_ctx: CUcontext, src: CUdeviceptr, src_ctx: CUcontext, n: usize),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, Some(Dir::D2d), dst, src, n, None) };
    Free cuMemcpyHtoDAsync_v2 | cuMemcpyHtoDAsync_v2_ptsz(dst: CUdeviceptr, src: *const c_void, n: usize, stream: CUstream),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, Some(Dir::H2d), dst, src as u64, n, Some(stream)) };
    Free cuMemcpyDtoHAsync_v2 | cuMemcpyDtoHAsync_v2_ptsz(dst: *mut c_void, src: CUdeviceptr, n: usize, stream: CUstream),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, Some(Dir::D2h), dst as u64, src, n, Some(stream)) };
    Free cuMemcpyDtoDAsync_v2 | cuMemcpyDtoDAsync_v2_ptsz(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, Some(Dir::D2d), dst, src, n, Some(stream)) };
    Free cuMemcpyAsync | cuMemcpyAsync_ptsz(dst: CUdeviceptr, src: CUdeviceptr, n: usize, stream: CUstream),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, None, dst, src, n, Some(stream)) };
    Free cuMemcpyPeerAsync | cuMemcpyPeerAsync_ptsz(dst: CUdeviceptr, dst_ctx: CUcontext, src: CUdeviceptr, src_ctx: CUcontext, n: usize, stream: CUstream),
        record |r, api, ret| unsafe { rec::copy(r, api, ret, Some(Dir::D2d), dst, src, n, Some(stream)) };

    // ------------------------------------------------------------ memsets
    Free cuMemsetD8_v2 | cuMemsetD8_v2_ptds(dst: CUdeviceptr, v: u8, n: usize),
        record |r, api, ret| rec::memset(r, api, ret, dst, u32::from(v), n, 1, None);
    Free cuMemsetD16_v2 | cuMemsetD16_v2_ptds(dst: CUdeviceptr, v: u16, n: usize),
        record |r, api, ret| rec::memset(r, api, ret, dst, u32::from(v), n, 2, None);
    Free cuMemsetD32_v2 | cuMemsetD32_v2_ptds(dst: CUdeviceptr, v: c_uint, n: usize),
        record |r, api, ret| rec::memset(r, api, ret, dst, v, n, 4, None);
    Free cuMemsetD8Async | cuMemsetD8Async_ptsz(dst: CUdeviceptr, v: u8, n: usize, stream: CUstream),
        record |r, api, ret| rec::memset(r, api, ret, dst, u32::from(v), n, 1, Some(stream));
    Free cuMemsetD16Async | cuMemsetD16Async_ptsz(dst: CUdeviceptr, v: u16, n: usize, stream: CUstream),
        record |r, api, ret| rec::memset(r, api, ret, dst, u32::from(v), n, 2, Some(stream));
    Free cuMemsetD32Async | cuMemsetD32Async_ptsz(dst: CUdeviceptr, v: c_uint, n: usize, stream: CUstream),
        record |r, api, ret| rec::memset(r, api, ret, dst, v, n, 4, Some(stream));

    // ------------------------------------------------------------ modules and libraries
    Lifecycle cuModuleLoad(module: *mut CUmodule, fname: *const c_char),
        track |_, ret| unsafe { rec::track_file(ret, out(ret, module.cast::<u64>()), fname) },
        record |r, api, ret| rec::module_load(r, api, ret, unsafe { out(ret, module.cast::<u64>()) });
    Lifecycle cuModuleLoadData | cuModuleLoadFatBinary(module: *mut CUmodule, image: *const c_void),
        track |_, ret| unsafe { rec::track_image(ret, out(ret, module.cast::<u64>()), image) },
        record |r, api, ret| rec::module_load(r, api, ret, unsafe { out(ret, module.cast::<u64>()) });
    Lifecycle cuModuleLoadDataEx(module: *mut CUmodule, image: *const c_void, n: c_uint, options: *mut c_int, values: *mut *mut c_void),
        track |_, ret| unsafe { rec::track_image(ret, out(ret, module.cast::<u64>()), image) },
        record |r, api, ret| rec::module_load(r, api, ret, unsafe { out(ret, module.cast::<u64>()) });
    Lifecycle cuLibraryLoadData(lib: *mut CUlibrary, code: *const c_void, jit_options: *mut c_int, jit_values: *mut *mut c_void, n_jit: c_uint, lib_options: *mut c_int, lib_values: *mut *mut c_void, n_lib: c_uint),
        track |_, ret| unsafe { rec::track_image(ret, out(ret, lib.cast::<u64>()), code) },
        record |r, api, ret| rec::module_load(r, api, ret, unsafe { out(ret, lib.cast::<u64>()) });
    Lifecycle cuLibraryLoadFromFile(lib: *mut CUlibrary, fname: *const c_char, jit_options: *mut c_int, jit_values: *mut *mut c_void, n_jit: c_uint, lib_options: *mut c_int, lib_values: *mut *mut c_void, n_lib: c_uint),
        track |_, ret| unsafe { rec::track_file(ret, out(ret, lib.cast::<u64>()), fname) },
        record |r, api, ret| rec::module_load(r, api, ret, unsafe { out(ret, lib.cast::<u64>()) });
    Lifecycle cuModuleUnload | cuLibraryUnload(module: CUmodule),
        track |_, ret| rec::track_unload(ret, module as u64),
        record |r, api, ret| r.op(api, ret, &Op::ModuleUnload { module: Addr(module as u64) });
    Free cuModuleGetFunction(func: *mut CUfunction, module: CUmodule, name: *const c_char),
        track |_, ret| unsafe { rec::track_function(ret, out(ret, func.cast::<u64>()), module as u64, name, FnKind::Function) },
        record |r, api, ret| unsafe { rec::function(r, api, ret, out(ret, func.cast::<u64>()), module as u64, name) };
    Free cuLibraryGetKernel(kernel: *mut CUkernel, lib: CUlibrary, name: *const c_char),
        track |_, ret| unsafe { rec::track_function(ret, out(ret, kernel.cast::<u64>()), lib as u64, name, FnKind::Kernel) },
        record |r, api, ret| unsafe { rec::function(r, api, ret, out(ret, kernel.cast::<u64>()), lib as u64, name) };
    Free cuKernelGetFunction(func: *mut CUfunction, kernel: CUkernel),
        track |_, ret| rec::track_kernel_function(ret, unsafe { out(ret, func.cast::<u64>()) }, kernel as u64),
        record |r, api, ret| rec::kernel_function(r, api, ret, unsafe { out(ret, func.cast::<u64>()) }, kernel as u64);
    Free cuLibraryGetModule(module: *mut CUmodule, lib: CUlibrary),
        track |_, ret| {
            let m = unsafe { out(ret, module.cast::<u64>()) };
            if ret == CUDA_SUCCESS {
                super::code().alias_module(m, lib as u64);
            }
        };
    Free cuModuleGetGlobal_v2(dptr: *mut CUdeviceptr, bytes: *mut usize, module: CUmodule, name: *const c_char),
        track |api, ret| unsafe { rec::global(api, ret, module as u64, name, out(ret, dptr), out(ret, bytes)) };
    Free cuLibraryGetGlobal(dptr: *mut CUdeviceptr, bytes: *mut usize, lib: CUlibrary, name: *const c_char),
        track |api, ret| unsafe { rec::global(api, ret, lib as u64, name, out(ret, dptr), out(ret, bytes)) };

    // ------------------------------------------------------------ launches
    Free cuLaunchKernel | cuLaunchKernel_ptsz(f: CUfunction, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shmem: c_uint, stream: CUstream, params: *mut *mut c_void, extra: *mut *mut c_void),
        record |r, api, ret| unsafe {
            rec::launch(r, api, ret, f as u64, rec::dims(gx, gy, gz, bx, by, bz, shmem, stream), params, extra, &[])
        };
    Free cuLaunchKernelEx | cuLaunchKernelEx_ptsz(config: *const CUlaunchConfig, f: CUfunction, params: *mut *mut c_void, extra: *mut *mut c_void),
        record |r, api, ret| unsafe {
            let (dims, attrs) = match rec::config(config) {
                Some(c) => c,
                None => (rec::dims(0, 0, 0, 0, 0, 0, 0, std::ptr::null_mut()), Vec::new()),
            };
            rec::launch(r, api, ret, f as u64, dims, params, extra, &attrs)
        };
    Free cuLaunchCooperativeKernel | cuLaunchCooperativeKernel_ptsz(f: CUfunction, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint, bz: c_uint, shmem: c_uint, stream: CUstream, params: *mut *mut c_void),
        record |r, api, ret| unsafe {
            let dims = rec::dims(gx, gy, gz, bx, by, bz, shmem, stream);
            rec::launch(r, api, ret, f as u64, dims, params, std::ptr::null_mut(), &rec::cooperative())
        };

    // ------------------------------------------------------------ streams and events
    Lifecycle cuStreamCreate(stream: *mut CUstream, flags: c_uint),
        record |r, api, ret| r.op(api, ret, &Op::StreamCreate { stream: Addr(unsafe { out(ret, stream.cast::<u64>()) }) });
    Lifecycle cuStreamCreateWithPriority(stream: *mut CUstream, flags: c_uint, priority: c_int),
        record |r, api, ret| r.op(api, ret, &Op::StreamCreate { stream: Addr(unsafe { out(ret, stream.cast::<u64>()) }) });
    Lifecycle cuStreamDestroy_v2(stream: CUstream),
        record |r, api, ret| r.op(api, ret, &Op::StreamDestroy { stream: Addr(s(stream)) });
    Free cuStreamSynchronize | cuStreamSynchronize_ptsz(stream: CUstream),
        record |r, api, ret| r.op(api, ret, &Op::StreamSync { stream: Addr(s(stream)) });
    Free cuStreamWaitEvent | cuStreamWaitEvent_ptsz(stream: CUstream, event: CUevent, flags: c_uint),
        record |r, api, ret| r.op(api, ret, &Op::StreamWaitEvent { stream: Addr(s(stream)), event: Addr(event as u64) });
    Lifecycle cuEventCreate(event: *mut CUevent, flags: c_uint),
        record |r, api, ret| r.op(api, ret, &Op::EventCreate { event: Addr(unsafe { out(ret, event.cast::<u64>()) }) });
    Lifecycle cuEventDestroy_v2(event: CUevent),
        record |r, api, ret| r.op(api, ret, &Op::EventDestroy { event: Addr(event as u64) });
    Free cuEventRecord | cuEventRecord_ptsz(event: CUevent, stream: CUstream),
        record |r, api, ret| r.op(api, ret, &Op::EventRecord { event: Addr(event as u64), stream: Addr(s(stream)) });
    Free cuEventRecordWithFlags | cuEventRecordWithFlags_ptsz(event: CUevent, stream: CUstream, flags: c_uint),
        record |r, api, ret| r.op(api, ret, &Op::EventRecord { event: Addr(event as u64), stream: Addr(s(stream)) });
    Free cuEventSynchronize(event: CUevent),
        record |r, api, ret| r.op(api, ret, &Op::EventSync { event: Addr(event as u64) });

    // ------------------------------------------------------------ not recorded, counted
    // The runtime's private interface tables: noted (at any depth: the
    // runtime asks at its initialisation), never wrapped.
    Free cuGetExportTable(table: *mut *const c_void, id: *const c_void),
        track |_, _| crate::record::unrecorded::export_table();
    Count cuMemcpy2D_v2 | cuMemcpy2DUnaligned_v2 | cuMemcpy3D_v2(copy: *const c_void);
    Count cuMemcpy2DAsync_v2 | cuMemcpy3DAsync_v2(copy: *const c_void, stream: CUstream);
    Count cuMemsetD2D8_v2(dst: CUdeviceptr, pitch: usize, v: u8, w: usize, h: usize);
    Count cuMemsetD2D32_v2(dst: CUdeviceptr, pitch: usize, v: c_uint, w: usize, h: usize);
    Count cuGraphLaunch(exec: *mut c_void, stream: CUstream);
    Count cuLaunchHostFunc(stream: CUstream, func: *mut c_void, data: *mut c_void);
    Count cuStreamBeginCapture_v2(stream: CUstream, mode: c_int);
}
