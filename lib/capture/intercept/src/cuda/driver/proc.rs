//! `cuGetProcAddress` (v1 and `_v2`) and `cudaGetDriverEntryPoint`
//! (+`ByVersion`): the driver's own lookup, answered with this library's
//! wrappers (see `routes`).
//!
//! `cudaGetDriverEntryPoint*` are the shared runtime's: they call
//! `cuGetProcAddress` through the pointer the runtime obtained, which is
//! this library's wrapper once the runtime's `dlsym(libcuda,
//! "cuGetProcAddress_v2")` was routed, so their answers are routed already.
//! They are wrapped as well, mapping the answer through the same table
//! (an answer that is a wrapper already stays as it is), for a runtime that
//! would look the driver up some other way: their exports are generated
//! from `cuda-api`'s runtime table (`cuda::exports`), their handlers are
//! here.

#![allow(non_snake_case)]

use std::ffi::{CStr, c_char, c_void};

use api_table::Entry;
use cuda_api::runtime::args as rt;
use cuda_api::runtime::types::cudaError_t;
use cuda_api::types::*;
use cuda_api::{CUDA_SUCCESS, CUresult};

use super::api::{Sym, missing};
use super::libcuda;
use super::routes::Route;
use crate::cuda::log::diag;
use hrr_interpose::count_stubs;
use hrr_interpose::real_fn::Real;
use hrr_interpose::unrecorded;

/// What the program gets for `name`, answered `real`, routed `route`.
pub fn hand_out(name: &[u8], real: *mut c_void, route: Route, via: &str) -> *mut c_void {
    match route {
        Route::Wrapper(w) => w as *mut c_void,
        Route::Real => real,
        Route::Unrecorded => {
            let n = String::from_utf8_lossy(name);
            match count_stubs::stub_for(real as usize, &n) {
                Some(s) => {
                    diag(|| format!("{via}: {n} is not recorded; its calls are counted"));
                    s as *mut c_void
                }
                None => {
                    unrecorded::lookup(&n);
                    diag(|| format!("{via}: {n} is not recorded and no counting stub is left"));
                    real
                }
            }
        }
    }
}

/// Routes a successful lookup's answer in `*pfn` in place.
///
/// # Safety
/// `symbol` is null or a C string; `pfn` null or writable, holding the
/// driver's answer.
unsafe fn route_answer(symbol: *const c_char, pfn: *mut *mut c_void, via: &str) {
    if symbol.is_null() || pfn.is_null() {
        return;
    }
    // SAFETY: per the contract.
    let (name, real) = unsafe { (CStr::from_ptr(symbol).to_bytes(), *pfn) };
    if real.is_null() {
        return;
    }
    let Some(lib) = libcuda::get() else {
        return;
    };
    if via.starts_with("cuda") {
        // Whether the runtime's own cuGetProcAddress (this library's, when
        // its dlsym was routed) had routed the answer already.
        diag(|| {
            format!(
                "{via}({}): {}",
                String::from_utf8_lossy(name),
                if lib.table.is_wrapper(real as usize) {
                    "already this library's wrapper (routed by cuGetProcAddress)"
                } else {
                    "the driver's own address: routed here"
                }
            )
        });
    }
    let routed = std::panic::catch_unwind(|| {
        hand_out(name, real, lib.table.route_proc(name, real as usize), via)
    })
    .unwrap_or(real);
    // SAFETY: per the contract.
    unsafe { *pfn = routed };
}

