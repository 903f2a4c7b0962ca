//! The shape every CUDA wrapper shares, and the calls the recorder makes
//! into the CUDA runtime and driver on its own behalf.
//!
//! The wrappers themselves are generated from `cuda-api`'s runtime table
//! (`cuda::exports`), like the HIP family's: resolve the next definition
//! once (`Real<args::NAME>`), forward the application's arguments
//! unchanged, return exactly what the runtime returned, and — only on a
//! first-level call with recording on (`Guard`, through [`enter`]) — read
//! what the call produced and hand plain values to the `Recorder`. The
//! recorder's own runtime calls here go through the same table's
//! `Real<args::NAME>`. Two CUDA-specific rules:
//!
//! - **The application's error state is left alone.** CUDA keeps a per-thread
//!   "last error" that *successful* calls do not clear, and workloads check
//!   it (`cudaGetLastError()` after every launch). A query the recorder makes
//!   (pointer attributes, `__cudaGetKernel` for a layout, a stream sync
//!   before reading a D2H result) runs under [`quietly`], which clears an
//!   error it caused unless one was already pending.
//! - **The platform is NVIDIA.** The first CUDA call, before the recorder
//!   exists, sets `HRR_PLATFORM=nvidia` when it was unset, `auto` or `hip`
//!   (detection looks for `hipMalloc`, which a CUDA process lacks), so the
//!   manifest says `"platform":"nvidia"` ([`note_cuda_call`]).

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use api_table::Entry;
use cuda_api::runtime::args;
use hrr_interpose::real_fn::Real;

use super::layout::ParamLayoutError;
use super::types::{self as cu, CudaError, CudaKernel, CudaStream};
use crate::capture::Guard;

/// What a wrapper returns when no later library defines the function.
pub fn missing(api: &str) -> CudaError {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("hrr-intercept: {api}: not defined by any library after the interposer");
    }
    cu::ERROR_NOT_SUPPORTED
}

/// Whether this process means to record (`HRR_OUT` set and the
/// configuration valid): registrations are kept only then.
pub fn recording_wanted() -> bool {
    static WANTED: OnceLock<bool> = OnceLock::new();
    *WANTED.get_or_init(|| matches!(hrr_recorder::config::Config::from_env(), Ok(Some(_))))
}

/// Environment variable turning driver-layer recording off (`0` or `off`):
/// `cu*` calls are then forwarded and tracked but not recorded, so only the
/// runtime layer is (what this library did before it recorded the driver).
pub const ENV_DRIVER_LAYER: &str = "HRR_CUDA_DRIVER_LAYER";

/// Whether driver calls are recorded (read once; see [`ENV_DRIVER_LAYER`]).
pub fn driver_layer_on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        !std::env::var(ENV_DRIVER_LAYER).is_ok_and(|v| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "0" | "off" | "no" | "false"
            )
        })
    })
}

/// Called by every CUDA wrapper before `Guard::enter` (which may create the
/// recorder): the first time, makes the platform NVIDIA unless the user
/// named one.
pub fn note_cuda_call() {
    static NOTED: AtomicBool = AtomicBool::new(false);
    if NOTED.load(Ordering::Relaxed) || NOTED.swap(true, Ordering::AcqRel) {
        return;
    }
    if !recording_wanted() || crate::capture::existing().is_some() {
        return;
    }
    let var = hrr_recorder::config::ENV_PLATFORM;
    let detect = match std::env::var_os(var) {
        None => true,
        Some(v) => {
            let v = v.to_string_lossy().to_ascii_lowercase();
            matches!(v.as_str(), "" | "auto" | "hip")
        }
    };
    if detect {
        // SAFETY: set_var races only with a concurrent getenv from C on
        // another thread. This runs once, on the process's first CUDA
        // runtime call, before the recorder reads its configuration; CUDA
        // applications make that call from the main thread during start-up
        // (Rust readers are serialised by std's environment lock).
        unsafe { std::env::set_var(var, "nvidia") };
        super::log::diag(|| format!("first CUDA call: {var}=nvidia"));
    }
}

/// `Guard::enter` for a CUDA entry point.
pub fn enter(api: &'static str) -> Option<Guard> {
    note_cuda_call();
    Guard::enter(api)
}

