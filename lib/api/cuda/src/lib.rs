//! One declaration of the CUDA driver API's C types and constants, as CUDA
//! 13.0's `cuda.h` lays them out on x86_64 Linux.
//!
//! Two crates speak that ABI: the CUDA replay backend (`hrr-backend-cuda`,
//! calling `libcuda.so.1`) and the interposer (`hrr-intercept`, exporting and
//! forwarding the driver's entry points). Declaring the types here once keeps
//! them from drifting apart; their layouts are asserted at compile time
//! against the offsets `cuda.h` gives. Only what one of them uses is
//! declared.
//!
//! The driver's signatures are a table ([`cuda_fn!`], [`cuda_fns!`], in
//! `table.rs`) in the `api-table` crate's shape: [`fns`]`::NAME` is each
//! entry's `unsafe extern "C" fn` type, [`args`]`::NAME` its arguments as a
//! struct. The capture library generates its wrappers from it, the replay
//! backend types its loaded entry points with it.
//!
//! The runtime's (`libcudart`, the `cuda*` and compiler-ABI `__cuda*`
//! entry points the capture library exports or calls) are a second table
//! of the same shape, [`runtime`] ([`cudart_fn!`], [`cudart_fns!`]).
//! Both are checked against CUDA's own headers by redeclaring every line in
//! C (`cuda-c-decls`, run by `scripts/abi-check.sh`).
//!
//! `no_std`: plain data and macros, nothing to link.
#![no_std]
#![deny(unsafe_code)]
#![allow(non_camel_case_types)]
// A transcription of the C headers: each item is the header's, under its C
// name, and documented there (as in `hip-api`).
#![allow(missing_docs)]

pub mod array;
pub mod graph;
pub mod rect;
pub mod runtime;
mod table;
pub mod types;

/// `fns::NAME`: each table entry's `unsafe extern "C" fn` type.
pub mod fns {
    use crate::types::*;
    crate::cuda_fns!(
        api_table::for_each,
        [crate::cuda_fn, api_table::fn_type, []]
    );
}

/// `args::NAME`: each table entry's arguments as a struct (one public field
/// per parameter), implementing [`api_table::Entry`].
#[allow(unsafe_code)]
pub mod args {
    use crate::types::*;
    crate::cuda_fns!(
        api_table::for_each,
        [crate::cuda_fn, api_table::entry_struct, []]
    );
}

/// `CUDA_FNS` from the names it is given.
macro_rules! names_const {
    ($($name:ident)*) => {
        /// Every table entry's symbol, in table order.
        pub const CUDA_FNS: &[&str] = &[$(stringify!($name)),*];
    };
}
cuda_fns!(names_const, []);

use core::ffi::{c_int, c_uint, c_ulonglong, c_void};

/// `CUresult`.
pub type CUresult = c_int;
pub type CUdevice = c_int;
/// `CUdeviceptr` (`unsigned long long` on 64-bit hosts).
pub type CUdeviceptr = c_ulonglong;
pub type CUcontext = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUlibrary = *mut c_void;
pub type CUkernel = *mut c_void;
pub type CUmemoryPool = *mut c_void;
/// `CUmemGenericAllocationHandle`.
pub type CUmemGenericAllocationHandle = c_ulonglong;
/// `cuuint64_t`.
pub type cuuint64_t = u64;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
/// The driver found is a stub (what a wrapper answers with no driver behind it).
pub const CUDA_ERROR_STUB_LIBRARY: CUresult = 34;
pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;

/// Special stream handles: every default stream.
pub const CU_STREAM_LEGACY: u64 = 0x1;
pub const CU_STREAM_PER_THREAD: u64 = 0x2;

/// `cuLaunchKernel` `extra` keys (`((void*)0x01)` etc.).
pub const CU_LAUNCH_PARAM_END: usize = 0x00;
pub const CU_LAUNCH_PARAM_BUFFER_POINTER: usize = 0x01;
pub const CU_LAUNCH_PARAM_BUFFER_SIZE: usize = 0x02;

/// `CUpointer_attribute` `CU_POINTER_ATTRIBUTE_MEMORY_TYPE` and its
/// `CUmemorytype` answers.
pub const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;
pub const CU_MEMORYTYPE_HOST: c_uint = 1;
pub const CU_MEMORYTYPE_DEVICE: c_uint = 2;
pub const CU_MEMORYTYPE_ARRAY: c_uint = 3;
pub const CU_MEMORYTYPE_UNIFIED: c_uint = 4;

