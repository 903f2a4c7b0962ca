//! Minimal HSA runtime bindings: the subset of `hsa/hsa.h` and
//! `hsa/hsa_ext_amd.h` an application needs to allocate device memory straight
//! from an AMD memory pool, behind the HIP runtime's back (DESIGN.md §1: the
//! memory hrr's region sidecars exist for). No crate on crates.io provides them.
//!
//! The library is loaded at run time ([`Hsa::load`]), so nothing here needs
//! ROCm to build: by default ROCm's `libhsa-runtime64.so.1`, or any library
//! exporting the same entry points, e.g. hrr's CPU runtime `libhrr_hip_cpu.so`.
//!
//! * [`raw`]: the C types, constants and function-pointer types (C names).
//! * [`Hsa`]: a loaded and initialised runtime (`hsa_init` on load,
//!   `hsa_shut_down` on drop), with safe queries and [`HsaBuffer`] allocations.
//!
//! ```no_run
//! let hsa = hsa_sys::Hsa::load_default()?;
//! let pool = hsa.gpu_coarse_pool()?;
//! let buf = hsa.allocate(&pool, 256 << 10)?;
//! hsa.allow_access_all(&buf)?;
//! println!("HRR_SEGMENT base={:#x} size={}", buf.addr(), buf.len());
//! # Ok::<(), hsa_sys::Error>(())
//! ```
#![deny(unsafe_op_in_unsafe_fn)]

pub mod raw;

use raw::*;
use std::ffi::{CStr, OsStr, OsString, c_char, c_void};
use std::fmt;
use std::ptr::NonNull;

/// The library [`Hsa::load_default`] opens.
pub const DEFAULT_LIBRARY: &str = "libhsa-runtime64.so.1";

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot load HSA runtime {path:?}")]
    /// The library could not be loaded.
    Load {
        /// The library.
        path: OsString,
        /// The dynamic loader's error.
        source: libloading::Error,
    },
    #[error("HSA runtime {path:?} lacks {symbol}")]
    /// The library lacks an entry point.
    Symbol {
        /// The library.
        path: OsString,
        /// The entry point.
        symbol: &'static str,
        /// The dynamic loader's error.
        source: libloading::Error,
    },
    #[error("{call} failed: {message} (hsa_status_t {status:#x})")]
    /// An HSA call failed.
    Status {
        /// The call.
        call: &'static str,
        /// What it returned.
        status: hsa_status_t,
        /// `hsa_status_string`'s text for it.
        message: String,
    },
    #[error("no GPU agent has a coarse-grained global pool that allows runtime allocation")]
    /// No pool hrr can allocate hidden device memory from.
    NoGpuCoarsePool,
    #[error("a zero-byte allocation was requested")]
    /// An allocation of zero bytes.
    ZeroSize,
}

/// A result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `hsa_device_type_t`, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceType {
    /// A CPU agent.
    Cpu,
    /// A GPU agent.
    Gpu,
    /// A DSP agent.
    Dsp,
    /// A type value HSA did not define in 5.2.
    Other(u32),
}

impl From<hsa_device_type_t> for DeviceType {
    fn from(v: hsa_device_type_t) -> Self {
        match v {
            HSA_DEVICE_TYPE_CPU => DeviceType::Cpu,
            HSA_DEVICE_TYPE_GPU => DeviceType::Gpu,
            HSA_DEVICE_TYPE_DSP => DeviceType::Dsp,
            v => DeviceType::Other(v),
        }
    }
}

/// An agent with the attributes hrr looks at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    /// The agent's handle.
    pub handle: hsa_agent_t,
    /// What kind of agent.
    pub device: DeviceType,
    /// Its name.
    pub name: String,
}

/// A memory pool of an agent, with its attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryPool {
    /// The pool's handle.
    pub handle: hsa_amd_memory_pool_t,
    /// The agent the pool was found on.
    pub agent: hsa_agent_t,
    /// Its segment.
    pub segment: hsa_amd_segment_t,
    /// `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*` bits (only meaningful for the global segment).
    pub global_flags: u32,
    /// Whether `hsa_amd_memory_pool_allocate` may allocate from it.
    pub runtime_alloc_allowed: bool,
    /// Its size in bytes.
    pub size: usize,
}

impl MemoryPool {
    /// Whether the pool is in the global segment.
    pub fn is_global(&self) -> bool {
        self.segment == HSA_AMD_SEGMENT_GLOBAL
    }

    /// Whether it is global and coarse-grained.
    pub fn is_coarse_grained(&self) -> bool {
        self.is_global() && self.global_flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0
    }
}

