//! C ABI types of the HIP 5.2 runtime API (`hip/hip_runtime_api.h`) and of the
//! HSA subset (`hsa/hsa.h`, `hsa/hsa_ext_amd.h`), one Rust type per concept.
//!
//! Layouts were checked against Debian's headers with a C program (sizes and
//! offsets are also asserted at compile time below).
#![forbid(unsafe_code)]

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `hipError_t` (a C enum: `int`).
pub type HipError = c_int;

/// `hipError_t` values used by this runtime (numbering from hip_runtime_api.h).
pub mod err {
    use super::HipError;
    pub const SUCCESS: HipError = 0;
    pub const INVALID_VALUE: HipError = 1;
    pub const OUT_OF_MEMORY: HipError = 2;
    pub const NOT_INITIALIZED: HipError = 3;
    pub const INVALID_CONFIGURATION: HipError = 9;
    pub const INVALID_DEVICE_POINTER: HipError = 17;
    pub const INVALID_MEMCPY_DIRECTION: HipError = 21;
    pub const MISSING_CONFIGURATION: HipError = 52;
    pub const INVALID_DEVICE_FUNCTION: HipError = 98;
    pub const NO_DEVICE: HipError = 100;
    pub const INVALID_DEVICE: HipError = 101;
    pub const INVALID_IMAGE: HipError = 200;
    pub const NO_BINARY_FOR_GPU: HipError = 209;
    pub const FILE_NOT_FOUND: HipError = 301;
    pub const SHARED_OBJECT_SYMBOL_NOT_FOUND: HipError = 302;
    pub const SHARED_OBJECT_INIT_FAILED: HipError = 303;
    pub const OPERATING_SYSTEM: HipError = 304;
    pub const INVALID_HANDLE: HipError = 400;
    pub const NOT_FOUND: HipError = 500;
    pub const NOT_READY: HipError = 600;
    pub const LAUNCH_FAILURE: HipError = 719;
    pub const HOST_MEMORY_ALREADY_REGISTERED: HipError = 712;
    pub const HOST_MEMORY_NOT_REGISTERED: HipError = 713;
    pub const NOT_SUPPORTED: HipError = 801;
    pub const UNKNOWN: HipError = 999;
}

/// `hipMemcpyKind`.
pub type HipMemcpyKind = c_int;
pub const MEMCPY_HOST_TO_HOST: HipMemcpyKind = 0;
pub const MEMCPY_HOST_TO_DEVICE: HipMemcpyKind = 1;
pub const MEMCPY_DEVICE_TO_HOST: HipMemcpyKind = 2;
pub const MEMCPY_DEVICE_TO_DEVICE: HipMemcpyKind = 3;
pub const MEMCPY_DEFAULT: HipMemcpyKind = 4;

/// `hipMemoryType`.
pub type HipMemoryType = c_int;
pub const MEMORY_TYPE_HOST: HipMemoryType = 0;
pub const MEMORY_TYPE_DEVICE: HipMemoryType = 1;

/// `hipStreamNonBlocking`.
pub const STREAM_NON_BLOCKING: c_uint = 1;
/// `hipEventDisableTiming`.
pub const EVENT_DISABLE_TIMING: c_uint = 2;
/// `hipMemAttachGlobal` / `hipMemAttachHost`.
pub const MEM_ATTACH_GLOBAL: c_uint = 1;
pub const MEM_ATTACH_HOST: c_uint = 2;
/// `hipStreamPerThread` (`(hipStream_t)2`).
pub const STREAM_PER_THREAD: usize = 2;

/// `HIP_LAUNCH_PARAM_*` markers of the `extra` array of hipModuleLaunchKernel.
pub const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
pub const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
pub const LAUNCH_PARAM_END: usize = 3;

/// `HIP_VERSION` of Debian's 5.2 headers (5.2.21153).
pub const HIP_VERSION: c_int = 50_221_153;

/// `hipStream_t`, `hipEvent_t`, `hipModule_t`, `hipFunction_t`: opaque pointers.
pub type HipStream = *mut c_void;
pub type HipEvent = *mut c_void;
pub type HipModule = *mut c_void;
pub type HipFunction = *mut c_void;

/// `dim3` (also `hrr_dim3` in the CPU kernel ABI).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Dim3 { x, y, z }
    }
    /// Product of the three extents (cannot overflow u64).
    pub fn volume(self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }
}

