//! The exported HIP entry points: the subset of the HIP signature table
//! (`hip_api::hip_fn!`) this runtime implements, each exported with the
//! table's exact C signature (generated here, [`exports!`]) and implemented
//! in the module of its kind, as `unsafe fn NAME(a: args::NAME) -> RET`
//! (the table's argument struct).
//!
//! Entry points this runtime does not implement are not exported at all:
//! a program that needs one fails to load with the symbol's name (`undefined
//! symbol: hipGraphLaunch`) rather than getting `hipErrorNotSupported` at
//! run time, which it might ignore; `dlsym` and `hipGetProcAddress` probes
//! see the truth; and the export list stays exactly what is implemented
//! (`abi/tests/exports.rs` compares it with the library's symbols).
//!
//! Every body runs under `error::guard`: no panic crosses the boundary, and
//! failures become the thread's last error. Safety contract of every
//! implementation: that of the HIP API it implements (pointer arguments
//! valid for what HIP says is read or written through them).
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

mod alloc;
mod arrays;
mod compiler;
mod copy;
mod device;
mod errors;
mod events;
mod graphs;
mod modules;
mod pools;
mod rect;
mod streams;
mod symbols;
mod vmm;

use ::hip_api::types::*;
use ::hip_api::{args, fns};

pub(crate) use arrays::graph_array_rect;
pub use device::device_properties;

/// Writes an out-parameter.
///
/// # Safety
/// `p` is null or valid for a write of `T`.
unsafe fn put<T>(p: *mut T, v: T) -> Result<(), hipError_t> {
    if p.is_null() {
        return Err(::hip_api::err::INVALID_VALUE);
    }
    // SAFETY: non-null, and valid for writes per this function's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// Callback of the table's lookup: the exported definition of one entry
/// point, handing its arguments to `MODULE::NAME`.
macro_rules! export {
    ([$module:ident] $name:ident ($($p:ident : $t:ty),* $(,)?) $(-> $r:ty)?) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($p: $t),*) $(-> $r)? {
            // SAFETY: the application called this entry point with these
            // arguments under HIP's contract, which is the implementation's.
            unsafe { $module::$name(args::$name { $($p),* }) }
        }
        // The export has exactly the table's type.
        const _: fns::$name = $name;
    };
}

/// `exports! { MODULE: [NAME, …] … }`: the exported entry points, by the
/// module implementing them, and [`EXPORTED`].
macro_rules! exports {
    ($($module:ident: [$($name:ident),* $(,)?])*) => {
        $( exports!(@module $module: $($name),*); )*
        /// Every HIP entry point this runtime exports.
        pub const EXPORTED: &[&str] = &[$($(stringify!($name),)*)*];
    };
    (@module $module:ident: $($name:ident),*) => {
        $( ::hip_api::hip_fn! { $name, export, [[$module]] } )*
    };
}

