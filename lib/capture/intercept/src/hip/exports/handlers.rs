//! Every HIP table entry's class, by what its handler is (see
//! `hrr_interpose::exports`): the export `NAME` calls `handlers::NAME`.
//!
//! * **recorded**: the hand-written handlers re-exported from [`super::memory`],
//!   [`super::rect`], [`super::arrays`], [`super::pools`], [`super::symbols`], [`super::sync`],
//!   [`super::module`], [`super::launch`], [`super::vmm`], [`super::graph`],
//!   [`super::profiler`] (the capture window's trigger)
//!   (and `hipGetProcAddress`, which hands out the wrappers);
//! * **query**: changes nothing the device computes — reads state, converts,
//!   sets a scheduling or cache *preference*, registers tooling callbacks.
//!   Forwarded, not recorded, by design;
//! * **unrecorded**: changes device memory, code, or objects later work
//!   depends on (array and peer copies, pool access, array
//!   mappings and imported handles of virtual memory, textures, interop,
//!   contexts, per-thread-stream variants…), in
//!   a way the archive format does not record yet. Forwarded, and every
//!   first-level call counted: the manifest's `unrecorded`, `hrr-cap`'s and
//!   `hrr-play`'s `unrecorded : N calls` line, `hrr-play --strict`.
//!
//! A table entry missing here fails the build (`cannot find function NAME
//! in module handlers`); one listed twice too (`defined multiple times`).
//! When in doubt, an entry is *unrecorded*: a count that turns out
//! harmless costs a line of output, a silent gap costs a wrong replay.

use hip_api::args;

use hrr_interpose::{query_handlers, unrecorded_handlers};

// ---------------------------------------------------------------- recorded

pub use super::arrays::{
    _Z22hipCreateSurfaceObjectPP13__hip_surfacePK15hipResourceDesc,
    _Z23hipDestroySurfaceObjectP13__hip_surface, hipArray3DCreate, hipArrayCreate, hipArrayDestroy,
    hipCreateTextureObject, hipDestroyTextureObject, hipFreeArray, hipFreeMipmappedArray,
    hipGetMipmappedArrayLevel, hipMalloc3DArray, hipMallocArray, hipMallocMipmappedArray,
    hipMemcpy2DFromArray, hipMemcpy2DFromArrayAsync, hipMemcpy2DToArray, hipMemcpy2DToArrayAsync,
    hipMemcpyAtoH, hipMemcpyFromArray, hipMemcpyHtoA, hipMemcpyToArray, hipMipmappedArrayCreate,
    hipMipmappedArrayDestroy, hipMipmappedArrayGetLevel,
};
pub use super::graph::{
    hipGraphAddHostNode, hipGraphExecDestroy, hipGraphExecHostNodeSetParams,
    hipGraphExecKernelNodeSetParams, hipGraphExecMemcpyNodeSetParams1D,
    hipGraphExecMemsetNodeSetParams, hipGraphExecUpdate, hipGraphHostNodeSetParams,
    hipGraphInstantiate, hipGraphInstantiateWithFlags, hipGraphLaunch, hipStreamBeginCapture,
    hipStreamEndCapture,
};
pub use super::launch::{
    _Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j,
    _Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_,
    hipExtLaunchKernel, hipExtModuleLaunchKernel, hipLaunchCooperativeKernel, hipLaunchKernel,
    hipModuleLaunchKernel,
};
pub use super::memory::{
    hipExtMallocWithFlags, hipFree, hipFreeAsync, hipFreeHost, hipHostAlloc, hipHostFree,
    hipHostMalloc, hipHostRegister, hipHostUnregister, hipMalloc, hipMallocAsync, hipMallocHost,
    hipMallocManaged, hipMemAllocHost, hipMemcpy, hipMemcpyAsync, hipMemcpyDtoD,
    hipMemcpyDtoDAsync, hipMemcpyDtoH, hipMemcpyDtoHAsync, hipMemcpyHtoD, hipMemcpyHtoDAsync,
    hipMemcpyWithStream, hipMemset, hipMemsetAsync, hipMemsetD8, hipMemsetD8Async, hipMemsetD16,
    hipMemsetD16Async, hipMemsetD32, hipMemsetD32Async,
};
pub use super::module::{
    __hipRegisterFatBinary, __hipRegisterFunction, __hipUnregisterFatBinary, hipModuleGetFunction,
    hipModuleGetGlobal, hipModuleLoad, hipModuleLoadData, hipModuleLoadDataEx, hipModuleUnload,
};
pub use super::pools::{
    hipDeviceSetMemPool, hipMallocFromPoolAsync, hipMemPoolCreate, hipMemPoolDestroy,
    hipMemPoolSetAttribute, hipMemPoolTrimTo,
};
pub use super::proc_address::hipGetProcAddress;
pub use super::profiler::{hipProfilerStart, hipProfilerStop};
pub use super::rect::{
    hipDrvMemcpy2DUnaligned, hipMalloc3D, hipMallocPitch, hipMemAllocPitch, hipMemcpy2D,
    hipMemcpy2DAsync, hipMemcpy3D, hipMemcpy3DAsync, hipMemcpyParam2D, hipMemcpyParam2DAsync,
    hipMemset2D, hipMemset2DAsync, hipMemset3D, hipMemset3DAsync,
};
pub use super::symbols::{
    __hipRegisterVar, hipGetSymbolAddress, hipGetSymbolSize, hipMemcpyFromSymbol,
    hipMemcpyFromSymbolAsync, hipMemcpyToSymbol, hipMemcpyToSymbolAsync,
};
pub use super::sync::{
    hipCtxSynchronize, hipDeviceEnablePeerAccess, hipDevicePrimaryCtxReset, hipDeviceReset,
    hipDeviceSynchronize, hipEventCreate, hipEventCreateWithFlags, hipEventDestroy, hipEventRecord,
    hipEventSynchronize, hipExtStreamCreateWithCUMask, hipLaunchHostFunc, hipMemcpyPeer,
    hipMemcpyPeerAsync, hipSetDevice, hipStreamAddCallback, hipStreamCreate,
    hipStreamCreateWithFlags, hipStreamCreateWithPriority, hipStreamDestroy, hipStreamSynchronize,
    hipStreamWaitEvent,
};
pub use super::vmm::{
    hipMemAddressFree, hipMemAddressReserve, hipMemCreate, hipMemExportToShareableHandle,
    hipMemImportFromShareableHandle, hipMemMap, hipMemRelease, hipMemRetainAllocationHandle,
    hipMemSetAccess, hipMemUnmap,
};