// ---------------------------------------------------------------- runtime queries

/// Runs a runtime call made on the recorder's behalf (`f` returns its value
/// and the call's `cudaError_t`) so that an error it causes does not surface
/// in the application's `cudaGetLastError`: cleared unless an error of the
/// application's was already pending (which is then left as it is).
pub fn quietly<T>(f: impl FnOnce() -> (T, CudaError)) -> T {
    static PEEK: Real<args::cudaPeekAtLastError> = Real::new();
    static CLEAR: Real<args::cudaGetLastError> = Real::new();
    // SAFETY: cudaPeekAtLastError takes nothing and only reads the state.
    let before = PEEK.get().map_or(cu::SUCCESS, |p| unsafe {
        args::cudaPeekAtLastError {}.call(p)
    });
    let (v, ret) = f();
    if ret != cu::SUCCESS
        && before == cu::SUCCESS
        && let Some(clear) = CLEAR.get()
    {
        // SAFETY: as above; it resets the calling thread's last error.
        unsafe { args::cudaGetLastError {}.call(clear) };
    }
    v
}

/// The runtime's `cudaMemoryType` of `p` (`None`: the query failed).
pub fn pointer_type(p: u64) -> Option<c_int> {
    static REAL: Real<args::cudaPointerGetAttributes> = Real::new();
    let f = REAL.get()?;
    let mut buf = cu::PointerAttributesBuf::default();
    let a = args::cudaPointerGetAttributes {
        attributes: buf.0.as_mut_ptr().cast(),
        ptr: p as *const c_void,
    };
    let ret = quietly(|| {
        // SAFETY: `attributes` is 256 zeroed, 8-aligned bytes of ours,
        // larger than the struct; the runtime only looks `p` up, never
        // dereferences it.
        let r = unsafe { a.call(f) };
        (r, r)
    });
    (ret == cu::SUCCESS).then(|| buf.memory_type())
}

/// Waits for `stream` (a handle, as an address) through the real runtime
/// (an async D2H's result is read only once it has landed).
pub fn sync_stream(stream: u64) {
    static REAL: Real<args::cudaStreamSynchronize> = Real::new();
    if let Some(f) = REAL.get() {
        hrr_recorder::self_profile::phase("phase D2H: stream wait", || {
            quietly(|| {
                let a = args::cudaStreamSynchronize {
                    stream: stream as CudaStream,
                };
                // SAFETY: the application's own stream handle, just used
                // successfully; the runtime treats it as an opaque handle.
                let r = unsafe { a.call(f) };
                ((), r)
            })
        });
    }
}

/// The real `__cudaGetKernel(&k, hostFun)`: the `cudaKernel_t` of a
/// registered host stub (0 when it fails).
pub fn kernel_of_host_fun(host_fun: u64) -> u64 {
    static REAL: Real<args::__cudaGetKernel> = Real::new();
    let Some(f) = REAL.get() else {
        return 0;
    };
    let mut k: CudaKernel = std::ptr::null_mut();
    let a = args::__cudaGetKernel {
        kernel: &mut k,
        host_fun: host_fun as *const c_void,
    };
    let ret = quietly(|| {
        // SAFETY: `kernel` points at k, ours; host_fun is a stub the
        // runtime registered.
        let r = unsafe { a.call(f) };
        (r, r)
    });
    if ret == cu::SUCCESS { k as u64 } else { 0 }
}

// ---------------------------------------------------------------- driver

/// The parameter layout of `kernel` (a `cudaKernel_t` = `CUkernel`) from
/// `cuKernelGetParamInfo`. Driver errors do not touch the runtime's
/// last-error state.
pub fn params_of(kernel: u64) -> Result<Vec<(u64, u64)>, ParamLayoutError> {
    if kernel == 0 {
        return Err(ParamLayoutError::NoKernel);
    }
    super::driver::libcuda::param_layout(kernel, true)
}

/// The mangled name of `kernel` from `cuKernelGetName`.
pub fn name_of(kernel: u64) -> Option<String> {
    super::driver::libcuda::describe(kernel, true).map(|(n, _)| n)
}
