//! `CudaDriver`: `libcuda.so.1` loaded and its entry points resolved.
//!
//! Loading does not call `cuInit` and touches no context, so the capture
//! library can use [`CudaDriver::param_layout`] inside an application that
//! already runs CUDA (`dlopen` hands back the copy the runtime loaded).

use std::ffi::{CStr, CString, c_char, c_void};
use std::mem::ManuallyDrop;
use std::sync::OnceLock;

use crate::error::{CudaError, result_name_or_number};
use crate::ffi::{
    self, CUDA_ERROR_INVALID_VALUE, CUDA_SUCCESS, CUfunction, CUkernel, CUresult, CudaApi,
};

/// The driver library's soname.
pub const LIBCUDA: &str = "libcuda.so.1";
/// Environment variable naming another driver library (tests, shims).
pub const DRIVER_ENV: &str = "HRR_CUDA_DRIVER";
/// Upper bound on a kernel's parameter count: the parameter space holds at
/// most 32764 bytes (CUDA 12.1+, Volta and newer) and a parameter takes >= 1.
pub const MAX_PARAMS: usize = 32764;

/// `libcuda.so.1`, loaded, with its entry points resolved.
pub struct CudaDriver {
    api: CudaApi,
    /// `cuMemGetAllocationGranularity`, when the driver has it (placement).
    granularity: Option<ffi::CuMemGetAllocationGranularity>,
    path: String,
    // Never dlclose'd: the driver starts threads and registers atexit work
    // that must not outlive its code. The process keeps it to the end.
    _lib: ManuallyDrop<libloading::Library>,
}

impl std::fmt::Debug for CudaDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDriver")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

static DEFAULT: OnceLock<Result<&'static CudaDriver, CudaError>> = OnceLock::new();

