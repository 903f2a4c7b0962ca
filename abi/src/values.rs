//! Constants our crates hard-code, checked against the enum values of
//! Debian's headers (via bindgen), at compile time.

#[cfg(feature = "cpu")]
use crate::debian_hip::{hipDeviceAttribute_t as A, hipError_t as E, hipMemcpyKind as K};
use crate::debian_hsa as h;

macro_rules! same_value {
    ($($ours:expr => $reference:expr),* $(,)?) => {
        const _: () = {$(
            assert!(
                $ours as i64 == $reference as i64,
                concat!("value mismatch: ", stringify!($ours), " != ", stringify!($reference))
            );
        )*};
    };
}

// hrr_hip_cpu::ffi: hipError_t values.
#[cfg(feature = "cpu")]
same_value!(
    hrr_hip_cpu::ffi::err::SUCCESS => E::hipSuccess,
    hrr_hip_cpu::ffi::err::INVALID_VALUE => E::hipErrorInvalidValue,
    hrr_hip_cpu::ffi::err::OUT_OF_MEMORY => E::hipErrorOutOfMemory,
    hrr_hip_cpu::ffi::err::NOT_INITIALIZED => E::hipErrorNotInitialized,
    hrr_hip_cpu::ffi::err::INVALID_CONFIGURATION => E::hipErrorInvalidConfiguration,
    hrr_hip_cpu::ffi::err::INVALID_DEVICE_POINTER => E::hipErrorInvalidDevicePointer,
    hrr_hip_cpu::ffi::err::INVALID_MEMCPY_DIRECTION => E::hipErrorInvalidMemcpyDirection,
    hrr_hip_cpu::ffi::err::MISSING_CONFIGURATION => E::hipErrorMissingConfiguration,
    hrr_hip_cpu::ffi::err::INVALID_DEVICE_FUNCTION => E::hipErrorInvalidDeviceFunction,
    hrr_hip_cpu::ffi::err::NO_DEVICE => E::hipErrorNoDevice,
    hrr_hip_cpu::ffi::err::INVALID_DEVICE => E::hipErrorInvalidDevice,
    hrr_hip_cpu::ffi::err::INVALID_IMAGE => E::hipErrorInvalidImage,
    hrr_hip_cpu::ffi::err::NO_BINARY_FOR_GPU => E::hipErrorNoBinaryForGpu,
    hrr_hip_cpu::ffi::err::FILE_NOT_FOUND => E::hipErrorFileNotFound,
    hrr_hip_cpu::ffi::err::SHARED_OBJECT_SYMBOL_NOT_FOUND => E::hipErrorSharedObjectSymbolNotFound,
    hrr_hip_cpu::ffi::err::SHARED_OBJECT_INIT_FAILED => E::hipErrorSharedObjectInitFailed,
    hrr_hip_cpu::ffi::err::OPERATING_SYSTEM => E::hipErrorOperatingSystem,
    hrr_hip_cpu::ffi::err::INVALID_HANDLE => E::hipErrorInvalidHandle,
    hrr_hip_cpu::ffi::err::NOT_FOUND => E::hipErrorNotFound,
    hrr_hip_cpu::ffi::err::NOT_READY => E::hipErrorNotReady,
    hrr_hip_cpu::ffi::err::LAUNCH_FAILURE => E::hipErrorLaunchFailure,
    hrr_hip_cpu::ffi::err::HOST_MEMORY_ALREADY_REGISTERED => E::hipErrorHostMemoryAlreadyRegistered,
    hrr_hip_cpu::ffi::err::HOST_MEMORY_NOT_REGISTERED => E::hipErrorHostMemoryNotRegistered,
    hrr_hip_cpu::ffi::err::NOT_SUPPORTED => E::hipErrorNotSupported,
    hrr_hip_cpu::ffi::err::UNKNOWN => E::hipErrorUnknown,
);

