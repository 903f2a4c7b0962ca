//! Every C type name the signature table ([`crate::hip_fn!`]) uses, spelled as
//! `hip_runtime_api.h` spells it, so that a table line reads like the header.
//! Consumers that expand table entries glob-import this module.
//!
//! How each kind of C type is declared here:
//!
//! * C enums (`hipMemcpyKind`, `hipDeviceAttribute_t`, …): `c_int`, the size
//!   and passing of every HIP enum (the ABI checks accept an `int` for a
//!   4-byte enum of either signedness);
//! * opaque handles (`hipStream_t`, `hipGraph_t`, …): `*mut c_void`;
//! * structs passed by value (`dim3`, `hipExtent`, `hipPitchedPtr`,
//!   `hipIpcMemHandle_t`, `hipIpcEventHandle_t`, `hipChannelFormatDesc`):
//!   their real layout, checked against the header's in `abi/`;
//! * structs only passed by pointer: their real layout where a consumer reads
//!   them (`hipDeviceProp_t`, `hipPointerAttribute_t`), else an opaque type
//!   with no fields ([`opaque!`]): nothing may read through such a pointer
//!   until its layout is declared (and checked).
#![allow(non_camel_case_types, non_snake_case)]

pub use core::ffi::{c_char, c_int, c_uchar, c_uint, c_ulonglong, c_ushort, c_void};

// ------------------------------------------------------------ results, enums

pub type hipError_t = crate::HipError;
pub type hipMemcpyKind = crate::HipMemcpyKind;
pub type hipJitOption = crate::JitOption;
pub type hipDeviceAttribute_t = c_int;
pub type hipDeviceP2PAttr = c_int;
pub type hipFuncCache_t = c_int;
pub type hipSharedMemConfig = c_int;
pub type hipLimit_t = c_int;
pub type hipFuncAttribute = c_int;
pub type hipFunction_attribute = c_int;
pub type hipPointer_attribute = c_int;
pub type hipMemoryAdvise = c_int;
pub type hipMemRangeAttribute = c_int;
pub type hipArray_Format = c_int;
pub type hipChannelFormatKind = c_int;
pub type hipTextureAddressMode = c_int;
pub type hipTextureFilterMode = c_int;
pub type hipStreamCaptureMode = c_int;
pub type hipStreamCaptureStatus = c_int;
pub type hipGraphNodeType = c_int;
pub type hipGraphExecUpdateResult = c_int;
pub type hipMemPoolAttr = c_int;
pub type hipMemAllocationHandleType = c_int;
pub type hipMemAllocationGranularity_flags = c_int;
pub type hipMemAccessFlags = c_int;
pub type hipGLDeviceList = c_int;
/// ROCm 6's `hipDriverProcAddressQueryResult` (`hipGetProcAddress`).
pub type hipDriverProcAddressQueryResult = c_int;
/// OpenGL's `GLuint` and `GLenum` (`unsigned int`), for the GL interop calls.
pub type GLuint = c_uint;
pub type GLenum = c_uint;

// ------------------------------------------------------------ handles

/// `int`: a device ordinal.
pub type hipDevice_t = c_int;
pub type hipDeviceptr_t = crate::HipDevicePtr;
pub type hipStream_t = crate::HipStream;
pub type hipEvent_t = crate::HipEvent;
pub type hipModule_t = crate::HipModule;
pub type hipFunction_t = crate::HipFunction;
pub type hipCtx_t = *mut c_void;
pub type hipGraph_t = *mut c_void;
pub type hipGraphNode_t = *mut c_void;
pub type hipGraphExec_t = *mut c_void;
pub type hipMemPool_t = *mut c_void;
pub type hipTextureObject_t = *mut c_void;
pub type hipSurfaceObject_t = *mut c_void;
pub type hipExternalMemory_t = *mut c_void;
pub type hipExternalSemaphore_t = *mut c_void;
pub type hipMemGenericAllocationHandle_t = *mut c_void;
pub type hipArray_t = *mut hipArray;
pub type hipArray_const_t = *const hipArray;
pub type hipMipmappedArray_t = *mut hipMipmappedArray;
pub type hipMipmappedArray_const_t = *const hipMipmappedArray;
pub type hipGraphicsResource_t = *mut hipGraphicsResource;
/// `void (*)(hipStream_t stream, hipError_t status, void* userData)`.
pub type hipStreamCallback_t = Option<unsafe extern "C" fn(hipStream_t, hipError_t, *mut c_void)>;

