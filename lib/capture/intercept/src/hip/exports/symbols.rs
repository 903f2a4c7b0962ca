//! Recorded handlers of module globals and symbols. A global's address is
//! made known to replay by a `global` event (module, name, code object,
//! address, size: replay maps it to its own copy of the variable) the first
//! time the capture sees it: `hipGetSymbolAddress`, `hipGetSymbolSize`,
//! or a symbol copy (`hipModuleGetGlobal` is `module`'s). A symbol copy
//! (`hipMemcpyToSymbol`, `hipMemcpyFromSymbol`, their `Async` forms) is
//! then recorded once, as the plain `memcpy` to or from the variable's
//! device address (plus `offset`) that it is. `__hipRegisterVar` records
//! nothing: it tells the capture which fat binary and name a host shadow
//! variable stands for.

use std::ffi::c_void;

use api_table::Entry;
use hip_api::args;
use hrr_core::Dir;

use super::memory::sync_stream;
use super::{intercept, resolve_dir};
use crate::capture::Guard;
use crate::hip::types::{self as hip, HipError, HipStream};
use hrr_interpose::call_args::{bytes, c_str};
use hrr_interpose::exports::missing;
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::recorder::Order;
use hrr_recorder::record::recorder::{Copy, Recorder};

#[inline]
pub unsafe fn __hipRegisterVar(
    real: &'static Real<args::__hipRegisterVar>,
    a: args::__hipRegisterVar,
) {
    let Some(f) = real.get() else {
        return missing::<args::__hipRegisterVar>();
    };
    let g = Guard::enter("__hipRegisterVar");
    // SAFETY: the export's contract: the application's arguments.
    unsafe { a.call(f) };
    if let Some(g) = g {
        g.run(|r| {
            // SAFETY: the variable's C string name the runtime just read.
            let name = unsafe { c_str(a.deviceVar) };
            if !r.code().add_var(a.var as u64, a.modules as u64, &name) {
                r.warn(&format!(
                    "__hipRegisterVar: variable {name} of unknown fat binary {:#x}",
                    a.modules as u64
                ));
            }
        });
    }
}

/// Records the `global` of host shadow `symbol` (at `ptr`, `size` bytes)
/// unless the capture knows the address already.
fn symbol_global(r: &Recorder, api: &str, symbol: u64, ptr: u64, size: u64) {
    if ptr == 0 || r.is_device(ptr).is_some() {
        return;
    }
    let Some(var) = r.code().var(symbol) else {
        r.warn(&format!("{api}: symbol {symbol:#x} was never registered"));
        return;
    };
    let module = var
        .fatbin
        .module(|| super::launch::load_fatbin(r, &var.fatbin));
    match module {
        Ok(m) => r.global(api, 0, var.handle, &var.name, m.code, ptr, size),
        Err(why) => r.warn(&format!("{api}: symbol {}: {why}", var.name)),
    }
}

/// Address and size of the variable behind `symbol`, through the runtime.
fn resolve(symbol: *const c_void) -> Option<(u64, u64)> {
    static ADDR: Real<args::hipGetSymbolAddress> = Real::new();
    static SIZE: Real<args::hipGetSymbolSize> = Real::new();
    let (mut p, mut size): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
    let a = args::hipGetSymbolAddress {
        devPtr: &mut p,
        symbol,
    };
    let s = args::hipGetSymbolSize {
        size: &mut size,
        symbol,
    };
    // SAFETY: out-pointers of ours; the runtime only looks the symbol up.
    let ok = unsafe {
        a.call(ADDR.get()?) == hip::err::SUCCESS && s.call(SIZE.get()?) == hip::err::SUCCESS
    };
    ok.then_some((p as u64, size as u64))
}

#[inline]
pub unsafe fn hipGetSymbolAddress(
    real: &'static Real<args::hipGetSymbolAddress>,
    a: args::hipGetSymbolAddress,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            if ret == hip::err::SUCCESS
                && let Some((p, size)) = resolve(a.symbol)
            {
                symbol_global(r, api, a.symbol as u64, p, size);
            }
        })
    }
}

