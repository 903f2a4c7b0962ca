//! `hipGetProcAddress`, and the table of every exported HIP entry point.
//!
//! Debian's HIP 5.2 headers do not declare `hipGetProcAddress` (it arrived
//! with ROCm 6), so the wrapper has ROCm 6's signature:
//! `hipError_t hipGetProcAddress(const char *symbol, void **pfn, int
//! hipVersion, uint64_t flags, hipDriverProcAddressQueryResult *symbolStatus)`.
//! An application that looks entry points up this way gets the recording
//! wrappers, so calls made through the returned pointers are recorded too.
//! When the runtime has no `hipGetProcAddress` of its own (the CPU runtime,
//! ROCm 5), the wrapper answers itself from `dlsym(RTLD_NEXT)`.

use std::ffi::{CStr, c_char, c_int, c_void};

use super::real;
use crate::hip::types::{self as hip, HipError, ProcAddressQueryResult};

macro_rules! wrappers {
    ($($module:ident :: $name:ident),* $(,)?) => {
        /// Every HIP symbol this library exports.
        pub const EXPORTED: &[&str] = &[$(stringify!($name)),*];

        /// The recording wrapper for `name`, if there is one.
        fn wrapper(name: &[u8]) -> Option<*mut c_void> {
            $(
                if name == stringify!($name).as_bytes() {
                    return Some(super::$module::$name as *const () as *mut c_void);
                }
            )*
            None
        }
    };
}

wrappers!(
    memory::hipMalloc,
    memory::hipExtMallocWithFlags,
    memory::hipHostMalloc,
    memory::hipMallocHost,
    memory::hipMallocManaged,
    memory::hipFree,
    memory::hipHostFree,
    memory::hipFreeHost,
    memory::hipHostRegister,
    memory::hipHostUnregister,
    memory::hipMemcpy,
    memory::hipMemcpyWithStream,
    memory::hipMemcpyAsync,
    memory::hipMemcpyHtoD,
    memory::hipMemcpyDtoH,
    memory::hipMemcpyDtoD,
    memory::hipMemcpyHtoDAsync,
    memory::hipMemcpyDtoHAsync,
    memory::hipMemcpyDtoDAsync,
    memory::hipMemset,
    memory::hipMemsetAsync,
    memory::hipMemsetD8,
    memory::hipMemsetD8Async,
    memory::hipMemsetD16,
    memory::hipMemsetD16Async,
    memory::hipMemsetD32,
    memory::hipMemsetD32Async,
    sync::hipStreamCreate,
    sync::hipStreamCreateWithFlags,
    sync::hipStreamCreateWithPriority,
    sync::hipStreamDestroy,
    sync::hipStreamSynchronize,
    sync::hipStreamWaitEvent,
    sync::hipEventCreate,
    sync::hipEventCreateWithFlags,
    sync::hipEventDestroy,
    sync::hipEventRecord,
    sync::hipEventSynchronize,
    sync::hipDeviceSynchronize,
    sync::hipSetDevice,
    module::hipModuleLoad,
    module::hipModuleLoadData,
    module::hipModuleLoadDataEx,
    module::hipModuleUnload,
    module::hipModuleGetFunction,
    module::__hipRegisterFatBinary,
    module::__hipRegisterFunction,
    module::__hipUnregisterFatBinary,
    module::__hipPushCallConfiguration,
    module::__hipPopCallConfiguration,
    launch::hipModuleLaunchKernel,
    launch::hipExtModuleLaunchKernel,
    launch::hipLaunchKernel,
    proc_address::hipGetProcAddress,
);

const INVALID_VALUE: HipError = 1;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    hip_version: c_int,
    flags: u64,
    status: *mut ProcAddressQueryResult,
) -> HipError {
    type F = unsafe extern "C" fn(
        *const c_char,
        *mut *mut c_void,
        c_int,
        u64,
        *mut ProcAddressQueryResult,
    ) -> HipError;
    if let Some(f) = real!(hipGetProcAddress: F) {
        // SAFETY: the application's arguments, forwarded unchanged.
        let ret = unsafe { f(symbol, pfn, hip_version, flags, status) };
        if ret == hip::err::SUCCESS && !symbol.is_null() && !pfn.is_null() {
            // SAFETY: symbol is the C string the runtime just resolved; on
            // success the runtime wrote *pfn, which we may overwrite.
            unsafe {
                if let (false, Some(w)) =
                    ((*pfn).is_null(), wrapper(CStr::from_ptr(symbol).to_bytes()))
                {
                    *pfn = w;
                }
            }
        }
        return ret;
    }
    if symbol.is_null() || pfn.is_null() {
        return INVALID_VALUE;
    }
    // SAFETY: symbol is a non-null C string from the application.
    let name = unsafe { CStr::from_ptr(symbol) };
    let found =
        crate::interpose::sys::dlsym_next(name).map(|p| wrapper(name.to_bytes()).unwrap_or(p));
    let (ret, st) = match found {
        Some(_) => (hip::err::SUCCESS, hip::PROC_ADDRESS_SUCCESS),
        None => (hip::err::NOT_FOUND, hip::PROC_ADDRESS_SYMBOL_NOT_FOUND),
    };
    // SAFETY: pfn is non-null and writable (an out-parameter); status may be null.
    unsafe {
        *pfn = found.unwrap_or(std::ptr::null_mut());
        if !status.is_null() {
            *status = st;
        }
    }
    ret
}