/// `hipDeviceProp_t` of HIP 5.2 (792 bytes; `arch` is a 4-byte bitfield struct).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HipDeviceProp {
    pub name: [c_char; 256],
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: c_int,
    pub warp_size: c_int,
    pub max_threads_per_block: c_int,
    pub max_threads_dim: [c_int; 3],
    pub max_grid_size: [c_int; 3],
    pub clock_rate: c_int,
    pub memory_clock_rate: c_int,
    pub memory_bus_width: c_int,
    pub total_const_mem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub multi_processor_count: c_int,
    pub l2_cache_size: c_int,
    pub max_threads_per_multi_processor: c_int,
    pub compute_mode: c_int,
    pub clock_instruction_rate: c_int,
    /// `hipDeviceArch_t`: 17 one-bit flags in an `unsigned`.
    pub arch: u32,
    pub concurrent_kernels: c_int,
    pub pci_domain_id: c_int,
    pub pci_bus_id: c_int,
    pub pci_device_id: c_int,
    pub max_shared_memory_per_multi_processor: usize,
    pub is_multi_gpu_board: c_int,
    pub can_map_host_memory: c_int,
    pub gcn_arch: c_int,
    pub gcn_arch_name: [c_char; 256],
    pub integrated: c_int,
    pub cooperative_launch: c_int,
    pub cooperative_multi_device_launch: c_int,
    pub max_texture_1d_linear: c_int,
    pub max_texture_1d: c_int,
    pub max_texture_2d: [c_int; 2],
    pub max_texture_3d: [c_int; 3],
    pub hdp_mem_flush_cntl: *mut c_uint,
    pub hdp_reg_flush_cntl: *mut c_uint,
    pub mem_pitch: usize,
    pub texture_alignment: usize,
    pub texture_pitch_alignment: usize,
    pub kernel_exec_timeout_enabled: c_int,
    pub ecc_enabled: c_int,
    pub tcc_driver: c_int,
    pub cooperative_multi_device_unmatched_func: c_int,
    pub cooperative_multi_device_unmatched_grid_dim: c_int,
    pub cooperative_multi_device_unmatched_block_dim: c_int,
    pub cooperative_multi_device_unmatched_shared_mem: c_int,
    pub is_large_bar: c_int,
    pub asic_revision: c_int,
    pub managed_memory: c_int,
    pub direct_managed_mem_access_from_host: c_int,
    pub concurrent_managed_access: c_int,
    pub pageable_memory_access: c_int,
    pub pageable_memory_access_uses_host_page_tables: c_int,
}

// Offsets measured with gcc on Debian's hip_runtime_api.h (x86_64).
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<HipDeviceProp>() == 792);
    assert!(offset_of!(HipDeviceProp, total_global_mem) == 256);
    assert!(offset_of!(HipDeviceProp, arch) == 356);
    assert!(offset_of!(HipDeviceProp, max_shared_memory_per_multi_processor) == 376);
    assert!(offset_of!(HipDeviceProp, gcn_arch_name) == 396);
    assert!(offset_of!(HipDeviceProp, integrated) == 652);
    assert!(offset_of!(HipDeviceProp, hdp_mem_flush_cntl) == 696);
    assert!(offset_of!(HipDeviceProp, mem_pitch) == 712);
    assert!(offset_of!(HipDeviceProp, pageable_memory_access_uses_host_page_tables) == 788);
    assert!(size_of::<HipPointerAttribute>() == 32);
    assert!(offset_of!(HipPointerAttribute, device_pointer) == 8);
    assert!(offset_of!(HipPointerAttribute, is_managed) == 24);
    assert!(offset_of!(HipPointerAttribute, allocation_flags) == 28);
    assert!(size_of::<CpuLaunch>() == 48);
};

/// `hipPointerAttribute_t` of HIP 5.2.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HipPointerAttribute {
    pub memory_type: HipMemoryType,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub is_managed: c_int,
    pub allocation_flags: c_uint,
}

/// `hipDeviceAttribute_t` values answered by hipDeviceGetAttribute.
pub mod attr {
    pub const ECC_ENABLED: i32 = 0;
    pub const CAN_MAP_HOST_MEMORY: i32 = 3;
    pub const CLOCK_RATE: i32 = 5;
    pub const COMPUTE_MODE: i32 = 6;
    pub const CONCURRENT_KERNELS: i32 = 8;
    pub const CONCURRENT_MANAGED_ACCESS: i32 = 9;
    pub const COOPERATIVE_LAUNCH: i32 = 10;
    pub const INTEGRATED: i32 = 16;
    pub const L2_CACHE_SIZE: i32 = 19;
    pub const COMPUTE_CAPABILITY_MAJOR: i32 = 23;
    pub const MANAGED_MEMORY: i32 = 24;
    pub const MAX_BLOCK_DIM_X: i32 = 26;
    pub const MAX_BLOCK_DIM_Y: i32 = 27;
    pub const MAX_BLOCK_DIM_Z: i32 = 28;
    pub const MAX_GRID_DIM_X: i32 = 29;
    pub const MAX_GRID_DIM_Y: i32 = 30;
    pub const MAX_GRID_DIM_Z: i32 = 31;
    pub const MAX_THREADS_PER_BLOCK: i32 = 56;
    pub const MAX_THREADS_PER_MULTIPROCESSOR: i32 = 57;
    pub const MEMORY_BUS_WIDTH: i32 = 59;
    pub const MEMORY_CLOCK_RATE: i32 = 60;
    pub const COMPUTE_CAPABILITY_MINOR: i32 = 61;
    pub const MULTIPROCESSOR_COUNT: i32 = 63;
    pub const PAGEABLE_MEMORY_ACCESS: i32 = 65;
    pub const PCI_BUS_ID: i32 = 67;
    pub const PCI_DEVICE_ID: i32 = 68;
    pub const MAX_REGISTERS_PER_BLOCK: i32 = 71;
    pub const MAX_SHARED_MEMORY_PER_BLOCK: i32 = 74;
    pub const TOTAL_CONSTANT_MEMORY: i32 = 83;
    pub const UNIFIED_ADDRESSING: i32 = 85;
    pub const WARP_SIZE: i32 = 87;
    pub const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: i32 = 10002;
}

