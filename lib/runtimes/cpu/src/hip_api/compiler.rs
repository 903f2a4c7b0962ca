//! The compiler launch path: fat-binary and kernel registration (what
//! hipcc's host code calls from its constructors), the `<<<>>>` launch
//! configuration, and launches of a registered host stub.

use std::cell::RefCell;
use std::ffi::{CStr, c_void};

use ::hip_api::args;

use super::modules::{NO_EVENTS, launch};
use super::put;
use crate::error::guard;
use crate::error::guard_value;
use crate::ffi::{Dim3, HipError, HipStream, err};
use crate::runtime::rt;

thread_local! {
    static CALL_CONFIG: RefCell<Vec<(Dim3, Dim3, usize, usize)>> = const { RefCell::new(Vec::new()) };
}

pub(super) unsafe fn __hipRegisterFatBinary(a: args::__hipRegisterFatBinary) -> *mut *mut c_void {
    let args::__hipRegisterFatBinary { data } = a;

    guard_value(std::ptr::null_mut(), || match rt() {
        Ok(rt) => rt.register_fatbin(data as usize) as *mut *mut c_void,
        Err(_) => std::ptr::null_mut(),
    })
}

pub(super) unsafe fn __hipRegisterFunction(a: args::__hipRegisterFunction) {
    let args::__hipRegisterFunction {
        modules,
        hostFunction: host_function,
        deviceFunction: device_function,
        deviceName: device_name,
        threadLimit: _,
        tid: _,
        bid: _,
        blockDim: _,
        gridDim: _,
        wSize: _,
    } = a;

    let r = guard(|| {
        let name = if !device_name.is_null() {
            device_name
        } else {
            device_function.cast_const()
        };
        if name.is_null() || host_function.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: the compiler passes NUL-terminated kernel names.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        rt()?.register_function(modules as usize, host_function as usize, &name)
    });
    if r != err::SUCCESS {
        crate::log!("__hipRegisterFunction failed: {r}");
    }
}

pub(super) unsafe fn __hipUnregisterFatBinary(a: args::__hipUnregisterFatBinary) {
    let args::__hipUnregisterFatBinary { modules } = a;

    let _ = guard(|| rt()?.unregister_fatbin(modules as usize));
}

pub(super) unsafe fn __hipPushCallConfiguration(a: args::__hipPushCallConfiguration) -> HipError {
    let args::__hipPushCallConfiguration {
        gridDim: grid,
        blockDim: block,
        sharedMem: shared,
        stream,
    } = a;

    guard(|| {
        CALL_CONFIG.with(|c| c.borrow_mut().push((grid, block, shared, stream as usize)));
        Ok(())
    })
}

pub(super) unsafe fn __hipPopCallConfiguration(a: args::__hipPopCallConfiguration) -> HipError {
    let args::__hipPopCallConfiguration {
        gridDim: grid,
        blockDim: block,
        sharedMem: shared,
        stream,
    } = a;

    guard(|| {
        let (g, b, s, st) = CALL_CONFIG
            .with(|c| c.borrow_mut().pop())
            .ok_or(err::MISSING_CONFIGURATION)?;
        // SAFETY: the compiler passes valid out-parameters.
        unsafe {
            put(grid, g)?;
            put(block, b)?;
            put(shared, s)?;
            put(stream, st as HipStream)
        }
    })
}

pub(super) unsafe fn hipLaunchKernel(a: args::hipLaunchKernel) -> HipError {
    let args::hipLaunchKernel {
        function_address,
        numBlocks: num_blocks,
        dimBlocks: dim_blocks,
        args,
        sharedMemBytes: shared,
        stream,
    } = a;

    guard(|| {
        let func = rt()?.host_function(function_address as usize)?;
        // SAFETY: HIP contract: args[i] points at argument i.
        unsafe {
            launch(
                (func, function_address as usize),
                (num_blocks, dim_blocks, shared),
                (args, std::ptr::null_mut()),
                stream,
                NO_EVENTS,
            )
        }
    })
}

/// `hipLaunchKernel` recording `startEvent` and `stopEvent` (when non-null)
/// on the stream around the kernel; `flags` (`hipExtAnyOrderLaunch`) only
/// relaxes ordering, which a CPU stream does not exploit.
pub(super) unsafe fn hipExtLaunchKernel(a: args::hipExtLaunchKernel) -> HipError {
    let args::hipExtLaunchKernel {
        function_address,
        numBlocks: num_blocks,
        dimBlocks: dim_blocks,
        args,
        sharedMemBytes: shared,
        stream,
        startEvent: start_event,
        stopEvent: stop_event,
        flags: _,
    } = a;
    guard(|| {
        let func = rt()?.host_function(function_address as usize)?;
        // SAFETY: HIP contract: args[i] points at argument i.
        unsafe {
            launch(
                (func, function_address as usize),
                (num_blocks, dim_blocks, shared),
                (args, std::ptr::null_mut()),
                stream,
                (start_event, stop_event),
            )
        }
    })
}

/// A cooperative launch runs as an ordinary one: the CPU kernel ABI has no
/// grid-wide barrier for a kernel to wait at.
pub(super) unsafe fn hipLaunchCooperativeKernel(a: args::hipLaunchCooperativeKernel) -> HipError {
    let args::hipLaunchCooperativeKernel {
        f,
        gridDim: grid,
        blockDimX: block,
        kernelParams: params,
        sharedMemBytes: shared,
        stream,
    } = a;
    guard(|| {
        let func = rt()?.host_function(f as usize)?;
        // SAFETY: HIP contract: kernelParams[i] points at argument i.
        unsafe {
            launch(
                (func, f as usize),
                (grid, block, shared as usize),
                (params, std::ptr::null_mut()),
                stream,
                NO_EVENTS,
            )
        }
    })
}
