//! Recorded handlers: kernel launches, through the module API
//! (`kernelParams` or `extra`; `hipModuleLaunchKernel`, the extended and
//! mangled variants) and the compiler path (a registered host stub:
//! `hipLaunchKernel`, `hipExtLaunchKernel`, `hipLaunchCooperativeKernel`). A successful
//! launch given `kernelParams` or `args` that repeats one of the thread's
//! recent launches in every input appends the line kept from it
//! (`launch_memo`).

use std::ffi::c_void;
use std::sync::Arc;

use api_table::Entry;
use hip_api::args;

use crate::capture::Guard;
use crate::hip::types::{self as hip, HipError, HipFunction};
use crate::launch_params::{record_memoised, with_params};
use hrr_interpose::call_args::bytes;
use hrr_interpose::exports::missing;
use hrr_interpose::real_fn::Real;
use hrr_recorder::kept::Kept;
use hrr_recorder::record::code_objects::{CodeError, FatBin, Kernel, Module};
use hrr_recorder::record::kernel_args::ArgValues;
use hrr_recorder::record::launch_memo::{self, LaunchKey, Slot};
use hrr_recorder::record::recorder::{LaunchDims, Recorder};

/// The packed buffer of an `extra` array
/// (`HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END`).
///
/// # Safety
/// The launch succeeded with this `extra`, so it is a well-formed array the
/// runtime just walked.
pub(super) unsafe fn extra_buffer<'a>(extra: *mut *mut c_void) -> ArgValues<'static, 'a> {
    let (mut buf, mut size): (*const c_void, *const usize) = (std::ptr::null(), std::ptr::null());
    // A well-formed array is short; the bound only stops a corrupt one.
    for i in (0..64).step_by(2) {
        // SAFETY: per the contract, entries up to the END marker are readable.
        let key = unsafe { *extra.add(i) } as usize;
        match key {
            // SAFETY: a key other than END is followed by its value.
            hip::LAUNCH_PARAM_BUFFER_POINTER => buf = unsafe { *extra.add(i + 1) },
            // SAFETY: as above.
            hip::LAUNCH_PARAM_BUFFER_SIZE => size = unsafe { *extra.add(i + 1) }.cast(),
            _ => break,
        }
    }
    if buf.is_null() || size.is_null() {
        return ArgValues::None;
    }
    // SAFETY: the runtime read `*size` bytes of arguments from `buf`.
    ArgValues::Buffer(unsafe { bytes(buf, *size) })
}

/// Reads a registered fat binary's bundle for its first launch; its blob is
/// written from where it lies.
pub(super) fn load_fatbin(r: &Recorder, f: &FatBin) -> Result<Arc<Module>, CodeError> {
    // SAFETY: FatBin::module only calls this while the fat binary is
    // registered, and its bundle stays until `__hipUnregisterFatBinary`,
    // which settles the recorder first (`Recorder::unregister_fatbin`).
    Ok(r.load_bundle_kept(unsafe { Kept::new(f.addr as *const u8, f.len) }))
}

/// Records a launch of a module function after the call.
fn record_module_launch(
    api: &'static str,
    g: &Guard,
    ret: HipError,
    func: HipFunction,
    dims: LaunchDims,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) {
    g.run(|r| {
        if super::graph::captured(dims.stream) {
            // Captured into a graph, not run: recorded when the graph is.
            return;
        }
        let in_full = |slot: Option<Slot<'_>>| {
            r.code().with_function(func as u64, |kernel| {
                record_module_launch_of(r, api, ret, kernel, func, dims, kernel_params, extra, slot)
            })
        };
        if ret != hip::err::SUCCESS {
            return in_full(None);
        }
        // Without kernelParams, the arguments are `extra`'s packed buffer.
        let packed = if kernel_params.is_null() {
            // SAFETY: the successful launch walked this extra array.
            match (!extra.is_null()).then(|| unsafe { extra_buffer(extra) }) {
                Some(ArgValues::Buffer(b)) => Some(b),
                _ => return in_full(None),
            }
        } else {
            None
        };
        let key = LaunchKey {
            api,
            func: func as u64,
            dims,
            epoch: launch_memo::epoch(),
            attrs: 0,
            packed: packed.is_some(),
        };
        match packed {
            Some(b) => launch_memo::record(r, key, |_, _| b, in_full),
            // SAFETY: the runtime accepted this launch with these kernelParams.
            None => unsafe { record_memoised(r, key, kernel_params, in_full) },
        }
    });
}

