//! Per-thread last error, the panic guard of every export, and error names.

use crate::ffi::{HipError, HsaStatus, err, hsa_status};
use std::cell::Cell;
use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    static LAST_ERROR: Cell<HipError> = const { Cell::new(0) };
}

/// Remembers a failure as this thread's last error (CUDA semantics: successes
/// and hipErrorNotReady leave it alone).
pub fn record(e: HipError) -> HipError {
    if e != err::SUCCESS && e != err::NOT_READY {
        LAST_ERROR.with(|c| c.set(e));
    }
    e
}

/// The thread's last error (`hipGetLastError`), reset to success.
pub fn take_last() -> HipError {
    LAST_ERROR.with(|c| c.replace(err::SUCCESS))
}

/// The thread's last error, kept (`hipPeekAtLastError`).
pub fn peek_last() -> HipError {
    LAST_ERROR.with(Cell::get)
}

/// Runs an export body: no panic crosses the FFI boundary (→ hipErrorUnknown), and
/// failures become the thread's last error.
pub fn guard(f: impl FnOnce() -> Result<(), HipError>) -> HipError {
    let r = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => err::SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => err::UNKNOWN,
    };
    record(r)
}

/// The HSA flavour of [`guard`].
pub fn guard_hsa(f: impl FnOnce() -> Result<HsaStatus, HsaStatus>) -> HsaStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(s)) | Ok(Err(s)) => s,
        Err(_) => hsa_status::ERROR,
    }
}

/// A guard for exports that return something other than a status.
pub fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

macro_rules! table {
    ($($code:expr => $name:literal, $text:literal;)*) => {
        /// The code's name, `hipErrorInvalidValue` style.
        pub fn error_name(e: HipError) -> &'static CStr {
            match e { $($code => $name,)* _ => c"hipErrorUnknown" }
        }
        /// The code's description.
        pub fn error_string(e: HipError) -> &'static CStr {
            match e { $($code => $text,)* _ => c"unknown error" }
        }
    };
}

table! {
    0 => c"hipSuccess", c"no error";
    1 => c"hipErrorInvalidValue", c"invalid argument";
    2 => c"hipErrorOutOfMemory", c"out of memory";
    3 => c"hipErrorNotInitialized", c"initialization error";
    4 => c"hipErrorDeinitialized", c"driver shutting down";
    9 => c"hipErrorInvalidConfiguration", c"invalid configuration argument";
    12 => c"hipErrorInvalidPitchValue", c"invalid pitch argument";
    13 => c"hipErrorInvalidSymbol", c"invalid device symbol";
    17 => c"hipErrorInvalidDevicePointer", c"invalid device pointer";
    21 => c"hipErrorInvalidMemcpyDirection", c"invalid copy direction for memcpy";
    35 => c"hipErrorInsufficientDriver", c"driver version is insufficient for runtime version";
    52 => c"hipErrorMissingConfiguration", c"__global__ function call is not configured";
    53 => c"hipErrorPriorLaunchFailure", c"unspecified launch failure in prior launch";
    98 => c"hipErrorInvalidDeviceFunction", c"invalid device function";
    100 => c"hipErrorNoDevice", c"no ROCm-capable device is detected";
    101 => c"hipErrorInvalidDevice", c"invalid device ordinal";
    200 => c"hipErrorInvalidImage", c"device kernel image is invalid";
    201 => c"hipErrorInvalidContext", c"invalid device context";
    209 => c"hipErrorNoBinaryForGpu", c"no kernel image is available for execution on the device";
    301 => c"hipErrorFileNotFound", c"file not found";
    302 => c"hipErrorSharedObjectSymbolNotFound", c"shared object symbol not found";
    303 => c"hipErrorSharedObjectInitFailed", c"shared object initialization failed";
    304 => c"hipErrorOperatingSystem", c"OS call failed or operation not supported on this OS";
    400 => c"hipErrorInvalidHandle", c"invalid resource handle";
    401 => c"hipErrorIllegalState", c"the operation cannot be performed in the present state";
    500 => c"hipErrorNotFound", c"named symbol not found";
    600 => c"hipErrorNotReady", c"device not ready";
    700 => c"hipErrorIllegalAddress", c"an illegal memory access was encountered";
    701 => c"hipErrorLaunchOutOfResources", c"too many resources requested for launch";
    712 => c"hipErrorHostMemoryAlreadyRegistered", c"part or all of the requested memory range is already mapped";
    713 => c"hipErrorHostMemoryNotRegistered", c"pointer does not correspond to a registered memory region";
    719 => c"hipErrorLaunchFailure", c"unspecified launch failure";
    801 => c"hipErrorNotSupported", c"operation not supported";
    999 => c"hipErrorUnknown", c"unknown error";
}

/// `HRR_CPU_LOG=1` turns on diagnostics on stderr.
pub fn log_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("HRR_CPU_LOG").is_some_and(|v| !v.is_empty() && v != "0"))
}

#[macro_export]
#[doc(hidden)]
macro_rules! log {
    ($($t:tt)*) => {
        if $crate::error::log_enabled() {
            eprintln!("hrr-runtime-cpu: {}", format!($($t)*));
        }
    };
}