impl CudaDriver {
    /// The process-wide driver: `$HRR_CUDA_DRIVER` if set, else
    /// `libcuda.so.1` through the dynamic loader's search path. Loaded once.
    pub fn get() -> Result<&'static CudaDriver, CudaError> {
        DEFAULT
            .get_or_init(|| {
                let path = std::env::var(DRIVER_ENV)
                    .ok()
                    .filter(|p| !p.is_empty())
                    .unwrap_or_else(|| LIBCUDA.into());
                CudaDriver::open(&path).map(|d| &*Box::leak(Box::new(d)))
            })
            .clone()
    }

    /// Loads the driver from `path` (a soname or a file path). Each call
    /// loads anew; prefer [`CudaDriver::get`].
    pub fn open(path: &str) -> Result<CudaDriver, CudaError> {
        // SAFETY: loading libcuda runs its initialisers; it is a shared
        // library made to be loaded into any process.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| CudaError::Load {
            path: path.into(),
            reason: load_reason(path, &e),
        })?;
        // SAFETY: every name in the table is a libcuda export whose C
        // signature is the one `ffi` declares for it (see the comments there).
        let api = unsafe {
            CudaApi::resolve(|name| match lib.get::<*mut c_void>(name) {
                Ok(sym) => *sym,
                Err(_) => std::ptr::null_mut(),
            })
        }
        .map_err(|symbol| CudaError::Symbol {
            path: path.into(),
            symbol,
        })?;
        // SAFETY: the exported function of this name has the signature
        // `ffi::CuMemGetAllocationGranularity` declares.
        let granularity = unsafe {
            lib.get::<ffi::CuMemGetAllocationGranularity>(b"cuMemGetAllocationGranularity\0")
        }
        .ok()
        .map(|f| *f);
        Ok(CudaDriver {
            api,
            granularity,
            path: path.into(),
            _lib: ManuallyDrop::new(lib),
        })
    }

    /// The entry points.
    pub fn api(&self) -> &CudaApi {
        &self.api
    }

    /// `cuMemGetAllocationGranularity`, where the driver exports it.
    pub fn granularity_fn(&self) -> Option<ffi::CuMemGetAllocationGranularity> {
        self.granularity
    }

    /// The library's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `cuDriverGetVersion`: 13000 for CUDA 13.0.
    pub fn version(&self) -> Result<i32, CudaError> {
        let mut v = 0;
        // SAFETY: valid out-pointer; callable before cuInit.
        let code = unsafe { (self.api.cuDriverGetVersion)(&mut v) };
        self.check("cuDriverGetVersion", code)?;
        Ok(v)
    }

    /// `cuda.h`'s name for a `CUresult` (`CUDA_ERROR_INVALID_VALUE`).
    pub fn error_name(&self, code: CUresult) -> String {
        // SAFETY: the driver stores a pointer to a static string, or fails.
        unsafe { static_str(self.api.cuGetErrorName, code) }
            .unwrap_or_else(|| result_name_or_number(code))
    }

    /// The driver's description of a `CUresult`.
    pub fn error_string(&self, code: CUresult) -> String {
        // SAFETY: as in `error_name`.
        unsafe { static_str(self.api.cuGetErrorString, code) }
            .unwrap_or_else(|| "unrecognised error code".into())
    }

    /// `Ok` for `CUDA_SUCCESS`, else a [`CudaError::Call`] naming `call`.
    pub fn check(&self, call: &'static str, code: CUresult) -> Result<(), CudaError> {
        if code == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(CudaError::Call {
                call,
                code,
                name: self.error_name(code),
                message: self.error_string(code),
            })
        }
    }

    /// `(offset, size)` of every parameter of `func`, in declaration order,
    /// from `cuFuncGetParamInfo` (CUDA 12.4+). Offsets are those of the
    /// device-side parameter layout, i.e. of the `extra` buffer launches pack.
    ///
    /// # Safety
    /// `func` must be a live `CUfunction` of a context current on this thread
    /// (the driver rejects most bad handles, but not every dangling one).
    pub unsafe fn param_layout(&self, func: CUfunction) -> Result<Vec<(usize, usize)>, CudaError> {
        let f = self.api.cuFuncGetParamInfo.ok_or(CudaError::Unsupported {
            symbol: "cuFuncGetParamInfo",
            needs: "12.4",
        })?;
        collect_params(|i, off, size| {
            // SAFETY: valid out-pointers; `func` is live (this function's contract).
            unsafe { f(func, i, off, size) }
        })
        .map_err(|code| self.call_error("cuFuncGetParamInfo", code))
    }

    /// As [`CudaDriver::param_layout`] for a `CUkernel` (what the runtime's
    /// `cudaKernel_t` / `__cudaGetKernel` hands out), via `cuKernelGetParamInfo`.
    ///
    /// # Safety
    /// `kernel` must be a live `CUkernel` (context-independent).
    pub unsafe fn kernel_param_layout(
        &self,
        kernel: CUkernel,
    ) -> Result<Vec<(usize, usize)>, CudaError> {
        let f = self
            .api
            .cuKernelGetParamInfo
            .ok_or(CudaError::Unsupported {
                symbol: "cuKernelGetParamInfo",
                needs: "12.4",
            })?;
        collect_params(|i, off, size| {
            // SAFETY: valid out-pointers; `kernel` is live (this function's contract).
            unsafe { f(kernel, i, off, size) }
        })
        .map_err(|code| self.call_error("cuKernelGetParamInfo", code))
    }

    pub(crate) fn call_error(&self, call: &'static str, code: CUresult) -> CudaError {
        CudaError::Call {
            call,
            code,
            name: self.error_name(code),
            message: self.error_string(code),
        }
    }
}

/// Asks `query(index, &offset, &size)` for parameters 0, 1, ... until it
/// answers `CUDA_ERROR_INVALID_VALUE` (index past the last parameter).
/// Any other failure is returned as its code.
pub fn collect_params(
    mut query: impl FnMut(usize, &mut usize, &mut usize) -> CUresult,
) -> Result<Vec<(usize, usize)>, CUresult> {
    let mut out = Vec::new();
    for i in 0..MAX_PARAMS {
        let (mut off, mut size) = (0usize, 0usize);
        match query(i, &mut off, &mut size) {
            CUDA_SUCCESS => out.push((off, size)),
            CUDA_ERROR_INVALID_VALUE => return Ok(out),
            code => return Err(code),
        }
    }
    // A driver that never says "past the end" would loop forever.
    Err(CUDA_ERROR_INVALID_VALUE)
}