/// [`record_module_launch`] with the kernel borrowed from the handle map
/// (under its read lock: no `Arc` count traffic per launch).
#[allow(clippy::too_many_arguments)]
fn record_module_launch_of(
    r: &Recorder,
    api: &'static str,
    ret: HipError,
    kernel: Option<&Kernel>,
    func: HipFunction,
    dims: LaunchDims,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    slot: Option<Slot<'_>>,
) {
    {
        let layout = kernel
            .and_then(|k| k.resolve(|f| load_fatbin(r, f)).ok())
            .and_then(|res| res.layout);
        let record = |values: ArgValues<'_, '_>| {
            r.launch(
                api,
                ret,
                kernel,
                |f| load_fatbin(r, f),
                func as u64,
                &dims,
                &values,
                slot,
            )
        };
        if ret != hip::err::SUCCESS {
            record(ArgValues::None)
        } else if !kernel_params.is_null() {
            // SAFETY: the successful launch read kernelParams per this layout.
            unsafe { with_params(layout, kernel_params, record) }
        } else if !extra.is_null() {
            // SAFETY: the successful launch walked this extra array.
            record(unsafe { extra_buffer(extra) })
        } else {
            record(ArgValues::None)
        }
    }
}

/// A module-API launch: forwarded, then recorded by [`record_module_launch`].
///
/// # Safety
/// `a` holds the application's arguments; `func`, `dims`, `kernel_params`
/// and `extra` are its launch's.
#[inline(always)]
unsafe fn module_launch<A: Entry<Ret = HipError>>(
    api: &'static str,
    real: &Real<A>,
    a: A,
    func: HipFunction,
    dims: LaunchDims,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    let Some(f) = real.get() else {
        return missing::<A>();
    };
    let g = Guard::enter(api);
    super::profiler::before_launch(&g);
    if let Some(g) = &g
        && g.recorder().watches_host_memory()
    {
        // SAFETY: per this function's contract.
        unsafe { module_host_writes(api, g, func, dims.stream, kernel_params, extra) };
    }
    // SAFETY: per this function's contract.
    let ret = unsafe { a.call(f) };
    if let Some(g) = g {
        record_module_launch(api, &g, ret, func, dims, kernel_params, extra);
    }
    ret
}

/// Before a module-API launch is forwarded: the host memory it may read
/// (see `host_memory`). Its arguments are read before the call, which reads
/// them the same way: `kernelParams` per the kernel's metadata, or `extra`.
///
/// # Safety
/// `func`, `kernel_params` and `extra` are the launch's, about to be handed
/// to the runtime.
#[cold]
unsafe fn module_host_writes(
    api: &'static str,
    g: &Guard,
    func: HipFunction,
    stream: u64,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) {
    g.run(|r| {
        r.code().with_function(func as u64, |kernel| {
            let layout = kernel
                .and_then(|k| k.resolve(|f| load_fatbin(r, f)).ok())
                .and_then(|res| res.layout);
            let record = |values: ArgValues<'_, '_>| {
                r.host_writes_before_launch(api, stream, &values, layout)
            };
            if !kernel_params.is_null() {
                // SAFETY: per the contract, the runtime reads these params per this layout.
                unsafe { with_params(layout, kernel_params, record) }
            } else if !extra.is_null() {
                // SAFETY: per the contract, a well-formed extra array.
                record(unsafe { extra_buffer(extra) })
            } else {
                record(ArgValues::None)
            }
        })
    });
}

