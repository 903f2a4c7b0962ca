//! `hipDeviceProp_t`, what hipGetDeviceProperties fills in.

use core::ffi::{c_char, c_int, c_uint};

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
    use core::mem::{offset_of, size_of};
    assert!(size_of::<HipDeviceProp>() == 792);
    assert!(offset_of!(HipDeviceProp, total_global_mem) == 256);
    assert!(offset_of!(HipDeviceProp, arch) == 356);
    assert!(offset_of!(HipDeviceProp, max_shared_memory_per_multi_processor) == 376);
    assert!(offset_of!(HipDeviceProp, gcn_arch_name) == 396);
    assert!(offset_of!(HipDeviceProp, integrated) == 652);
    assert!(offset_of!(HipDeviceProp, hdp_mem_flush_cntl) == 696);
    assert!(offset_of!(HipDeviceProp, mem_pitch) == 712);
    assert!(offset_of!(HipDeviceProp, pageable_memory_access_uses_host_page_tables) == 788);
};
