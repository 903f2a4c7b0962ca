//! The CUDA driver entry points hrr uses, as C function-pointer types, and
//! the table that resolves them out of `libcuda.so.1`.
//!
//! # Which names are resolved, and why by name
//!
//! `cuda.h` maps many API names onto versioned exports with macros
//! (`#define cuMemAlloc cuMemAlloc_v2`, `#define cuStreamDestroy
//! cuStreamDestroy_v2`, ...). A program compiled against `cuda.h` therefore
//! links the *versioned* name, and `libcuda.so.1` keeps exporting every
//! version it ever shipped, each with the ABI of the version it names. We
//! resolve the exact exported name with `dlsym` (libloading): the name pins
//! the signature declared here, whatever CUDA version the driver is.
//!
//! `cuGetProcAddress_v2(name, &pfn, cudaVersion, flags, &status)` is the
//! other route (the runtime uses it). It takes the *base* name and returns
//! the newest version whose ABI matches `cudaVersion`; that is the right tool
//! for code compiled against headers of one CUDA version, and a trap for a
//! hand-written FFI, where the declared signature must be kept in step with
//! the `cudaVersion` passed. Explicit names are simpler and exactly as robust:
//! NVIDIA never removes an exported version from the driver.
//!
//! Entry points newer than CUDA 12.0 (`cuFuncGetParamInfo`,
//! `cuKernelGetParamInfo`: 12.4; `cuEventElapsedTime_v2`: 12.8) are optional:
//! a missing one is `None`, not a load failure.
//!
//! Signatures are `cuda-api`'s table lines (CUDA 13.0 `cuda.h`); `CUdeviceptr` is
//! `unsigned long long` on 64-bit hosts, handles are opaque pointers,
//! `CUresult` and `CUdevice_attribute` are C enums (`int`).
// A transcription of cuda.h: each item keeps its C name and is documented there.
#![allow(missing_docs)]

use std::ffi::{c_int, c_uint, c_void};

pub use cuda_api::{
    CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NO_DEVICE, CUDA_SUCCESS, CUcontext, CUdevice, CUdeviceptr,
    CUevent, CUfunction, CUkernel, CUlaunchConfig, CUmemAccessDesc, CUmemAllocationProp,
    CUmemGenericAllocationHandle, CUmodule, CUresult, CUstream,
};

/// `CUdevice_attribute` values used here.
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;

/// `cuMemGetAllocationGranularity` (CUDA 10.2), as `cuda-api`'s table
/// declares it; resolved on its own by [`crate::driver`] (placement only).
pub type CuMemGetAllocationGranularity = cuda_api::fns::cuMemGetAllocationGranularity;
/// `cuMemAllocManaged` flag: memory accessible from any stream on any device.
pub const CU_MEM_ATTACH_GLOBAL: c_uint = 0x1;
/// `cuStreamCreate` flag: the legacy (blocking) behaviour `cudaStreamCreate` has.
pub const CU_STREAM_DEFAULT: c_uint = 0x0;
/// `cuEventCreate` flag: timing enabled.
pub const CU_EVENT_DEFAULT: c_uint = 0x0;

/// `cuLaunchKernel` `extra` keys (`((void*)0x01)` etc. in `cuda.h`).
pub use cuda_api::{
    CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END,
};