/// A loaded, initialised HSA runtime. Dropping it calls `hsa_shut_down` and
/// unloads the library; [`HsaBuffer`]s borrow it, so none outlives it.
pub struct Hsa {
    fns: HsaFns,
    path: OsString,
    // Declared last: dropped after `Drop::drop` used `fns`.
    _lib: libloading::Library,
}

impl fmt::Debug for Hsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hsa")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Hsa {
    /// Loads [`DEFAULT_LIBRARY`] (ROCm's runtime) and initialises it.
    pub fn load_default() -> Result<Hsa> {
        Hsa::load(DEFAULT_LIBRARY)
    }

    /// Loads the HSA runtime at `path` (a file name searched as `dlopen` does, or
    /// a path), resolves the entry points of [`raw::SYMBOLS`] and calls `hsa_init`.
    pub fn load(path: impl AsRef<OsStr>) -> Result<Hsa> {
        let path = path.as_ref().to_os_string();
        // SAFETY: loading a shared library runs its initialisers; the HSA runtime
        // and hrr's CPU runtime are ordinary libraries whose constructors have no
        // preconditions on the loading program.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|source| Error::Load {
            path: path.clone(),
            source,
        })?;
        let fns = resolve(&lib, &path)?;
        Hsa::init(fns, path, lib)
    }

    /// [`Hsa::load`], binding the entry points the way a program linked
    /// against the runtime binds them: the library is opened `RTLD_GLOBAL`,
    /// must define every entry point (as the link editor would demand), and
    /// each call then goes to the first definition in the process's global
    /// scope, where an `LD_PRELOAD`ed interposer (hrr's capture library under
    /// `hrr-cap --hsa-regions`) comes before the runtime. [`Hsa::load`] binds
    /// to the library's own definitions, so its calls pass any interposer by.
    pub fn load_global(path: impl AsRef<OsStr>) -> Result<Hsa> {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        let path = path.as_ref().to_os_string();
        // SAFETY: as in `load`: loading runs the library's initialisers, which
        // have no preconditions on the loading program.
        let lib =
            unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) }.map_err(|source| {
                Error::Load {
                    path: path.clone(),
                    source,
                }
            })?;
        let global = Library::this();
        let fns = resolve_by(&path, &|name| {
            // SAFETY: only the symbol's address is read (as a pointer), never
            // called here; `lib` outlives the lookup.
            let own = unsafe { lib.get::<*mut c_void>(name) }.map(|s| *s)?;
            // SAFETY: as above; the global scope's definition is read as an
            // address only, and `lib` (which defines it if nothing else does)
            // stays loaded.
            Ok(unsafe { global.get::<*mut c_void>(name) }.map_or(own, |s| *s))
        })?;
        Hsa::init(fns, path, lib.into())
    }

    /// Calls `hsa_init` through `fns` (resolved from `lib`) and keeps both.
    fn init(fns: HsaFns, path: OsString, lib: libloading::Library) -> Result<Hsa> {
        // SAFETY: hsa_init takes no arguments; `fns` came from `lib`, which is loaded.
        let status = unsafe { (fns.hsa_init)() };
        if status != HSA_STATUS_SUCCESS {
            // Not initialised: no Hsa (whose Drop calls hsa_shut_down) is built.
            let message = status_string(&fns, status);
            return Err(Error::Status {
                call: "hsa_init",
                status,
                message,
            });
        }
        Ok(Hsa {
            fns,
            path,
            _lib: lib,
        })
    }

    /// The path or name the runtime was loaded from.
    pub fn path(&self) -> &OsStr {
        &self.path
    }

    /// The raw entry points, for calls the safe layer does not cover. They are
    /// valid while `self` lives.
    pub fn fns(&self) -> &HsaFns {
        &self.fns
    }

    /// `hsa_status_string`, or a generic description when the runtime has none.
    pub fn status_string(&self, status: hsa_status_t) -> String {
        status_string(&self.fns, status)
    }

    fn check(&self, call: &'static str, status: hsa_status_t) -> Result<()> {
        if status == HSA_STATUS_SUCCESS {
            Ok(())
        } else {
            Err(Error::Status {
                call,
                status,
                message: self.status_string(status),
            })
        }
    }

    /// Every agent (`hsa_iterate_agents`), with its device type and name.
    pub fn agents(&self) -> Result<Vec<Agent>> {
        let mut handles: Vec<hsa_agent_t> = Vec::new();
        // SAFETY: `push_handle::<hsa_agent_t>` has the callback's C signature and
        // `data` points at `handles`, alive and exclusively borrowed for the call.
        let r = unsafe {
            (self.fns.hsa_iterate_agents)(
                Some(push_handle::<hsa_agent_t>),
                (&raw mut handles).cast(),
            )
        };
        self.check("hsa_iterate_agents", r)?;
        handles
            .into_iter()
            .map(|handle| {
                let mut device: hsa_device_type_t = 0;
                // SAFETY: HSA_AGENT_INFO_DEVICE writes one hsa_device_type_t (u32).
                let r = unsafe {
                    (self.fns.hsa_agent_get_info)(
                        handle,
                        HSA_AGENT_INFO_DEVICE,
                        (&raw mut device).cast(),
                    )
                };
                self.check("hsa_agent_get_info(HSA_AGENT_INFO_DEVICE)", r)?;
                let mut name = [0 as c_char; HSA_AGENT_NAME_LEN];
                // SAFETY: HSA_AGENT_INFO_NAME writes a char[64].
                let r = unsafe {
                    (self.fns.hsa_agent_get_info)(
                        handle,
                        HSA_AGENT_INFO_NAME,
                        name.as_mut_ptr().cast(),
                    )
                };
                self.check("hsa_agent_get_info(HSA_AGENT_INFO_NAME)", r)?;
                let name = name
                    .iter()
                    .take_while(|&&c| c != 0)
                    .map(|&c| c as u8 as char)
                    .collect();
                Ok(Agent {
                    handle,
                    device: device.into(),
                    name,
                })
            })
            .collect()
    }

    /// The memory pools of `agent` (`hsa_amd_agent_iterate_memory_pools`), with
    /// segment, global flags, runtime-allocation permission and size.
    pub fn memory_pools(&self, agent: &Agent) -> Result<Vec<MemoryPool>> {
        let mut handles: Vec<hsa_amd_memory_pool_t> = Vec::new();
        // SAFETY: as in `agents`, for the pool callback.
        let r = unsafe {
            (self.fns.hsa_amd_agent_iterate_memory_pools)(
                agent.handle,
                Some(push_handle::<hsa_amd_memory_pool_t>),
                (&raw mut handles).cast(),
            )
        };
        self.check("hsa_amd_agent_iterate_memory_pools", r)?;
        handles
            .into_iter()
            .map(|handle| self.pool_info(agent.handle, handle))
            .collect()
    }

    fn pool_info(&self, agent: hsa_agent_t, handle: hsa_amd_memory_pool_t) -> Result<MemoryPool> {
        let get = self.fns.hsa_amd_memory_pool_get_info;
        let mut segment: hsa_amd_segment_t = 0;
        // SAFETY: SEGMENT writes one hsa_amd_segment_t (u32).
        let r = unsafe {
            get(
                handle,
                HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                (&raw mut segment).cast(),
            )
        };
        self.check("hsa_amd_memory_pool_get_info(SEGMENT)", r)?;
        let mut global_flags: u32 = 0;
        if segment == HSA_AMD_SEGMENT_GLOBAL {
            // SAFETY: GLOBAL_FLAGS writes one uint32_t (defined for global pools only).
            let r = unsafe {
                get(
                    handle,
                    HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                    (&raw mut global_flags).cast(),
                )
            };
            self.check("hsa_amd_memory_pool_get_info(GLOBAL_FLAGS)", r)?;
        }
        // A C `bool` is one byte; read it as u8 so no value is an invalid Rust bool.
        let mut alloc_allowed: u8 = 0;
        // SAFETY: RUNTIME_ALLOC_ALLOWED writes one bool (1 byte).
        let r = unsafe {
            get(
                handle,
                HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                (&raw mut alloc_allowed).cast(),
            )
        };
        self.check("hsa_amd_memory_pool_get_info(RUNTIME_ALLOC_ALLOWED)", r)?;
        let mut size: usize = 0;
        // SAFETY: SIZE writes one size_t.
        let r = unsafe {
            get(
                handle,
                HSA_AMD_MEMORY_POOL_INFO_SIZE,
                (&raw mut size).cast(),
            )
        };
        self.check("hsa_amd_memory_pool_get_info(SIZE)", r)?;
        Ok(MemoryPool {
            handle,
            agent,
            segment,
            global_flags,
            runtime_alloc_allowed: alloc_allowed != 0,
            size,
        })
    }

    /// The first GPU agent's coarse-grained global pool that allows runtime
    /// allocation: where a library puts device memory HIP never sees.
    pub fn gpu_coarse_pool(&self) -> Result<MemoryPool> {
        for agent in self
            .agents()?
            .iter()
            .filter(|a| a.device == DeviceType::Gpu)
        {
            if let Some(p) = self
                .memory_pools(agent)?
                .into_iter()
                .find(|p| p.is_coarse_grained() && p.runtime_alloc_allowed)
            {
                return Ok(p);
            }
        }
        Err(Error::NoGpuCoarsePool)
    }

    /// `hsa_amd_memory_pool_allocate(pool, size, 0, &ptr)`; freed when the buffer drops.
    pub fn allocate(&self, pool: &MemoryPool, size: usize) -> Result<HsaBuffer<'_>> {
        if size == 0 {
            return Err(Error::ZeroSize);
        }
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: `ptr` is a valid out-pointer; flags 0 is the documented default.
        let r = unsafe { (self.fns.hsa_amd_memory_pool_allocate)(pool.handle, size, 0, &mut ptr) };
        self.check("hsa_amd_memory_pool_allocate", r)?;
        let ptr = NonNull::new(ptr).ok_or(Error::Status {
            call: "hsa_amd_memory_pool_allocate",
            status: HSA_STATUS_ERROR,
            message: "returned success and a null pointer".into(),
        })?;
        Ok(HsaBuffer {
            hsa: self,
            ptr,
            size,
        })
    }

    /// `hsa_amd_agents_allow_access(agents, NULL, buffer)`.
    pub fn allow_access(&self, agents: &[Agent], buffer: &HsaBuffer<'_>) -> Result<()> {
        let handles: Vec<hsa_agent_t> = agents.iter().map(|a| a.handle).collect();
        let n = u32::try_from(handles.len()).map_err(|_| Error::Status {
            call: "hsa_amd_agents_allow_access",
            status: HSA_STATUS_ERROR_INVALID_ARGUMENT,
            message: "more than u32::MAX agents".into(),
        })?;
        // SAFETY: `handles` holds `n` agents; flags may be NULL (reserved); the
        // buffer is a live pool allocation of this runtime.
        let r = unsafe {
            (self.fns.hsa_amd_agents_allow_access)(
                n,
                handles.as_ptr(),
                std::ptr::null(),
                buffer.ptr.as_ptr(),
            )
        };
        self.check("hsa_amd_agents_allow_access", r)
    }

    /// Grants every agent of the system access to `buffer`.
    pub fn allow_access_all(&self, buffer: &HsaBuffer<'_>) -> Result<()> {
        self.allow_access(&self.agents()?, buffer)
    }
}