/// The launch descriptor passed to every CPU kernel (`hrr_cpu_launch` in
/// `tests/workloads/include/hrr_cpu_kernel.h`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CpuLaunch {
    pub grid_dim: Dim3,
    pub block_dim: Dim3,
    pub block_idx: Dim3,
    pub shared: *mut c_void,
}

/// A CPU kernel entry point: `void NAME(const hrr_cpu_launch *l, const void *kernarg)`.
pub type CpuKernelFn = unsafe extern "C" fn(*const CpuLaunch, *const c_void);

/// HIPF fat-binary wrapper handed to `__hipRegisterFatBinary`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HipFatbinWrapper {
    pub magic: u32,
    pub version: u32,
    pub binary: *const c_void,
    pub unused: *mut c_void,
}
/// "HIPF" as a little-endian u32.
pub use hrr_codeobj::hipf::MAGIC as HIPF_MAGIC;

// ---------------------------------------------------------------- HSA

/// `hsa_status_t`.
pub type HsaStatus = c_int;
pub mod hsa_status {
    use super::HsaStatus;
    pub const SUCCESS: HsaStatus = 0;
    pub const INFO_BREAK: HsaStatus = 1;
    pub const ERROR: HsaStatus = 0x1000;
    pub const ERROR_INVALID_ARGUMENT: HsaStatus = 0x1001;
    pub const ERROR_INVALID_ALLOCATION: HsaStatus = 0x1003;
    pub const ERROR_INVALID_AGENT: HsaStatus = 0x1004;
    pub const ERROR_OUT_OF_RESOURCES: HsaStatus = 0x1008;
    pub const ERROR_NOT_INITIALIZED: HsaStatus = 0x100B;
    pub const ERROR_INVALID_MEMORY_POOL: HsaStatus = 40;
}

/// `hsa_agent_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaAgent {
    pub handle: u64,
}

/// `hsa_amd_memory_pool_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsaMemoryPool {
    pub handle: u64,
}

/// `hsa_agent_info_t` values answered.
pub mod hsa_agent_info {
    pub const NAME: i32 = 0;
    pub const VENDOR_NAME: i32 = 1;
    pub const NODE: i32 = 16;
    pub const DEVICE: i32 = 17;
}
/// `hsa_device_type_t`.
pub const HSA_DEVICE_TYPE_CPU: u32 = 0;
pub const HSA_DEVICE_TYPE_GPU: u32 = 1;

/// `hsa_amd_memory_pool_info_t` values answered.
pub mod hsa_pool_info {
    pub const SEGMENT: i32 = 0;
    pub const GLOBAL_FLAGS: i32 = 1;
    pub const SIZE: i32 = 2;
    pub const RUNTIME_ALLOC_ALLOWED: i32 = 5;
    pub const RUNTIME_ALLOC_GRANULE: i32 = 6;
    pub const RUNTIME_ALLOC_ALIGNMENT: i32 = 7;
    pub const ACCESSIBLE_BY_ALL: i32 = 15;
    pub const ALLOC_MAX_SIZE: i32 = 16;
}
/// `HSA_AMD_SEGMENT_GLOBAL`.
pub const HSA_AMD_SEGMENT_GLOBAL: u32 = 0;
/// `hsa_amd_memory_pool_global_flag_t`.
pub const HSA_POOL_FLAG_KERNARG_INIT: u32 = 1;
pub const HSA_POOL_FLAG_FINE_GRAINED: u32 = 2;
pub const HSA_POOL_FLAG_COARSE_GRAINED: u32 = 4;

/// `hsa_status_t (*)(hsa_agent_t, void*)`.
pub type HsaAgentCallback = Option<unsafe extern "C" fn(HsaAgent, *mut c_void) -> HsaStatus>;
/// `hsa_status_t (*)(hsa_amd_memory_pool_t, void*)`.
pub type HsaPoolCallback = Option<unsafe extern "C" fn(HsaMemoryPool, *mut c_void) -> HsaStatus>;
