//! Raw C ABI of the HSA subset hrr uses, transcribed from Debian's ROCm 5.2
//! `/usr/include/hsa/hsa.h` and `/usr/include/hsa/hsa_ext_amd.h`.
//!
//! Names are the C names. C enums are `u32`: their constants are all
//! non-negative, so GCC and clang give them the underlying type `unsigned int`
//! (what bindgen emits for them too). Every value and layout here is checked
//! twice: against a C program compiled with those headers
//! (`tests/c_layout.rs`), and against bindgen output of the same headers at
//! compile time (`abi/`, `scripts/abi-check.sh`).
#![allow(non_camel_case_types)]
// Each item is the header's, under its C name, and documented there.
#![allow(missing_docs)]

use std::ffi::{c_char, c_void};

/// `hsa_status_t` (`hsa.h`; `HSA_STATUS_ERROR_INVALID_MEMORY_POOL` is from `hsa_ext_amd.h`).
pub type hsa_status_t = u32;
pub const HSA_STATUS_SUCCESS: hsa_status_t = 0x0;
pub const HSA_STATUS_INFO_BREAK: hsa_status_t = 0x1;
pub const HSA_STATUS_ERROR: hsa_status_t = 0x1000;
pub const HSA_STATUS_ERROR_INVALID_ARGUMENT: hsa_status_t = 0x1001;
pub const HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: hsa_status_t = 0x1002;
pub const HSA_STATUS_ERROR_INVALID_ALLOCATION: hsa_status_t = 0x1003;
pub const HSA_STATUS_ERROR_INVALID_AGENT: hsa_status_t = 0x1004;
pub const HSA_STATUS_ERROR_INVALID_REGION: hsa_status_t = 0x1005;
pub const HSA_STATUS_ERROR_INVALID_SIGNAL: hsa_status_t = 0x1006;
pub const HSA_STATUS_ERROR_INVALID_QUEUE: hsa_status_t = 0x1007;
pub const HSA_STATUS_ERROR_OUT_OF_RESOURCES: hsa_status_t = 0x1008;
pub const HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: hsa_status_t = 0x1009;
pub const HSA_STATUS_ERROR_RESOURCE_FREE: hsa_status_t = 0x100A;
pub const HSA_STATUS_ERROR_NOT_INITIALIZED: hsa_status_t = 0x100B;
pub const HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: hsa_status_t = 0x100C;
pub const HSA_STATUS_ERROR_INVALID_MEMORY_POOL: hsa_status_t = 40;

/// `hsa_agent_t`: an opaque 64-bit handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_agent_t {
    pub handle: u64,
}

/// `hsa_amd_memory_pool_t`: an opaque 64-bit handle.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct hsa_amd_memory_pool_t {
    pub handle: u64,
}

/// `hsa_agent_info_t` (attributes used here).
pub type hsa_agent_info_t = u32;
/// Value type: `char[64]`, NUL-terminated.
pub const HSA_AGENT_INFO_NAME: hsa_agent_info_t = 0;
/// Value type: `char[64]`, NUL-terminated.
pub const HSA_AGENT_INFO_VENDOR_NAME: hsa_agent_info_t = 1;
/// Value type: `uint32_t`.
pub const HSA_AGENT_INFO_NODE: hsa_agent_info_t = 16;
/// Value type: `hsa_device_type_t`.
pub const HSA_AGENT_INFO_DEVICE: hsa_agent_info_t = 17;

/// `hsa_device_type_t`.
pub type hsa_device_type_t = u32;
pub const HSA_DEVICE_TYPE_CPU: hsa_device_type_t = 0;
pub const HSA_DEVICE_TYPE_GPU: hsa_device_type_t = 1;
pub const HSA_DEVICE_TYPE_DSP: hsa_device_type_t = 2;

/// `hsa_amd_segment_t`.
pub type hsa_amd_segment_t = u32;
pub const HSA_AMD_SEGMENT_GLOBAL: hsa_amd_segment_t = 0;
pub const HSA_AMD_SEGMENT_READONLY: hsa_amd_segment_t = 1;
pub const HSA_AMD_SEGMENT_PRIVATE: hsa_amd_segment_t = 2;
pub const HSA_AMD_SEGMENT_GROUP: hsa_amd_segment_t = 3;

/// `hsa_amd_memory_pool_global_flag_t` (bits of `HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS`).
pub type hsa_amd_memory_pool_global_flag_t = u32;
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT: hsa_amd_memory_pool_global_flag_t = 1;
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED: hsa_amd_memory_pool_global_flag_t = 2;
pub const HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED: hsa_amd_memory_pool_global_flag_t = 4;