/// Declares the API table: one field per entry point, the exported symbol
/// it is resolved from, and [`REQUIRED_SYMBOLS`] / [`OPTIONAL_SYMBOLS`].
macro_rules! cuda_api {
    (
        required { $( $field:ident = $sym:ident; )* }
        optional { $( $ofield:ident = $osym:ident; )* }
    ) => {
        /// Every driver entry point hrr uses, resolved once; each typed by
        /// its line of `cuda-api`'s signature table.
        #[allow(non_snake_case)]
        #[derive(Clone, Copy)]
        pub struct CudaApi {
            $( #[doc = concat!("`", stringify!($sym), "`")] pub $field: cuda_api::fns::$sym, )*
            $( #[doc = concat!("`", stringify!($osym), "` (optional)")] pub $ofield: Option<cuda_api::fns::$osym>, )*
        }

        /// Exported names that must resolve for the driver to load.
        pub const REQUIRED_SYMBOLS: &[&str] = &[$(stringify!($sym)),*];
        /// Exported names resolved when present (newer drivers).
        pub const OPTIONAL_SYMBOLS: &[&str] = &[$(stringify!($osym)),*];

        impl CudaApi {
            /// Resolves the table through `lookup`, which maps a NUL-terminated
            /// exported name to its address (null when absent).
            ///
            /// # Safety
            /// Every non-null address `lookup` returns must be the libcuda
            /// function of that name, whose C signature is the one declared here.
            pub unsafe fn resolve(
                mut lookup: impl FnMut(&'static [u8]) -> *mut c_void,
            ) -> Result<CudaApi, &'static str> {
                Ok(CudaApi {
                    $( $field: {
                        let p = lookup(concat!(stringify!($sym), "\0").as_bytes());
                        if p.is_null() {
                            return Err(stringify!($sym));
                        }
                        // SAFETY: per this function's contract, `p` is the
                        // exported function with this exact signature.
                        unsafe { std::mem::transmute::<*mut c_void, cuda_api::fns::$sym>(p) }
                    }, )*
                    $( $ofield: {
                        let p = lookup(concat!(stringify!($osym), "\0").as_bytes());
                        if p.is_null() {
                            None
                        } else {
                            // SAFETY: as above.
                            Some(unsafe { std::mem::transmute::<*mut c_void, cuda_api::fns::$osym>(p) })
                        }
                    }, )*
                })
            }
        }
    };
}

cuda_api! {
    required {
        // CUresult cuInit(unsigned int Flags)
        cuInit = cuInit;
        // CUresult cuDriverGetVersion(int *driverVersion)
        cuDriverGetVersion = cuDriverGetVersion;
        // CUresult cuGetErrorString(CUresult error, const char **pStr)
        cuGetErrorString = cuGetErrorString;
        // CUresult cuGetErrorName(CUresult error, const char **pStr)
        cuGetErrorName = cuGetErrorName;

        // CUresult cuDeviceGetCount(int *count)
        cuDeviceGetCount = cuDeviceGetCount;
        // CUresult cuDeviceGet(CUdevice *device, int ordinal)
        cuDeviceGet = cuDeviceGet;
        // CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
        cuDeviceGetName = cuDeviceGetName;
        // CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
        cuDeviceGetAttribute = cuDeviceGetAttribute;

        // CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
        cuDevicePrimaryCtxRetain = cuDevicePrimaryCtxRetain;
        // #define cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2 (CUDA 11+)
        cuDevicePrimaryCtxRelease = cuDevicePrimaryCtxRelease_v2;
        // CUresult cuCtxSetCurrent(CUcontext ctx)
        cuCtxSetCurrent = cuCtxSetCurrent;
        // CUresult cuCtxSynchronize(void)
        cuCtxSynchronize = cuCtxSynchronize;

        // #define cuMemAlloc cuMemAlloc_v2: CUresult (CUdeviceptr *dptr, size_t bytesize)
        cuMemAlloc = cuMemAlloc_v2;
        // #define cuMemFree cuMemFree_v2: CUresult (CUdeviceptr dptr)
        cuMemFree = cuMemFree_v2;
        // #define cuMemAllocHost cuMemAllocHost_v2: CUresult (void **pp, size_t bytesize)
        cuMemAllocHost = cuMemAllocHost_v2;
        // CUresult cuMemFreeHost(void *p)
        cuMemFreeHost = cuMemFreeHost;
        // CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
        cuMemAllocManaged = cuMemAllocManaged;

        // #define cuMemcpyHtoD cuMemcpyHtoD_v2: (CUdeviceptr dst, const void *src, size_t n)
        cuMemcpyHtoD = cuMemcpyHtoD_v2;
        // #define cuMemcpyDtoH cuMemcpyDtoH_v2: (void *dst, CUdeviceptr src, size_t n)
        cuMemcpyDtoH = cuMemcpyDtoH_v2;
        // #define cuMemcpyDtoD cuMemcpyDtoD_v2: (CUdeviceptr dst, CUdeviceptr src, size_t n)
        cuMemcpyDtoD = cuMemcpyDtoD_v2;
        // #define cuMemcpyHtoDAsync cuMemcpyHtoDAsync_v2: (..., CUstream hStream)
        cuMemcpyHtoDAsync = cuMemcpyHtoDAsync_v2;
        // #define cuMemcpyDtoHAsync cuMemcpyDtoHAsync_v2
        cuMemcpyDtoHAsync = cuMemcpyDtoHAsync_v2;
        // #define cuMemcpyDtoDAsync cuMemcpyDtoDAsync_v2
        cuMemcpyDtoDAsync = cuMemcpyDtoDAsync_v2;
        // #define cuMemsetD8 cuMemsetD8_v2: (CUdeviceptr dst, unsigned char uc, size_t N)
        cuMemsetD8 = cuMemsetD8_v2;
        // CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t N, CUstream) (no _v2)
        cuMemsetD8Async = cuMemsetD8Async;

        // CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
        cuStreamCreate = cuStreamCreate;
        // #define cuStreamDestroy cuStreamDestroy_v2: (CUstream)
        cuStreamDestroy = cuStreamDestroy_v2;
        // CUresult cuStreamSynchronize(CUstream)
        cuStreamSynchronize = cuStreamSynchronize;
        // CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int Flags)
        cuStreamWaitEvent = cuStreamWaitEvent;

        // CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
        cuEventCreate = cuEventCreate;
        // #define cuEventDestroy cuEventDestroy_v2: (CUevent)
        cuEventDestroy = cuEventDestroy_v2;
        // CUresult cuEventRecord(CUevent, CUstream)
        cuEventRecord = cuEventRecord;
        // CUresult cuEventSynchronize(CUevent)
        cuEventSynchronize = cuEventSynchronize;
        // CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
        cuEventElapsedTime = cuEventElapsedTime;

        // CUresult cuModuleLoadData(CUmodule *module, const void *image)
        cuModuleLoadData = cuModuleLoadData;
        // CUresult cuModuleUnload(CUmodule hmod)
        cuModuleUnload = cuModuleUnload;
        // CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
        cuModuleGetFunction = cuModuleGetFunction;
        // CUresult cuLaunchKernel(CUfunction f, unsigned gridDimX, gridDimY, gridDimZ,
        //     unsigned blockDimX, blockDimY, blockDimZ, unsigned sharedMemBytes,
        //     CUstream hStream, void **kernelParams, void **extra)
        cuLaunchKernel = cuLaunchKernel;
    }
    optional {
        // CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
        cuDeviceCanAccessPeer = cuDeviceCanAccessPeer;
        // CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
        cuCtxEnablePeerAccess = cuCtxEnablePeerAccess;
        // CUDA 12.8: same signature; CUDA 13's cuda.h maps cuEventElapsedTime to it.
        cuEventElapsedTime_v2 = cuEventElapsedTime_v2;
        // CUDA 12.4: CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
        //     size_t *paramOffset, size_t *paramSize)
        cuFuncGetParamInfo = cuFuncGetParamInfo;
        // CUDA 12.4: CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
        //     size_t *paramOffset, size_t *paramSize)
        cuKernelGetParamInfo = cuKernelGetParamInfo;
        // CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
        cuFuncSetAttribute = cuFuncSetAttribute;
        // CUDA 12.0: CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
        //     void **kernelParams, void **extra)
        cuLaunchKernelEx = cuLaunchKernelEx;
        // #define cuModuleGetGlobal cuModuleGetGlobal_v2: CUresult (CUdeviceptr *dptr,
        //     size_t *bytes, CUmodule hmod, const char *name)
        cuModuleGetGlobal = cuModuleGetGlobal_v2;
        // Virtual memory management (CUDA 10.2):
        // CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
        //     CUdeviceptr addr, unsigned long long flags)
        cuMemAddressReserve = cuMemAddressReserve;
        // CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
        cuMemAddressFree = cuMemAddressFree;
        // CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
        //     const CUmemAllocationProp *prop, unsigned long long flags)
        cuMemCreate = cuMemCreate;
        // CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
        cuMemRelease = cuMemRelease;
        // CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
        //     CUmemGenericAllocationHandle handle, unsigned long long flags)
        cuMemMap = cuMemMap;
        // CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
        cuMemUnmap = cuMemUnmap;
        // CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
        //     const CUmemAccessDesc *desc, size_t count)
        cuMemSetAccess = cuMemSetAccess;
        // 2D/3D copies and 2D memsets (`memcpy_rect`, `memset_rect`):
        // CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy), and its Async
        // form with a stream; cuMemsetD2D8_v2(CUdeviceptr, size_t dstPitch,
        // unsigned char uc, size_t Width, size_t Height), and its Async form.
        cuMemcpy2D = cuMemcpy2D_v2;
        cuMemcpy2DAsync = cuMemcpy2DAsync_v2;
        cuMemsetD2D8 = cuMemsetD2D8_v2;
        cuMemsetD2D8Async = cuMemsetD2D8Async;
        // Stream-ordered memory pools (CUDA 11.2):
        // CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
        cuMemPoolCreate = cuMemPoolCreate;
        // CUresult cuMemPoolDestroy(CUmemoryPool pool)
        cuMemPoolDestroy = cuMemPoolDestroy;
        // CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
        cuMemPoolTrimTo = cuMemPoolTrimTo;
        // CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
        cuMemPoolSetAttribute = cuMemPoolSetAttribute;
        // CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
        cuDeviceSetMemPool = cuDeviceSetMemPool;
        // CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
        //     CUmemoryPool pool, CUstream hStream)
        cuMemAllocFromPoolAsync = cuMemAllocFromPoolAsync;
        // CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
        cuMemFreeAsync = cuMemFreeAsync;
        // Arrays and texture and surface objects (`arrays`):
        // CUresult cuArray3DCreate_v2(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *),
        // cuArrayDestroy(CUarray); every array copy by
        // cuMemcpy3D_v2(const CUDA_MEMCPY3D *) and its Async form;
        // cuTexObjectCreate(CUtexObject *, const CUDA_RESOURCE_DESC *,
        //     const CUDA_TEXTURE_DESC *, const CUDA_RESOURCE_VIEW_DESC *),
        // cuSurfObjectCreate(CUsurfObject *, const CUDA_RESOURCE_DESC *), their destroys.
        cuArray3DCreate = cuArray3DCreate_v2;
        cuArrayDestroy = cuArrayDestroy;
        // CUDA 11.2: CUresult cuArrayGetPlane(CUarray *pPlaneArray, CUarray, unsigned planeIdx)
        cuArrayGetPlane = cuArrayGetPlane;
        // CUresult cuMipmappedArrayCreate(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *,
        //     unsigned numMipmapLevels), cuMipmappedArrayGetLevel(CUarray *,
        //     CUmipmappedArray, unsigned level), cuMipmappedArrayDestroy(CUmipmappedArray)
        cuMipmappedArrayCreate = cuMipmappedArrayCreate;
        cuMipmappedArrayGetLevel = cuMipmappedArrayGetLevel;
        cuMipmappedArrayDestroy = cuMipmappedArrayDestroy;
        cuMemcpy3D = cuMemcpy3D_v2;
        cuMemcpy3DAsync = cuMemcpy3DAsync_v2;
        cuTexObjectCreate = cuTexObjectCreate;
        cuTexObjectDestroy = cuTexObjectDestroy;
        cuSurfObjectCreate = cuSurfObjectCreate;
        cuSurfObjectDestroy = cuSurfObjectDestroy;
        // Graphs (`graphs`): build, instantiate, launch, destroy.
        // CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
        cuGraphCreate = cuGraphCreate;
        // CUresult cuGraphDestroy(CUgraph hGraph)
        cuGraphDestroy = cuGraphDestroy;
        // #define cuGraphAddKernelNode cuGraphAddKernelNode_v2: (CUgraphNode *,
        //     CUgraph, const CUgraphNode *deps, size_t n, const CUDA_KERNEL_NODE_PARAMS *)
        cuGraphAddKernelNode = cuGraphAddKernelNode_v2;
        // CUresult cuGraphAddMemcpyNode(..., const CUDA_MEMCPY3D *, CUcontext)
        cuGraphAddMemcpyNode = cuGraphAddMemcpyNode;
        // CUresult cuGraphAddMemsetNode(..., const CUDA_MEMSET_NODE_PARAMS *, CUcontext)
        cuGraphAddMemsetNode = cuGraphAddMemsetNode;
        // CUresult cuGraphAddEmptyNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t)
        cuGraphAddEmptyNode = cuGraphAddEmptyNode;
        // CUresult cuGraphAddEventRecordNode(..., CUevent), and the wait node
        cuGraphAddEventRecordNode = cuGraphAddEventRecordNode;
        cuGraphAddEventWaitNode = cuGraphAddEventWaitNode;
        // #define cuGraphInstantiate cuGraphInstantiateWithFlags: (CUgraphExec *,
        //     CUgraph, unsigned long long flags)
        cuGraphInstantiateWithFlags = cuGraphInstantiateWithFlags;
        // CUresult cuGraphLaunch(CUgraphExec, CUstream)
        cuGraphLaunch = cuGraphLaunch;
        // CUresult cuGraphExecDestroy(CUgraphExec)
        cuGraphExecDestroy = cuGraphExecDestroy;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The driver API calls of the backend under the names
    /// `libcuda.so.1` exports for the `cuda.h` macros.
    const EXPECTED: &[&str] = &[
        "cuInit",
        "cuDriverGetVersion",
        "cuGetErrorString",
        "cuGetErrorName",
        "cuDeviceGetCount",
        "cuDeviceGet",
        "cuDeviceGetName",
        "cuDeviceGetAttribute",
        "cuDevicePrimaryCtxRetain",
        "cuDevicePrimaryCtxRelease_v2",
        "cuCtxSetCurrent",
        "cuCtxSynchronize",
        "cuMemAlloc_v2",
        "cuMemFree_v2",
        "cuMemAllocHost_v2",
        "cuMemFreeHost",
        "cuMemAllocManaged",
        "cuMemcpyHtoD_v2",
        "cuMemcpyDtoH_v2",
        "cuMemcpyDtoD_v2",
        "cuMemcpyHtoDAsync_v2",
        "cuMemcpyDtoHAsync_v2",
        "cuMemcpyDtoDAsync_v2",
        "cuMemsetD8_v2",
        "cuMemsetD8Async",
        "cuStreamCreate",
        "cuStreamDestroy_v2",
        "cuStreamSynchronize",
        "cuStreamWaitEvent",
        "cuEventCreate",
        "cuEventDestroy_v2",
        "cuEventRecord",
        "cuEventSynchronize",
        "cuEventElapsedTime",
        "cuModuleLoadData",
        "cuModuleUnload",
        "cuModuleGetFunction",
        "cuLaunchKernel",
    ];

    #[test]
    fn symbol_table_is_complete() {
        let mut got: Vec<&str> = REQUIRED_SYMBOLS.to_vec();
        let mut want: Vec<&str> = EXPECTED.to_vec();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(
            OPTIONAL_SYMBOLS,
            [
                "cuDeviceCanAccessPeer",
                "cuCtxEnablePeerAccess",
                "cuEventElapsedTime_v2",
                "cuFuncGetParamInfo",
                "cuKernelGetParamInfo",
                "cuFuncSetAttribute",
                "cuLaunchKernelEx",
                "cuModuleGetGlobal_v2",
                "cuMemAddressReserve",
                "cuMemAddressFree",
                "cuMemCreate",
                "cuMemRelease",
                "cuMemMap",
                "cuMemUnmap",
                "cuMemSetAccess",
                "cuMemcpy2D_v2",
                "cuMemcpy2DAsync_v2",
                "cuMemsetD2D8_v2",
                "cuMemsetD2D8Async",
                "cuMemPoolCreate",
                "cuMemPoolDestroy",
                "cuMemPoolTrimTo",
                "cuMemPoolSetAttribute",
                "cuDeviceSetMemPool",
                "cuMemAllocFromPoolAsync",
                "cuMemFreeAsync",
                "cuArray3DCreate_v2",
                "cuArrayDestroy",
                "cuArrayGetPlane",
                "cuMipmappedArrayCreate",
                "cuMipmappedArrayGetLevel",
                "cuMipmappedArrayDestroy",
                "cuMemcpy3D_v2",
                "cuMemcpy3DAsync_v2",
                "cuTexObjectCreate",
                "cuTexObjectDestroy",
                "cuSurfObjectCreate",
                "cuSurfObjectDestroy",
                "cuGraphCreate",
                "cuGraphDestroy",
                "cuGraphAddKernelNode_v2",
                "cuGraphAddMemcpyNode",
                "cuGraphAddMemsetNode",
                "cuGraphAddEmptyNode",
                "cuGraphAddEventRecordNode",
                "cuGraphAddEventWaitNode",
                "cuGraphInstantiateWithFlags",
                "cuGraphLaunch",
                "cuGraphExecDestroy",
            ]
        );
    }

    #[test]
    fn symbol_names_are_unique_exports() {
        let all: Vec<&str> = REQUIRED_SYMBOLS
            .iter()
            .chain(OPTIONAL_SYMBOLS)
            .copied()
            .collect();
        let mut dedup = all.clone();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), all.len(), "a symbol is listed twice");
        for s in all {
            assert!(
                s.starts_with("cu") && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                "{s}"
            );
            // Per-thread-stream variants are never what replay means.
            assert!(!s.ends_with("_ptsz") && !s.ends_with("_ptds"), "{s}");
        }
    }

    extern "C" fn never_called() {}

    fn resolve_with(missing: &[&str]) -> (Result<CudaApi, &'static str>, Vec<String>) {
        let mut asked = Vec::new();
        // SAFETY: the table is only inspected, never called.
        let r = unsafe {
            CudaApi::resolve(|name| {
                let n = std::str::from_utf8(&name[..name.len() - 1])
                    .unwrap()
                    .to_string();
                assert_eq!(name.last(), Some(&0), "names are NUL-terminated");
                let hit = !missing.contains(&n.as_str());
                asked.push(n);
                if hit {
                    never_called as *mut c_void
                } else {
                    std::ptr::null_mut()
                }
            })
        };
        (r, asked)
    }

    #[test]
    fn resolve_asks_for_every_symbol() {
        let (r, asked) = resolve_with(&[]);
        let Ok(api) = r else { panic!("all present") };
        assert!(
            api.cuFuncGetParamInfo.is_some()
                && api.cuKernelGetParamInfo.is_some()
                && api.cuEventElapsedTime_v2.is_some()
        );
        let want: Vec<String> = REQUIRED_SYMBOLS
            .iter()
            .chain(OPTIONAL_SYMBOLS)
            .map(|s| s.to_string())
            .collect();
        assert_eq!(asked, want);
    }

    #[test]
    fn missing_required_symbol_is_named() {
        let (r, _) = resolve_with(&["cuMemsetD8Async"]);
        assert_eq!(r.err(), Some("cuMemsetD8Async"));
    }

    #[test]
    fn missing_optional_symbol_is_none() {
        let (r, _) = resolve_with(&["cuFuncGetParamInfo", "cuEventElapsedTime_v2"]);
        let Ok(api) = r else {
            panic!("optional symbols do not fail the load")
        };
        assert!(api.cuFuncGetParamInfo.is_none() && api.cuEventElapsedTime_v2.is_none());
        assert!(api.cuKernelGetParamInfo.is_some());
    }

    #[test]
    fn launch_param_keys_match_cuda_h() {
        assert_eq!(
            (
                CU_LAUNCH_PARAM_END,
                CU_LAUNCH_PARAM_BUFFER_POINTER,
                CU_LAUNCH_PARAM_BUFFER_SIZE
            ),
            (0, 1, 2)
        );
        assert_eq!(
            (
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
            ),
            (75, 76)
        );
    }
}
