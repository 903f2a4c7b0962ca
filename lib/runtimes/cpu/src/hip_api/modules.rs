//! Modules (CPU code objects) and the module API's launches
//! (`kernelParams` or `extra`; the extended, work-item-counted variant).

use std::ffi::{CStr, c_void};
use std::sync::Arc;

use ::hip_api::args;

use super::put;
use crate::error::guard;
use crate::exec::KernArgs;
use crate::ffi::{self, Dim3, HipError, HipEvent, HipFunction, HipModule, HipStream, err};
use crate::module::{self, Function};
use crate::runtime::rt;

pub(super) unsafe fn hipModuleLoad(a: args::hipModuleLoad) -> HipError {
    let args::hipModuleLoad { module, fname } = a;

    guard(|| {
        if module.is_null() || fname.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: a NUL-terminated path.
        let path = unsafe { CStr::from_ptr(fname) };
        let path = std::path::Path::new(
            <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path.to_bytes()),
        );
        let image = std::fs::read(path).map_err(|e| {
            crate::log!("hipModuleLoad {}: {e}", path.display());
            err::FILE_NOT_FOUND
        })?;
        let h = rt()?.load_module(&image)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(module, h as HipModule) }
    })
}

pub(super) unsafe fn hipModuleLoadData(a: args::hipModuleLoadData) -> HipError {
    let args::hipModuleLoadData { module, image } = a;

    guard(|| {
        if module.is_null() || image.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: `image` is a complete code object.
        let bytes = unsafe { module::image_from_ptr(image.cast()) }?;
        let h = rt()?.load_module(bytes)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(module, h as HipModule) }
    })
}

pub(super) unsafe fn hipModuleLoadDataEx(a: args::hipModuleLoadDataEx) -> HipError {
    let args::hipModuleLoadDataEx {
        module,
        image,
        numOptions: _,
        options: _,
        optionValues: _,
    } = a;
    // SAFETY: same contract as hipModuleLoadData (JIT options are ignored).
    unsafe { hipModuleLoadData(args::hipModuleLoadData { module, image }) }
}

pub(super) unsafe fn hipModuleUnload(a: args::hipModuleUnload) -> HipError {
    let args::hipModuleUnload { module } = a;

    guard(|| rt()?.unload_module(module as usize))
}

pub(super) unsafe fn hipModuleGetFunction(a: args::hipModuleGetFunction) -> HipError {
    let args::hipModuleGetFunction {
        function,
        module,
        kname: name,
    } = a;

    guard(|| {
        if function.is_null() || name.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: a NUL-terminated kernel name.
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| err::NOT_FOUND)?;
        let h = rt()?.get_function(module as usize, name)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(function, h as HipFunction) }
    })
}

pub(super) unsafe fn hipModuleGetGlobal(a: args::hipModuleGetGlobal) -> HipError {
    let args::hipModuleGetGlobal {
        dptr,
        bytes,
        hmod,
        name,
    } = a;

    guard(|| {
        if name.is_null() || (dptr.is_null() && bytes.is_null()) {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract: a NUL-terminated variable name.
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| err::NOT_FOUND)?;
        let (p, size) = rt()?.get_global(hmod as usize, name)?;
        // Either out-parameter may be null (HIP writes the ones given).
        if !dptr.is_null() {
            // SAFETY: HIP contract for the out-parameter (checked non-null).
            unsafe { put(dptr, p as ::hip_api::types::hipDeviceptr_t) }?;
        }
        if !bytes.is_null() {
            // SAFETY: as above.
            unsafe { put(bytes, size) }?;
        }
        Ok(())
    })
}

/// Packs a kernel's argument segment from `kernelParams` or `extra`.
///
/// # Safety
/// HIP's contract: `params` holds one pointer per host (non-hidden) kernel
/// argument, each to a value of that argument's size; `extra` is a
/// HIP_LAUNCH_PARAM_* list ending in END.
pub(super) unsafe fn pack_args(
    func: &crate::module::Function,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<KernArgs, HipError> {
    if !params.is_null() && !extra.is_null() {
        return Err(err::INVALID_VALUE);
    }
    if !params.is_null() {
        let mut ka = KernArgs::zeroed(func.kernarg_size);
        let buf = ka.bytes_mut();
        for (i, a) in func.meta.host_args().enumerate() {
            // SAFETY: one entry per host argument (contract).
            let p = unsafe { *params.add(i) };
            if p.is_null() {
                return Err(err::INVALID_VALUE);
            }
            // In bounds: kernarg_size covers the end of every host argument.
            let dst = &mut buf[a.offset as usize..a.end() as usize];
            // SAFETY: `p` points at `a.size` readable bytes (contract); `dst` is a
            // distinct buffer of exactly that size.
            unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), dst.as_mut_ptr(), dst.len()) };
        }
        return Ok(ka);
    }
    if !extra.is_null() {
        let (mut buf, mut size) = (std::ptr::null::<u8>(), None::<usize>);
        let mut i = 0usize;
        loop {
            if i > 64 {
                return Err(err::INVALID_VALUE);
            }
            // SAFETY: the list is terminated by HIP_LAUNCH_PARAM_END (contract).
            let tag = unsafe { *extra.add(i) } as usize;
            match tag {
                ffi::LAUNCH_PARAM_END => break,
                ffi::LAUNCH_PARAM_BUFFER_POINTER => {
                    // SAFETY: a marker is followed by its value (contract).
                    buf = unsafe { *extra.add(i + 1) }.cast();
                }
                ffi::LAUNCH_PARAM_BUFFER_SIZE => {
                    // SAFETY: the value of BUFFER_SIZE points at a size_t (contract).
                    let p = unsafe { *extra.add(i + 1) }.cast::<usize>();
                    if p.is_null() {
                        return Err(err::INVALID_VALUE);
                    }
                    // SAFETY: as above.
                    size = Some(unsafe { p.read_unaligned() });
                }
                _ => return Err(err::INVALID_VALUE),
            }
            i += 2;
        }
        let size = size.ok_or(err::INVALID_VALUE)?;
        if (buf.is_null() && size > 0) || size > 1 << 20 {
            return Err(err::INVALID_VALUE);
        }
        let mut ka = KernArgs::zeroed(size.max(func.kernarg_size));
        if size > 0 {
            // SAFETY: `buf` holds `size` readable bytes (contract); `ka` is distinct
            // and at least that large.
            unsafe { std::ptr::copy_nonoverlapping(buf, ka.bytes_mut().as_mut_ptr(), size) };
        }
        return Ok(ka);
    }
    if func.meta.host_arg_count() == 0 {
        Ok(KernArgs::zeroed(func.kernarg_size))
    } else {
        Err(err::INVALID_VALUE)
    }
}

