//! Symbols: the compiler path's `__hipRegisterVar` (a host shadow
//! variable naming a device variable of a registered fat binary) and what
//! takes such a symbol: `hipGetSymbolAddress`/`Size`,
//! `hipMemcpyToSymbol`/`FromSymbol` and their `Async` forms. On the CPU a
//! module's globals are its exported data symbols (`module.rs`); a symbol
//! resolves through its fat binary's module as `hipModuleGetGlobal` does
//! (`modules.rs`), and becomes device memory from then on.

use std::collections::HashMap;
use std::ffi::{CStr, c_void};
use std::sync::Mutex;

use ::hip_api::args;

use super::put;
use crate::error::guard;
use crate::ffi::{self, HipError, HipStream, err};
use crate::runtime::{lock, rt};
use crate::stream::Op;

/// Host shadow variable → (fat binary handle, device variable name).
static VARS: Mutex<Option<HashMap<usize, (usize, String)>>> = Mutex::new(None);

/// Address and size of the device variable behind host shadow `symbol`.
fn symbol(symbol: *const c_void) -> Result<(usize, usize), HipError> {
    let (fatbin, name) = lock(&VARS)
        .as_ref()
        .and_then(|v| v.get(&(symbol as usize)).cloned())
        .ok_or(err::INVALID_SYMBOL)?;
    let rt = rt()?;
    let m = rt.fatbin_module(fatbin)?;
    let (p, size) = m.global(&name).map_err(|_| {
        crate::log!("symbol {name}: not a global of its fat binary");
        err::INVALID_SYMBOL
    })?;
    // As `hipModuleGetGlobal`: from now on it is device memory for copies.
    rt.mem().register_global(p, size)?;
    Ok((p, size))
}

pub(super) unsafe fn __hipRegisterVar(a: args::__hipRegisterVar) {
    let args::__hipRegisterVar {
        modules,
        var,
        deviceVar: device_var,
        ..
    } = a;
    let r = guard(|| {
        if var.is_null() || device_var.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: the compiler passes the device variable's NUL-terminated name.
        let name = unsafe { CStr::from_ptr(device_var) }
            .to_string_lossy()
            .into_owned();
        lock(&VARS)
            .get_or_insert_with(HashMap::new)
            .insert(var as usize, (modules as usize, name));
        Ok(())
    });
    if r != err::SUCCESS {
        crate::log!("__hipRegisterVar failed: {r}");
    }
}

pub(super) unsafe fn hipGetSymbolAddress(a: args::hipGetSymbolAddress) -> HipError {
    guard(|| {
        let (p, _) = symbol(a.symbol)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(a.devPtr, p as *mut c_void) }
    })
}

pub(super) unsafe fn hipGetSymbolSize(a: args::hipGetSymbolSize) -> HipError {
    guard(|| {
        let (_, size) = symbol(a.symbol)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(a.size, size) }
    })
}

/// A copy of `len` bytes to (`to_symbol`) or from `offset` bytes into the
/// variable behind `sym`; `other` is the other side, of the kind's memory.
///
/// # Safety
/// HIP's contract for the host operand.
unsafe fn symbol_copy(
    sym: *const c_void,
    other: usize,
    (len, offset): (usize, usize),
    kind: ffi::HipMemcpyKind,
    to_symbol: bool,
    stream: HipStream,
) -> Result<(), HipError> {
    let (base, size) = symbol(sym)?;
    if offset.checked_add(len).is_none_or(|end| end > size) {
        return Err(err::INVALID_VALUE);
    }
    let rt = rt()?;
    let target = rt.target(stream as usize)?;
    let var = base + offset;
    let (dst, src) = if to_symbol {
        (var, other)
    } else {
        (other, var)
    };
    rt.check_copy(dst, src, len, kind)?;
    if len == 0 {
        return Ok(());
    }
    // SAFETY: the variable's side was just checked against live device
    // memory (its module is loaded); the other per this function's contract.
    let op = unsafe { Op::copy(dst, src, len) };
    rt.submit(&target, op)
}

pub(super) unsafe fn hipMemcpyToSymbol(a: args::hipMemcpyToSymbol) -> HipError {
    let args::hipMemcpyToSymbol {
        symbol,
        src,
        sizeBytes: len,
        offset,
        kind,
    } = a;
    // SAFETY: HIP contract.
    guard(|| unsafe {
        symbol_copy(
            symbol,
            src as usize,
            (len, offset),
            kind,
            true,
            std::ptr::null_mut(),
        )
    })
}

pub(super) unsafe fn hipMemcpyToSymbolAsync(a: args::hipMemcpyToSymbolAsync) -> HipError {
    let args::hipMemcpyToSymbolAsync {
        symbol,
        src,
        sizeBytes: len,
        offset,
        kind,
        stream,
    } = a;
    // SAFETY: HIP contract.
    guard(|| unsafe { symbol_copy(symbol, src as usize, (len, offset), kind, true, stream) })
}

pub(super) unsafe fn hipMemcpyFromSymbol(a: args::hipMemcpyFromSymbol) -> HipError {
    let args::hipMemcpyFromSymbol {
        dst,
        symbol,
        sizeBytes: len,
        offset,
        kind,
    } = a;
    // SAFETY: HIP contract.
    guard(|| unsafe {
        symbol_copy(
            symbol,
            dst as usize,
            (len, offset),
            kind,
            false,
            std::ptr::null_mut(),
        )
    })
}

pub(super) unsafe fn hipMemcpyFromSymbolAsync(a: args::hipMemcpyFromSymbolAsync) -> HipError {
    let args::hipMemcpyFromSymbolAsync {
        dst,
        symbol,
        sizeBytes: len,
        offset,
        kind,
        stream,
    } = a;
    // SAFETY: HIP contract.
    guard(|| unsafe { symbol_copy(symbol, dst as usize, (len, offset), kind, false, stream) })
}
