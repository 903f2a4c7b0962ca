//! Kernel launches: the module API (`kernelParams` or `extra`) and the
//! compiler path (`hipLaunchKernel` on a registered host stub). A successful
//! launch given `kernelParams` or `args` that repeats the thread's previous
//! one in every input appends the line kept from it (`launch_memo`).

use std::ffi::{c_uint, c_void};
use std::sync::Arc;

use super::{bytes, missing, real, record_memoised, with_params};
use crate::hip::types::{self as hip, Dim3, HipError, HipEvent, HipFunction, HipStream};
use crate::interpose::guard::Guard;
use crate::record::code_objects::{FatBin, Kernel, Module};
use crate::record::kernel_args::ArgValues;
use crate::record::launch_memo::{LaunchKey, Slot};
use crate::record::recorder::{LaunchDims, Recorder};

/// The packed buffer of an `extra` array
/// (`HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END`).
///
/// # Safety
/// The launch succeeded with this `extra`, so it is a well-formed array the
/// runtime just walked.
unsafe fn extra_buffer<'a>(extra: *mut *mut c_void) -> ArgValues<'static, 'a> {
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

/// Reads a registered fat binary's bundle for its first launch.
fn load_fatbin(r: &Recorder, f: &FatBin) -> Result<Arc<Module>, String> {
    // SAFETY: FatBin::module only calls this while the fat binary is
    // registered, and its bundle lies in the application's loaded image.
    r.load_bundle(unsafe { bytes(f.addr as *const c_void, f.len) })
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
        let in_full = |slot: Option<Slot<'_>>| {
            r.code().with_function(func as u64, |kernel| {
                record_module_launch_of(r, api, ret, kernel, func, dims, kernel_params, extra, slot)
            })
        };
        if ret != hip::err::SUCCESS || kernel_params.is_null() {
            return in_full(None);
        }
        let key = LaunchKey {
            api,
            func: func as u64,
            dims,
            registry: r.code().generation(),
            allocs: r.allocs().generation(),
        };
        // SAFETY: the runtime accepted this launch with these kernelParams.
        unsafe { record_memoised(r, key, kernel_params, in_full) };
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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: HipFunction,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shmem: c_uint,
    stream: HipStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> HipError {
    type F = unsafe extern "C" fn(
        HipFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        HipStream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> HipError;
    let Some(real) = real!(hipModuleLaunchKernel: F) else {
        return missing("hipModuleLaunchKernel");
    };
    let g = Guard::enter("hipModuleLaunchKernel");
    // SAFETY: the application's arguments, forwarded unchanged.
    let ret = unsafe {
        real(
            f,
            gx,
            gy,
            gz,
            bx,
            by,
            bz,
            shmem,
            stream,
            kernel_params,
            extra,
        )
    };
    if let Some(g) = g {
        let dims = LaunchDims {
            grid: [gx, gy, gz],
            block: [bx, by, bz],
            shmem,
            stream: stream as u64,
        };
        record_module_launch(
            "hipModuleLaunchKernel",
            &g,
            ret,
            f,
            dims,
            kernel_params,
            extra,
        );
    }
    ret
}

/// `ceil(global / local)`: HIP's extended launch takes work-item counts.
fn blocks(global: u32, local: u32) -> u32 {
    if local == 0 {
        global
    } else {
        global.div_ceil(local)
    }
}

/// `hipExtModuleLaunchKernel`'s C type.
type ExtLaunchFn = unsafe extern "C" fn(
    HipFunction,
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    usize,
    HipStream,
    *mut *mut c_void,
    *mut *mut c_void,
    HipEvent,
    HipEvent,
    u32,
) -> HipError;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipExtModuleLaunchKernel(
    f: HipFunction,
    global_x: u32,
    global_y: u32,
    global_z: u32,
    local_x: u32,
    local_y: u32,
    local_z: u32,
    shmem: usize,
    stream: HipStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start_event: HipEvent,
    stop_event: HipEvent,
    flags: u32,
) -> HipError {
    let real = real!(hipExtModuleLaunchKernel: ExtLaunchFn);
    // SAFETY: the application's arguments, forwarded unchanged.
    unsafe {
        ext_module_launch(
            "hipExtModuleLaunchKernel",
            real,
            f,
            global_x,
            global_y,
            global_z,
            local_x,
            local_y,
            local_z,
            shmem,
            stream,
            kernel_params,
            extra,
            start_event,
            stop_event,
            flags,
        )
    }
}

/// The name ROCm 5.x really exports: `hip_ext.h` declares
/// hipExtModuleLaunchKernel in C++ without `extern "C"`, so hipcc-built
/// applications reference this mangled symbol.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
    f: HipFunction,
    global_x: u32,
    global_y: u32,
    global_z: u32,
    local_x: u32,
    local_y: u32,
    local_z: u32,
    shmem: usize,
    stream: HipStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start_event: HipEvent,
    stop_event: HipEvent,
    flags: u32,
) -> HipError {
    let real = real!(_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j: ExtLaunchFn);
    // SAFETY: the application's arguments, forwarded unchanged.
    unsafe {
        ext_module_launch(
            "hipExtModuleLaunchKernel",
            real,
            f,
            global_x,
            global_y,
            global_z,
            local_x,
            local_y,
            local_z,
            shmem,
            stream,
            kernel_params,
            extra,
            start_event,
            stop_event,
            flags,
        )
    }
}