// ------------------------------------------------------------ by value

pub type dim3 = crate::Dim3;

/// `uint3` (3 × `unsigned`), by pointer in `__hipRegisterFunction`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct uint3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

/// `hipExtent`: a 3D size in bytes (width) and elements.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipExtent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// `hipPitchedPtr`: a pitched allocation.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipPitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// `hipIpcMemHandle_t` (`char reserved[HIP_IPC_HANDLE_SIZE]`, 64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipIpcMemHandle_t {
    pub reserved: [c_char; 64],
}

/// `hipIpcEventHandle_t` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hipIpcEventHandle_t {
    pub reserved: [c_char; 64],
}

/// `hipChannelFormatDesc`, which `hipCreateChannelDesc` returns by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct hipChannelFormatDesc {
    pub x: c_int,
    pub y: c_int,
    pub z: c_int,
    pub w: c_int,
    pub f: hipChannelFormatKind,
}

// ------------------------------------------------------------ by pointer

/// `hipMemoryType` (ROCm 5.2 numbering: `crate::MEMORY_TYPE_*`).
pub type hipMemoryType = crate::HipMemoryType;

/// `hip_Memcpy2D` (`hipMemcpyParam2D`, `hipDrvMemcpy2DUnaligned`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct hip_Memcpy2D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcMemoryType: hipMemoryType,
    pub srcHost: *const c_void,
    pub srcDevice: hipDeviceptr_t,
    pub srcArray: *mut hipArray,
    pub srcPitch: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstMemoryType: hipMemoryType,
    pub dstHost: *mut c_void,
    pub dstDevice: hipDeviceptr_t,
    pub dstArray: *mut hipArray,
    pub dstPitch: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
}

pub type hipDeviceProp_t = crate::HipDeviceProp;
pub type hipPointerAttribute_t = crate::HipPointerAttribute;
/// The graph API's parameter structs, with their layouts.
pub use crate::graph::{
    hipHostFn_t, hipHostNodeParams, hipKernelNodeParams, hipMemcpy3DParms, hipMemsetParams, hipPos,
};

/// Declares structs that are only ever behind a pointer, without a layout.
macro_rules! opaque {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`, only passed by pointer; no layout declared.")]
        #[repr(C)]
        pub struct $name {
            _opaque: [u8; 0],
        }
    )*};
}

opaque!(
    hipArray,
    hipMipmappedArray,
    hipGraphicsResource,
    textureReference,
    hipUUID,
    hipFuncAttributes,
    hipLaunchParams,
    hipArrayMapInfo,
    hipResourceDesc,
    hipResourceViewDesc,
    hipTextureDesc,
    hipMemAccessDesc,
    hipMemAllocationProp,
    hipMemLocation,
    hipMemPoolProps,
    hipMemPoolPtrExportData,
    hipExternalMemoryBufferDesc,
    hipExternalMemoryHandleDesc,
    hipExternalSemaphoreHandleDesc,
    hipExternalSemaphoreSignalParams,
    hipExternalSemaphoreWaitParams,
    HIP_ARRAY_DESCRIPTOR,
    HIP_ARRAY3D_DESCRIPTOR,
    HIP_MEMCPY3D,
    HIP_RESOURCE_DESC,
    HIP_RESOURCE_VIEW_DESC,
    HIP_TEXTURE_DESC,
);

// Sizes as gcc lays out the C types on x86_64 (abi/ asserts them against
// bindgen of the header as well).
const _: () = {
    use core::mem::{align_of, size_of};
    assert!(size_of::<hipExtent>() == 24 && align_of::<hipExtent>() == 8);
    assert!(size_of::<hipPitchedPtr>() == 32 && align_of::<hipPitchedPtr>() == 8);
    assert!(size_of::<hipIpcMemHandle_t>() == 64 && align_of::<hipIpcMemHandle_t>() == 1);
    assert!(size_of::<hipIpcEventHandle_t>() == 64);
    assert!(size_of::<hipChannelFormatDesc>() == 20 && align_of::<hipChannelFormatDesc>() == 4);
    assert!(size_of::<uint3>() == 12);
    assert!(size_of::<hipPos>() == 24);
    assert!(size_of::<hip_Memcpy2D>() == 128 && align_of::<hip_Memcpy2D>() == 8);
    assert!(size_of::<hipMemcpy3DParms>() == 160);
    assert!(core::mem::offset_of!(hipMemcpy3DParms, kind) == 152);
};