/// `cuGetProcAddress` flags (`CUdriverProcAddress_flags`).
pub const CU_GET_PROC_ADDRESS_DEFAULT: cuuint64_t = 0;
pub const CU_GET_PROC_ADDRESS_LEGACY_STREAM: cuuint64_t = 1;
pub const CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: cuuint64_t = 2;

/// `CUfunction_attribute` `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
pub const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
/// Dynamic shared memory a launch may use without opting in (48 KiB).
pub const DEFAULT_MAX_DYNAMIC_SHARED: u32 = 48 * 1024;

/// `CUlaunchAttributeID` values.
pub mod launch_attr {
    pub const IGNORE: u32 = 0;
    pub const ACCESS_POLICY_WINDOW: u32 = 1;
    pub const COOPERATIVE: u32 = 2;
    pub const SYNCHRONIZATION_POLICY: u32 = 3;
    pub const CLUSTER_DIMENSION: u32 = 4;
    pub const CLUSTER_SCHEDULING_POLICY_PREFERENCE: u32 = 5;
    pub const PROGRAMMATIC_STREAM_SERIALIZATION: u32 = 6;
    pub const PROGRAMMATIC_EVENT: u32 = 7;
    pub const PRIORITY: u32 = 8;
    pub const MEM_SYNC_DOMAIN_MAP: u32 = 9;
    pub const MEM_SYNC_DOMAIN: u32 = 10;
    pub const PREFERRED_CLUSTER_DIMENSION: u32 = 11;
    pub const LAUNCH_COMPLETION_EVENT: u32 = 12;
    pub const DEVICE_UPDATABLE_KERNEL_NODE: u32 = 13;
    pub const PREFERRED_SHARED_MEMORY_CARVEOUT: u32 = 14;

    /// Attributes whose value is plain data (no handle or address of the
    /// capture's process): replay passes them on as recorded.
    pub fn is_plain_value(id: u32) -> bool {
        matches!(
            id,
            COOPERATIVE
                | SYNCHRONIZATION_POLICY
                | CLUSTER_DIMENSION
                | CLUSTER_SCHEDULING_POLICY_PREFERENCE
                | PROGRAMMATIC_STREAM_SERIALIZATION
                | PRIORITY
                | MEM_SYNC_DOMAIN_MAP
                | MEM_SYNC_DOMAIN
                | PREFERRED_CLUSTER_DIMENSION
                | PREFERRED_SHARED_MEMORY_CARVEOUT
        )
    }
}

/// Bytes of `CUlaunchAttributeValue` (a union padded to 64 bytes).
pub const LAUNCH_ATTR_VALUE_SIZE: usize = 64;

/// `CUlaunchAttribute`: `{ CUlaunchAttributeID id; char pad[4]; CUlaunchAttributeValue value; }`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchAttribute {
    pub id: c_uint,
    pub pad: [u8; 4],
    pub value: [u8; LAUNCH_ATTR_VALUE_SIZE],
}

/// `CUlaunchConfig`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchConfig {
    pub grid_dim_x: c_uint,
    pub grid_dim_y: c_uint,
    pub grid_dim_z: c_uint,
    pub block_dim_x: c_uint,
    pub block_dim_y: c_uint,
    pub block_dim_z: c_uint,
    pub shared_mem_bytes: c_uint,
    pub h_stream: CUstream,
    pub attrs: *mut CUlaunchAttribute,
    pub num_attrs: c_uint,
}

/// `CUmemLocation`: `{ CUmemLocationType type; int id; }`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUmemLocation {
    pub kind: c_int,
    pub id: c_int,
}

/// `CUmemLocationType` values.
pub const CU_MEM_LOCATION_TYPE_DEVICE: c_int = 1;
pub const CU_MEM_LOCATION_TYPE_HOST: c_int = 2;
pub const CU_MEM_LOCATION_TYPE_HOST_NUMA: c_int = 3;
pub const CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: c_int = 4;
/// `CU_MEM_ALLOCATION_TYPE_PINNED`.
pub const CU_MEM_ALLOCATION_TYPE_PINNED: c_int = 1;
/// `CU_MEM_ACCESS_FLAGS_PROT_READWRITE`.
pub const CU_MEM_ACCESS_FLAGS_PROT_READWRITE: c_int = 3;
/// `CU_MEM_ALLOC_GRANULARITY_MINIMUM`.
pub const CU_MEM_ALLOC_GRANULARITY_MINIMUM: c_int = 0;

