//! How a family's signature table (see the `api-table` crate) becomes the
//! interposer's exported entry points, one per table entry, by shape.
//!
//! A family expands its table's list with [`export_entry!`](crate::export_entry),
//! in a module where its `args` and `fns` modules (the table's argument
//! structs and function types) and its `handlers` module are in scope by
//! those names:
//!
//! ```text
//! use hip_api::{args, fns};
//! hip_api::hip_fns!(api_table::for_each,
//!     [hip_api::hip_fn, hrr_interpose::export_entry, [[args fns handlers]]]);
//! ```
//!
//! Each entry becomes
//!
//! ```text
//! #[no_mangle] pub unsafe extern "C" fn NAME(PARAMS) -> RET {
//!     static REAL: Real<args::NAME> = Real::new();        // dlsym(RTLD_NEXT, "NAME"), once
//!     handlers::NAME(&REAL, args::NAME { PARAMS })        // the entry's handler
//! }
//! ```
//!
//! and `handlers::NAME` is where the entry is classified, by what defines it:
//!
//! * **recorded**: a hand-written `unsafe fn NAME(real: &'static Real<args::NAME>,
//!   a: args::NAME) -> RET` that forwards `a` (`a.call(f)`), then records
//!   what the call did (reading `a.size`, `a.ptr`, …);
//! * **query** ([`query_handlers!`](crate::query_handlers)): no device
//!   effect — forwarded, nothing recorded, by design;
//! * **unrecorded** ([`unrecorded_handlers!`](crate::unrecorded_handlers)):
//!   device effects the archive does not capture yet — forwarded, and each
//!   first-level call counted ([`unrecorded`](crate::unrecorded)), so the
//!   manifest and the tools say so.
//!
//! An entry without a handler does not compile (`cannot find function
//! NAME in module handlers`), nor does one with two (`NAME is defined
//! multiple times`): a new table entry must be classified.
//!
//! Family-agnostic: the HIP runtime's exports and the CUDA runtime's are
//! generated this way, each from its own table, with its `args`/`fns` and
//! its `handlers` (the CUDA runtime's all hand-written, answering a missing
//! function with CUDA's own error).

use std::sync::atomic::{AtomicBool, Ordering};

use api_table::Entry;

use crate::Sink;
use crate::guard::Guard;
use crate::real_fn::{Missing, Real};
use crate::unrecorded::Counter;

/// Callback of a family's lookup macro: the exported definition of one
/// table entry (see the module docs). Extra tokens: `[ARGS FNS HANDLERS]`,
/// three module names in scope where it expands.
#[macro_export]
macro_rules! export_entry {
    ([$args:ident $fns:ident $handlers:ident] $name:ident ($($p:ident : $t:ty),* $(,)?) $(-> $r:ty)?) => {
        #[doc = concat!("`", stringify!($name), "`, interposed: forwarded unchanged to the next definition; its handler says what is recorded.")]
        #[unsafe(no_mangle)]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name($($p: $t),*) $(-> $r)? {
            static REAL: $crate::real_fn::Real<$args::$name> =
                $crate::real_fn::Real::new();
            // SAFETY: the application called this entry point with these
            // arguments under its C contract; the handler forwards them,
            // unchanged, to the next definition of the same symbol.
            unsafe { $handlers::$name(&REAL, $args::$name { $($p),* }) }
        }
        // The export has exactly the table's type (a C type name shadowed
        // where this expands could not change it unnoticed).
        const _: $fns::$name = $name;
    };
}

/// Handlers of *query* entry points (see the module docs), given the
/// family's `args` module name: `query_handlers!(args; hipGetDeviceCount, …)`.
#[macro_export]
macro_rules! query_handlers {
    ($args:ident; $($name:ident),* $(,)?) => {$(
        #[inline(always)]
        pub unsafe fn $name(
            real: &'static $crate::real_fn::Real<$args::$name>,
            a: $args::$name,
        ) -> <$args::$name as $crate::__api_table::Entry>::Ret {
            // SAFETY: the export's contract: `a` holds the application's
            // arguments for this entry point.
            unsafe { $crate::exports::forward_query(real, a) }
        }
    )*};
}

