//! `HipRuntime`: a HIP runtime library found, loaded and initialised.

use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

use crate::ffi::{GraphApi, HipApi, MissingSymbol, PoolApi, RectApi, VmmApi};

/// The CPU runtime's file name; it is looked for next to the executable.
pub const CPU_RUNTIME: &str = "libhrr_hip_cpu.so";
/// ROCm's HIP runtime, found through the dynamic loader's search path: the
/// development symlink first, then the runtime packages' sonames.
pub const ROCM_RUNTIMES: [&str; 3] = ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"];

/// Which HIP runtime to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeLocation {
    /// hrr's CPU runtime, next to the running executable.
    Cpu,
    /// An explicit library path (`--runtime`, `HRR_HIP_RUNTIME`).
    Path(PathBuf),
    /// ROCm's `libamdhip64.so`.
    Rocm,
}

/// Why a HIP runtime could not be loaded or initialised.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The dynamic loader could not load the library.
    #[error("cannot load HIP runtime {path}")]
    Load {
        /// The library as it was asked for.
        path: String,
        /// What the dynamic loader said.
        #[source]
        source: LoaderError,
    },
    /// The library lacks an entry point replay calls.
    #[error("HIP runtime {path} lacks an entry point")]
    Symbol {
        /// The library.
        path: String,
        /// The entry point.
        #[source]
        source: MissingSymbol,
    },
    #[error("HIP runtime {path}: {call} failed with code {code}")]
    /// An initialisation call failed.
    Init {
        /// The library.
        path: String,
        /// The call.
        call: &'static str,
        /// What it returned.
        code: i32,
    },
    #[error("HIP runtime {path} reports no device")]
    /// `hipGetDeviceCount` reports none.
    NoDevice {
        /// The library.
        path: String,
    },
}

/// What the dynamic loader said about a library it could not load, without
/// the library's path that `dlerror()` starts with: [`RuntimeError::Load`]
/// names the path already.
#[derive(Debug, thiserror::Error)]
#[error("{reason}")]
pub struct LoaderError {
    reason: String,
    error: libloading::Error,
}

impl LoaderError {
    fn new(shown: &str, error: libloading::Error) -> LoaderError {
        let text = error.to_string();
        let reason = text
            .strip_prefix(&format!("{shown}: "))
            .map_or_else(|| text.clone(), str::to_string);
        LoaderError { reason, error }
    }

    /// The loader's error as libloading reports it, path included.
    pub fn error(&self) -> &libloading::Error {
        &self.error
    }
}

/// A HIP runtime, loaded and initialised on device 0.
pub struct HipRuntime {
    pub(crate) api: HipApi,
    /// Virtual memory management, where the runtime has it.
    pub(crate) vmm: Option<VmmApi>,
    /// `hipModuleGetGlobal`, where the runtime exports it.
    pub(crate) get_global: Option<crate::ffi::fns::hipModuleGetGlobal>,
    /// The graph API, where the runtime has it.
    pub(crate) graphs: Option<GraphApi>,
    /// 2D copies and memsets, where the runtime has them.
    pub(crate) rect: Option<RectApi>,
    /// Memory pools, where the runtime has them.
    pub(crate) pools: Option<PoolApi>,
    /// Arrays, texture and surface objects, where the runtime has them.
    pub(crate) arrays: Option<crate::ffi::ArrayApi>,
    pub(crate) mipmaps: Option<crate::ffi::MipmapApi>,
    path: String,
    is_cpu: bool,
    /// `hipGetDeviceCount` when loaded.
    device_count: u32,
    // Keeps the entry points in `api` valid, and is never dlclose'd: the
    // runtime's own threads (the CPU runtime's block workers, ROCm's) may
    // still be starting when the backend is dropped at exit, and unmapping
    // their code under them killed `hrr-play` now and then (SIGSEGV in a
    // worker's start-up, after the replay had passed). The process keeps
    // it to the end, as the CUDA backend keeps the driver.
    _lib: ManuallyDrop<libloading::Library>,
}

impl HipRuntime {
    /// Where `loc` points, resolved to a loadable name or path.
    pub fn resolve(loc: &RuntimeLocation) -> PathBuf {
        match loc {
            RuntimeLocation::Cpu => cpu_runtime_path(),
            RuntimeLocation::Path(p) => p.clone(),
            RuntimeLocation::Rocm => PathBuf::from(ROCM_RUNTIMES[0]),
        }
    }

