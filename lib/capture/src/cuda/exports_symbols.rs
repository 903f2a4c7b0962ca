//! NOT BUILT: awaiting its port to the runtime table (`cuda_api::cudart_fn!`)
//! and `exports/`'s generated handlers; `cuda/mod.rs` does not declare it.
//!
//! The CUDA runtime's symbol copies: `cudaMemcpyToSymbol`,
//! `cudaMemcpyFromSymbol` and their `Async` forms, with CUDA 13's
//! signatures. Unwrapped, the runtime reaches the driver in ways the driver
//! layer does not see as one copy (the symbol is resolved inside the
//! runtime, the copy may go through its private interface), so the runtime
//! call itself is recorded, once: the `memcpy` to or from the variable's
//! device address plus `offset`. The variable's `global` event comes from
//! the driver's `cuModuleGetGlobal`/`cuLibraryGetGlobal`, which the runtime
//! calls to resolve it (recorded at any depth); a copy to an address no
//! such event named is not recorded, with a warning (replay could not
//! translate it).

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::c_void;

use hrr_core::Dir;

use super::dir;
use super::ffi::{bytes, cuda_real, enter, missing, pointer_type, sync_stream};
use super::types::{self as cu, CudaError, CudaStream, MemcpyKind, stream_id};
use crate::record::recorder::{Copy, Recorder};

fn is_device(r: &Recorder, p: u64) -> bool {
    dir::device_side(r.is_device(p), || pointer_type(p))
}

/// The device address of `symbol`, through the real `cudaGetSymbolAddress`.
fn symbol_address(symbol: *const c_void) -> Option<u64> {
    type F = unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> CudaError;
    let f = cuda_real!(cudaGetSymbolAddress: F)?;
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: an out-pointer of ours; the runtime only looks the symbol up.
    let ret = unsafe { f(&mut p, symbol) };
    (ret == cu::SUCCESS && !p.is_null()).then_some(p as u64)
}

/// The shared body: forwarded, then recorded as the plain copy it is.
#[allow(clippy::too_many_arguments)]
fn symbol_copy<F: std::marker::Copy>(
    api: &'static str,
    real: Option<F>,
    call: impl FnOnce(F) -> CudaError,
    (symbol, other): (*const c_void, *mut c_void),
    (size, offset): (usize, usize),
    kind: MemcpyKind,
    to_symbol: bool,
    stream: Option<CudaStream>,
) -> CudaError {
    let Some(f) = real else {
        return missing(api);
    };
    let Some(g) = enter(api) else {
        return call(f);
    };
    let ret = call(f);
    g.run(|r| {
        let Some(base) = symbol_address(symbol) else {
            r.lose(api, "the symbol's device address could not be resolved");
            return;
        };
        if r.is_device(base).is_none() {
            r.lose(
                api,
                "no module global was recorded at the symbol's address; replay could not map it",
            );
            return;
        }
        let var = base + offset as u64;
        let (d, s) = if to_symbol {
            (var, other as u64)
        } else {
            (other as u64, var)
        };
        let dir = dir::resolve(kind, || is_device(r, d), || is_device(r, s));
        let data = match dir {
            _ if ret != cu::SUCCESS => None,
            Dir::H2d if r.is_device(s) != Some(true) => {
                // SAFETY: the runtime accepted and read `size` bytes at src.
                Some(unsafe { bytes(s as *const c_void, size) })
            }
            Dir::D2h if r.is_device(d) != Some(true) => {
                if let Some(st) = stream {
                    sync_stream(st as u64);
                }
                // SAFETY: the runtime wrote `size` bytes at dst, and the copy
                // has completed.
                Some(unsafe { bytes(d as *const c_void, size) })
            }
            _ => None,
        };
        let c = Copy {
            dir,
            dst: d,
            src: s,
            size: size as u64,
            stream: stream.map(|st| stream_id(st as u64)),
        };
        r.memcpy(api, ret, &c, data);
    });
    ret
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: MemcpyKind,
) -> CudaError {
    type F =
        unsafe extern "C" fn(*const c_void, *const c_void, usize, usize, MemcpyKind) -> CudaError;
    symbol_copy(
        "cudaMemcpyToSymbol",
        cuda_real!(cudaMemcpyToSymbol: F),
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(symbol, src, count, offset, kind) },
        (symbol, src.cast_mut()),
        (count, offset),
        kind,
        true,
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    kind: MemcpyKind,
    stream: CudaStream,
) -> CudaError {
    type F = unsafe extern "C" fn(
        *const c_void,
        *const c_void,
        usize,
        usize,
        MemcpyKind,
        CudaStream,
    ) -> CudaError;
    symbol_copy(
        "cudaMemcpyToSymbolAsync",
        cuda_real!(cudaMemcpyToSymbolAsync: F),
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(symbol, src, count, offset, kind, stream) },
        (symbol, src.cast_mut()),
        (count, offset),
        kind,
        true,
        Some(stream),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: MemcpyKind,
) -> CudaError {
    type F =
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, usize, MemcpyKind) -> CudaError;
    symbol_copy(
        "cudaMemcpyFromSymbol",
        cuda_real!(cudaMemcpyFromSymbol: F),
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, symbol, count, offset, kind) },
        (symbol, dst),
        (count, offset),
        kind,
        false,
        None,
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    kind: MemcpyKind,
    stream: CudaStream,
) -> CudaError {
    type F = unsafe extern "C" fn(
        *mut c_void,
        *const c_void,
        usize,
        usize,
        MemcpyKind,
        CudaStream,
    ) -> CudaError;
    symbol_copy(
        "cudaMemcpyFromSymbolAsync",
        cuda_real!(cudaMemcpyFromSymbolAsync: F),
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(dst, symbol, count, offset, kind, stream) },
        (symbol, dst),
        (count, offset),
        kind,
        false,
        Some(stream),
    )
}