/// `hsa_amd_memory_pool_info_t` (attributes used here).
pub type hsa_amd_memory_pool_info_t = u32;
/// Value type: `hsa_amd_segment_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_SEGMENT: hsa_amd_memory_pool_info_t = 0;
/// Value type: `uint32_t` (`hsa_amd_memory_pool_global_flag_t` bits).
pub const HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS: hsa_amd_memory_pool_info_t = 1;
/// Value type: `size_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_SIZE: hsa_amd_memory_pool_info_t = 2;
/// Value type: `bool` (one byte).
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED: hsa_amd_memory_pool_info_t = 5;
/// Value type: `size_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE: hsa_amd_memory_pool_info_t = 6;
/// Value type: `size_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT: hsa_amd_memory_pool_info_t = 7;
/// Value type: `bool` (one byte).
pub const HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL: hsa_amd_memory_pool_info_t = 15;
/// Value type: `size_t`.
pub const HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE: hsa_amd_memory_pool_info_t = 16;

/// Size of the `char[64]` written for `HSA_AGENT_INFO_NAME` / `_VENDOR_NAME`.
pub const HSA_AGENT_NAME_LEN: usize = 64;

/// `hsa_status_t (*callback)(hsa_agent_t agent, void* data)` of `hsa_iterate_agents`.
/// Non-nullable here: the wrapper always passes one.
pub type hsa_agent_callback_t =
    unsafe extern "C" fn(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t;
/// `hsa_status_t (*callback)(hsa_amd_memory_pool_t memory_pool, void* data)`.
pub type hsa_pool_callback_t =
    unsafe extern "C" fn(memory_pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t;

/// The HSA table's lookup: `hsa_fn!(NAME, CALLBACK, [EXTRA…])` expands to
/// `CALLBACK! { EXTRA… NAME(PARAM: TYPE, …) -> RET }`, the entry point's C
/// signature as `hsa.h` / `hsa_ext_amd.h` declare it (parameter names
/// included). Every signature of the subset hrr uses is written here once:
/// hsa-sys's loader, the CPU runtime's exports and the capture library's
/// exports are generated from it (`api_table`'s callbacks), and `abi/`
/// checks each line against bindgen of Debian's headers. Types resolve where
/// it expands (`hsa_sys::raw::*` in scope).
#[macro_export]
macro_rules! hsa_fn {
    (hsa_init, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_init() -> hsa_status_t } };
    (hsa_shut_down, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_shut_down() -> hsa_status_t } };
    (hsa_status_string, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_status_string(status: hsa_status_t, status_string: *mut *const c_char) -> hsa_status_t } };
    (hsa_iterate_agents, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_iterate_agents(callback: Option<hsa_agent_callback_t>, data: *mut c_void) -> hsa_status_t } };
    (hsa_agent_get_info, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_agent_get_info(agent: hsa_agent_t, attribute: hsa_agent_info_t, value: *mut c_void) -> hsa_status_t } };
    (hsa_amd_agent_iterate_memory_pools, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_amd_agent_iterate_memory_pools(agent: hsa_agent_t, callback: Option<hsa_pool_callback_t>, data: *mut c_void) -> hsa_status_t } };
    (hsa_amd_memory_pool_get_info, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_amd_memory_pool_get_info(memory_pool: hsa_amd_memory_pool_t, attribute: hsa_amd_memory_pool_info_t, value: *mut c_void) -> hsa_status_t } };
    (hsa_amd_memory_pool_allocate, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_amd_memory_pool_allocate(memory_pool: hsa_amd_memory_pool_t, size: usize, flags: u32, ptr: *mut *mut c_void) -> hsa_status_t } };
    (hsa_amd_memory_pool_free, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_amd_memory_pool_free(ptr: *mut c_void) -> hsa_status_t } };
    (hsa_amd_agents_allow_access, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hsa_amd_agents_allow_access(num_agents: u32, agents: *const hsa_agent_t, flags: *const u32, ptr: *const c_void) -> hsa_status_t } };
}