    /// Loads and initialises the runtime, selecting device 0.
    pub fn load(loc: &RuntimeLocation) -> Result<HipRuntime, RuntimeError> {
        if *loc == RuntimeLocation::Rocm {
            let mut first = None;
            for name in ROCM_RUNTIMES {
                match Self::load_path(PathBuf::from(name)) {
                    Err(RuntimeError::Load { .. }) if first.is_some() => continue,
                    Err(e @ RuntimeError::Load { .. }) => first = Some(e),
                    other => return other,
                }
            }
            return Err(first.expect("at least one name tried"));
        }
        Self::load_path(Self::resolve(loc))
    }

    fn load_path(path: PathBuf) -> Result<HipRuntime, RuntimeError> {
        let shown = path.display().to_string();
        // SAFETY: loading a HIP runtime runs its initialisers; it is a shared
        // library meant to be loaded into any process.
        let lib =
            unsafe { libloading::Library::new(&path) }.map_err(|error| RuntimeError::Load {
                path: shown.clone(),
                source: LoaderError::new(&shown, error),
            })?;
        let api = HipApi::load(&lib).map_err(|source| RuntimeError::Symbol {
            path: shown.clone(),
            source,
        })?;
        // SAFETY: plain HIP calls with valid out-pointers.
        let code = unsafe { (api.hipInit)(0) };
        if code != 0 {
            return Err(RuntimeError::Init {
                path: shown,
                call: "hipInit",
                code,
            });
        }
        let mut count = 0;
        // SAFETY: `count` is a valid out-pointer.
        let code = unsafe { (api.hipGetDeviceCount)(&mut count) };
        if code != 0 || count < 1 {
            return Err(RuntimeError::NoDevice { path: shown });
        }
        // SAFETY: device 0 exists (count >= 1).
        let code = unsafe { (api.hipSetDevice)(0) };
        if code != 0 {
            return Err(RuntimeError::Init {
                path: shown,
                call: "hipSetDevice",
                code,
            });
        }
        let is_cpu = path.file_name().is_some_and(|n| n == CPU_RUNTIME);
        let vmm = VmmApi::load(&lib);
        // SAFETY: the symbol, where present, is HIP's hipModuleGetGlobal,
        // whose C signature is the table's type.
        let get_global =
            unsafe { lib.get::<crate::ffi::fns::hipModuleGetGlobal>(b"hipModuleGetGlobal\0") }
                .ok()
                .map(|f| *f);
        let graphs = GraphApi::load(&lib);
        let rect = RectApi::load(&lib);
        let pools = PoolApi::load(&lib);
        let arrays = crate::ffi::ArrayApi::load(&lib);
        let mipmaps = crate::ffi::MipmapApi::load(&lib);
        Ok(HipRuntime {
            api,
            vmm,
            get_global,
            graphs,
            rect,
            pools,
            arrays,
            mipmaps,
            path: shown,
            is_cpu,
            device_count: count as u32,
            _lib: ManuallyDrop::new(lib),
        })
    }

    /// The library as loaded.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Puts the runtime's symbols into the process's global scope, for a
    /// library loaded later that finds the runtime there (hrr's NCCL-API
    /// stand-in for the CPU runtime). Loaded again by its path with
    /// `RTLD_GLOBAL`, which promotes the loaded copy, and kept.
    pub fn make_global(&self) -> Result<(), RuntimeError> {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: the library is already loaded; this runs no initialiser.
        let lib = unsafe { Library::open(Some(&self.path), RTLD_NOW | RTLD_GLOBAL) }.map_err(
            |error| RuntimeError::Load {
                path: self.path.clone(),
                source: LoaderError::new(&self.path, error),
            },
        )?;
        std::mem::forget(lib);
        Ok(())
    }

    /// Whether it is hrr's CPU runtime.
    pub fn is_cpu(&self) -> bool {
        self.is_cpu
    }

    /// How many devices the runtime has.
    pub fn device_count(&self) -> u32 {
        self.device_count
    }
}

/// `libhrr_nccl_cpu.so`, the NCCL-API stand-in for the CPU runtime, beside
/// the runtime at `runtime`.
pub fn cpu_collectives_path(runtime: &str) -> PathBuf {
    Path::new(runtime)
        .parent()
        .unwrap_or(Path::new("."))
        .join("libhrr_nccl_cpu.so")
}

/// `libhrr_hip_cpu.so` beside the executable, or one folder up (cargo puts
/// test binaries in `target/<profile>/deps`).
pub fn cpu_runtime_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().unwrap_or(Path::new("."));
    [dir.join(CPU_RUNTIME), dir.join("..").join(CPU_RUNTIME)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| dir.join(CPU_RUNTIME))
}
