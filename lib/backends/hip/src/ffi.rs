//! The HIP runtime entry points replay calls, as C function pointer types.
//! Signatures follow `hip_runtime_api.h` (HIP 5.x); the C types and constants
//! they take come from the shared `hip-api` crate.

use std::ffi::{c_char, c_int, c_uint, c_void};

pub use hip_api::*;

/// Every entry point replay uses, resolved once when the runtime is loaded.
#[allow(non_snake_case)]
pub struct HipApi {
    pub hipInit: unsafe extern "C" fn(c_uint) -> HipError,
    pub hipSetDevice: unsafe extern "C" fn(c_int) -> HipError,
    pub hipGetDeviceCount: unsafe extern "C" fn(*mut c_int) -> HipError,
    pub hipDeviceGetName: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> HipError,
    pub hipGetErrorString: unsafe extern "C" fn(HipError) -> *const c_char,
    pub hipMalloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    pub hipMallocManaged: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    pub hipHostMalloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    pub hipFree: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub hipHostFree: unsafe extern "C" fn(*mut c_void) -> HipError,
    pub hipMemcpy:
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, HipMemcpyKind) -> HipError,
    pub hipMemcpyAsync: unsafe extern "C" fn(
        *mut c_void,
        *const c_void,
        usize,
        HipMemcpyKind,
        HipStream,
    ) -> HipError,
    pub hipMemset: unsafe extern "C" fn(*mut c_void, c_int, usize) -> HipError,
    pub hipMemsetAsync: unsafe extern "C" fn(*mut c_void, c_int, usize, HipStream) -> HipError,
    pub hipStreamCreate: unsafe extern "C" fn(*mut HipStream) -> HipError,
    pub hipStreamDestroy: unsafe extern "C" fn(HipStream) -> HipError,
    pub hipStreamSynchronize: unsafe extern "C" fn(HipStream) -> HipError,
    pub hipStreamWaitEvent: unsafe extern "C" fn(HipStream, HipEvent, c_uint) -> HipError,
    pub hipDeviceSynchronize: unsafe extern "C" fn() -> HipError,
    pub hipEventCreate: unsafe extern "C" fn(*mut HipEvent) -> HipError,
    pub hipEventDestroy: unsafe extern "C" fn(HipEvent) -> HipError,
    pub hipEventRecord: unsafe extern "C" fn(HipEvent, HipStream) -> HipError,
    pub hipEventSynchronize: unsafe extern "C" fn(HipEvent) -> HipError,
    pub hipEventElapsedTime: unsafe extern "C" fn(*mut f32, HipEvent, HipEvent) -> HipError,
    pub hipModuleLoadData: unsafe extern "C" fn(*mut HipModule, *const c_void) -> HipError,
    pub hipModuleUnload: unsafe extern "C" fn(HipModule) -> HipError,
    pub hipModuleGetFunction:
        unsafe extern "C" fn(*mut HipFunction, HipModule, *const c_char) -> HipError,
    #[allow(clippy::type_complexity)]
    pub hipModuleLaunchKernel: unsafe extern "C" fn(
        HipFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        HipStream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> HipError,
}

/// An entry point the runtime library does not export.
#[derive(Debug, thiserror::Error)]
#[error("{symbol}")]
pub struct MissingSymbol {
    /// The entry point's name.
    pub symbol: &'static str,
    /// What the dynamic loader said.
    #[source]
    pub source: libloading::Error,
}

impl HipApi {
    /// Resolves every entry point in `lib`, naming the first one missing.
    pub fn load(lib: &libloading::Library) -> Result<HipApi, MissingSymbol> {
        macro_rules! sym {
            ($name:ident) => {
                // SAFETY: the symbol is a HIP runtime entry point whose C signature
                // is the field's type, as declared by hip_runtime_api.h.
                *unsafe { lib.get(concat!(stringify!($name), "\0").as_bytes()) }.map_err(
                    |source| MissingSymbol {
                        symbol: stringify!($name),
                        source,
                    },
                )?
            };
        }
        Ok(HipApi {
            hipInit: sym!(hipInit),
            hipSetDevice: sym!(hipSetDevice),
            hipGetDeviceCount: sym!(hipGetDeviceCount),
            hipDeviceGetName: sym!(hipDeviceGetName),
            hipGetErrorString: sym!(hipGetErrorString),
            hipMalloc: sym!(hipMalloc),
            hipMallocManaged: sym!(hipMallocManaged),
            hipHostMalloc: sym!(hipHostMalloc),
            hipFree: sym!(hipFree),
            hipHostFree: sym!(hipHostFree),
            hipMemcpy: sym!(hipMemcpy),
            hipMemcpyAsync: sym!(hipMemcpyAsync),
            hipMemset: sym!(hipMemset),
            hipMemsetAsync: sym!(hipMemsetAsync),
            hipStreamCreate: sym!(hipStreamCreate),
            hipStreamDestroy: sym!(hipStreamDestroy),
            hipStreamSynchronize: sym!(hipStreamSynchronize),
            hipStreamWaitEvent: sym!(hipStreamWaitEvent),
            hipDeviceSynchronize: sym!(hipDeviceSynchronize),
            hipEventCreate: sym!(hipEventCreate),
            hipEventDestroy: sym!(hipEventDestroy),
            hipEventRecord: sym!(hipEventRecord),
            hipEventSynchronize: sym!(hipEventSynchronize),
            hipEventElapsedTime: sym!(hipEventElapsedTime),
            hipModuleLoadData: sym!(hipModuleLoadData),
            hipModuleUnload: sym!(hipModuleUnload),
            hipModuleGetFunction: sym!(hipModuleGetFunction),
            hipModuleLaunchKernel: sym!(hipModuleLaunchKernel),
        })
    }
}