impl Drop for Hsa {
    fn drop(&mut self) {
        // SAFETY: `load` succeeded, so this balances its hsa_init; the library is
        // still loaded (`_lib` drops after this).
        let _ = unsafe { (self.fns.hsa_shut_down)() };
    }
}

/// `hsa_status_string` through `fns`, whose library must be loaded.
fn status_string(fns: &HsaFns, status: hsa_status_t) -> String {
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: `s` is a valid out-pointer; the caller keeps the library loaded.
    // hsa_status_string may be called before hsa_init succeeds (it then answers
    // NOT_INITIALIZED and we fall back below).
    let r = unsafe { (fns.hsa_status_string)(status, &mut s) };
    if r == HSA_STATUS_SUCCESS && !s.is_null() {
        // SAFETY: on success the runtime stores a pointer to a static
        // NUL-terminated string.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    } else {
        format!("unknown HSA status {status:#x}")
    }
}

/// Iteration callback: appends each handle to the `Vec<T>` behind `data`.
///
/// # Safety
/// `data` points at a live `Vec<T>` that nothing else accesses during the iteration.
unsafe extern "C" fn push_handle<T>(handle: T, data: *mut c_void) -> hsa_status_t {
    // SAFETY: the caller's contract (we pass `&mut Vec<T>` as `data`).
    let v = unsafe { &mut *data.cast::<Vec<T>>() };
    v.push(handle);
    HSA_STATUS_SUCCESS
}

