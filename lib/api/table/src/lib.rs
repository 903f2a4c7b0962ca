//! The mechanism behind hrr's C signature tables: each entry point of a C API
//! family is declared once, in the family's table, and every consumer (an
//! interposer that exports and forwards it, a runtime that implements it, a
//! loader that resolves it, the ABI checks) is generated from that
//! declaration by shape, with `macro_rules!` callbacks.
//!
//! # A family's table
//!
//! A table is two `#[macro_export]` macros in the family's API crate (for HIP,
//! `hip-api`'s generated `table.rs`; see there for how it is regenerated):
//!
//! * the **lookup** macro, one arm per entry point, hands the entry's
//!   signature to a caller-supplied callback macro, after the caller's extra
//!   tokens:
//!
//!   ```text
//!   hip_fn!(hipMalloc, cb, [EXTRA…])
//!       => cb! { EXTRA… hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t }
//!   ```
//!
//!   A function returning `void` has no `->` part. Parameter names are the
//!   header's; type names are the C names, resolved where the callback
//!   expands (the family crate exports them all from one module, which
//!   consumers glob-import).
//! * the **list** macro hands every entry point's name to a callback:
//!   `hip_fns!(cb, [EXTRA…]) => cb! { EXTRA… hipInit hipMalloc … }`.
//!
//! The two compose with [`for_each!`]:
//! `hip_fns!(api_table::for_each, [hip_api::hip_fn, my_callback, [EXTRA…]])`
//! invokes `my_callback! { EXTRA… NAME(params) -> ret }` once per entry.
//!
//! # What is generated from it
//!
//! The family crate itself generates, with this crate's callbacks:
//!
//! * [`fn_type!`]: `fns::NAME`, the entry's `unsafe extern "C" fn` type
//!   (loaders type their fields with it; the ABI checks compare it with the
//!   C headers);
//! * [`entry_struct!`]: `args::NAME`, a struct with one public field per
//!   parameter, implementing [`Entry`]. Hand-written code reads arguments
//!   through it (`a.size`) without restating the signature, and forwards
//!   them with [`Entry::call`].
//!
//! Why argument structs: `macro_rules!` hygiene keeps a parameter name that
//! comes from the table from being named as a local variable by code written
//! elsewhere, but struct fields are looked up by name. A generated wrapper
//! binds its parameters (`fn hipMalloc(ptr: …, size: …)`) and builds
//! `args::hipMalloc { ptr, size }` from the very same tokens; the hand-written
//! body receives the struct.
//!
//! # Declaring another family
//!
//! 1. A crate (e.g. `cuda-api`) with a `types` module defining every C type
//!    name the signatures use, and a table file with the two macros above
//!    (`cuda_fn!`, `cuda_fns!`), generated from the headers or written by hand.
//! 2. In that crate:
//!    `pub mod fns { use crate::types::*; crate::cuda_fns!(api_table::for_each, [crate::cuda_fn, api_table::fn_type, []]); }`
//!    and the same with `api_table::entry_struct` in `pub mod args`.
//! 3. Consumers expand the list with their own callbacks (the capture
//!    library's machinery, `hrr-interpose`'s `exports`, has the interposer's,
//!    shared by families).
#![no_std]
#![deny(unsafe_code)]

pub use core::ffi::{CStr, c_void};
pub use core::ptr::NonNull;

/// One entry point's arguments, as the struct [`entry_struct!`] generates:
/// one public field per C parameter, in order.
// Its two methods are `unsafe fn`s: calling a C function through a pointer,
// and typing an address as one, rest on the caller's word (their contracts).
#[allow(unsafe_code)]
pub trait Entry: Copy + 'static {
    /// The entry point's C type, `unsafe extern "C" fn(…) -> Ret`.
    type Fn: Copy;
    /// What it returns (`()` for `void`).
    type Ret;
    /// The exported symbol, e.g. `"hipMalloc"`.
    const NAME: &'static str;
    /// [`Entry::NAME`] as a C string (for `dlsym`).
    const SYMBOL: &'static CStr;

    /// Calls `f` with these arguments, in declaration order.
    ///
    /// # Safety
    /// `f` must be an implementation of this entry point, and the arguments
    /// must satisfy its contract (what the C API requires of them).
    unsafe fn call(self, f: Self::Fn) -> Self::Ret;

    /// The function at `addr`, typed as this entry point.
    ///
    /// # Safety
    /// `addr` must be the address of a function with this entry point's C
    /// signature (e.g. found by `dlsym` under [`Entry::SYMBOL`]).
    unsafe fn fn_at(addr: NonNull<c_void>) -> Self::Fn;
}