// ---------------------------------------------------------------- query

query_handlers! { args;
    // Initialisation, versions, errors, names.
    hipInit, hipDriverGetVersion, hipRuntimeGetVersion, hipGetLastError, hipPeekAtLastError,
    hipGetErrorName, hipGetErrorString, hipApiName, hipKernelNameRef, hipKernelNameRefByPtr,
    __hipGetPCH,
    // Devices: properties, attributes, selection.
    hipGetDevice, hipGetDeviceCount, hipDeviceGet, hipDeviceComputeCapability, hipDeviceGetName,
    hipDeviceGetUuid, hipDeviceGetP2PAttribute, hipDeviceGetPCIBusId, hipDeviceGetByPCIBusId,
    hipDeviceTotalMem, hipDeviceGetAttribute, hipGetDeviceProperties, hipChooseDevice,
    hipDeviceGetLimit, hipDeviceGetCacheConfig, hipDeviceGetSharedMemConfig, hipGetDeviceFlags,
    hipDeviceCanAccessPeer, hipExtGetLinkTypeAndHopCount, hipDeviceGetDefaultMemPool,
    hipDeviceGetMemPool, hipDeviceGetStreamPriorityRange,
    // Preferences that do not change what the device computes.
    hipSetDeviceFlags, hipDeviceSetCacheConfig, hipDeviceSetSharedMemConfig, hipFuncSetCacheConfig,
    hipFuncSetSharedMemConfig, hipCtxSetCacheConfig, hipCtxSetSharedMemConfig,
    hipThreadExchangeStreamCaptureMode,
    // Streams, events and pointers, asked about.
    hipStreamQuery, hipStreamQuery_spt, hipStreamGetFlags, hipStreamGetFlags_spt,
    hipStreamGetPriority, hipStreamGetPriority_spt, hipExtStreamGetCUMask, hipGetStreamDeviceId,
    hipStreamIsCapturing, hipStreamGetCaptureInfo, hipStreamGetCaptureInfo_v2, hipEventQuery,
    hipEventElapsedTime, hipPointerGetAttributes, hipPointerGetAttribute,
    hipDrvPointerGetAttributes, hipMemGetInfo, hipMemPtrGetInfo, hipMemGetAddressRange,
    hipMemRangeGetAttribute, hipMemRangeGetAttributes, hipHostGetDevicePointer, hipHostGetFlags,
    hipMemPoolGetAttribute, hipMemPoolGetAccess, hipMemGetAccess, hipMemGetAllocationGranularity,
    hipMemGetAllocationPropertiesFromHandle,
    // Handles exported for another process (the importing side is unrecorded).
    hipIpcGetMemHandle, hipIpcGetEventHandle, hipMemPoolExportToShareableHandle,
    hipMemPoolExportPointer,
    // Contexts, asked about.
    hipCtxGetCurrent, hipCtxGetDevice, hipCtxGetApiVersion, hipCtxGetCacheConfig,
    hipCtxGetSharedMemConfig, hipCtxGetFlags, hipDevicePrimaryCtxGetState,
    // Kernels, symbols, occupancy.
    hipFuncGetAttributes, hipFuncGetAttribute, hipModuleGetTexRef,
    hipModuleOccupancyMaxPotentialBlockSize,
    hipModuleOccupancyMaxPotentialBlockSizeWithFlags,
    hipModuleOccupancyMaxActiveBlocksPerMultiprocessor,
    hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
    hipOccupancyMaxActiveBlocksPerMultiprocessor,
    hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, hipOccupancyMaxPotentialBlockSize,
    // The launch configuration: the launch that consumes it is what counts
    // (recorded for <<<>>>, unrecorded for hipLaunchByPtr).
    __hipPushCallConfiguration, __hipPopCallConfiguration, hipConfigureCall, hipSetupArgument,
    // Compiler ABI: naming device variables, surfaces and textures of a
    // registered fat binary (their memory is the code object's, recorded
    // with it; writes to them go through recorded or counted calls).
    __hipRegisterSurface, __hipRegisterTexture,
    // Textures and graphs, asked about.
    hipGetTextureReference, hipGetChannelDesc, hipGetTextureObjectResourceDesc,
    hipGetTextureObjectResourceViewDesc, hipGetTextureObjectTextureDesc,
    hipTexObjectGetResourceDesc, hipTexObjectGetResourceViewDesc, hipTexObjectGetTextureDesc,
    hipGetTextureAlignmentOffset, hipTexRefGetAddress, hipTexRefGetAddressMode,
    hipTexRefGetFilterMode, hipTexRefGetFlags, hipTexRefGetFormat, hipTexRefGetMaxAnisotropy,
    hipTexRefGetMipmapFilterMode, hipTexRefGetMipmapLevelBias, hipTexRefGetMipmapLevelClamp,
    hipGraphGetEdges, hipGraphGetNodes, hipGraphGetRootNodes, hipGraphNodeGetDependencies,
    hipGraphNodeGetDependentNodes, hipGraphNodeGetType, hipGraphNodeFindInClone,
    hipGraphKernelNodeGetParams, hipGraphMemcpyNodeGetParams, hipGraphMemsetNodeGetParams,
    hipGraphHostNodeGetParams, hipGraphChildGraphNodeGetGraph, hipGraphEventRecordNodeGetEvent,
    hipGraphEventWaitNodeGetEvent, hipGLGetDevices, hipGraphicsSubResourceGetMappedArray,
    hipGraphicsResourceGetMappedPointer,
    // Building graphs: nothing reaches the device until the graph is
    // instantiated, which records it as it then stands (`super::graph`).
    hipGraphCreate, hipGraphDestroy, hipGraphClone, hipGraphAddDependencies,
    hipGraphRemoveDependencies, hipGraphDestroyNode, hipGraphAddKernelNode,
    hipGraphKernelNodeSetParams, hipGraphAddMemcpyNode, hipGraphMemcpyNodeSetParams,
    hipGraphAddMemcpyNode1D, hipGraphMemcpyNodeSetParams1D, hipGraphAddMemsetNode,
    hipGraphMemsetNodeSetParams, hipGraphAddChildGraphNode, hipGraphAddEmptyNode,
    hipGraphAddEventRecordNode, hipGraphEventRecordNodeSetEvent, hipGraphAddEventWaitNode,
    hipGraphEventWaitNodeSetEvent, hipStreamUpdateCaptureDependencies,
    // Tooling.
    hipRegisterApiCallback, hipRemoveApiCallback,
    hipRegisterActivityCallback, hipRemoveActivityCallback,
}