#[inline]
pub unsafe fn hipGetSymbolSize(
    real: &'static Real<args::hipGetSymbolSize>,
    a: args::hipGetSymbolSize,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        intercept(real, a, Order::Lifecycle, |r, api, ret| {
            if ret == hip::err::SUCCESS
                && let Some((p, size)) = resolve(a.symbol)
            {
                symbol_global(r, api, a.symbol as u64, p, size);
            }
        })
    }
}

/// The shared body of a symbol copy: forwarded, then recorded as the
/// `global` (first time) and the plain copy to or from its address.
///
/// # Safety
/// `a` holds the application's arguments; the rest are its copy's operands.
#[allow(clippy::too_many_arguments)]
unsafe fn symbol_copy<A: Entry<Ret = HipError>>(
    real: &Real<A>,
    a: A,
    (symbol, other): (*const c_void, *mut c_void),
    (len, offset): (usize, usize),
    kind: hip::HipMemcpyKind,
    to_symbol: bool,
    stream: Option<HipStream>,
) -> HipError {
    let api = A::NAME;
    let Some(f) = real.get() else {
        return missing::<A>();
    };
    let Some(g) = Guard::enter(api) else {
        // SAFETY: per this function's contract.
        return unsafe { a.call(f) };
    };
    // SAFETY: per this function's contract.
    let ret = unsafe { a.call(f) };
    g.run(|r| {
        let Some((base, size)) = resolve(symbol) else {
            r.lose(api, "the symbol's address could not be resolved");
            return;
        };
        symbol_global(r, api, symbol as u64, base, size);
        let var = base + offset as u64;
        let (dst, src) = if to_symbol {
            (var, other as u64)
        } else {
            (other as u64, var)
        };
        let dir = resolve_dir(r, kind, dst, src);
        let data = match dir {
            _ if ret != hip::err::SUCCESS => None,
            Dir::H2d if r.is_device(src) != Some(true) => {
                // SAFETY: the runtime accepted and read `len` bytes at src.
                Some(unsafe { bytes(src as *const c_void, len) })
            }
            Dir::D2h if r.is_device(dst) != Some(true) => {
                if let Some(s) = stream {
                    sync_stream(s);
                }
                // SAFETY: the runtime wrote `len` bytes at dst, and the copy
                // has completed.
                Some(unsafe { bytes(dst as *const c_void, len) })
            }
            _ => None,
        };
        let c = Copy {
            dir,
            dst,
            src,
            size: len as u64,
            stream: stream.map(|s| s as u64),
        };
        r.memcpy(api, ret, &c, data);
    });
    ret
}

#[inline]
pub unsafe fn hipMemcpyToSymbol(
    real: &'static Real<args::hipMemcpyToSymbol>,
    a: args::hipMemcpyToSymbol,
) -> HipError {
    let (s, o) = (a.symbol, a.src.cast_mut());
    // SAFETY: the export's contract: the application's arguments.
    unsafe { symbol_copy(real, a, (s, o), (a.sizeBytes, a.offset), a.kind, true, None) }
}

#[inline]
pub unsafe fn hipMemcpyToSymbolAsync(
    real: &'static Real<args::hipMemcpyToSymbolAsync>,
    a: args::hipMemcpyToSymbolAsync,
) -> HipError {
    let (s, o) = (a.symbol, a.src.cast_mut());
    let st = Some(a.stream);
    // SAFETY: the export's contract: the application's arguments.
    unsafe { symbol_copy(real, a, (s, o), (a.sizeBytes, a.offset), a.kind, true, st) }
}

#[inline]
pub unsafe fn hipMemcpyFromSymbol(
    real: &'static Real<args::hipMemcpyFromSymbol>,
    a: args::hipMemcpyFromSymbol,
) -> HipError {
    let (s, o) = (a.symbol, a.dst);
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        symbol_copy(
            real,
            a,
            (s, o),
            (a.sizeBytes, a.offset),
            a.kind,
            false,
            None,
        )
    }
}

#[inline]
pub unsafe fn hipMemcpyFromSymbolAsync(
    real: &'static Real<args::hipMemcpyFromSymbolAsync>,
    a: args::hipMemcpyFromSymbolAsync,
) -> HipError {
    let (s, o) = (a.symbol, a.dst);
    let st = Some(a.stream);
    // SAFETY: the export's contract: the application's arguments.
    unsafe { symbol_copy(real, a, (s, o), (a.sizeBytes, a.offset), a.kind, false, st) }
}
