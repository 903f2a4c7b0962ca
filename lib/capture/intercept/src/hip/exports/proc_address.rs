//! `hipGetProcAddress`, and the map from every table entry's name to its
//! exported wrapper.
//!
//! Debian's HIP 5.2 headers do not declare `hipGetProcAddress` (it arrived
//! with ROCm 6), so the wrapper has ROCm 6's signature:
//! `hipError_t hipGetProcAddress(const char *symbol, void **pfn, int
//! hipVersion, uint64_t flags, hipDriverProcAddressQueryResult *symbolStatus)`.
//! An application that looks entry points up this way gets this library's
//! wrapper for every table entry, so calls made through the returned
//! pointers are recorded (or counted) as direct calls are.
//! When the runtime has no `hipGetProcAddress` of its own (the CPU runtime,
//! ROCm 5), the wrapper answers itself from `dlsym(RTLD_NEXT)`.

use std::ffi::{CStr, c_void};

use api_table::Entry;
use hip_api::args;

use crate::hip::types::{self as hip, HipError};
use hrr_interpose::real_fn::Real;

/// Callback of the table's list: [`EXPORTED`] and [`wrapper`] over every
/// entry point.
macro_rules! wrappers {
    ($($name:ident)*) => {
        /// Every HIP symbol this library exports: the whole table.
        pub const EXPORTED: &[&str] = &[$(stringify!($name)),*];

        /// The exported wrapper for `name`, if the table has it.
        fn wrapper(name: &[u8]) -> Option<*mut c_void> {
            match name {
                $(
                    n if n == stringify!($name).as_bytes() => {
                        Some(super::$name as *const () as *mut c_void)
                    }
                )*
                _ => None,
            }
        }
    };
}
hip_api::hip_fns!(wrappers, []);

const INVALID_VALUE: HipError = 1;

#[inline]
pub unsafe fn hipGetProcAddress(
    real: &'static Real<args::hipGetProcAddress>,
    a: args::hipGetProcAddress,
) -> HipError {
    let (symbol, pfn, status) = (a.symbol, a.pfn, a.symbolStatus);
    if let Some(f) = real.get() {
        // SAFETY: the export's contract: the application's arguments.
        let ret = unsafe { a.call(f) };
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
    let found = hrr_interpose::dl::dlsym_next(name).map(|p| wrapper(name.to_bytes()).unwrap_or(p));
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
