//! Finding definitions in the loaded objects: glibc's own `dlsym` (the
//! preloaded library interposes `dlsym`), the next definition of a symbol
//! after the interposer (`dlsym(RTLD_NEXT)`), a library already loaded, and
//! the object an address lies in (`dladdr`). Each libc call behind a safe
//! function, but [`dlsym_in`] (its handle is the caller's word).

use std::ffi::{CStr, c_char, c_void};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `dlsym`'s C type.
pub type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// glibc's `dlsym` (0: not resolved yet). The preloaded library interposes
/// `dlsym` ([`dlsym_export!`](crate::dlsym_export)), so its own lookups go
/// to glibc's directly.
pub static REAL_DLSYM: AtomicUsize = AtomicUsize::new(0);

extern "C" fn no_dlsym(_: *mut c_void, _: *const c_char) -> *mut c_void {
    std::ptr::null_mut()
}

/// glibc's `dlsym`, found with `dlvsym(RTLD_NEXT, "dlsym", version)`:
/// `GLIBC_2.34` (glibc ≥ 2.34, where it moved into libc.so.6) or the
/// original `GLIBC_2.2.5` (x86_64). Both name the same function where both
/// exist.
pub fn real_dlsym() -> DlsymFn {
    let mut p = REAL_DLSYM.load(Ordering::Acquire);
    if p == 0 {
        for v in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17"] {
            // SAFETY: valid C strings; RTLD_NEXT finds the definition after
            // this library, which is glibc's.
            let f = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), v.as_ptr()) };
            if !f.is_null() {
                p = f as usize;
                break;
            }
        }
        if p == 0 {
            p = no_dlsym as DlsymFn as usize;
        }
        REAL_DLSYM.store(p, Ordering::Release);
    }
    // SAFETY: p is glibc's dlsym (or no_dlsym), both of this C type.
    unsafe { std::mem::transmute::<usize, DlsymFn>(p) }
}

