//! The HIP runtime entry points replay calls, resolved once when the runtime
//! is loaded. Each field is typed with the signature table's function type
//! (`hip_api::fns`), so no signature is restated here; the C types and
//! constants they take come from the same crate.

pub use hip_api::*;

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

/// `HipApi { NAME: fns::NAME, … }` and its loader, from a list of names.
macro_rules! hip_api_table {
    ($($name:ident),* $(,)?) => {
        /// Every entry point replay uses.
        #[allow(non_snake_case)]
        pub struct HipApi {
            $(pub $name: fns::$name,)*
        }

        impl HipApi {
            /// Resolves every entry point in `lib`, naming the first one missing.
            pub fn load(lib: &libloading::Library) -> Result<HipApi, MissingSymbol> {
                Ok(HipApi {
                    $(
                        // SAFETY: the symbol is a HIP runtime entry point whose
                        // C signature is the field's type, the table's
                        // declaration of it (checked against hip_runtime_api.h).
                        $name: *unsafe { lib.get::<fns::$name>(concat!(stringify!($name), "\0").as_bytes()) }
                            .map_err(|source| MissingSymbol {
                                symbol: stringify!($name),
                                source,
                            })?,
                    )*
                })
            }
        }
    };
}

hip_api_table!(
    hipInit,
    hipSetDevice,
    hipGetDeviceCount,
    hipDeviceGetName,
    hipGetErrorString,
    hipMalloc,
    hipMallocManaged,
    hipHostMalloc,
    hipFree,
    hipHostFree,
    hipMemcpy,
    hipMemcpyAsync,
    hipMemset,
    hipMemsetAsync,
    hipStreamCreate,
    hipStreamDestroy,
    hipStreamSynchronize,
    hipStreamWaitEvent,
    hipDeviceSynchronize,
    hipEventCreate,
    hipEventDestroy,
    hipEventRecord,
    hipEventSynchronize,
    hipEventElapsedTime,
    hipModuleLoadData,
    hipModuleUnload,
    hipModuleGetFunction,
    hipModuleLaunchKernel,
    hipMemcpyPeer,
    hipMemcpyPeerAsync,
    hipDeviceEnablePeerAccess,
    hipDeviceCanAccessPeer,
);

/// `STRUCT { NAME: fns::NAME, … }`: a group of entry points a runtime may
/// lack (virtual memory management came late to HIP); loaded all or none.
macro_rules! hip_api_optional {
    ($(#[$doc:meta])* $api:ident: $($name:ident),* $(,)?) => {
        $(#[$doc])*
        #[allow(non_snake_case)]
        pub struct $api {
            $(pub $name: fns::$name,)*
        }

        impl $api {
            /// Every entry point, or `None` when `lib` lacks one.
            pub fn load(lib: &libloading::Library) -> Option<$api> {
                Some($api {
                    $(
                        // SAFETY: as in `HipApi::load`: the symbol is the HIP
                        // entry point the table declares with this type.
                        $name: *unsafe { lib.get::<fns::$name>(concat!(stringify!($name), "\0").as_bytes()) }.ok()?,
                    )*
                })
            }
        }
    };
}

hip_api_optional!(
    /// HIP's virtual memory management, for placement.
    VmmApi:
    hipRuntimeGetVersion,
    hipMemGetAllocationGranularity,
    hipMemAddressReserve,
    hipMemAddressFree,
    hipMemCreate,
    hipMemRelease,
    hipMemMap,
    hipMemUnmap,
    hipMemSetAccess,
);

hip_api_optional!(
    /// HIP's graph API, for replaying recorded graphs as graphs.
    GraphApi:
    hipGraphCreate,
    hipGraphDestroy,
    hipGraphAddKernelNode,
    hipGraphAddMemcpyNode1D,
    hipGraphAddMemsetNode,
    hipGraphAddEmptyNode,
    hipGraphAddEventRecordNode,
    hipGraphAddEventWaitNode,
    hipGraphInstantiate,
    hipGraphLaunch,
    hipGraphExecDestroy,
);

hip_api_optional!(
    /// 2D copies and memsets (`memcpy_rect`, `memset_rect`; 3D ones slice by slice).
    RectApi:
    hipMemcpy2D,
    hipMemcpy2DAsync,
    hipMemset2D,
    hipMemset2DAsync,
);

hip_api_optional!(
    /// Stream-ordered memory pools.
    PoolApi:
    hipMemPoolCreate,
    hipMemPoolDestroy,
    hipMemPoolTrimTo,
    hipMemPoolSetAttribute,
    hipDeviceSetMemPool,
    hipMallocFromPoolAsync,
    hipFreeAsync,
);

hip_api_optional!(
    /// Mipmapped arrays and their levels.
    MipmapApi:
    hipMipmappedArrayCreate,
    hipMipmappedArrayGetLevel,
    hipMipmappedArrayDestroy,
);

hip_api_optional!(
    /// Arrays, copies to and from them, texture and surface objects.
    ArrayApi:
    hipArray3DCreate,
    hipArrayDestroy,
    hipMemcpy3D,
    hipMemcpy3DAsync,
    hipCreateTextureObject,
    hipDestroyTextureObject,
    _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc,
    _Z23hipDestroySurfaceObjectP13__hip_surface,
);