/// Forwards an extended module launch and records it.
///
/// # Safety
/// The arguments are the application's, valid as HIP requires.
#[allow(clippy::too_many_arguments)]
unsafe fn ext_module_launch(
    api: &'static str,
    real: Option<ExtLaunchFn>,
    f: HipFunction,
    global_x: u32,
    global_y: u32,
    global_z: u32,
    local_x: u32,
    local_y: u32,
    local_z: u32,
    shmem: usize,
    stream: HipStream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start_event: HipEvent,
    stop_event: HipEvent,
    flags: u32,
) -> HipError {
    let Some(real) = real else {
        return missing(api);
    };
    let g = Guard::enter(api);
    // SAFETY: the application's arguments, forwarded unchanged.
    let ret = unsafe {
        real(
            f,
            global_x,
            global_y,
            global_z,
            local_x,
            local_y,
            local_z,
            shmem,
            stream,
            kernel_params,
            extra,
            start_event,
            stop_event,
            flags,
        )
    };
    if let Some(g) = g {
        let dims = LaunchDims {
            grid: [
                blocks(global_x, local_x),
                blocks(global_y, local_y),
                blocks(global_z, local_z),
            ],
            block: [local_x, local_y, local_z],
            shmem: u32::try_from(shmem).unwrap_or(u32::MAX),
            stream: stream as u64,
        };
        record_module_launch(api, &g, ret, f, dims, kernel_params, extra);
    }
    ret
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipLaunchKernel(
    function_address: *const c_void,
    num_blocks: Dim3,
    dim_blocks: Dim3,
    args: *mut *mut c_void,
    shared_mem_bytes: usize,
    stream: HipStream,
) -> HipError {
    type F = unsafe extern "C" fn(
        *const c_void,
        Dim3,
        Dim3,
        *mut *mut c_void,
        usize,
        HipStream,
    ) -> HipError;
    let Some(real) = real!(hipLaunchKernel: F) else {
        return missing("hipLaunchKernel");
    };
    let g = Guard::enter("hipLaunchKernel");
    // SAFETY: the application's arguments, forwarded unchanged.
    let ret = unsafe {
        real(
            function_address,
            num_blocks,
            dim_blocks,
            args,
            shared_mem_bytes,
            stream,
        )
    };
    if let Some(g) = g {
        g.run(|r| {
            let dims = LaunchDims {
                grid: num_blocks.to_array(),
                block: dim_blocks.to_array(),
                shmem: u32::try_from(shared_mem_bytes).unwrap_or(u32::MAX),
                stream: stream as u64,
            };
            let in_full = |slot: Option<Slot<'_>>| {
                r.code().with_stub(function_address as u64, |kernel| {
                    let layout = kernel
                        .and_then(|k| k.resolve(|f| load_fatbin(r, f)).ok())
                        .and_then(|res| res.layout);
                    let record = |values: ArgValues<'_, '_>| {
                        let load = |f: &FatBin| load_fatbin(r, f);
                        r.launch(
                            "hipLaunchKernel",
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
                api: "hipLaunchKernel",
                func: function_address as u64,
                dims,
                registry: r.code().generation(),
                allocs: r.allocs().generation(),
            };
            // SAFETY: the runtime accepted this launch with these args.
            unsafe { record_memoised(r, key, args, in_full) };
        });
    }
    ret
}
