//! Structural ABI comparison of C function signatures, at compile time.
//!
//! Two Rust declarations of one C function rarely use the same Rust types
//! (`hipError_t` is a `#[repr(u32)]` enum in the bindings and a `c_int` in
//! hrr; `hipStream_t` is `*mut ihipStream_t` there and `*mut c_void` here), so
//! they are compared through a canonical form, [`Abi`], that keeps exactly what
//! the C calling convention sees:
//!
//! | Rust type | [`Abi`] |
//! |---|---|
//! | `i8…i64`, `u8…u64`, `isize`, `usize` (and the `c_*` aliases) | `Int { bytes, signed }` |
//! | a C enum (a bindgen rustified enum; registered with [`abi_enum!`]) | `Enum { bytes }`: matches an `Int` of that size of either signedness (C leaves an enum's underlying type to the implementation, and its constants are `int`) |
//! | `bool` | `Bool` |
//! | `f32`, `f64` | `F32`, `F64` |
//! | `*const T`, `*mut T` (any `T`) | `Ptr` |
//! | `Option<unsafe extern "C" fn(..) -> R>` and bare fn pointers | `FnPtr(sig)`: the callback's own signature is compared too |
//! | a `#[repr(C)]` struct by value (registered with [`abi_struct!`]) | `Struct { name, size, align }`: the C name, and `size_of`/`align_of` asserted at compile time |
//! | `()` (no result) | `Void` |
//!
//! A type with no [`AbiType`] impl is a compile error, never a silent match.
//! [`assert_same_abi!`] coerces two function items to `unsafe extern "C" fn`
//! pointers of the same arity and asserts, in a `const`, that their [`FnSig`]s
//! are equal: a mismatch fails the build with the function's name.

use std::ffi::c_void;

/// The canonical C-ABI form of one parameter or result type.
#[derive(Clone, Copy, Debug)]
pub enum Abi {
    Void,
    Int {
        bytes: usize,
        signed: bool,
    },
    Enum {
        bytes: usize,
    },
    Bool,
    F32,
    F64,
    Ptr,
    FnPtr(&'static FnSig),
    Struct {
        name: &'static str,
        size: usize,
        align: usize,
    },
}

/// A function's canonical signature.
#[derive(Clone, Copy, Debug)]
pub struct FnSig {
    pub ret: Abi,
    pub params: &'static [Abi],
}

/// A Rust type's canonical form.
pub trait AbiType {
    const ABI: Abi;
}

/// A function-pointer type's canonical signature.
pub trait AbiFn {
    const SIG: FnSig;
}

/// `F::SIG` of a value (lets a macro name the type of a coerced function item).
pub const fn sig_of<F: AbiFn>(_: &F) -> FnSig {
    F::SIG
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether two canonical types are passed identically.
pub const fn same_abi(a: &Abi, b: &Abi) -> bool {
    match (a, b) {
        (Abi::Void, Abi::Void)
        | (Abi::Bool, Abi::Bool)
        | (Abi::F32, Abi::F32)
        | (Abi::F64, Abi::F64) => true,
        (Abi::Ptr, Abi::Ptr) => true,
        (
            Abi::Int {
                bytes: x,
                signed: s,
            },
            Abi::Int {
                bytes: y,
                signed: t,
            },
        ) => *x == *y && *s == *t,
        (Abi::Enum { bytes: x }, Abi::Enum { bytes: y })
        | (Abi::Enum { bytes: x }, Abi::Int { bytes: y, .. })
        | (Abi::Int { bytes: x, .. }, Abi::Enum { bytes: y }) => *x == *y,
        (Abi::FnPtr(f), Abi::FnPtr(g)) => same_sig(f, g),
        (
            Abi::Struct {
                name: n,
                size: s,
                align: a,
            },
            Abi::Struct {
                name: m,
                size: t,
                align: b,
            },
        ) => *s == *t && *a == *b && str_eq(n, m),
        _ => false,
    }
}

/// Whether two canonical signatures are call-compatible (same arity, every
/// parameter and the result [`same_abi`]).
pub const fn same_sig(a: &FnSig, b: &FnSig) -> bool {
    if a.params.len() != b.params.len() || !same_abi(&a.ret, &b.ret) {
        return false;
    }
    let mut i = 0;
    while i < a.params.len() {
        if !same_abi(&a.params[i], &b.params[i]) {
            return false;
        }
        i += 1;
    }
    true
}

impl std::fmt::Display for Abi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Abi::Void => f.write_str("void"),
            Abi::Int { bytes, signed } => {
                write!(f, "{}{}", if *signed { "i" } else { "u" }, bytes * 8)
            }
            Abi::Enum { bytes } => write!(f, "enum{}", bytes * 8),
            Abi::Bool => f.write_str("bool"),
            Abi::F32 => f.write_str("f32"),
            Abi::F64 => f.write_str("f64"),
            Abi::Ptr => f.write_str("ptr"),
            Abi::FnPtr(s) => write!(f, "fnptr {s}"),
            Abi::Struct { name, size, align } => write!(f, "struct {name}[{size}/{align}]"),
        }
    }
}