/// Looks `name` up in the objects loaded after this one (`dlsym(RTLD_NEXT)`):
/// the definition the application would have called without the preload.
pub fn dlsym_next(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: name is a valid NUL-terminated string; RTLD_NEXT is a valid
    // handle, relative to this library (the caller glibc sees).
    let p = unsafe { real_dlsym()(libc::RTLD_NEXT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// `dlsym(handle, name)` through glibc's `dlsym`, never this library's.
///
/// # Safety
/// `handle` must be a live handle from `dlopen` (or a pseudo-handle).
pub unsafe fn dlsym_in(handle: *mut c_void, name: &CStr) -> Option<*mut c_void> {
    // SAFETY: per the contract; name is NUL-terminated.
    let p = unsafe { real_dlsym()(handle, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// The handle of an already loaded library (`dlopen` with `RTLD_NOLOAD`:
/// never loads it). Kept open: the caller holds a reference for good.
pub fn loaded_library(soname: &CStr) -> Option<*mut c_void> {
    // SAFETY: a valid C string; RTLD_NOLOAD only looks.
    let h = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    (!h.is_null()).then_some(h)
}

/// Looks `name` up in every loaded object but the one holding `own` (an
/// address inside the calling library), those loaded with `RTLD_LOCAL`
/// included, which neither `RTLD_NEXT` nor `RTLD_DEFAULT` reach. A Python
/// extension's dependencies are loaded so (PyTorch's `libnccl.so.2`):
/// their callers bind to the preloaded interposer's export, whose wrapper
/// must then find the definition where the extension loaded it. The first
/// object in load order that defines it wins, and stays loaded.
pub fn dlsym_loaded(name: &CStr, own: usize) -> Option<*mut c_void> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        // SAFETY: `data` is the Vec `dlsym_loaded` passed; `info` is the
        // loader's, valid during this call, its name NUL-terminated.
        unsafe {
            let paths = &mut *data.cast::<Vec<std::ffi::CString>>();
            let name = (*info).dlpi_name;
            if !name.is_null() && *name != 0 {
                paths.push(CStr::from_ptr(name).to_owned());
            }
        }
        0
    }
    let mut paths: Vec<std::ffi::CString> = Vec::new();
    // SAFETY: `each` only reads the loader's record and pushes to `paths`,
    // which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut paths).cast()) };
    let own_base = object_base(own);
    for path in paths {
        // SAFETY: a C string; RTLD_NOLOAD never loads anything.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            continue;
        }
        // SAFETY: `h` is live (just opened); a C string.
        match unsafe { dlsym_in(h, name) } {
            Some(f) if object_base(f as usize) != own_base => return Some(f),
            _ => {
                // SAFETY: the reference RTLD_NOLOAD took, given back.
                unsafe { libc::dlclose(h) };
            }
        }
    }
    None
}

/// The file of an already loaded library, found by one of its symbols
/// (`None` when it is not loaded or lacks the symbol).
pub fn loaded_library_path(soname: &CStr, symbol: &CStr) -> Option<PathBuf> {
    let h = loaded_library(soname)?;
    // SAFETY: a live handle from dlopen; a C string.
    let p = unsafe { dlsym_in(h, symbol) }?;
    object_path(p as usize)
}

/// The load base of the shared object containing `addr` (`dladdr`).
pub fn object_base(addr: usize) -> Option<usize> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads addr (as a number) and fills the struct we own.
    let ok = unsafe { libc::dladdr(addr as *const c_void, &mut info) };
    (ok != 0 && !info.dli_fbase.is_null()).then_some(info.dli_fbase as usize)
}

/// Path of the shared object that contains address `addr`, from `dladdr`.
pub fn object_path(addr: usize) -> Option<PathBuf> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads addr (as a number) and fills the struct we own.
    let ok = unsafe { libc::dladdr(addr as *const c_void, &mut info) };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname points at a NUL-terminated string owned by the loader,
    // valid while the object stays loaded; we copy it at once.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(PathBuf::from(std::ffi::OsStr::new(
        std::str::from_utf8(name.to_bytes()).ok()?,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_loaded_locally_is_found() {
        // libthread_db (glibc's own) is never loaded by this test binary.
        assert_eq!(dlsym_next(c"td_init"), None);
        // SAFETY: a C string; loads glibc's libthread_db privately.
        let h = unsafe {
            libc::dlopen(
                c"libthread_db.so.1".as_ptr(),
                libc::RTLD_LAZY | libc::RTLD_LOCAL,
            )
        };
        assert!(!h.is_null(), "libthread_db.so.1");
        assert_eq!(
            dlsym_next(c"td_init"),
            None,
            "RTLD_LOCAL: not in the global scope"
        );
        // SAFETY: `h` is live.
        let there = unsafe { dlsym_in(h, c"td_init") }.expect("td_init");
        let own = a_definition_loaded_locally_is_found as fn() as usize;
        assert_eq!(dlsym_loaded(c"td_init", own), Some(there));
        // The calling object's own definitions are passed over.
        assert_eq!(dlsym_loaded(c"td_init", there as usize), None);
    }

    #[test]
    fn glibc_dlsym_is_found_and_used() {
        let f = real_dlsym();
        assert_ne!(f as usize, no_dlsym as DlsymFn as usize);
        // SAFETY: RTLD_DEFAULT and a C string.
        let w = unsafe { dlsym_in(libc::RTLD_DEFAULT, c"write") }.expect("write");
        assert_eq!(Some(w), dlsym_next(c"write"));
        assert_eq!(
            object_base(w as usize),
            object_base(libc::write as *const () as usize)
        );
        assert!(loaded_library(c"libc.so.6").is_some());
        assert!(loaded_library(c"libhrr-never-loaded.so.9").is_none());
    }

    #[test]
    fn finds_libc_symbols_by_address() {
        let p = dlsym_next(c"write").expect("libc write");
        let path = object_path(p as usize).expect("dladdr");
        assert!(
            path.to_string_lossy().contains("libc"),
            "{}",
            path.display()
        );
    }
}