/// `CUmemAllocationProp`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAllocationProp {
    /// `CUmemAllocationType`.
    pub kind: c_int,
    /// `CUmemAllocationHandleType`.
    pub requested_handle_types: c_int,
    pub location: CUmemLocation,
    pub win32_handle_meta_data: *mut c_void,
    /// `allocFlags`: compressionType, gpuDirectRDMACapable, usage (u16), reserved[4].
    pub alloc_flags: [u8; 8],
}

impl CUmemAllocationProp {
    /// Pinned device memory on `device`, no exportable handle.
    pub fn device(device: c_int) -> CUmemAllocationProp {
        CUmemAllocationProp {
            kind: CU_MEM_ALLOCATION_TYPE_PINNED,
            requested_handle_types: 0,
            location: CUmemLocation {
                kind: CU_MEM_LOCATION_TYPE_DEVICE,
                id: device,
            },
            win32_handle_meta_data: core::ptr::null_mut(),
            alloc_flags: [0; 8],
        }
    }

    /// Whether the memory lives on the host (any host location type).
    pub fn is_host(&self) -> bool {
        matches!(
            self.location.kind,
            CU_MEM_LOCATION_TYPE_HOST
                | CU_MEM_LOCATION_TYPE_HOST_NUMA
                | CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
        )
    }
}

/// `CUmemAccessDesc`: `{ CUmemLocation location; CUmemAccess_flags flags; }`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAccessDesc {
    pub location: CUmemLocation,
    pub flags: c_int,
}

// x86_64 System V layouts of CUDA 13.0's cuda.h.
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    assert!(size_of::<CUlaunchAttribute>() == 72);
    assert!(offset_of!(CUlaunchAttribute, value) == 8);
    assert!(offset_of!(CUlaunchConfig, shared_mem_bytes) == 24);
    assert!(offset_of!(CUlaunchConfig, h_stream) == 32);
    assert!(offset_of!(CUlaunchConfig, attrs) == 40);
    assert!(offset_of!(CUlaunchConfig, num_attrs) == 48);
    assert!(size_of::<CUlaunchConfig>() == 56);
    assert!(size_of::<CUmemLocation>() == 8);
    assert!(offset_of!(CUmemAllocationProp, location) == 8);
    assert!(offset_of!(CUmemAllocationProp, win32_handle_meta_data) == 16);
    assert!(offset_of!(CUmemAllocationProp, alloc_flags) == 24);
    assert!(size_of::<CUmemAllocationProp>() == 32 && align_of::<CUmemAllocationProp>() == 8);
    assert!(size_of::<CUmemAccessDesc>() == 12);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_whole_and_every_entry_returns_curesult() {
        let mut sorted = CUDA_FNS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), CUDA_FNS.len(), "a name appears twice");
        assert!(CUDA_FNS.iter().all(|n| n.starts_with("cu")));
        // One entry, by its generated types.
        use api_table::Entry;
        assert_eq!(<args::cuMemAlloc_v2 as Entry>::NAME, "cuMemAlloc_v2");
        extern "C" fn f(_: *mut CUdeviceptr, _: usize) -> CUresult {
            0
        }
        let _: fns::cuMemAlloc_v2 = f;
    }

    #[test]
    fn plain_attributes_exclude_handles_and_addresses() {
        use launch_attr::*;
        for id in [
            ACCESS_POLICY_WINDOW,
            PROGRAMMATIC_EVENT,
            LAUNCH_COMPLETION_EVENT,
            DEVICE_UPDATABLE_KERNEL_NODE,
            IGNORE,
            99,
        ] {
            assert!(!is_plain_value(id), "{id}");
        }
        for id in [COOPERATIVE, CLUSTER_DIMENSION, PRIORITY] {
            assert!(is_plain_value(id), "{id}");
        }
    }

    #[test]
    fn device_prop_is_pinned_on_the_device() {
        let p = CUmemAllocationProp::device(3);
        assert_eq!((p.kind, p.location.kind, p.location.id), (1, 1, 3));
        assert!(!p.is_host());
    }
}