impl std::fmt::Display for FnSig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        write!(f, ") -> {}", self.ret)
    }
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl AbiType for $t {
            const ABI: Abi = Abi::Int { bytes: size_of::<$t>(), signed: <$t>::MIN != 0 };
        }
    )*};
}
ints!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl AbiType for () {
    const ABI: Abi = Abi::Void;
}
impl AbiType for bool {
    const ABI: Abi = Abi::Bool;
}
impl AbiType for f32 {
    const ABI: Abi = Abi::F32;
}
impl AbiType for f64 {
    const ABI: Abi = Abi::F64;
}
impl<T: ?Sized> AbiType for *const T {
    const ABI: Abi = Abi::Ptr;
}
impl<T: ?Sized> AbiType for *mut T {
    const ABI: Abi = Abi::Ptr;
}
// `c_void` only ever appears behind a pointer; no impl, so a by-value use fails.
const _: () = assert!(size_of::<*mut c_void>() == size_of::<usize>());

/// Implements [`AbiFn`] for `unsafe extern "C" fn` and `extern "C" fn` pointers
/// of one arity, and [`AbiType`] for them and their `Option`s (callbacks).
macro_rules! fn_arity {
    ($($a:ident),*) => {
        impl<R: AbiType $(, $a: AbiType)*> AbiFn for unsafe extern "C" fn($($a),*) -> R {
            const SIG: FnSig = FnSig { ret: R::ABI, params: &[$($a::ABI),*] };
        }
        impl<R: AbiType $(, $a: AbiType)*> AbiFn for extern "C" fn($($a),*) -> R {
            const SIG: FnSig = FnSig { ret: R::ABI, params: &[$($a::ABI),*] };
        }
        impl<R: AbiType $(, $a: AbiType)*> AbiType for unsafe extern "C" fn($($a),*) -> R {
            const ABI: Abi = Abi::FnPtr(&<Self as AbiFn>::SIG);
        }
        impl<R: AbiType $(, $a: AbiType)*> AbiType for extern "C" fn($($a),*) -> R {
            const ABI: Abi = Abi::FnPtr(&<Self as AbiFn>::SIG);
        }
        impl<R: AbiType $(, $a: AbiType)*> AbiType for Option<unsafe extern "C" fn($($a),*) -> R> {
            const ABI: Abi = Abi::FnPtr(&<unsafe extern "C" fn($($a),*) -> R as AbiFn>::SIG);
        }
        impl<R: AbiType $(, $a: AbiType)*> AbiType for Option<extern "C" fn($($a),*) -> R> {
            const ABI: Abi = Abi::FnPtr(&<extern "C" fn($($a),*) -> R as AbiFn>::SIG);
        }
    };
}
fn_arity!();
fn_arity!(A1);
fn_arity!(A1, A2);
fn_arity!(A1, A2, A3);
fn_arity!(A1, A2, A3, A4);
fn_arity!(A1, A2, A3, A4, A5);
fn_arity!(A1, A2, A3, A4, A5, A6);
fn_arity!(A1, A2, A3, A4, A5, A6, A7);
fn_arity!(A1, A2, A3, A4, A5, A6, A7, A8);
fn_arity!(A1, A2, A3, A4, A5, A6, A7, A8, A9);
fn_arity!(A1, A2, A3, A4, A5, A6, A7, A8, A9, A10);
fn_arity!(A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11);
fn_arity!(A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12);
fn_arity!(A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13);
fn_arity!(A1, A2, A3, A4, A5, A6, A7, A8, A9, A10, A11, A12, A13, A14);

