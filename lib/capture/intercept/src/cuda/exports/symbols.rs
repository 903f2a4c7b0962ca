//! The CUDA runtime's symbol copies (`cudaMemcpyToSymbol`,
//! `cudaMemcpyFromSymbol`, their `Async` forms and per-thread variants).
//! The runtime resolves the symbol inside itself and may copy through its
//! private interface, so the driver layer does not see one copy: the
//! runtime call is recorded, once, as the plain `memcpy` to or from the
//! variable's device address plus `offset`. The variable's `global` event
//! comes from the driver's `cuModuleGetGlobal`/`cuLibraryGetGlobal`, which
//! the runtime calls to resolve it (kept at any depth); a copy at an
//! address no such event named is not recorded, with a warning, since
//! replay could not translate it.

#![allow(non_snake_case)]

use std::ffi::c_void;

use api_table::Entry;
use cuda_api::runtime::args;
use cuda_api::runtime::types::*;

use super::memory::{DefaultStream, copy};
use super::{cuda_handlers, intercept};
use crate::cuda::ffi::{enter, quietly};
use crate::cuda::types as cu;
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::recorder::Order;

/// The device address of `symbol`, through the real `cudaGetSymbolAddress`
/// (quietly: a failed lookup is the recorder's, not the application's).
fn symbol_address(symbol: *const c_void) -> Option<u64> {
    static REAL: Real<args::cudaGetSymbolAddress> = Real::new();
    let f = REAL.get()?;
    let mut p: *mut c_void = std::ptr::null_mut();
    let a = args::cudaGetSymbolAddress {
        dev_ptr: &mut p,
        symbol,
    };
    // SAFETY: an out-pointer of ours; the runtime only looks the symbol up.
    quietly(|| ((), unsafe { a.call(f) }));
    (!p.is_null()).then_some(p as u64)
}

/// Which side of the copy the symbol is.
#[derive(Clone, Copy)]
enum Side {
    To,
    From,
}

/// The shared body: the variable's address resolved, then the copy
/// recorded as any copy between it and `other`.
///
/// # Safety
/// `a` holds the application's arguments for entry point `A`, valid under
/// its C contract; the other parameters are its copy's.
#[allow(clippy::too_many_arguments)]
unsafe fn symbol_copy<A: Entry<Ret = cudaError_t>>(
    real: &Real<A>,
    a: A,
    (symbol, other, side): (*const c_void, *mut c_void, Side),
    (size, offset): (usize, usize),
    kind: cudaMemcpyKind,
    stream: Option<(cudaStream_t, DefaultStream)>,
) -> cudaError_t {
    let var = symbol_address(symbol).filter(|&base| {
        enter(A::NAME).is_none_or(|g| g.run(|r| r.is_device(base).is_some()).unwrap_or(true))
    });
    let Some(base) = var else {
        // SAFETY: per this function's contract.
        return unsafe {
            intercept(real, a, Order::Free, |r, ret| {
                if ret == cu::SUCCESS {
                    r.lose(
                        A::NAME,
                        "no module global was recorded at the symbol's address; replay could not map it",
                    );
                }
            })
        };
    };
    let var = (base + offset as u64) as *mut c_void;
    let (dst, src) = match side {
        Side::To => (var, other.cast_const()),
        Side::From => (other, var.cast_const()),
    };
    // SAFETY: per this function's contract; `var` is the runtime's own
    // address for the variable.
    unsafe { copy(real, a, (dst, src, size), kind, stream) }
}

cuda_handlers! {
    [cudaMemcpyToSymbol, cudaMemcpyToSymbol_ptds] |real, a, api| {
        // SAFETY: the export's contract: `a` holds the application's arguments.
        unsafe { symbol_copy(real, a, (a.symbol, a.src.cast_mut(), Side::To), (a.size, a.offset), a.kind, None) }
    }
    [cudaMemcpyToSymbolAsync] |real, a, api| {
        // SAFETY: as above.
        unsafe { symbol_copy(real, a, (a.symbol, a.src.cast_mut(), Side::To), (a.size, a.offset), a.kind, Some((a.stream, DefaultStream::Legacy))) }
    }
    [cudaMemcpyToSymbolAsync_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe { symbol_copy(real, a, (a.symbol, a.src.cast_mut(), Side::To), (a.size, a.offset), a.kind, Some((a.stream, DefaultStream::PerThread))) }
    }
    [cudaMemcpyFromSymbol, cudaMemcpyFromSymbol_ptds] |real, a, api| {
        // SAFETY: as above.
        unsafe { symbol_copy(real, a, (a.symbol, a.dst, Side::From), (a.size, a.offset), a.kind, None) }
    }
    [cudaMemcpyFromSymbolAsync] |real, a, api| {
        // SAFETY: as above.
        unsafe { symbol_copy(real, a, (a.symbol, a.dst, Side::From), (a.size, a.offset), a.kind, Some((a.stream, DefaultStream::Legacy))) }
    }
    [cudaMemcpyFromSymbolAsync_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe { symbol_copy(real, a, (a.symbol, a.dst, Side::From), (a.size, a.offset), a.kind, Some((a.stream, DefaultStream::PerThread))) }
    }
}
