//! `dlsym`, interposed, so that driver entry points a program looks up in
//! a library handle (`dlsym(libcuda, "cuGetProcAddress_v2")`, which the CUDA
//! runtime does, shared and static alike) can be answered with this
//! library's wrappers. A preloaded definition of `cuFoo` is never what
//! `dlsym(handle, "cuFoo")` finds: that searches the handle's library only.
//! The preloaded library defines it with [`dlsym_export!`](crate::dlsym_export),
//! naming the family that answers.
//!
//! glibc's `dlsym` decides *where* to search from its caller's return
//! address for the pseudo-handles `RTLD_NEXT` (-1: after the caller's
//! object) and `RTLD_DEFAULT` (0: the caller's scope). A wrapper that called
//! it would make glibc see this library as the caller. So `dlsym` here is a
//! naked function: for a pseudo-handle it jumps to glibc's `dlsym` with the
//! application's return address still on the stack (an exact tail call);
//! for a real handle the search does not depend on the caller, and
//! [`explicit`] calls glibc's, then lets the family replace an entry point
//! it wraps (the CUDA family's driver routes, for names starting `cu`). The only
//! difference glibc can see on that path is which object a found library
//! gets a dependency from (`RTLD_LAZY` bookkeeping): this one, which is never
//! unloaded, so a library looked up this way is kept loaded to the end.
//!
//! glibc's `dlsym` is resolved on first use with `dlvsym`
//! ([`real_dlsym`](crate::dl::real_dlsym)). x86_64 only (the naked
//! trampoline); elsewhere `dlsym` is not interposed and route (b) is
//! absent.

use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::dl;

/// Defines `dlsym`: pseudo-handles go to glibc's untouched (an exact tail
/// call); for a real handle, glibc's answer for a name starting with
/// `$prefix` is handed to `$route(handle, name, answer)`, whose result the
/// program gets (`dlsym_export!(b"cu", crate::cuda::driver::on_dlsym)`).
/// x86_64 only; the expanding module must allow `unsafe_code`.
#[macro_export]
macro_rules! dlsym_export {
    ($prefix:expr, $route:path) => {
        /// `void *dlsym(void *handle, const char *symbol)`, interposed (see
        /// `hrr_interpose::dlsym_hook`).
        ///
        /// # Safety
        /// As glibc's `dlsym`.
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn dlsym(
            handle: *mut ::std::ffi::c_void,
            symbol: *const ::std::ffi::c_char,
        ) -> *mut ::std::ffi::c_void {
            ::core::arch::naked_asm!(
                // RTLD_NEXT ((void *)-1) and RTLD_DEFAULT (0): glibc's, untouched.
                "cmp rdi, -1",
                "je 2f",
                "test rdi, rdi",
                "je 2f",
                "jmp {explicit}",
                "2:",
                "mov rax, qword ptr [rip + {real}@GOTPCREL]",
                "mov rax, qword ptr [rax]",
                "test rax, rax",
                "jne 3f",
                // Not resolved yet (a constructor running before ours): resolve,
                // keeping the arguments (entry rsp is 8 mod 16; two pushes and 8
                // more make the call aligned).
                "push rdi",
                "push rsi",
                "sub rsp, 8",
                "call {resolve}",
                "add rsp, 8",
                "pop rsi",
                "pop rdi",
                "3:",
                "jmp rax",
                explicit = sym __hrr_dlsym_explicit,
                real = sym $crate::dl::REAL_DLSYM,
                resolve = sym $crate::dlsym_hook::resolve,
            )
        }

        /// `dlsym` with a real handle (see [`dlsym`]).
        #[cfg(target_arch = "x86_64")]
        extern "C" fn __hrr_dlsym_explicit(
            handle: *mut ::std::ffi::c_void,
            symbol: *const ::std::ffi::c_char,
        ) -> *mut ::std::ffi::c_void {
            // SAFETY: the application's arguments to `dlsym`, forwarded.
            unsafe { $crate::dlsym_hook::explicit(handle, symbol, $prefix, $route) }
        }
    };
}

/// Resolves glibc's `dlsym` (for the trampoline).
pub extern "C" fn resolve() -> usize {
    dl::real_dlsym() as usize
}

/// `dlsym` with a real handle: glibc's answer, or, for a name starting
/// with `prefix`, what `route(handle, name, answer)` makes of it (a panic
/// in `route` leaves glibc's answer).
///
/// # Safety
/// As glibc's `dlsym`: `symbol` is null or a C string.
pub unsafe fn explicit(
    handle: *mut c_void,
    symbol: *const c_char,
    prefix: &[u8],
    route: impl FnOnce(*mut c_void, &[u8], *mut c_void) -> *mut c_void,
) -> *mut c_void {
    // SAFETY: the application's arguments, forwarded unchanged.
    let p = unsafe { dl::real_dlsym()(handle, symbol) };
    if p.is_null() || symbol.is_null() {
        return p;
    }
    // Only names starting with `prefix` interest the route. glibc found a
    // symbol of this name, so `symbol` is a C string: reading it byte by
    // byte while it matches stops at its NUL at the latest.
    let matches = prefix.iter().enumerate().all(|(i, &b)| {
        // SAFETY: bytes 0..i matched `prefix`, none of which is NUL, so
        // byte `i` is within the string (at most its NUL).
        let c = unsafe { *symbol.add(i) };
        c == b as c_char
    });
    if !matches {
        return p;
    }
    // SAFETY: as above, a C string.
    let name = unsafe { CStr::from_ptr(symbol) };
    catch_unwind(AssertUnwindSafe(|| route(handle, name.to_bytes(), p))).unwrap_or(p)
}
