//! `hipError_t` values (numbering from hip_runtime_api.h).

/// `hipError_t` (a C enum: `int`).
pub type HipError = core::ffi::c_int;

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
/// `hipErrorInvalidSymbol`.
pub const INVALID_SYMBOL: HipError = 13;
pub const NO_BINARY_FOR_GPU: HipError = 209;
pub const FILE_NOT_FOUND: HipError = 301;
pub const SHARED_OBJECT_SYMBOL_NOT_FOUND: HipError = 302;
pub const SHARED_OBJECT_INIT_FAILED: HipError = 303;
pub const OPERATING_SYSTEM: HipError = 304;
pub const INVALID_HANDLE: HipError = 400;
pub const ILLEGAL_STATE: HipError = 401;
pub const NOT_FOUND: HipError = 500;
pub const NOT_READY: HipError = 600;
pub const LAUNCH_FAILURE: HipError = 719;
pub const HOST_MEMORY_ALREADY_REGISTERED: HipError = 712;
pub const HOST_MEMORY_NOT_REGISTERED: HipError = 713;
pub const NOT_SUPPORTED: HipError = 801;
// Stream capture and graphs.
pub const STREAM_CAPTURE_UNSUPPORTED: HipError = 900;
pub const STREAM_CAPTURE_INVALIDATED: HipError = 901;
pub const STREAM_CAPTURE_UNMATCHED: HipError = 903;
pub const STREAM_CAPTURE_WRONG_THREAD: HipError = 908;
pub const GRAPH_EXEC_UPDATE_FAILURE: HipError = 910;
pub const UNKNOWN: HipError = 999;