// hrr_hip_cpu::ffi: hipMemcpyKind, hipDeviceAttribute_t.
#[cfg(feature = "cpu")]
same_value!(
    hrr_hip_cpu::ffi::MEMCPY_HOST_TO_HOST => K::hipMemcpyHostToHost,
    hrr_hip_cpu::ffi::MEMCPY_HOST_TO_DEVICE => K::hipMemcpyHostToDevice,
    hrr_hip_cpu::ffi::MEMCPY_DEVICE_TO_HOST => K::hipMemcpyDeviceToHost,
    hrr_hip_cpu::ffi::MEMCPY_DEVICE_TO_DEVICE => K::hipMemcpyDeviceToDevice,
    hrr_hip_cpu::ffi::MEMCPY_DEFAULT => K::hipMemcpyDefault,
    hrr_hip_cpu::ffi::attr::ECC_ENABLED => A::hipDeviceAttributeEccEnabled,
    hrr_hip_cpu::ffi::attr::CAN_MAP_HOST_MEMORY => A::hipDeviceAttributeCanMapHostMemory,
    hrr_hip_cpu::ffi::attr::CLOCK_RATE => A::hipDeviceAttributeClockRate,
    hrr_hip_cpu::ffi::attr::COMPUTE_MODE => A::hipDeviceAttributeComputeMode,
    hrr_hip_cpu::ffi::attr::CONCURRENT_KERNELS => A::hipDeviceAttributeConcurrentKernels,
    hrr_hip_cpu::ffi::attr::CONCURRENT_MANAGED_ACCESS => A::hipDeviceAttributeConcurrentManagedAccess,
    hrr_hip_cpu::ffi::attr::COOPERATIVE_LAUNCH => A::hipDeviceAttributeCooperativeLaunch,
    hrr_hip_cpu::ffi::attr::INTEGRATED => A::hipDeviceAttributeIntegrated,
    hrr_hip_cpu::ffi::attr::L2_CACHE_SIZE => A::hipDeviceAttributeL2CacheSize,
    hrr_hip_cpu::ffi::attr::COMPUTE_CAPABILITY_MAJOR => A::hipDeviceAttributeComputeCapabilityMajor,
    hrr_hip_cpu::ffi::attr::MANAGED_MEMORY => A::hipDeviceAttributeManagedMemory,
    hrr_hip_cpu::ffi::attr::MAX_BLOCK_DIM_X => A::hipDeviceAttributeMaxBlockDimX,
    hrr_hip_cpu::ffi::attr::MAX_BLOCK_DIM_Y => A::hipDeviceAttributeMaxBlockDimY,
    hrr_hip_cpu::ffi::attr::MAX_BLOCK_DIM_Z => A::hipDeviceAttributeMaxBlockDimZ,
    hrr_hip_cpu::ffi::attr::MAX_GRID_DIM_X => A::hipDeviceAttributeMaxGridDimX,
    hrr_hip_cpu::ffi::attr::MAX_GRID_DIM_Y => A::hipDeviceAttributeMaxGridDimY,
    hrr_hip_cpu::ffi::attr::MAX_GRID_DIM_Z => A::hipDeviceAttributeMaxGridDimZ,
    hrr_hip_cpu::ffi::attr::MAX_THREADS_PER_BLOCK => A::hipDeviceAttributeMaxThreadsPerBlock,
    hrr_hip_cpu::ffi::attr::MAX_THREADS_PER_MULTIPROCESSOR => A::hipDeviceAttributeMaxThreadsPerMultiProcessor,
    hrr_hip_cpu::ffi::attr::MEMORY_BUS_WIDTH => A::hipDeviceAttributeMemoryBusWidth,
    hrr_hip_cpu::ffi::attr::MEMORY_CLOCK_RATE => A::hipDeviceAttributeMemoryClockRate,
    hrr_hip_cpu::ffi::attr::COMPUTE_CAPABILITY_MINOR => A::hipDeviceAttributeComputeCapabilityMinor,
    hrr_hip_cpu::ffi::attr::MULTIPROCESSOR_COUNT => A::hipDeviceAttributeMultiprocessorCount,
    hrr_hip_cpu::ffi::attr::PAGEABLE_MEMORY_ACCESS => A::hipDeviceAttributePageableMemoryAccess,
    hrr_hip_cpu::ffi::attr::PCI_BUS_ID => A::hipDeviceAttributePciBusId,
    hrr_hip_cpu::ffi::attr::PCI_DEVICE_ID => A::hipDeviceAttributePciDeviceId,
    hrr_hip_cpu::ffi::attr::MAX_REGISTERS_PER_BLOCK => A::hipDeviceAttributeMaxRegistersPerBlock,
    hrr_hip_cpu::ffi::attr::MAX_SHARED_MEMORY_PER_BLOCK => A::hipDeviceAttributeMaxSharedMemoryPerBlock,
    hrr_hip_cpu::ffi::attr::TOTAL_CONSTANT_MEMORY => A::hipDeviceAttributeTotalConstantMemory,
    hrr_hip_cpu::ffi::attr::UNIFIED_ADDRESSING => A::hipDeviceAttributeUnifiedAddressing,
    hrr_hip_cpu::ffi::attr::WARP_SIZE => A::hipDeviceAttributeWarpSize,
    hrr_hip_cpu::ffi::attr::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR => A::hipDeviceAttributeMaxSharedMemoryPerMultiprocessor,
);