/// Registers C enum types (passed as their 4-byte underlying integer).
#[macro_export]
macro_rules! abi_enum {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::abi::AbiType for $t {
            const ABI: $crate::abi::Abi = $crate::abi::Abi::Enum { bytes: ::std::mem::size_of::<$t>() };
        }
        const _: () = assert!(::std::mem::size_of::<$t>() == 4, concat!(stringify!($t), ": a C enum is 4 bytes"));
    )*};
}

/// Registers a `#[repr(C)]` struct passed by value, under its C name, with the
/// size and alignment the C compiler gives it (asserted against the Rust type).
#[macro_export]
macro_rules! abi_struct {
    ($($t:ty => $c_name:literal [$size:expr, $align:expr]),* $(,)?) => {$(
        impl $crate::abi::AbiType for $t {
            const ABI: $crate::abi::Abi = $crate::abi::Abi::Struct {
                name: $c_name,
                size: ::std::mem::size_of::<$t>(),
                align: ::std::mem::align_of::<$t>(),
            };
        }
        const _: () = assert!(
            ::std::mem::size_of::<$t>() == $size && ::std::mem::align_of::<$t>() == $align,
            concat!(stringify!($t), ": size/align differ from C's ", $c_name)
        );
    )*};
}

/// One proven signature (kept for reports and the export-coverage tests).
#[derive(Clone, Copy, Debug)]
pub struct Check {
    /// The C symbol.
    pub name: &'static str,
    /// The binding it was compared with (`hip_runtime_sys::hipMalloc`, …).
    pub reference: &'static str,
    /// Our definition.
    pub ours: &'static str,
    pub reference_sig: FnSig,
    pub ours_sig: FnSig,
}

/// A placeholder type per parameter name (internal to [`assert_same_abi!`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __infer {
    ($p:ident) => {
        _
    };
}

/// Fails compilation unless `reference` and `ours` have the same C ABI.
/// The parameter names (from the C header) fix the arity; both items must
/// coerce to an `unsafe extern "C" fn` of that many parameters. Evaluates to
/// the [`Check`] it proved.
///
/// ```ignore
/// assert_same_abi!(hip_runtime_sys::hipMalloc, hrr_hip_cpu::hip_api::hipMalloc; ptr, size)
/// ```
#[macro_export]
macro_rules! assert_same_abi {
    ($($r:ident)::+ , $($o:ident)::+ ; $($p:ident),* $(,)?) => {
        $crate::__same_abi!(
            $($r)::+, $($o)::+, $crate::__last!($($r)::+),
            stringify!($($r)::+), stringify!($($o)::+); $($p),*
        )
    };
}

/// [`assert_same_abi!`] with the names reported given as literals (internal).
#[doc(hidden)]
#[macro_export]
macro_rules! __same_abi {
    ($($r:ident)::+ , $($o:ident)::+ , $name:expr, $rl:expr, $ol:expr; $($p:ident),* $(,)?) => {{
        const REFERENCE: $crate::abi::FnSig = {
            let f: unsafe extern "C" fn($($crate::__infer!($p)),*) -> _ = $($r)::+;
            $crate::abi::sig_of(&f)
        };
        const OURS: $crate::abi::FnSig = {
            let f: unsafe extern "C" fn($($crate::__infer!($p)),*) -> _ = $($o)::+;
            $crate::abi::sig_of(&f)
        };
        const _: () = assert!(
            $crate::abi::same_sig(&REFERENCE, &OURS),
            concat!("ABI mismatch: ", $ol, " differs from ", $rl)
        );
        $crate::abi::Check { name: $name, reference: $rl, ours: $ol, reference_sig: REFERENCE, ours_sig: OURS }
    }};
}

