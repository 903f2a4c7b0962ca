//! `RealFn`: the next definition of an interposed symbol, resolved once.
//!
//! Each exported wrapper owns one `static RealFn` (or a [`Real`], its typed
//! form for a table entry). The first call resolves it with
//! `dlsym(RTLD_NEXT, name)`, else in a library loaded with `RTLD_LOCAL`
//! (`dl::dlsym_loaded`); every later call is one atomic load. A symbol
//! no later object defines stays `None` (also cached), so a wrapper can
//! answer with an error ([`Missing`]) instead of jumping to null.

use std::ffi::{CStr, c_int, c_void};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use api_table::Entry;

/// Not looked up yet.
const UNRESOLVED: usize = 0;
/// Looked up, and no later object defines it.
const MISSING: usize = 1;

/// A lazily resolved `dlsym(RTLD_NEXT)` address.
pub struct RealFn {
    name: &'static CStr,
    addr: AtomicUsize,
}

impl RealFn {
    /// The entry point `name`, resolved on first use.
    pub const fn new(name: &'static CStr) -> RealFn {
        RealFn {
            name,
            addr: AtomicUsize::new(UNRESOLVED),
        }
    }

    /// The entry point's name.
    pub fn name(&self) -> &'static CStr {
        self.name
    }

    /// The address, or `None` when nothing after this library defines it.
    #[inline(always)]
    pub fn get(&self) -> Option<*mut c_void> {
        self.get_nonnull().map(NonNull::as_ptr)
    }

    /// [`RealFn::get`] as a `NonNull`: after the first call, one load and a
    /// compare on the wrappers' hot path (resolution is out of line).
    #[inline(always)]
    pub fn get_nonnull(&self) -> Option<NonNull<c_void>> {
        match self.addr.load(Ordering::Acquire) {
            UNRESOLVED => self.resolve(),
            MISSING => None,
            v => NonNull::new(v as *mut c_void),
        }
    }

    #[cold]
    #[inline(never)]
    fn resolve(&self) -> Option<NonNull<c_void>> {
        // Two threads may race here; both get the same answer from dlsym.
        // A definition only a locally loaded library holds (PyTorch's
        // libnccl) is found by searching the loaded objects.
        let found = crate::dl::dlsym_next(self.name)
            .or_else(|| {
                crate::dl::dlsym_loaded(
                    self.name,
                    RealFn::resolve as fn(&RealFn) -> Option<NonNull<c_void>> as usize,
                )
            })
            .and_then(NonNull::new);
        let v = found.map_or(MISSING, |p| p.as_ptr() as usize);
        self.addr.store(v, Ordering::Release);
        found
    }
}

/// The next definition of a table entry point `A` (an `args::NAME` struct),
/// typed as `A::Fn`.
pub struct Real<A> {
    f: RealFn,
    _entry: PhantomData<fn() -> A>,
}

impl<A: Entry> Real<A> {
    /// Looks the entry up under its own symbol.
    pub const fn new() -> Real<A> {
        Real {
            f: RealFn::new(A::SYMBOL),
            _entry: PhantomData,
        }
    }

    /// The next definition, or `None` when no later library has one.
    #[inline(always)]
    pub fn get(&self) -> Option<A::Fn> {
        let p = self.f.get_nonnull()?;
        // SAFETY: `p` was found by dlsym under `A::SYMBOL`, the C name of
        // the entry point whose signature `A::Fn` is (the table's).
        Some(unsafe { A::fn_at(p) })
    }
}

impl<A: Entry> Default for Real<A> {
    fn default() -> Self {
        Real::new()
    }
}

/// What a wrapper returns when no later library defines its function (the
/// application called an entry point its runtime lacks).
pub trait Missing {
    /// The value returned for a missing function.
    fn missing() -> Self;
}

/// `hipErrorNotSupported` / `cudaErrorNotSupported` (both 801): every HIP
/// and CUDA runtime entry point returning an `int` returns an error code,
/// but a few (`hipGetStreamDeviceId`) return a value; 801 is no valid one
/// of those either.
impl Missing for c_int {
    fn missing() -> Self {
        801
    }
}
impl Missing for () {
    fn missing() -> Self {}
}
impl<T> Missing for *const T {
    fn missing() -> Self {
        std::ptr::null()
    }
}
impl<T> Missing for *mut T {
    fn missing() -> Self {
        std::ptr::null_mut()
    }
}

/// The next definition of `$name`, typed as `$ty`, or `None` (a function
/// outside a signature table: `real!(_exit: unsafe extern "C" fn(c_int) -> !)`).
#[macro_export]
macro_rules! real {
    ($name:ident : $ty:ty) => {{
        static REAL: $crate::real_fn::RealFn = $crate::real_fn::RealFn::new(
            match ::std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes())
            {
                Ok(c) => c,
                Err(_) => panic!("symbol name"),
            },
        );
        REAL.get().map(|p| {
            // SAFETY: the address was looked up under this function's C name,
            // and `$ty` is that function's signature in its header (the
            // table-generated families use `Real<A>` instead).
            unsafe { ::std::mem::transmute::<*mut ::std::ffi::c_void, $ty>(p) }
        })
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_entries_resolve_by_their_symbol() {
        // libc's `write` as if it were a table entry.
        #[derive(Clone, Copy)]
        struct Write {
            fd: c_int,
            buf: *const c_void,
            len: usize,
        }
        impl Entry for Write {
            type Fn = unsafe extern "C" fn(c_int, *const c_void, usize) -> isize;
            type Ret = isize;
            const NAME: &'static str = "write";
            const SYMBOL: &'static CStr = c"write";
            unsafe fn call(self, f: Self::Fn) -> isize {
                // SAFETY: the test's arguments are valid for write.
                unsafe { f(self.fd, self.buf, self.len) }
            }
            unsafe fn fn_at(addr: NonNull<c_void>) -> Self::Fn {
                // SAFETY: the address of `write`.
                unsafe { std::mem::transmute::<*mut c_void, Self::Fn>(addr.as_ptr()) }
            }
        }
        static W: Real<Write> = Real::new();
        let f = W.get().expect("libc defines write");
        let a = Write {
            fd: -1,
            buf: std::ptr::null(),
            len: 0,
        };
        // SAFETY: write(-1, NULL, 0) fails with EBADF and touches nothing.
        assert_eq!(unsafe { a.call(f) }, -1);
        assert_eq!(<c_int as Missing>::missing(), 801);
        assert!(<*mut u8 as Missing>::missing().is_null());
    }

    #[test]
    fn resolves_once_and_caches_missing() {
        static W: RealFn = RealFn::new(c"write");
        static NONE: RealFn = RealFn::new(c"hrr_no_such_symbol_anywhere");
        let a = W.get().unwrap();
        assert_eq!(W.get(), Some(a));
        assert_eq!(NONE.get(), None);
        assert_eq!(NONE.addr.load(Ordering::Relaxed), MISSING);
    }
}