// hrr_hip_cpu::ffi: the HSA subset it answers.
#[cfg(feature = "cpu")]
same_value!(
    hrr_hip_cpu::ffi::hsa_status::SUCCESS => h::hsa_status_t::HSA_STATUS_SUCCESS,
    hrr_hip_cpu::ffi::hsa_status::INFO_BREAK => h::hsa_status_t::HSA_STATUS_INFO_BREAK,
    hrr_hip_cpu::ffi::hsa_status::ERROR => h::hsa_status_t::HSA_STATUS_ERROR,
    hrr_hip_cpu::ffi::hsa_status::ERROR_INVALID_ARGUMENT => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_ARGUMENT,
    hrr_hip_cpu::ffi::hsa_status::ERROR_INVALID_ALLOCATION => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_ALLOCATION,
    hrr_hip_cpu::ffi::hsa_status::ERROR_INVALID_AGENT => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_AGENT,
    hrr_hip_cpu::ffi::hsa_status::ERROR_OUT_OF_RESOURCES => h::hsa_status_t::HSA_STATUS_ERROR_OUT_OF_RESOURCES,
    hrr_hip_cpu::ffi::hsa_status::ERROR_NOT_INITIALIZED => h::hsa_status_t::HSA_STATUS_ERROR_NOT_INITIALIZED,
    hrr_hip_cpu::ffi::hsa_status::ERROR_INVALID_MEMORY_POOL => h::HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
    hrr_hip_cpu::ffi::hsa_agent_info::NAME => h::hsa_agent_info_t::HSA_AGENT_INFO_NAME,
    hrr_hip_cpu::ffi::hsa_agent_info::VENDOR_NAME => h::hsa_agent_info_t::HSA_AGENT_INFO_VENDOR_NAME,
    hrr_hip_cpu::ffi::hsa_agent_info::NODE => h::hsa_agent_info_t::HSA_AGENT_INFO_NODE,
    hrr_hip_cpu::ffi::hsa_agent_info::DEVICE => h::hsa_agent_info_t::HSA_AGENT_INFO_DEVICE,
    hrr_hip_cpu::ffi::HSA_DEVICE_TYPE_CPU => h::hsa_device_type_t::HSA_DEVICE_TYPE_CPU,
    hrr_hip_cpu::ffi::HSA_DEVICE_TYPE_GPU => h::hsa_device_type_t::HSA_DEVICE_TYPE_GPU,
    hrr_hip_cpu::ffi::hsa_pool_info::SEGMENT => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
    hrr_hip_cpu::ffi::hsa_pool_info::GLOBAL_FLAGS => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
    hrr_hip_cpu::ffi::hsa_pool_info::SIZE => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_SIZE,
    hrr_hip_cpu::ffi::hsa_pool_info::RUNTIME_ALLOC_ALLOWED => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
    hrr_hip_cpu::ffi::hsa_pool_info::RUNTIME_ALLOC_GRANULE => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
    hrr_hip_cpu::ffi::hsa_pool_info::RUNTIME_ALLOC_ALIGNMENT => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT,
    hrr_hip_cpu::ffi::hsa_pool_info::ACCESSIBLE_BY_ALL => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL,
    hrr_hip_cpu::ffi::hsa_pool_info::ALLOC_MAX_SIZE => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE,
    hrr_hip_cpu::ffi::HSA_AMD_SEGMENT_GLOBAL => h::hsa_amd_segment_t::HSA_AMD_SEGMENT_GLOBAL,
);