/// Memory from an HSA pool; `hsa_amd_memory_pool_free` on drop.
pub struct HsaBuffer<'h> {
    hsa: &'h Hsa,
    ptr: NonNull<c_void>,
    size: usize,
}

impl fmt::Debug for HsaBuffer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HsaBuffer({:#x}, {} bytes)", self.addr(), self.size)
    }
}

impl HsaBuffer<'_> {
    /// The base address (device memory: not dereferenceable by the host in general).
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr.as_ptr()
    }

    /// The base address as an integer.
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.size
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Frees the buffer now, reporting the runtime's answer.
    pub fn free(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: a live allocation of this runtime, freed exactly once (no Drop).
        let r = unsafe { (this.hsa.fns.hsa_amd_memory_pool_free)(this.ptr.as_ptr()) };
        this.hsa.check("hsa_amd_memory_pool_free", r)
    }
}

impl Drop for HsaBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: a live allocation of this runtime, freed exactly once.
        let _ = unsafe { (self.hsa.fns.hsa_amd_memory_pool_free)(self.ptr.as_ptr()) };
    }
}

/// The entry points of [`raw::SYMBOLS`], each looked up by `get` (a
/// NUL-terminated name to the symbol's address).
fn resolve_by(
    path: &OsStr,
    get: &dyn Fn(&[u8]) -> std::result::Result<*mut c_void, libloading::Error>,
) -> Result<HsaFns> {
    /// Reads one symbol as the function-pointer type `T`.
    ///
    /// # Safety
    /// `T` must be the symbol's true C signature, a function pointer.
    unsafe fn sym<T: Copy>(
        get: &dyn Fn(&[u8]) -> std::result::Result<*mut c_void, libloading::Error>,
        path: &OsStr,
        symbol: &'static str,
    ) -> Result<T> {
        const { assert!(std::mem::size_of::<T>() == std::mem::size_of::<*mut c_void>()) };
        let mut name = Vec::with_capacity(symbol.len() + 1);
        name.extend_from_slice(symbol.as_bytes());
        name.push(0);
        let p = get(&name).map_err(|source| Error::Symbol {
            path: path.to_os_string(),
            symbol,
            source,
        })?;
        // SAFETY: the caller guarantees T is the symbol's function-pointer type
        // (same size as the address, asserted above).
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
    }
    // SAFETY: each field's PFN_* type is the header signature of its symbol.
    unsafe {
        Ok(HsaFns {
            hsa_init: sym(get, path, "hsa_init")?,
            hsa_shut_down: sym(get, path, "hsa_shut_down")?,
            hsa_status_string: sym(get, path, "hsa_status_string")?,
            hsa_iterate_agents: sym(get, path, "hsa_iterate_agents")?,
            hsa_agent_get_info: sym(get, path, "hsa_agent_get_info")?,
            hsa_amd_agent_iterate_memory_pools: sym(
                get,
                path,
                "hsa_amd_agent_iterate_memory_pools",
            )?,
            hsa_amd_memory_pool_get_info: sym(get, path, "hsa_amd_memory_pool_get_info")?,
            hsa_amd_memory_pool_allocate: sym(get, path, "hsa_amd_memory_pool_allocate")?,
            hsa_amd_memory_pool_free: sym(get, path, "hsa_amd_memory_pool_free")?,
            hsa_amd_agents_allow_access: sym(get, path, "hsa_amd_agents_allow_access")?,
        })
    }
}