/// The last segment of a path, as a string (internal).
#[doc(hidden)]
#[macro_export]
macro_rules! __last {
    ($last:ident) => { stringify!($last) };
    ($first:ident :: $($rest:ident)::+) => { $crate::__last!($($rest)::+) };
}

/// Asserts that two `#[repr(C)]` types have the same size and alignment, and
/// that the listed fields sit at the same offsets (pointee layouts: the
/// structs our runtimes write through pointers the application passes).
#[macro_export]
macro_rules! assert_same_layout {
    ($r:ty, $o:ty $(; $($rf:ident = $of:ident),* $(,)?)?) => {
        const _: () = {
            assert!(
                ::std::mem::size_of::<$r>() == ::std::mem::size_of::<$o>()
                    && ::std::mem::align_of::<$r>() == ::std::mem::align_of::<$o>(),
                concat!("layout mismatch: ", stringify!($o), " vs ", stringify!($r))
            );
            $($(
                assert!(
                    ::std::mem::offset_of!($r, $rf) == ::std::mem::offset_of!($o, $of),
                    concat!("offset mismatch: ", stringify!($o), ".", stringify!($of), " vs ", stringify!($r), ".", stringify!($rf))
                );
            )*)?
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{c_char, c_int, c_uint};

    #[repr(u32)]
    #[allow(dead_code)]
    enum E {
        A = 0,
    }
    crate::abi_enum!(E);

    const fn sig<F: AbiFn>() -> FnSig {
        F::SIG
    }

    #[test]
    fn canonical_forms() {
        type A = unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int;
        type B = unsafe extern "C" fn(*mut *mut u8, usize) -> E;
        assert!(
            same_sig(&sig::<A>(), &sig::<B>()),
            "enum result vs int, pointer to anything"
        );
        type C = unsafe extern "C" fn(*mut *mut c_void, u32) -> c_int;
        assert!(
            !same_sig(&sig::<A>(), &sig::<C>()),
            "size_t vs unsigned int"
        );
        type D = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
        type D2 = unsafe extern "C" fn(*mut c_void, c_uint) -> c_int;
        assert!(!same_sig(&sig::<D>(), &sig::<D2>()), "int vs unsigned int");
        type F = unsafe extern "C" fn(*mut c_void) -> c_int;
        assert!(!same_sig(&sig::<A>(), &sig::<F>()), "arity");
        type G = unsafe extern "C" fn(*const c_char) -> *const c_char;
        type H = unsafe extern "C" fn(*mut c_void) -> usize;
        assert!(!same_sig(&sig::<G>(), &sig::<H>()), "pointer vs size_t");
        type Cb1 =
            unsafe extern "C" fn(Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>) -> u32;
        type Cb2 = unsafe extern "C" fn(Option<unsafe extern "C" fn(u64, *mut c_void) -> E>) -> E;
        type Cb3 =
            unsafe extern "C" fn(Option<unsafe extern "C" fn(u32, *mut c_void) -> u32>) -> u32;
        assert!(same_sig(&sig::<Cb1>(), &sig::<Cb2>()));
        assert!(
            !same_sig(&sig::<Cb1>(), &sig::<Cb3>()),
            "callback parameter differs"
        );
        assert_eq!(sig::<A>().to_string(), "(ptr, u64) -> i32");
    }

    #[repr(C)]
    struct S1 {
        x: u32,
        y: u32,
        z: u32,
    }
    #[repr(C)]
    struct S2 {
        v: [u32; 3],
    }
    #[repr(C)]
    struct S3 {
        x: u64,
        y: u32,
    }
    crate::abi_struct!(S1 => "dim3" [12, 4], S2 => "dim3" [12, 4], S3 => "dim3" [16, 8]);

    #[test]
    fn structs_by_value() {
        type A = unsafe extern "C" fn(S1) -> ();
        type B = unsafe extern "C" fn(S2) -> ();
        type C = unsafe extern "C" fn(S3) -> ();
        assert!(same_sig(&sig::<A>(), &sig::<B>()));
        assert!(!same_sig(&sig::<A>(), &sig::<C>()));
    }
}