// hsa-sys's constants (also checked by lib/api/hsa/tests/c_layout.rs in C).
same_value!(
    hsa_sys::raw::HSA_STATUS_SUCCESS => h::hsa_status_t::HSA_STATUS_SUCCESS,
    hsa_sys::raw::HSA_STATUS_INFO_BREAK => h::hsa_status_t::HSA_STATUS_INFO_BREAK,
    hsa_sys::raw::HSA_STATUS_ERROR => h::hsa_status_t::HSA_STATUS_ERROR,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_ARGUMENT => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_ARGUMENT,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_QUEUE_CREATION => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_ALLOCATION => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_ALLOCATION,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_AGENT => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_AGENT,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_REGION => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_REGION,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_SIGNAL => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_SIGNAL,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_QUEUE => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_QUEUE,
    hsa_sys::raw::HSA_STATUS_ERROR_OUT_OF_RESOURCES => h::hsa_status_t::HSA_STATUS_ERROR_OUT_OF_RESOURCES,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_PACKET_FORMAT => h::hsa_status_t::HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
    hsa_sys::raw::HSA_STATUS_ERROR_RESOURCE_FREE => h::hsa_status_t::HSA_STATUS_ERROR_RESOURCE_FREE,
    hsa_sys::raw::HSA_STATUS_ERROR_NOT_INITIALIZED => h::hsa_status_t::HSA_STATUS_ERROR_NOT_INITIALIZED,
    hsa_sys::raw::HSA_STATUS_ERROR_REFCOUNT_OVERFLOW => h::hsa_status_t::HSA_STATUS_ERROR_REFCOUNT_OVERFLOW,
    hsa_sys::raw::HSA_STATUS_ERROR_INVALID_MEMORY_POOL => h::HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
    hsa_sys::raw::HSA_AGENT_INFO_NAME => h::hsa_agent_info_t::HSA_AGENT_INFO_NAME,
    hsa_sys::raw::HSA_AGENT_INFO_VENDOR_NAME => h::hsa_agent_info_t::HSA_AGENT_INFO_VENDOR_NAME,
    hsa_sys::raw::HSA_AGENT_INFO_NODE => h::hsa_agent_info_t::HSA_AGENT_INFO_NODE,
    hsa_sys::raw::HSA_AGENT_INFO_DEVICE => h::hsa_agent_info_t::HSA_AGENT_INFO_DEVICE,
    hsa_sys::raw::HSA_DEVICE_TYPE_CPU => h::hsa_device_type_t::HSA_DEVICE_TYPE_CPU,
    hsa_sys::raw::HSA_DEVICE_TYPE_GPU => h::hsa_device_type_t::HSA_DEVICE_TYPE_GPU,
    hsa_sys::raw::HSA_DEVICE_TYPE_DSP => h::hsa_device_type_t::HSA_DEVICE_TYPE_DSP,
    hsa_sys::raw::HSA_AMD_SEGMENT_GLOBAL => h::hsa_amd_segment_t::HSA_AMD_SEGMENT_GLOBAL,
    hsa_sys::raw::HSA_AMD_SEGMENT_READONLY => h::hsa_amd_segment_t::HSA_AMD_SEGMENT_READONLY,
    hsa_sys::raw::HSA_AMD_SEGMENT_PRIVATE => h::hsa_amd_segment_t::HSA_AMD_SEGMENT_PRIVATE,
    hsa_sys::raw::HSA_AMD_SEGMENT_GROUP => h::hsa_amd_segment_t::HSA_AMD_SEGMENT_GROUP,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT => h::hsa_amd_memory_pool_global_flag_s::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED => h::hsa_amd_memory_pool_global_flag_s::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED => h::hsa_amd_memory_pool_global_flag_s::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_INFO_SEGMENT => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_INFO_SIZE => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_SIZE,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL,
    hsa_sys::raw::HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE => h::hsa_amd_memory_pool_info_t::HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE,
);