/// Lookup-and-callback over a list of names: `for_each!(LOOKUP, CB, [EXTRA…] a b c)`
/// is `LOOKUP!{a, CB, [EXTRA…]} LOOKUP!{b, CB, [EXTRA…]} …` (in item position).
/// Made to be the callback of a family's list macro, which splices its extra
/// tokens before the names: `hip_fns!(api_table::for_each, [LOOKUP, CB, [EXTRA…]])`.
#[macro_export]
macro_rules! for_each {
    ($lookup:path, $cb:path, $x:tt $($name:ident)*) => {
        $( $lookup!{ $name, $cb, $x } )*
    };
}

/// `()` when a signature has no `->` part, else its result type (internal).
#[doc(hidden)]
#[macro_export]
macro_rules! __ret {
    () => {
        ()
    };
    ($r:ty) => {
        $r
    };
}

/// An identifier as a `&'static CStr` constant (internal).
#[doc(hidden)]
#[macro_export]
macro_rules! __symbol {
    ($name:ident) => {
        match $crate::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()) {
            Ok(c) => c,
            Err(_) => panic!("an identifier has no NUL byte"),
        }
    };
}

/// Callback: `pub type NAME = unsafe extern "C" fn(…) -> R;`.
#[macro_export]
macro_rules! fn_type {
    ($name:ident ( $($p:ident : $t:ty),* $(,)? ) $(-> $r:ty)?) => {
        #[allow(non_camel_case_types, non_snake_case)]
        pub type $name = unsafe extern "C" fn($($p: $t),*) $(-> $r)?;
    };
}

/// Callback: `pub struct NAME { pub PARAM: TYPE, … }` and its [`Entry`] impl.
/// Expands `unsafe` blocks: the expanding module must allow `unsafe_code`.
#[macro_export]
macro_rules! entry_struct {
    ($name:ident ( $($p:ident : $t:ty),* $(,)? ) $(-> $r:ty)?) => {
        #[allow(non_camel_case_types, non_snake_case)]
        #[derive(Clone, Copy)]
        pub struct $name {
            $(pub $p: $t,)*
        }

        impl $crate::Entry for $name {
            type Fn = unsafe extern "C" fn($($t),*) $(-> $r)?;
            type Ret = $crate::__ret!($($r)?);
            const NAME: &'static str = stringify!($name);
            const SYMBOL: &'static $crate::CStr = $crate::__symbol!($name);

            #[inline(always)]
            unsafe fn call(self, f: Self::Fn) -> Self::Ret {
                // SAFETY: per this function's contract, `f` implements this
                // entry point and the fields are arguments valid for it.
                unsafe { f($(self.$p),*) }
            }

            #[inline(always)]
            unsafe fn fn_at(addr: $crate::NonNull<$crate::c_void>) -> Self::Fn {
                // SAFETY: per this function's contract, `addr` is a function
                // of exactly this C signature; fn pointers and data pointers
                // have the same size and representation on every target hrr
                // supports.
                unsafe { ::core::mem::transmute::<*mut $crate::c_void, Self::Fn>(addr.as_ptr()) }
            }
        }
    };
}

#[cfg(test)]
// Calls C functions through the tables the macros generate.
#[allow(unsafe_code)]
mod tests {
    use super::Entry;
    use core::ffi::{c_int, c_void};

    // A two-entry table of the documented shape.
    macro_rules! demo_fn {
        (demo_add, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* demo_add(a: c_int, b: c_int) -> c_int } };
        (demo_void, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* demo_void(p: *mut c_void) } };
    }
    macro_rules! demo_fns {
        ($cb:path, [$($x:tt)*]) => { $cb! { $($x)* demo_add demo_void } };
    }

    mod fns {
        use core::ffi::{c_int, c_void};
        demo_fns!(crate::for_each, [demo_fn, crate::fn_type, []]);
    }
    mod args {
        use core::ffi::{c_int, c_void};
        demo_fns!(crate::for_each, [demo_fn, crate::entry_struct, []]);
    }

    unsafe extern "C" fn add(a: c_int, b: c_int) -> c_int {
        a + b
    }
    unsafe extern "C" fn touch(p: *mut c_void) {
        // SAFETY: the test passes a valid c_int.
        unsafe { *p.cast::<c_int>() += 1 };
    }

    #[test]
    fn entries_forward_their_fields() {
        let f: fns::demo_add = add;
        let a = args::demo_add { a: 2, b: 40 };
        // SAFETY: `add` implements demo_add.
        assert_eq!(unsafe { a.call(f) }, 42);
        assert_eq!(args::demo_add::NAME, "demo_add");
        assert_eq!(args::demo_add::SYMBOL.to_bytes(), b"demo_add");

        let mut x: c_int = 1;
        let v = args::demo_void {
            p: (&raw mut x).cast(),
        };
        let addr = core::ptr::NonNull::new(touch as *mut c_void).unwrap();
        // SAFETY: `touch` has demo_void's signature.
        let g: fns::demo_void = unsafe { args::demo_void::fn_at(addr) };
        // SAFETY: `g` is touch, `p` points at x.
        let () = unsafe { v.call(g) };
        assert_eq!(x, 2);
    }
}
