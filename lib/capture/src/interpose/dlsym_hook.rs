//! `dlsym`, interposed, so that driver entry points a program looks up in
//! a library handle (`dlsym(libcuda, "cuGetProcAddress_v2")`, which the CUDA
//! runtime does, shared and static alike) can be answered with this
//! library's wrappers. A preloaded definition of `cuFoo` is never what
//! `dlsym(handle, "cuFoo")` finds: that searches the handle's library only.
//!
//! glibc's `dlsym` decides *where* to search from its caller's return
//! address for the pseudo-handles `RTLD_NEXT` (-1: after the caller's
//! object) and `RTLD_DEFAULT` (0: the caller's scope). A wrapper that called
//! it would make glibc see this library as the caller. So `dlsym` here is a
//! naked function: for a pseudo-handle it jumps to glibc's `dlsym` with the
//! application's return address still on the stack (an exact tail call);
//! for a real handle the search does not depend on the caller, and
//! [`explicit`] calls glibc's, then lets the CUDA family replace a driver
//! entry point it wraps ([`crate::cuda::driver::on_dlsym`]). The only
//! difference glibc can see on that path is which object a found library
//! gets a dependency from (`RTLD_LAZY` bookkeeping): this one, which is never
//! unloaded, so a library looked up this way is kept loaded to the end.
//!
//! glibc's `dlsym` is resolved on first use with `dlvsym`
//! (`sys::real_dlsym`). x86_64 only (the naked trampoline); elsewhere
//! `dlsym` is not interposed and route (b) is absent.

use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::interpose::sys;

/// `void *dlsym(void *handle, const char *symbol)`.
///
/// # Safety
/// As glibc's `dlsym`.
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    core::arch::naked_asm!(
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
        explicit = sym explicit,
        real = sym sys::REAL_DLSYM,
        resolve = sym resolve,
    )
}

/// Resolves glibc's `dlsym` (for the trampoline).
extern "C" fn resolve() -> usize {
    sys::real_dlsym() as usize
}

/// `dlsym` with a real handle: glibc's answer, or this library's wrapper
/// for a CUDA driver entry point it interposes.
extern "C" fn explicit(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    // SAFETY: the application's arguments, forwarded unchanged.
    let p = unsafe { sys::real_dlsym()(handle, symbol) };
    if p.is_null() || symbol.is_null() {
        return p;
    }
    // SAFETY: glibc found a symbol of this name: `symbol` is a C string.
    // Only names starting "cu" interest the driver routes; reading two
    // bytes of a non-empty string is in bounds.
    let cu = unsafe { *symbol == b'c' as c_char && *symbol.add(1) == b'u' as c_char };
    if !cu {
        return p;
    }
    // SAFETY: as above.
    let name = unsafe { std::ffi::CStr::from_ptr(symbol) };
    catch_unwind(AssertUnwindSafe(|| {
        crate::cuda::driver::on_dlsym(handle, name.to_bytes(), p)
    }))
    .unwrap_or(p)
}