/// The HSA table's list: `hsa_fns!(CALLBACK, [EXTRA…])` expands to
/// `CALLBACK! { EXTRA… NAME NAME … }`, every entry.
#[macro_export]
macro_rules! hsa_fns {
    ($cb:path, [$($x:tt)*]) => {
        $cb! {
            $($x)*
            hsa_init hsa_shut_down hsa_status_string hsa_iterate_agents hsa_agent_get_info
            hsa_amd_agent_iterate_memory_pools hsa_amd_memory_pool_get_info
            hsa_amd_memory_pool_allocate hsa_amd_memory_pool_free hsa_amd_agents_allow_access
        }
    };
}

/// `fns::NAME`: each entry point's function type, from the table.
pub mod fns {
    use super::*;
    crate::hsa_fns!(api_table::for_each, [crate::hsa_fn, api_table::fn_type, []]);
}

/// `args::NAME`: each entry point's parameters as a struct (named as in the
/// header), implementing [`api_table::Entry`].
#[allow(unsafe_code)]
pub mod args {
    use super::*;
    crate::hsa_fns!(
        api_table::for_each,
        [crate::hsa_fn, api_table::entry_struct, []]
    );
}

/// `hsa_init`'s type (the table's, under the name the loader uses).
pub type PFN_hsa_init = fns::hsa_init;
/// `hsa_shut_down`'s type.
pub type PFN_hsa_shut_down = fns::hsa_shut_down;
/// `hsa_status_string`'s type.
pub type PFN_hsa_status_string = fns::hsa_status_string;
/// `hsa_iterate_agents`'s type.
pub type PFN_hsa_iterate_agents = fns::hsa_iterate_agents;
/// `hsa_agent_get_info`'s type.
pub type PFN_hsa_agent_get_info = fns::hsa_agent_get_info;
/// `hsa_amd_agent_iterate_memory_pools`'s type.
pub type PFN_hsa_amd_agent_iterate_memory_pools = fns::hsa_amd_agent_iterate_memory_pools;
/// `hsa_amd_memory_pool_get_info`'s type.
pub type PFN_hsa_amd_memory_pool_get_info = fns::hsa_amd_memory_pool_get_info;
/// `hsa_amd_memory_pool_allocate`'s type.
pub type PFN_hsa_amd_memory_pool_allocate = fns::hsa_amd_memory_pool_allocate;
/// `hsa_amd_memory_pool_free`'s type.
pub type PFN_hsa_amd_memory_pool_free = fns::hsa_amd_memory_pool_free;
/// `hsa_amd_agents_allow_access`'s type.
pub type PFN_hsa_amd_agents_allow_access = fns::hsa_amd_agents_allow_access;

/// The entry points, resolved from one library. Plain function pointers: they
/// stay valid only while the library they came from is loaded ([`crate::Hsa`]
/// keeps it loaded for as long as it lends them out).
#[derive(Clone, Copy)]
pub struct HsaFns {
    pub hsa_init: PFN_hsa_init,
    pub hsa_shut_down: PFN_hsa_shut_down,
    pub hsa_status_string: PFN_hsa_status_string,
    pub hsa_iterate_agents: PFN_hsa_iterate_agents,
    pub hsa_agent_get_info: PFN_hsa_agent_get_info,
    pub hsa_amd_agent_iterate_memory_pools: PFN_hsa_amd_agent_iterate_memory_pools,
    pub hsa_amd_memory_pool_get_info: PFN_hsa_amd_memory_pool_get_info,
    pub hsa_amd_memory_pool_allocate: PFN_hsa_amd_memory_pool_allocate,
    pub hsa_amd_memory_pool_free: PFN_hsa_amd_memory_pool_free,
    pub hsa_amd_agents_allow_access: PFN_hsa_amd_agents_allow_access,
}

/// The C names of [`HsaFns`]' fields, in order (what [`crate::Hsa::load`] resolves).
pub const SYMBOLS: [&str; 10] = [
    "hsa_init",
    "hsa_shut_down",
    "hsa_status_string",
    "hsa_iterate_agents",
    "hsa_agent_get_info",
    "hsa_amd_agent_iterate_memory_pools",
    "hsa_amd_memory_pool_get_info",
    "hsa_amd_memory_pool_allocate",
    "hsa_amd_memory_pool_free",
    "hsa_amd_agents_allow_access",
];

// Layouts of the handle structs (x86_64 and every other LP64 target HSA supports).
const _: () = {
    use std::mem::{align_of, size_of};
    assert!(size_of::<hsa_agent_t>() == 8 && align_of::<hsa_agent_t>() == 8);
    assert!(size_of::<hsa_amd_memory_pool_t>() == 8 && align_of::<hsa_amd_memory_pool_t>() == 8);
};
