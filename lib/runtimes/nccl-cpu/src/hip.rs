//! The HIP runtime as this library calls it: entry points looked up in the
//! process's global scope (`dlsym(RTLD_DEFAULT)`), typed by `hip-api`'s
//! table. In an application that is the runtime it links (and, under
//! `hrr-cap`, the capture library's wrapper first, as for any library's
//! calls); `hrr-play` puts the CPU runtime it loaded into the global scope
//! before it loads this library.

use std::ffi::c_void;
use std::ptr::NonNull;

use api_table::Entry;
use hip_api::{MEMCPY_DEVICE_TO_HOST, MEMCPY_HOST_TO_DEVICE, args};

/// A HIP call that failed: its name and code.
#[derive(Debug)]
pub struct HipFailed {
    /// The entry point.
    pub call: &'static str,
    /// What it returned (-1: not found).
    pub code: i32,
}

fn lookup<A: Entry>() -> Result<A::Fn, HipFailed> {
    // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT searches the
    // global scope.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, A::SYMBOL.as_ptr()) };
    match NonNull::new(p) {
        // SAFETY: the global definition of this HIP entry point, whose C
        // signature is the table's.
        Some(p) => Ok(unsafe { A::fn_at(p) }),
        None => Err(HipFailed {
            call: A::NAME,
            code: -1,
        }),
    }
}

fn check(call: &'static str, code: i32) -> Result<(), HipFailed> {
    if code == 0 {
        Ok(())
    } else {
        Err(HipFailed { call, code })
    }
}

/// `hipSetDevice`.
pub fn set_device(device: i32) -> Result<(), HipFailed> {
    let f = lookup::<args::hipSetDevice>()?;
    // SAFETY: a plain call.
    check("hipSetDevice", unsafe { f(device) })
}

/// `hipGetDevice`.
pub fn get_device() -> Result<i32, HipFailed> {
    let f = lookup::<args::hipGetDevice>()?;
    let mut d = 0;
    // SAFETY: `d` is a valid out-parameter.
    check("hipGetDevice", unsafe { f(&mut d) })?;
    Ok(d)
}

/// `hipStreamSynchronize`.
pub fn stream_sync(stream: u64) -> Result<(), HipFailed> {
    let f = lookup::<args::hipStreamSynchronize>()?;
    // SAFETY: the stream the application passed to a collective.
    check("hipStreamSynchronize", unsafe { f(stream as *mut c_void) })
}

/// `hipMalloc`.
pub fn malloc(size: usize) -> Result<u64, HipFailed> {
    let f = lookup::<args::hipMalloc>()?;
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: `p` is a valid out-parameter.
    check("hipMalloc", unsafe { f(&mut p, size) })?;
    Ok(p as u64)
}

/// `hipFree`.
pub fn free(ptr: u64) -> Result<(), HipFailed> {
    let f = lookup::<args::hipFree>()?;
    // SAFETY: `ptr` came from `malloc` (or the application's, for ncclMemFree).
    check("hipFree", unsafe { f(ptr as *mut c_void) })
}

/// `hipMemset`.
pub fn memset(ptr: u64, value: i32, size: usize) -> Result<(), HipFailed> {
    let f = lookup::<args::hipMemset>()?;
    // SAFETY: the runtime checks the range against its allocations.
    check("hipMemset", unsafe { f(ptr as *mut c_void, value, size) })
}

/// Device memory at `src` into a new host buffer (`hipMemcpy`).
pub fn read(src: u64, len: usize) -> Result<Vec<u8>, HipFailed> {
    let mut v = vec![0u8; len];
    if len == 0 {
        return Ok(v);
    }
    let f = lookup::<args::hipMemcpy>()?;
    // SAFETY: `v` holds `len` bytes; the runtime checks the device side.
    check("hipMemcpy", unsafe {
        f(
            v.as_mut_ptr().cast(),
            src as *const c_void,
            len,
            MEMCPY_DEVICE_TO_HOST,
        )
    })?;
    Ok(v)
}

/// `bytes` into device memory at `dst` (`hipMemcpy`).
pub fn write(dst: u64, bytes: &[u8]) -> Result<(), HipFailed> {
    if bytes.is_empty() {
        return Ok(());
    }
    let f = lookup::<args::hipMemcpy>()?;
    // SAFETY: `bytes` is readable; the runtime checks the device side.
    check("hipMemcpy", unsafe {
        f(
            dst as *mut c_void,
            bytes.as_ptr().cast(),
            bytes.len(),
            MEMCPY_HOST_TO_DEVICE,
        )
    })
}