fn resolve(lib: &libloading::Library, path: &OsStr) -> Result<HsaFns> {
    resolve_by(path, &|name| {
        // SAFETY: only the symbol's address is read (as a pointer), never called here.
        unsafe { lib.get::<*mut c_void>(name) }.map(|s| *s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_list_matches_fields() {
        // Every name in SYMBOLS is resolved by `resolve_by` (kept in sync by hand;
        // this test fails if one is added to one and not the other).
        // Whitespace (and a trailing comma) is ignored so that rustfmt's line
        // breaks do not matter.
        let src: String = include_str!("lib.rs").split_whitespace().collect();
        for s in SYMBOLS {
            assert!(
                src.contains(&format!("sym(get,path,\"{s}\")"))
                    || src.contains(&format!("sym(get,path,\"{s}\",)")),
                "{s} not resolved"
            );
        }
    }

    #[test]
    fn missing_library_is_an_error() {
        let e = Hsa::load("/nonexistent/libhsa-nothing.so").unwrap_err();
        assert!(matches!(e, Error::Load { .. }), "{e}");
    }

    #[test]
    fn library_without_hsa_is_an_error() {
        // libc has none of the entry points.
        let e = Hsa::load("libc.so.6").unwrap_err();
        assert!(
            matches!(
                e,
                Error::Symbol {
                    symbol: "hsa_init",
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn pool_classification() {
        let p = MemoryPool {
            handle: hsa_amd_memory_pool_t { handle: 1 },
            agent: hsa_agent_t { handle: 2 },
            segment: HSA_AMD_SEGMENT_GLOBAL,
            global_flags: HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
            runtime_alloc_allowed: true,
            size: 1,
        };
        assert!(p.is_coarse_grained());
        let fine = MemoryPool {
            global_flags: HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
            ..p.clone()
        };
        assert!(!fine.is_coarse_grained());
        let group = MemoryPool {
            segment: HSA_AMD_SEGMENT_GROUP,
            ..p
        };
        assert!(!group.is_coarse_grained());
    }
}
