//! The thread's last error and error names.

use std::ffi::c_char;

use ::hip_api::args;

use crate::error::{self, guard_value};
use crate::ffi::{HipError, err};

pub(super) unsafe fn hipGetLastError(a: args::hipGetLastError) -> HipError {
    let args::hipGetLastError {} = a;

    guard_value(err::UNKNOWN, error::take_last)
}

pub(super) unsafe fn hipPeekAtLastError(a: args::hipPeekAtLastError) -> HipError {
    let args::hipPeekAtLastError {} = a;

    guard_value(err::UNKNOWN, error::peek_last)
}

pub(super) unsafe fn hipGetErrorString(a: args::hipGetErrorString) -> *const c_char {
    let args::hipGetErrorString { hipError: e } = a;

    guard_value(c"unknown error".as_ptr(), || {
        error::error_string(e).as_ptr()
    })
}

pub(super) unsafe fn hipGetErrorName(a: args::hipGetErrorName) -> *const c_char {
    let args::hipGetErrorName { hip_error: e } = a;

    guard_value(c"hipErrorUnknown".as_ptr(), || {
        error::error_name(e).as_ptr()
    })
}
