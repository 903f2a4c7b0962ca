//! Opaque handles, and the flags that create or name them.

use core::ffi::{c_uint, c_void};

/// `hipStream_t`, `hipEvent_t`, `hipModule_t`, `hipFunction_t`,
/// `hipDeviceptr_t`: opaque pointers.
pub type HipStream = *mut c_void;
pub type HipEvent = *mut c_void;
pub type HipModule = *mut c_void;
pub type HipFunction = *mut c_void;
pub type HipDevicePtr = *mut c_void;

/// `hipStreamPerThread` (`(hipStream_t)2`).
pub const STREAM_PER_THREAD: usize = 2;
/// `hipStreamNonBlocking`.
pub const STREAM_NON_BLOCKING: c_uint = 1;
/// `hipEventDisableTiming`.
pub const EVENT_DISABLE_TIMING: c_uint = 2;