/// Handlers of *unrecorded* entry points (see the module docs), given the
/// family's `args` module name and the [`Sink`] whose guard says whether a
/// call is counted: each with its own call [`Counter`], named as the entry.
#[macro_export]
macro_rules! unrecorded_handlers {
    ($args:ident, $sink:ty; $($name:ident),* $(,)?) => {$(
        #[inline(always)]
        pub unsafe fn $name(
            real: &'static $crate::real_fn::Real<$args::$name>,
            a: $args::$name,
        ) -> <$args::$name as $crate::__api_table::Entry>::Ret {
            static CALLS: $crate::unrecorded::Counter = $crate::unrecorded::Counter::new(
                <$args::$name as $crate::__api_table::Entry>::NAME,
            );
            // SAFETY: the export's contract: `a` holds the application's
            // arguments for this entry point.
            unsafe { $crate::exports::forward_unrecorded::<$sink, _>(real, &CALLS, a) }
        }
    )*};
}

/// Reports once per process that an entry point has no next definition.
pub fn report_missing(api: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("hrr-intercept: {api}: not defined by any library after the interposer");
    }
}

/// `A::Ret::missing()`, reported (the application called an entry point its
/// runtime lacks).
pub fn missing<A: Entry>() -> A::Ret
where
    A::Ret: Missing,
{
    report_missing(A::NAME);
    A::Ret::missing()
}

/// Whether the application made a call the capture library forwards
/// without recording by design (a query): said when nothing was recorded.
static QUERIED: AtomicBool = AtomicBool::new(false);

/// Whether a query was forwarded (see `QUERIED`).
pub fn queried() -> bool {
    QUERIED.load(Ordering::Relaxed)
}

/// A query: forwarded, nothing recorded.
///
/// # Safety
/// `a` holds the application's arguments for entry point `A`, valid under
/// its C contract.
#[inline(always)]
pub unsafe fn forward_query<A: Entry>(real: &Real<A>, a: A) -> A::Ret
where
    A::Ret: Missing,
{
    // SAFETY: per this function's contract.
    unsafe { forward_query_or(real, a, A::Ret::missing) }
}

/// [`forward_query`] of an entry point whose result has no [`Missing`]
/// value of its own (a struct returned by value): `missing` makes it.
///
/// # Safety
/// As [`forward_query`].
#[inline(always)]
pub unsafe fn forward_query_or<A: Entry>(
    real: &Real<A>,
    a: A,
    missing: impl FnOnce() -> A::Ret,
) -> A::Ret {
    // Read first: after the first query this is a load, no store.
    if !QUERIED.load(Ordering::Relaxed) {
        QUERIED.store(true, Ordering::Relaxed);
    }
    match real.get() {
        // SAFETY: per this function's contract.
        Some(f) => unsafe { a.call(f) },
        None => {
            report_missing(A::NAME);
            missing()
        }
    }
}

/// An unrecorded entry point: forwarded; a first-level call with recording
/// on (the `Guard`, which also creates the archive) is counted in `calls`,
/// whatever it returned.
///
/// # Safety
/// As [`forward_query`].
#[inline(always)]
pub unsafe fn forward_unrecorded<S: Sink, A: Entry>(
    real: &Real<A>,
    calls: &'static Counter,
    a: A,
) -> A::Ret
where
    A::Ret: Missing,
{
    let Some(f) = real.get() else {
        return missing::<A>();
    };
    let g = Guard::<S>::enter(A::NAME);
    // SAFETY: per this function's contract.
    let ret = unsafe { a.call(f) };
    if g.is_some() {
        calls.bump();
    }
    ret
}