// Pointee layouts: the structs the CPU runtime writes through application pointers.
#[cfg(feature = "cpu")]
crate::assert_same_layout!(crate::debian_hip::hipDeviceProp_t, hrr_hip_cpu::ffi::HipDeviceProp;
    name = name,
    totalGlobalMem = total_global_mem,
    sharedMemPerBlock = shared_mem_per_block,
    regsPerBlock = regs_per_block,
    warpSize = warp_size,
    maxThreadsPerBlock = max_threads_per_block,
    maxThreadsDim = max_threads_dim,
    maxGridSize = max_grid_size,
    clockRate = clock_rate,
    memoryClockRate = memory_clock_rate,
    memoryBusWidth = memory_bus_width,
    totalConstMem = total_const_mem,
    major = major,
    minor = minor,
    multiProcessorCount = multi_processor_count,
    l2CacheSize = l2_cache_size,
    maxThreadsPerMultiProcessor = max_threads_per_multi_processor,
    computeMode = compute_mode,
    clockInstructionRate = clock_instruction_rate,
    arch = arch,
    concurrentKernels = concurrent_kernels,
    pciDomainID = pci_domain_id,
    pciBusID = pci_bus_id,
    pciDeviceID = pci_device_id,
    maxSharedMemoryPerMultiProcessor = max_shared_memory_per_multi_processor,
    isMultiGpuBoard = is_multi_gpu_board,
    canMapHostMemory = can_map_host_memory,
    gcnArch = gcn_arch,
    gcnArchName = gcn_arch_name,
    integrated = integrated,
    cooperativeLaunch = cooperative_launch,
    cooperativeMultiDeviceLaunch = cooperative_multi_device_launch,
    maxTexture1DLinear = max_texture_1d_linear,
    maxTexture1D = max_texture_1d,
    maxTexture2D = max_texture_2d,
    maxTexture3D = max_texture_3d,
    hdpMemFlushCntl = hdp_mem_flush_cntl,
    hdpRegFlushCntl = hdp_reg_flush_cntl,
    memPitch = mem_pitch,
    textureAlignment = texture_alignment,
    texturePitchAlignment = texture_pitch_alignment,
    kernelExecTimeoutEnabled = kernel_exec_timeout_enabled,
    ECCEnabled = ecc_enabled,
    tccDriver = tcc_driver,
    cooperativeMultiDeviceUnmatchedFunc = cooperative_multi_device_unmatched_func,
    cooperativeMultiDeviceUnmatchedGridDim = cooperative_multi_device_unmatched_grid_dim,
    cooperativeMultiDeviceUnmatchedBlockDim = cooperative_multi_device_unmatched_block_dim,
    cooperativeMultiDeviceUnmatchedSharedMem = cooperative_multi_device_unmatched_shared_mem,
    isLargeBar = is_large_bar,
    asicRevision = asic_revision,
    managedMemory = managed_memory,
    directManagedMemAccessFromHost = direct_managed_mem_access_from_host,
    concurrentManagedAccess = concurrent_managed_access,
    pageableMemoryAccess = pageable_memory_access,
    pageableMemoryAccessUsesHostPageTables = pageable_memory_access_uses_host_page_tables,
);
#[cfg(feature = "cpu")]
crate::assert_same_layout!(crate::debian_hip::hipPointerAttribute_t, hrr_hip_cpu::ffi::HipPointerAttribute;
    memoryType = memory_type,
    device = device,
    devicePointer = device_pointer,
    hostPointer = host_pointer,
    isManaged = is_managed,
    allocationFlags = allocation_flags,
);
#[cfg(feature = "cpu")]
crate::assert_same_layout!(crate::debian_hip::dim3, hrr_hip_cpu::ffi::Dim3; x = x, y = y, z = z);
#[cfg(feature = "cpu")]
crate::assert_same_layout!(crate::debian_hsa::hsa_agent_t, hrr_hip_cpu::ffi::HsaAgent; handle = handle);
#[cfg(feature = "cpu")]
crate::assert_same_layout!(crate::debian_hsa::hsa_amd_memory_pool_t, hrr_hip_cpu::ffi::HsaMemoryPool; handle = handle);
crate::assert_same_layout!(crate::debian_hsa::hsa_agent_t, hsa_sys::raw::hsa_agent_t; handle = handle);
crate::assert_same_layout!(crate::debian_hsa::hsa_amd_memory_pool_t, hsa_sys::raw::hsa_amd_memory_pool_t; handle = handle);

