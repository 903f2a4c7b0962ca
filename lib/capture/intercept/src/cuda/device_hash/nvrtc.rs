//! `nvrtc`: the device hash's source compiled to PTX at run time by NVRTC,
//! found with `dlopen` (the capture library cannot depend on nvcc or link
//! NVRTC: most captured programs never load it). A library the process
//! has loaded already is used first (`RTLD_NOLOAD`), else one is loaded
//! from [`super::plan::nvrtc_candidates`].
//!
//! NVRTC's C API has no crate the capture library could use without
//! linking it, hence the few declarations here (from `nvrtc.h`).

use std::ffi::{CStr, CString, c_char, c_int, c_void};

use hrr_interpose::dl;

/// `nvrtcResult` (`NVRTC_SUCCESS` is 0).
type NvrtcResult = c_int;
/// `nvrtcProgram`.
type Program = *mut c_void;

type CreateProgram = unsafe extern "C" fn(
    prog: *mut Program,
    src: *const c_char,
    name: *const c_char,
    num_headers: c_int,
    headers: *const *const c_char,
    include_names: *const *const c_char,
) -> NvrtcResult;
type CompileProgram = unsafe extern "C" fn(
    prog: Program,
    num_options: c_int,
    options: *const *const c_char,
) -> NvrtcResult;
type GetSize = unsafe extern "C" fn(prog: Program, size: *mut usize) -> NvrtcResult;
type GetText = unsafe extern "C" fn(prog: Program, out: *mut c_char) -> NvrtcResult;
type DestroyProgram = unsafe extern "C" fn(prog: *mut Program) -> NvrtcResult;

/// The NVRTC functions used.
struct Nvrtc {
    create: CreateProgram,
    compile: CompileProgram,
    ptx_size: GetSize,
    ptx: GetText,
    log_size: GetSize,
    log: GetText,
    destroy: DestroyProgram,
}

/// Opens NVRTC: the first of `candidates` loaded already, else the first
/// that loads.
fn open(candidates: &[CString]) -> Result<Nvrtc, String> {
    let handle = candidates
        .iter()
        .find_map(|c| dl::loaded_library(c))
        .or_else(|| {
            candidates.iter().find_map(|c| {
                // SAFETY: a C string; loading NVRTC runs no code of the
                // program's (its constructors are NVRTC's own).
                let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
                (!h.is_null()).then_some(h)
            })
        })
        .ok_or_else(|| {
            let names: Vec<_> = candidates.iter().map(|c| c.to_string_lossy()).collect();
            format!(
                "no NVRTC library ({}; HRR_NVRTC names one)",
                names.join(", ")
            )
        })?;
    let sym = |name: &CStr| -> Result<*mut c_void, String> {
        // SAFETY: a live handle from dlopen; a C string.
        unsafe { dl::dlsym_in(handle, name) }
            .ok_or_else(|| format!("NVRTC lacks {}", name.to_string_lossy()))
    };
    // SAFETY: each transmute turns the export of that name into its C
    // type (`nvrtc.h`).
    unsafe {
        Ok(Nvrtc {
            create: std::mem::transmute::<*mut c_void, CreateProgram>(sym(c"nvrtcCreateProgram")?),
            compile: std::mem::transmute::<*mut c_void, CompileProgram>(sym(
                c"nvrtcCompileProgram",
            )?),
            ptx_size: std::mem::transmute::<*mut c_void, GetSize>(sym(c"nvrtcGetPTXSize")?),
            ptx: std::mem::transmute::<*mut c_void, GetText>(sym(c"nvrtcGetPTX")?),
            log_size: std::mem::transmute::<*mut c_void, GetSize>(sym(c"nvrtcGetProgramLogSize")?),
            log: std::mem::transmute::<*mut c_void, GetText>(sym(c"nvrtcGetProgramLog")?),
            destroy: std::mem::transmute::<*mut c_void, DestroyProgram>(sym(
                c"nvrtcDestroyProgram",
            )?),
        })
    }
}

/// Compiles `source` with `options` into PTX (NUL-terminated, as
/// `cuModuleLoadData` takes it), with NVRTC from `candidates`; why not.
pub fn compile(
    candidates: &[CString],
    source: &CStr,
    options: &[CString],
) -> Result<CString, String> {
    let n = open(candidates)?;
    let mut prog: Program = std::ptr::null_mut();
    // SAFETY: `prog` is ours; the source and name are C strings; no headers.
    let r = unsafe {
        (n.create)(
            &mut prog,
            source.as_ptr(),
            c"device_hash.cu".as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(format!("nvrtcCreateProgram failed ({r})"));
    }
    let opts: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: a program NVRTC made; `opts` holds `options`' C strings,
    // alive for the call.
    let r = unsafe { (n.compile)(prog, opts.len() as c_int, opts.as_ptr()) };
    let out = if r != 0 {
        Err(format!(
            "NVRTC compile error ({r}): {}",
            text(prog, n.log_size, n.log)
        ))
    } else {
        let ptx = text(prog, n.ptx_size, n.ptx);
        CString::new(ptx).map_err(|_| "NVRTC's PTX holds a NUL".to_string())
    };
    // SAFETY: the program made above, destroyed once.
    unsafe { (n.destroy)(&mut prog) };
    out
}

/// A text NVRTC holds for `prog` (its log, its PTX), by its size and
/// getter, without the trailing NUL.
fn text(prog: Program, size: GetSize, get: GetText) -> String {
    let mut len = 0usize;
    // SAFETY: a live program; `len` is ours.
    if unsafe { size(prog, &mut len) } != 0 || len == 0 {
        return String::new();
    }
    let mut buf = vec![0u8; len];
    // SAFETY: `buf` holds the `len` bytes (NUL included) NVRTC said it
    // writes.
    if unsafe { get(prog, buf.as_mut_ptr().cast()) } != 0 {
        return String::new();
    }
    while buf.last() == Some(&0) {
        buf.pop();
    }
    String::from_utf8_lossy(&buf).into_owned()
}