/// [`module_host_writes`] for a compiler-path launch (one pointer per
/// argument behind `args`).
///
/// # Safety
/// As [`module_host_writes`].
#[cold]
unsafe fn stub_host_writes(
    api: &'static str,
    g: &Guard,
    function_address: *const c_void,
    stream: u64,
    args: *mut *mut c_void,
) {
    g.run(|r| {
        r.code().with_stub(function_address as u64, |kernel| {
            let layout = kernel
                .and_then(|k| k.resolve(|f| load_fatbin(r, f)).ok())
                .and_then(|res| res.layout);
            let record = |values: ArgValues<'_, '_>| {
                r.host_writes_before_launch(api, stream, &values, layout)
            };
            // SAFETY: per the contract, the runtime reads args per this layout.
            unsafe { with_params(layout, args, record) }
        })
    });
}

// Inlined into the export: the launch path is the hot one.
#[inline(always)]
pub unsafe fn hipModuleLaunchKernel(
    real: &'static Real<args::hipModuleLaunchKernel>,
    a: args::hipModuleLaunchKernel,
) -> HipError {
    let dims = LaunchDims {
        grid: [a.gridDimX, a.gridDimY, a.gridDimZ],
        block: [a.blockDimX, a.blockDimY, a.blockDimZ],
        shmem: a.sharedMemBytes,
        stream: a.stream as u64,
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        module_launch(
            "hipModuleLaunchKernel",
            real,
            a,
            a.f,
            dims,
            a.kernelParams,
            a.extra,
        )
    }
}

/// `ceil(global / local)`: HIP's extended launch takes work-item counts.
fn blocks(global: u32, local: u32) -> u32 {
    if local == 0 {
        global
    } else {
        global.div_ceil(local)
    }
}

/// `NAME => API;`: an extended module launch (work-item counts, optional
/// events; the mangled symbols ROCm 5.2 exports are recorded under the C
/// name `API`, as the application wrote it).
macro_rules! ext_module_launches {
    ($($name:ident => $api:literal;)*) => {$(
        #[inline(always)]
        pub unsafe fn $name(real: &'static Real<args::$name>, a: args::$name) -> HipError {
            let dims = LaunchDims {
                grid: [
                    blocks(a.globalWorkSizeX, a.localWorkSizeX),
                    blocks(a.globalWorkSizeY, a.localWorkSizeY),
                    blocks(a.globalWorkSizeZ, a.localWorkSizeZ),
                ],
                block: [a.localWorkSizeX, a.localWorkSizeY, a.localWorkSizeZ],
                shmem: u32::try_from(a.sharedMemBytes).unwrap_or(u32::MAX),
                stream: a.hStream as u64,
            };
            // SAFETY: the export's contract: the application's arguments.
            unsafe { module_launch($api, real, a, a.f, dims, a.kernelParams, a.extra) }
        }
    )*};
}

ext_module_launches! {
    hipExtModuleLaunchKernel => "hipExtModuleLaunchKernel";
    // What applications compiled against ROCm 5.x's hip_ext.h call (it
    // declares the function in C++, without `extern "C"`).
    _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j => "hipExtModuleLaunchKernel";
    _Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_ => "hipHccModuleLaunchKernel";
}