/// No events to record around a launch.
pub(super) const NO_EVENTS: (HipEvent, HipEvent) = (std::ptr::null_mut(), std::ptr::null_mut());

/// What every launch entry point does once it has the function: packs its
/// arguments from `kernelParams` / `extra`, and launches it on `stream`
/// (`handle`: what the application named it by), recording `start` before
/// and `stop` after it on the stream, each when non-null.
///
/// # Safety
/// HIP's contract for `kernelParams` / `extra`.
pub(super) unsafe fn launch(
    (func, handle): (Arc<Function>, usize),
    (grid, block, shared): (Dim3, Dim3, usize),
    (kernel_params, extra): (*mut *mut c_void, *mut *mut c_void),
    stream: HipStream,
    (start, stop): (HipEvent, HipEvent),
) -> Result<(), HipError> {
    let rt = rt()?;
    // SAFETY: HIP contract for kernelParams / extra.
    let args = unsafe { pack_args(&func, kernel_params, extra) }?;
    if !start.is_null() {
        rt.record_event(start as usize, stream as usize)?;
    }
    // SAFETY: `args` was packed per the kernel's own metadata.
    unsafe { rt.launch(func, grid, block, shared, args, (handle, stream as usize)) }?;
    if !stop.is_null() {
        rt.record_event(stop as usize, stream as usize)?;
    }
    Ok(())
}

pub(super) unsafe fn hipModuleLaunchKernel(a: args::hipModuleLaunchKernel) -> HipError {
    let args::hipModuleLaunchKernel {
        f,
        gridDimX: grid_x,
        gridDimY: grid_y,
        gridDimZ: grid_z,
        blockDimX: block_x,
        blockDimY: block_y,
        blockDimZ: block_z,
        sharedMemBytes: shared,
        stream,
        kernelParams: kernel_params,
        extra,
    } = a;

    guard(|| {
        let func = rt()?.function(f as usize)?;
        let grid = Dim3::new(grid_x, grid_y, grid_z);
        let block = Dim3::new(block_x, block_y, block_z);
        // SAFETY: HIP contract for kernelParams / extra.
        unsafe {
            launch(
                (func, f as usize),
                (grid, block, shared as usize),
                (kernel_params, extra),
                stream,
                NO_EVENTS,
            )
        }
    })
}

/// `hipExtModuleLaunchKernel`'s arguments past the function, shared with
/// the C++-mangled name ROCm 5.x exports (`hip_ext.h` has no `extern "C"`,
/// so hipcc-built applications call that one).
macro_rules! ext_launches {
    ($($name:ident),*) => {$(
        pub(super) unsafe fn $name(a: args::$name) -> HipError {
            let args::$name {
                f,
                globalWorkSizeX: global_x,
                globalWorkSizeY: global_y,
                globalWorkSizeZ: global_z,
                localWorkSizeX: local_x,
                localWorkSizeY: local_y,
                localWorkSizeZ: local_z,
                sharedMemBytes: shared,
                hStream: stream,
                kernelParams: kernel_params,
                extra,
                startEvent: start_event,
                stopEvent: stop_event,
                flags: _,
            } = a;
            // SAFETY: HIP's contract for the launch's arguments.
            unsafe {
                ext_module_launch(
                    f,
                    [global_x, global_y, global_z],
                    [local_x, local_y, local_z],
                    shared,
                    stream,
                    (kernel_params, extra),
                    (start_event, stop_event),
                )
            }
        }
    )*};
}

ext_launches!(
    hipExtModuleLaunchKernel,
    _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j
);

/// Launches `f` over `global` work items in blocks of `local`, recording
/// the events (when non-null) before and after it on `stream`.
///
/// # Safety
/// HIP's contract for `kernelParams` / `extra`.
unsafe fn ext_module_launch(
    f: HipFunction,
    [global_x, global_y, global_z]: [u32; 3],
    [local_x, local_y, local_z]: [u32; 3],
    shared: usize,
    stream: HipStream,
    (kernel_params, extra): (*mut *mut c_void, *mut *mut c_void),
    (start_event, stop_event): (HipEvent, HipEvent),
) -> HipError {
    guard(|| {
        let func = rt()?.function(f as usize)?;
        if local_x == 0 || local_y == 0 || local_z == 0 {
            return Err(err::INVALID_VALUE);
        }
        let grid = Dim3::new(
            global_x.div_ceil(local_x),
            global_y.div_ceil(local_y),
            global_z.div_ceil(local_z),
        );
        let block = Dim3::new(local_x, local_y, local_z);
        // SAFETY: HIP contract for kernelParams / extra.
        unsafe {
            launch(
                (func, f as usize),
                (grid, block, shared),
                (kernel_params, extra),
                stream,
                (start_event, stop_event),
            )
        }
    })
}
