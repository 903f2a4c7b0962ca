//! `RealFn`: the next definition of an interposed symbol, resolved once.
//!
//! Each exported wrapper owns one `static RealFn`. The first call resolves it
//! with `dlsym(RTLD_NEXT, name)`; every later call is one atomic load. A
//! symbol no later object defines stays `None` (also cached), so a wrapper
//! can answer with an error instead of jumping to null.

use std::ffi::{CStr, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

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
    pub fn get(&self) -> Option<*mut c_void> {
        match self.addr.load(Ordering::Acquire) {
            UNRESOLVED => {
                // Two threads may race here; both get the same answer from dlsym.
                let found = crate::interpose::sys::dlsym_next(self.name);
                let v = found.map_or(MISSING, |p| p as usize);
                self.addr.store(v, Ordering::Release);
                found
            }
            MISSING => None,
            v => Some(v as *mut c_void),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

/// The next definition of `$name`, typed as `$ty`, or `None`.
#[cfg(not(any(test, feature = "bench")))]
macro_rules! real {
    ($name:ident : $ty:ty) => {{
        static REAL: $crate::interpose::real_fn::RealFn = $crate::interpose::real_fn::RealFn::new(
            match ::std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes())
            {
                Ok(c) => c,
                Err(_) => panic!("symbol name"),
            },
        );
        REAL.get().map(|p| {
            // SAFETY: the address was looked up under this function's C name,
            // and `$ty` is that function's signature in its runtime's header
            // (HIP's, or CUDA's for the CUDA family).
            unsafe { ::std::mem::transmute::<*mut ::std::ffi::c_void, $ty>(p) }
        })
    }};
}
#[cfg(not(any(test, feature = "bench")))]
pub(crate) use real;