/// `hipCreateChannelDesc`, a query returning a struct by value: all zero
/// when the runtime lacks it.
///
/// # Safety
/// The export's contract: `a` holds the application's arguments.
#[inline(always)]
pub unsafe fn hipCreateChannelDesc(
    real: &'static hrr_interpose::real_fn::Real<args::hipCreateChannelDesc>,
    a: args::hipCreateChannelDesc,
) -> hip_api::types::hipChannelFormatDesc {
    // SAFETY: per this function's contract.
    unsafe { hrr_interpose::exports::forward_query_or(real, a, Default::default) }
}

// ---------------------------------------------------------------- unrecorded

unrecorded_handlers! { args, crate::capture::Capture;
    // Per-thread default stream variants (`-fgpu-default-stream=per-thread`).
    hipMemcpy_spt, hipMemcpyAsync_spt, hipMemcpyToSymbol_spt, hipMemcpyFromSymbol_spt,
    hipMemcpy2D_spt, hipMemcpy2DToArray_spt, hipMemcpy2DFromArray_spt, hipMemcpy3D_spt,
    hipMemset_spt, hipMemset2D_spt, hipMemset3D_spt, hipStreamSynchronize_spt,
    hipStreamWaitEvent_spt, hipLaunchKernel_spt, hipLaunchCooperativeKernel_spt,
    // Device state.
    hipFuncSetAttribute, hipDeviceDisablePeerAccess,
    // Streams: host callbacks, memory-value waits and writes, capture.
    hipStreamWaitValue32, hipStreamWaitValue64, hipStreamWriteValue32,
    hipStreamWriteValue64, hipStreamAttachMemAsync,
    // Memory placement hints and pools.
    hipMemPrefetchAsync, hipMemAdvise, hipMemPoolSetAccess,
    hipMemPoolImportFromShareableHandle, hipMemPoolImportPointer,
    // Memory from elsewhere: IPC, external memory and semaphores.
    hipIpcOpenMemHandle, hipIpcCloseMemHandle, hipIpcOpenEventHandle, hipImportExternalMemory,
    hipExternalMemoryGetMappedBuffer, hipDestroyExternalMemory, hipImportExternalSemaphore,
    hipSignalExternalSemaphoresAsync, hipWaitExternalSemaphoresAsync, hipDestroyExternalSemaphore,
    __hipRegisterManagedVar,
    // Copies the format has no op for (`HIP_MEMCPY3D`'s layout is not
    // declared).
    hipDrvMemcpy3D, hipDrvMemcpy3DAsync,
    // Launches the format has no shape for.
    hipLaunchByPtr, hipLaunchCooperativeKernelMultiDevice, hipExtLaunchMultiKernelMultiDevice,
    // Contexts.
    hipCtxCreate, hipCtxDestroy, hipCtxPopCurrent, hipCtxPushCurrent, hipCtxSetCurrent,
    hipCtxEnablePeerAccess, hipCtxDisablePeerAccess, hipDevicePrimaryCtxRelease,
    hipDevicePrimaryCtxRetain, hipDevicePrimaryCtxSetFlags,
    // Textures and surfaces.
    hipBindTexture, hipBindTexture2D, hipBindTextureToArray, hipBindTextureToMipmappedArray,
    hipUnbindTexture, hipTexObjectCreate, hipTexObjectDestroy, hipTexRefSetAddress, hipTexRefSetAddress2D, hipTexRefSetAddressMode,
    hipTexRefSetArray, hipTexRefSetBorderColor, hipTexRefSetFilterMode, hipTexRefSetFlags,
    hipTexRefSetFormat, hipTexRefSetMaxAnisotropy, hipTexRefSetMipmapFilterMode,
    hipTexRefSetMipmapLevelBias, hipTexRefSetMipmapLevelClamp, hipTexRefSetMipmappedArray,
    // Graphs: copies the format has no op for (symbols, 3D), and
    // executable-graph setters not recorded yet.
    hipGraphAddMemcpyNodeFromSymbol, hipGraphMemcpyNodeSetParamsFromSymbol,
    hipGraphExecMemcpyNodeSetParamsFromSymbol, hipGraphAddMemcpyNodeToSymbol,
    hipGraphMemcpyNodeSetParamsToSymbol, hipGraphExecMemcpyNodeSetParamsToSymbol,
    hipGraphExecMemcpyNodeSetParams, hipGraphExecChildGraphNodeSetParams,
    hipGraphExecEventRecordNodeSetEvent, hipGraphExecEventWaitNodeSetEvent,
    // Virtual memory the format has no op for.
    hipMemMapArrayAsync,
    // Graphics interop.
    hipGraphicsGLRegisterBuffer, hipGraphicsGLRegisterImage, hipGraphicsMapResources,
    hipGraphicsUnmapResources, hipGraphicsUnregisterResource,
}