exports! {
    device: [
        hipInit, hipGetDeviceCount, hipGetDevice, hipSetDevice, hipDeviceGet, hipDeviceGetName,
        hipDeviceSynchronize, hipDeviceReset, hipGetDeviceProperties, hipDeviceGetAttribute,
        hipDriverGetVersion, hipRuntimeGetVersion, hipCtxSynchronize, hipDeviceCanAccessPeer,
        hipDeviceEnablePeerAccess, hipDeviceDisablePeerAccess, hipProfilerStart, hipProfilerStop,
        hipDevicePrimaryCtxReset,
    ]
    alloc: [
        hipMalloc, hipFree, hipMallocManaged, hipHostMalloc, hipMallocHost, hipMemAllocHost,
        hipHostAlloc, hipHostFree, hipFreeHost, hipMallocAsync, hipFreeAsync, hipHostRegister,
        hipHostUnregister, hipHostGetDevicePointer, hipMemGetInfo, hipPointerGetAttributes,
        hipMemGetAddressRange, hipMemPtrGetInfo, hipMemAdvise,
    ]
    copy: [
        hipMemcpy, hipMemcpyAsync, hipMemcpyHtoD, hipMemcpyDtoH, hipMemcpyDtoD,
        hipMemcpyHtoDAsync, hipMemcpyDtoHAsync, hipMemcpyDtoDAsync, hipMemcpy2D,
        hipMemcpy2DAsync, hipMemset, hipMemsetAsync, hipMemsetD8, hipMemsetD8Async,
        hipMemsetD16, hipMemsetD16Async, hipMemsetD32, hipMemsetD32Async, hipMemcpyPeer,
        hipMemcpyPeerAsync,
    ]
    pools: [
        hipMemPoolCreate, hipMemPoolDestroy, hipMemPoolTrimTo, hipMemPoolSetAttribute,
        hipDeviceSetMemPool, hipMallocFromPoolAsync,
    ]
    symbols: [
        __hipRegisterVar, hipGetSymbolAddress, hipGetSymbolSize,
        hipMemcpyToSymbol, hipMemcpyToSymbolAsync, hipMemcpyFromSymbol, hipMemcpyFromSymbolAsync,
    ]
    rect: [
        hipMallocPitch, hipMemAllocPitch, hipMalloc3D, hipMemcpyParam2D, hipMemcpyParam2DAsync,
        hipDrvMemcpy2DUnaligned, hipMemcpy3D, hipMemcpy3DAsync, hipMemset2D, hipMemset2DAsync,
        hipMemset3D, hipMemset3DAsync,
    ]
    arrays: [
        hipMallocArray, hipMalloc3DArray, hipArrayCreate, hipArray3DCreate, hipFreeArray,
        hipArrayDestroy, hipMemcpy2DToArray, hipMemcpy2DToArrayAsync, hipMemcpy2DFromArray,
        hipMemcpy2DFromArrayAsync, hipMemcpyToArray, hipMemcpyFromArray, hipMemcpyHtoA,
        hipMemcpyAtoH, hipCreateChannelDesc, hipCreateTextureObject, hipDestroyTextureObject,
        hipMallocMipmappedArray, hipMipmappedArrayCreate, hipGetMipmappedArrayLevel,
        hipMipmappedArrayGetLevel, hipFreeMipmappedArray, hipMipmappedArrayDestroy,
        _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc,
        _Z23hipDestroySurfaceObjectP13__hip_surface,
    ]
    streams: [
        hipStreamCreateWithFlags, hipStreamCreate, hipStreamCreateWithPriority,
        hipExtStreamCreateWithCUMask, hipStreamDestroy, hipStreamSynchronize, hipStreamQuery,
        hipStreamWaitEvent, hipStreamAddCallback, hipLaunchHostFunc,
    ]
    events: [
        hipEventCreateWithFlags, hipEventCreate, hipEventDestroy, hipEventRecord,
        hipEventSynchronize, hipEventQuery, hipEventElapsedTime,
    ]
    modules: [
        hipModuleLoad, hipModuleLoadData, hipModuleLoadDataEx, hipModuleUnload,
        hipModuleGetFunction, hipModuleGetGlobal, hipModuleLaunchKernel, hipExtModuleLaunchKernel,
        _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j,
    ]
    compiler: [
        __hipRegisterFatBinary, __hipRegisterFunction, __hipUnregisterFatBinary,
        __hipPushCallConfiguration, __hipPopCallConfiguration, hipLaunchKernel,
        hipExtLaunchKernel, hipLaunchCooperativeKernel,
    ]
    errors: [hipGetLastError, hipPeekAtLastError, hipGetErrorString, hipGetErrorName]
    graphs: [
        hipStreamBeginCapture, hipStreamEndCapture, hipStreamIsCapturing, hipStreamGetCaptureInfo,
        hipStreamGetCaptureInfo_v2, hipGraphCreate, hipGraphDestroy, hipGraphAddKernelNode,
        hipGraphAddMemcpyNode, hipGraphAddMemcpyNode1D, hipGraphAddMemsetNode, hipGraphAddEmptyNode,
        hipGraphAddHostNode, hipGraphAddEventRecordNode, hipGraphAddEventWaitNode,
        hipGraphAddChildGraphNode, hipGraphAddDependencies, hipGraphGetNodes, hipGraphGetRootNodes,
        hipGraphNodeGetDependencies, hipGraphNodeGetType, hipGraphKernelNodeGetParams,
        hipGraphKernelNodeSetParams, hipGraphMemcpyNodeGetParams, hipGraphMemsetNodeGetParams,
        hipGraphHostNodeGetParams, hipGraphChildGraphNodeGetGraph, hipGraphEventRecordNodeGetEvent,
        hipGraphEventWaitNodeGetEvent, hipGraphInstantiate, hipGraphInstantiateWithFlags,
        hipGraphLaunch, hipGraphExecDestroy, hipGraphExecUpdate, hipGraphExecKernelNodeSetParams,
        hipGraphExecMemcpyNodeSetParams1D, hipGraphExecMemsetNodeSetParams,
    ]
    vmm: [
        hipMemGetAllocationGranularity, hipMemAddressReserve, hipMemAddressFree, hipMemCreate,
        hipMemRelease, hipMemMap, hipMemUnmap, hipMemSetAccess, hipMemRetainAllocationHandle,
        hipMemGetAllocationPropertiesFromHandle, hipMemExportToShareableHandle,
        hipMemImportFromShareableHandle,
    ]
}