/// Calls `cuGetErrorName`/`cuGetErrorString` and copies the static string.
///
/// # Safety
/// `f` must be one of those two entry points.
unsafe fn static_str(f: cuda_api::fns::cuGetErrorString, code: CUresult) -> Option<String> {
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: valid out-pointer (caller's contract for `f`).
    let r = unsafe { f(code, &mut p) };
    if r != CUDA_SUCCESS || p.is_null() {
        return None;
    }
    // SAFETY: on success the driver points `p` at a static NUL-terminated string.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// dlerror's message without the leading `<path>: ` it repeats
/// ("libcuda.so.1: cannot open shared object file: No such file or directory").
pub(crate) fn load_reason(path: &str, e: &libloading::Error) -> String {
    let s = e.to_string();
    s.strip_prefix(path)
        .and_then(|r| r.strip_prefix(": "))
        .unwrap_or(&s)
        .to_string()
}

/// A kernel name as the driver wants it.
pub(crate) fn c_name(call: &'static str, name: &str) -> Result<CString, CudaError> {
    CString::new(name).map_err(|_| CudaError::Invalid {
        call,
        message: format!("kernel name {name:?} contains NUL"),
    })
}

/// Re-exported so callers need not depend on `ffi` paths.
pub use ffi::{OPTIONAL_SYMBOLS, REQUIRED_SYMBOLS};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_is_a_clear_error() {
        let e = CudaDriver::open("/nonexistent/libcuda.so.1").unwrap_err();
        assert!(matches!(e, CudaError::Load { .. }));
        let msg = e.to_string();
        assert!(
            msg.starts_with("cannot load /nonexistent/libcuda.so.1: "),
            "{msg}"
        );
        assert!(msg.contains("No such file"), "{msg}");
        assert!(
            !msg.contains("libcuda.so.1: /nonexistent"),
            "path repeated: {msg}"
        );
    }

    #[test]
    fn default_soname_error_names_it_once() {
        // On a machine with the NVIDIA driver this loads; without, it must
        // fail with the message the CLI prints.
        match CudaDriver::open(LIBCUDA) {
            Ok(d) => assert_eq!(d.path(), LIBCUDA),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("cannot load libcuda.so.1: "), "{msg}");
                assert!(!msg.contains("libcuda.so.1: libcuda.so.1"), "{msg}");
            }
        }
    }

    #[test]
    fn a_library_without_cuda_names_the_first_missing_symbol() {
        // libc loads but exports no driver API.
        let e = CudaDriver::open("libc.so.6").unwrap_err();
        assert_eq!(
            e,
            CudaError::Symbol {
                path: "libc.so.6".into(),
                symbol: "cuInit"
            }
        );
        assert_eq!(
            e.to_string(),
            "libc.so.6 lacks the entry point cuInit (driver too old?)"
        );
    }

    fn fake(
        layout: &'static [(usize, usize)],
    ) -> impl FnMut(usize, &mut usize, &mut usize) -> CUresult {
        move |i, off, size| match layout.get(i) {
            Some(&(o, s)) => {
                *off = o;
                *size = s;
                CUDA_SUCCESS
            }
            None => CUDA_ERROR_INVALID_VALUE,
        }
    }

    #[test]
    fn collects_until_invalid_value() {
        assert_eq!(
            collect_params(fake(&[(0, 8), (8, 8), (16, 4), (20, 4)])),
            Ok(vec![(0, 8), (8, 8), (16, 4), (20, 4)])
        );
        assert_eq!(collect_params(fake(&[])), Ok(vec![]));
        assert_eq!(collect_params(fake(&[(0, 24)])), Ok(vec![(0, 24)]));
    }

    #[test]
    fn other_errors_stop_the_walk() {
        let r = collect_params(|i, off, size| {
            if i == 0 {
                (*off, *size) = (0, 8);
                CUDA_SUCCESS
            } else {
                400 // CUDA_ERROR_INVALID_HANDLE
            }
        });
        assert_eq!(r, Err(400));
    }

    #[test]
    fn a_driver_that_never_ends_is_cut_off() {
        let mut calls = 0;
        let r = collect_params(|_, off, size| {
            calls += 1;
            (*off, *size) = (0, 1);
            CUDA_SUCCESS
        });
        assert_eq!(r, Err(CUDA_ERROR_INVALID_VALUE));
        assert_eq!(calls, MAX_PARAMS);
    }
}