/// The driver table's callback for the two lookups: the export, with the
/// table line's parameters, hands them to [`lookup`].
macro_rules! lookup_export {
    ($name:ident ( $($p:ident : $t:ty),* $(,)? ) -> $r:ty) => {
        #[doc = concat!("`", stringify!($name), "`, interposed: the driver's answer, routed to this library's wrapper where it has one.")]
        ///
        /// # Safety
        /// The driver's: the arguments must meet this entry point's C contract
        /// in `cuda.h`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($p: $t),*) -> $r {
            // SAFETY: the application's arguments, under the C contract.
            unsafe { lookup(Sym::$name, cuda_api::args::$name { $($p),* }) }
        }
        // The export has exactly the table's type.
        const _: cuda_api::fns::$name = $name;
    };
}
// `CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int
// cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)`.
cuda_api::cuda_fn!(cuGetProcAddress_v2, lookup_export, []);
// `CUresult cuGetProcAddress(const char *symbol, void **pfn, int
// cudaVersion, cuuint64_t flags)` (CUDA 11.3's, still exported).
cuda_api::cuda_fn!(cuGetProcAddress, lookup_export, []);

/// The symbol asked for and where the answer goes, of a lookup's arguments.
trait Lookup: Entry<Ret = CUresult> {
    fn symbol_and_pfn(&self) -> (*const c_char, *mut *mut c_void);
}
impl Lookup for cuda_api::args::cuGetProcAddress_v2 {
    fn symbol_and_pfn(&self) -> (*const c_char, *mut *mut c_void) {
        (self.symbol, self.pfn)
    }
}
impl Lookup for cuda_api::args::cuGetProcAddress {
    fn symbol_and_pfn(&self) -> (*const c_char, *mut *mut c_void) {
        (self.symbol, self.pfn)
    }
}

/// Forwards a lookup to the driver's function (`sym`), then routes a
/// successful answer.
///
/// # Safety
/// `a` holds the application's arguments for lookup `A`, valid under its C
/// contract.
unsafe fn lookup<A: Lookup>(sym: Sym, a: A) -> CUresult {
    let Some(real) = super::api::real::<A>(sym) else {
        return missing(A::NAME);
    };
    let (symbol, pfn) = a.symbol_and_pfn();
    // SAFETY: per this function's contract, forwarded unchanged.
    let ret = unsafe { a.call(real) };
    if ret == CUDA_SUCCESS {
        // SAFETY: the driver accepted them: a C string and a written pfn.
        unsafe { route_answer(symbol, pfn, A::NAME) };
    }
    ret
}

/// `cudaGetDriverEntryPoint`'s handler (the export is generated from the
/// runtime table, `cuda::exports`): forwarded, a successful answer routed.
///
/// # Safety
/// The export's contract: `a` holds the application's arguments, valid
/// under the runtime's C contract.
pub unsafe fn cudaGetDriverEntryPoint(
    real: &'static Real<rt::cudaGetDriverEntryPoint>,
    a: rt::cudaGetDriverEntryPoint,
) -> cudaError_t {
    let Some(f) = real.get() else {
        return crate::cuda::ffi::missing("cudaGetDriverEntryPoint");
    };
    // SAFETY: the export's contract: `a` holds the application's arguments.
    let ret = unsafe { a.call(f) };
    if ret == 0 {
        // SAFETY: the runtime accepted them: a C string and a written pointer.
        unsafe { route_answer(a.symbol, a.func, "cudaGetDriverEntryPoint") };
    }
    ret
}

/// `cudaGetDriverEntryPointByVersion`'s handler: as
/// [`cudaGetDriverEntryPoint`].
///
/// # Safety
/// As [`cudaGetDriverEntryPoint`].
pub unsafe fn cudaGetDriverEntryPointByVersion(
    real: &'static Real<rt::cudaGetDriverEntryPointByVersion>,
    a: rt::cudaGetDriverEntryPointByVersion,
) -> cudaError_t {
    let Some(f) = real.get() else {
        return crate::cuda::ffi::missing("cudaGetDriverEntryPointByVersion");
    };
    // SAFETY: the export's contract: `a` holds the application's arguments.
    let ret = unsafe { a.call(f) };
    if ret == 0 {
        // SAFETY: as in cudaGetDriverEntryPoint.
        unsafe { route_answer(a.symbol, a.func, "cudaGetDriverEntryPointByVersion") };
    }
    ret
}