// The HIP table's by-value structs (hip_api::types) against the header's.
crate::assert_same_layout!(crate::debian_hip::hipExtent, hip_api::types::hipExtent;
    width = width, height = height, depth = depth);
crate::assert_same_layout!(crate::debian_hip::hipPitchedPtr, hip_api::types::hipPitchedPtr;
    ptr = ptr, pitch = pitch, xsize = xsize, ysize = ysize);
crate::assert_same_layout!(crate::debian_hip::hipChannelFormatDesc, hip_api::types::hipChannelFormatDesc;
    x = x, y = y, z = z, w = w, f = f);
crate::assert_same_layout!(crate::debian_hip::hipIpcMemHandle_t, hip_api::types::hipIpcMemHandle_t;
    reserved = reserved);
crate::assert_same_layout!(crate::debian_hip::hipIpcEventHandle_t, hip_api::types::hipIpcEventHandle_t;
    reserved = reserved);
crate::assert_same_layout!(crate::reference::compiler::uint3, hip_api::types::uint3; x = x, y = y, z = z);
crate::assert_same_layout!(crate::debian_hip::dim3, hip_api::types::dim3; x = x, y = y, z = z);
// Structs read through a pointer by the CPU runtime and the capture library.
crate::assert_same_layout!(crate::debian_hip::hipPos, hip_api::types::hipPos; x = x, y = y, z = z);
crate::assert_same_layout!(crate::debian_hip::hip_Memcpy2D, hip_api::types::hip_Memcpy2D;
    srcXInBytes = srcXInBytes, srcY = srcY, srcMemoryType = srcMemoryType, srcHost = srcHost,
    srcDevice = srcDevice, srcArray = srcArray, srcPitch = srcPitch, dstXInBytes = dstXInBytes,
    dstY = dstY, dstMemoryType = dstMemoryType, dstHost = dstHost, dstDevice = dstDevice,
    dstArray = dstArray, dstPitch = dstPitch, WidthInBytes = WidthInBytes, Height = Height);
crate::assert_same_layout!(crate::debian_hip::hipMemcpy3DParms, hip_api::types::hipMemcpy3DParms;
    srcArray = srcArray, srcPos = srcPos, srcPtr = srcPtr, dstArray = dstArray, dstPos = dstPos,
    dstPtr = dstPtr, extent = extent, kind = kind);

#[cfg(feature = "intercept")]
mod intercept_values {
    use crate::debian_hip::{hipError_t as E, hipMemcpyKind as K};
    same_value!(
        hrr_intercept::hip::types::err::SUCCESS => E::hipSuccess,
        hrr_intercept::hip::types::err::NOT_FOUND => E::hipErrorNotFound,
        hrr_intercept::hip::types::err::NOT_SUPPORTED => E::hipErrorNotSupported,
        hrr_intercept::hip::types::MEMCPY_HOST_TO_HOST => K::hipMemcpyHostToHost,
        hrr_intercept::hip::types::MEMCPY_HOST_TO_DEVICE => K::hipMemcpyHostToDevice,
        hrr_intercept::hip::types::MEMCPY_DEVICE_TO_HOST => K::hipMemcpyDeviceToHost,
        hrr_intercept::hip::types::MEMCPY_DEVICE_TO_DEVICE => K::hipMemcpyDeviceToDevice,
    );
    crate::assert_same_layout!(crate::debian_hip::hipPointerAttribute_t, hrr_intercept::hip::types::HipPointerAttribute;
        memoryType = memory_type,
        device = device,
        devicePointer = device_pointer,
        hostPointer = host_pointer,
        isManaged = is_managed,
        allocationFlags = allocation_flags,
    );
    crate::assert_same_layout!(crate::debian_hip::dim3, hrr_intercept::hip::types::Dim3; x = x, y = y, z = z);
}
