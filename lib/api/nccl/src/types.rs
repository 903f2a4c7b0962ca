//! The C types of `nccl.h` (NCCL 2.x; RCCL's `rccl.h` declares the same
//! names and layouts, with `hipStream_t` for `cudaStream_t`).
//!
//! Constants are named in Rust style after their C names (`ncclSum` is
//! [`NCCL_SUM`]). C enums are `u32`: every constant the API defines is non-negative
//! (`ncclMaxRedOp` is `0x7fffffff`), so compilers give them
//! `unsigned int`.
#![allow(non_camel_case_types)]
// A transcription of the header: each item is its, under its C name.
#![allow(missing_docs)]

pub use core::ffi::{c_char, c_int, c_void};

/// `ncclComm_t`: an opaque communicator handle.
pub type ncclComm_t = *mut c_void;
/// `cudaStream_t` / `hipStream_t`: an opaque stream handle.
pub type ncclStream_t = *mut c_void;
/// `ncclConfig_t*`: read only by the library (the capture forwards it).
pub type ncclConfigPtr = *mut c_void;

/// `NCCL_UNIQUE_ID_BYTES`.
pub const NCCL_UNIQUE_ID_BYTES: usize = 128;

/// `ncclUniqueId`: 128 opaque bytes, passed by value.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ncclUniqueId {
    pub internal: [c_char; NCCL_UNIQUE_ID_BYTES],
}

impl ncclUniqueId {
    /// All zero.
    pub const ZERO: ncclUniqueId = ncclUniqueId {
        internal: [0; NCCL_UNIQUE_ID_BYTES],
    };

    /// Its bytes.
    pub fn bytes(&self) -> [u8; NCCL_UNIQUE_ID_BYTES] {
        self.internal.map(|c| c as u8)
    }

    /// The id holding `bytes`.
    pub fn from_bytes(bytes: [u8; NCCL_UNIQUE_ID_BYTES]) -> ncclUniqueId {
        ncclUniqueId {
            internal: bytes.map(|b| b as c_char),
        }
    }
}

/// `ncclResult_t`.
pub type ncclResult_t = u32;
pub const NCCL_SUCCESS: ncclResult_t = 0;
pub const NCCL_UNHANDLED_CUDA_ERROR: ncclResult_t = 1;
pub const NCCL_SYSTEM_ERROR: ncclResult_t = 2;
pub const NCCL_INTERNAL_ERROR: ncclResult_t = 3;
pub const NCCL_INVALID_ARGUMENT: ncclResult_t = 4;
pub const NCCL_INVALID_USAGE: ncclResult_t = 5;
pub const NCCL_REMOTE_ERROR: ncclResult_t = 6;
pub const NCCL_IN_PROGRESS: ncclResult_t = 7;

/// `ncclRedOp_t`: the built-in operators; values from `NCCL_NUM_OPS` on are
/// operators a communicator created (`ncclRedOpCreatePreMulSum`).
pub type ncclRedOp_t = u32;
pub const NCCL_SUM: ncclRedOp_t = 0;
pub const NCCL_PROD: ncclRedOp_t = 1;
pub const NCCL_MAX: ncclRedOp_t = 2;
pub const NCCL_MIN: ncclRedOp_t = 3;
pub const NCCL_AVG: ncclRedOp_t = 4;
pub const NCCL_NUM_OPS: ncclRedOp_t = 5;

/// `ncclDataType_t`.
pub type ncclDataType_t = u32;
pub const NCCL_INT8: ncclDataType_t = 0;
pub const NCCL_UINT8: ncclDataType_t = 1;
pub const NCCL_INT32: ncclDataType_t = 2;
pub const NCCL_UINT32: ncclDataType_t = 3;
pub const NCCL_INT64: ncclDataType_t = 4;
pub const NCCL_UINT64: ncclDataType_t = 5;
pub const NCCL_FLOAT16: ncclDataType_t = 6;
pub const NCCL_FLOAT32: ncclDataType_t = 7;
pub const NCCL_FLOAT64: ncclDataType_t = 8;
pub const NCCL_BFLOAT16: ncclDataType_t = 9;
pub const NCCL_FLOAT8E4M3: ncclDataType_t = 10;
pub const NCCL_FLOAT8E5M2: ncclDataType_t = 11;

/// Bytes of one element of `dtype`; `None` for a type this table lacks.
pub fn dtype_size(dtype: ncclDataType_t) -> Option<usize> {
    Some(match dtype {
        NCCL_INT8 | NCCL_UINT8 | NCCL_FLOAT8E4M3 | NCCL_FLOAT8E5M2 => 1,
        NCCL_FLOAT16 | NCCL_BFLOAT16 => 2,
        NCCL_INT32 | NCCL_UINT32 | NCCL_FLOAT32 => 4,
        NCCL_INT64 | NCCL_UINT64 | NCCL_FLOAT64 => 8,
        _ => return None,
    })
}

const _: () = assert!(core::mem::size_of::<ncclUniqueId>() == 128);