/// A compiler-path launch (a registered host stub, one pointer per
/// argument): forwarded, then recorded through the thread's `LaunchMemo`.
///
/// # Safety
/// `a` holds the application's arguments; `function_address`, `dims` and
/// `args` are its launch's.
#[inline(always)]
unsafe fn stub_launch<A: Entry<Ret = HipError>>(
    api: &'static str,
    real: &Real<A>,
    a: A,
    function_address: *const c_void,
    dims: LaunchDims,
    args: *mut *mut c_void,
) -> HipError {
    let Some(f) = real.get() else {
        return missing::<A>();
    };
    let g = Guard::enter(api);
    super::profiler::before_launch(&g);
    if let Some(g) = &g
        && g.recorder().watches_host_memory()
    {
        // SAFETY: per this function's contract.
        unsafe { stub_host_writes(api, g, function_address, dims.stream, args) };
    }
    // SAFETY: per this function's contract.
    let ret = unsafe { a.call(f) };
    if let Some(g) = g {
        g.run(|r| {
            if super::graph::captured(dims.stream) {
                // Captured into a graph, not run: recorded when the graph is.
                return;
            }
            let in_full = |slot: Option<Slot<'_>>| {
                r.code().with_stub(function_address as u64, |kernel| {
                    let layout = kernel
                        .and_then(|k| k.resolve(|f| load_fatbin(r, f)).ok())
                        .and_then(|res| res.layout);
                    let record = |values: ArgValues<'_, '_>| {
                        let load = |f: &FatBin| load_fatbin(r, f);
                        r.launch(
                            api,
                            ret,
                            kernel,
                            load,
                            function_address as u64,
                            &dims,
                            &values,
                            slot,
                        )
                    };
                    if ret == hip::err::SUCCESS {
                        // SAFETY: the successful launch read args per this layout.
                        unsafe { with_params(layout, args, record) }
                    } else {
                        record(ArgValues::None)
                    }
                })
            };
            if ret != hip::err::SUCCESS {
                return in_full(None);
            }
            let key = LaunchKey {
                api,
                func: function_address as u64,
                dims,
                epoch: launch_memo::epoch(),
                attrs: 0,
                packed: false,
            };
            // SAFETY: the runtime accepted this launch with these args.
            unsafe { record_memoised(r, key, args, in_full) };
        });
    }
    ret
}

// Inlined into the export: the launch path is the hot one.
#[inline(always)]
pub unsafe fn hipLaunchKernel(
    real: &'static Real<args::hipLaunchKernel>,
    a: args::hipLaunchKernel,
) -> HipError {
    let dims = LaunchDims {
        grid: a.numBlocks.to_array(),
        block: a.dimBlocks.to_array(),
        shmem: u32::try_from(a.sharedMemBytes).unwrap_or(u32::MAX),
        stream: a.stream as u64,
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { stub_launch("hipLaunchKernel", real, a, a.function_address, dims, a.args) }
}

/// `hipLaunchKernel` with start/stop events and flags (`hip_ext.h`'s
/// `hipExtLaunchKernelGGL` calls it). The events are the runtime's timing
/// business; the launch is recorded as `hipLaunchKernel`'s.
// Inlined into the export: the launch path is the hot one.
#[inline(always)]
pub unsafe fn hipExtLaunchKernel(
    real: &'static Real<args::hipExtLaunchKernel>,
    a: args::hipExtLaunchKernel,
) -> HipError {
    let dims = LaunchDims {
        grid: a.numBlocks.to_array(),
        block: a.dimBlocks.to_array(),
        shmem: u32::try_from(a.sharedMemBytes).unwrap_or(u32::MAX),
        stream: a.stream as u64,
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        stub_launch(
            "hipExtLaunchKernel",
            real,
            a,
            a.function_address,
            dims,
            a.args,
        )
    }
}

/// A cooperative launch (grid-wide synchronisation allowed) of a registered
/// host stub; recorded as a launch (replay launches it the ordinary way).
// Inlined into the export: the launch path is the hot one.
#[inline(always)]
pub unsafe fn hipLaunchCooperativeKernel(
    real: &'static Real<args::hipLaunchCooperativeKernel>,
    a: args::hipLaunchCooperativeKernel,
) -> HipError {
    let dims = LaunchDims {
        grid: a.gridDim.to_array(),
        block: a.blockDimX.to_array(),
        shmem: a.sharedMemBytes,
        stream: a.stream as u64,
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        stub_launch(
            "hipLaunchCooperativeKernel",
            real,
            a,
            a.f,
            dims,
            a.kernelParams,
        )
    }
}
