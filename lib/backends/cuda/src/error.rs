//! Typed errors of the CUDA backend and the `CUresult` vocabulary.

use hrr_replay::device::DeviceError;

use crate::ffi::CUresult;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
/// Why a CUDA driver call, or loading the driver, failed.
pub enum CudaError {
    /// `dlopen` failed: no NVIDIA driver on this machine (or a broken one).
    #[error("cannot load {path}: {reason}")]
    Load {
        /// The library.
        path: String,
        /// The dynamic loader's message.
        reason: String,
    },
    /// The driver is too old to export an entry point hrr needs.
    #[error("{path} lacks the entry point {symbol} (driver too old?)")]
    Symbol {
        /// The library.
        path: String,
        /// The entry point.
        symbol: &'static str,
    },
    /// An optional entry point (newer CUDA) is absent from this driver.
    #[error("{symbol} is not exported by this CUDA driver (needs CUDA {needs} or newer)")]
    Unsupported {
        /// The entry point.
        symbol: &'static str,
        /// The CUDA version that added it.
        needs: &'static str,
    },
    /// A driver call returned an error.
    #[error("{call} failed: {name} ({code}): {message}")]
    Call {
        /// The entry point.
        call: &'static str,
        /// What it returned.
        code: CUresult,
        /// The code's name (`cuGetErrorName`).
        name: String,
        /// The code's description (`cuGetErrorString`).
        message: String,
    },
    /// The driver works but there is no device of that ordinal.
    #[error("no CUDA device {ordinal} (the driver reports {count})")]
    NoDevice {
        /// The ordinal asked for.
        ordinal: i32,
        /// Devices the driver reports.
        count: i32,
    },
    /// A caller-side problem detected before calling the driver.
    #[error("{call}: {message}")]
    Invalid {
        /// The entry point.
        call: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl CudaError {
    /// The `CUresult` of a failed driver call, if that is what this is.
    pub fn code(&self) -> Option<CUresult> {
        match self {
            CudaError::Call { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl From<CudaError> for DeviceError {
    /// A failed driver call keeps the driver's code, name and message; an
    /// error of the backend itself (no driver, an entry point it lacks)
    /// becomes the source of a [`DeviceError::Backend`].
    fn from(e: CudaError) -> DeviceError {
        match e {
            CudaError::Call {
                call,
                code,
                name,
                message,
            } => DeviceError::Call {
                call,
                code: i64::from(code),
                message: format!("{name}: {message}"),
            },
            CudaError::Invalid { call, message } => DeviceError::Call {
                call,
                code: -1,
                message,
            },
            CudaError::Unsupported { symbol, .. } => DeviceError::Backend {
                call: symbol,
                source: Box::new(e),
            },
            other => DeviceError::Backend {
                call: "libcuda",
                source: Box::new(other),
            },
        }
    }
}

/// `CUresult` names and values (`cuda.h`, `enum cudaError_enum`), used when
/// the driver cannot name a code itself (not loaded, or a code it does not
/// know). Not exhaustive: the common and the replay-relevant ones.
pub const RESULT_NAMES: &[(CUresult, &str)] = &[
    (0, "CUDA_SUCCESS"),
    (1, "CUDA_ERROR_INVALID_VALUE"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY"),
    (3, "CUDA_ERROR_NOT_INITIALIZED"),
    (4, "CUDA_ERROR_DEINITIALIZED"),
    (5, "CUDA_ERROR_PROFILER_DISABLED"),
    (34, "CUDA_ERROR_STUB_LIBRARY"),
    (46, "CUDA_ERROR_DEVICE_UNAVAILABLE"),
    (100, "CUDA_ERROR_NO_DEVICE"),
    (101, "CUDA_ERROR_INVALID_DEVICE"),
    (102, "CUDA_ERROR_DEVICE_NOT_LICENSED"),
    (200, "CUDA_ERROR_INVALID_IMAGE"),
    (201, "CUDA_ERROR_INVALID_CONTEXT"),
    (202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"),
    (205, "CUDA_ERROR_MAP_FAILED"),
    (206, "CUDA_ERROR_UNMAP_FAILED"),
    (207, "CUDA_ERROR_ARRAY_IS_MAPPED"),
    (208, "CUDA_ERROR_ALREADY_MAPPED"),
    (209, "CUDA_ERROR_NO_BINARY_FOR_GPU"),
    (210, "CUDA_ERROR_ALREADY_ACQUIRED"),
    (211, "CUDA_ERROR_NOT_MAPPED"),
    (212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY"),
    (213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER"),
    (214, "CUDA_ERROR_ECC_UNCORRECTABLE"),
    (215, "CUDA_ERROR_UNSUPPORTED_LIMIT"),
    (216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"),
    (217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"),
    (218, "CUDA_ERROR_INVALID_PTX"),
    (219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"),
    (220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"),
    (221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"),
    (222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
    (223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"),
    (300, "CUDA_ERROR_INVALID_SOURCE"),
    (301, "CUDA_ERROR_FILE_NOT_FOUND"),
    (302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"),
    (303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"),
    (304, "CUDA_ERROR_OPERATING_SYSTEM"),
    (400, "CUDA_ERROR_INVALID_HANDLE"),
    (401, "CUDA_ERROR_ILLEGAL_STATE"),
    (500, "CUDA_ERROR_NOT_FOUND"),
    (600, "CUDA_ERROR_NOT_READY"),
    (700, "CUDA_ERROR_ILLEGAL_ADDRESS"),
    (701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
    (702, "CUDA_ERROR_LAUNCH_TIMEOUT"),
    (703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING"),
    (704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"),
    (705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"),
    (708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"),
    (709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"),
    (710, "CUDA_ERROR_ASSERT"),
    (711, "CUDA_ERROR_TOO_MANY_PEERS"),
    (712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"),
    (713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"),
    (714, "CUDA_ERROR_HARDWARE_STACK_ERROR"),
    (715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"),
    (716, "CUDA_ERROR_MISALIGNED_ADDRESS"),
    (717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"),
    (718, "CUDA_ERROR_INVALID_PC"),
    (719, "CUDA_ERROR_LAUNCH_FAILED"),
    (720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
    (800, "CUDA_ERROR_NOT_PERMITTED"),
    (801, "CUDA_ERROR_NOT_SUPPORTED"),
    (802, "CUDA_ERROR_SYSTEM_NOT_READY"),
    (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
    (804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
    (900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"),
    (901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"),
    (902, "CUDA_ERROR_STREAM_CAPTURE_MERGE"),
    (903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"),
    (904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"),
    (905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"),
    (906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"),
    (907, "CUDA_ERROR_CAPTURED_EVENT"),
    (908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"),
    (909, "CUDA_ERROR_TIMEOUT"),
    (910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"),
    (999, "CUDA_ERROR_UNKNOWN"),
];

/// The `cuda.h` name of `code`, when it is in [`RESULT_NAMES`].
pub fn result_name(code: CUresult) -> Option<&'static str> {
    RESULT_NAMES
        .binary_search_by_key(&code, |&(c, _)| c)
        .ok()
        .map(|i| RESULT_NAMES[i].1)
}

/// A name for any code: the table's, else `CUDA_ERROR_<code>`.
pub fn result_name_or_number(code: CUresult) -> String {
    result_name(code).map_or_else(|| format!("CUDA_ERROR_{code}"), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::error_chain::chain;

    #[test]
    fn table_is_sorted_and_unique() {
        assert!(
            RESULT_NAMES.windows(2).all(|w| w[0].0 < w[1].0),
            "binary search needs ascending codes"
        );
        let mut names: Vec<&str> = RESULT_NAMES.iter().map(|&(_, n)| n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RESULT_NAMES.len());
        assert!(RESULT_NAMES.iter().all(|&(_, n)| n.starts_with("CUDA_")));
    }

    #[test]
    fn names_of_common_codes() {
        assert_eq!(result_name(0), Some("CUDA_SUCCESS"));
        assert_eq!(result_name(1), Some("CUDA_ERROR_INVALID_VALUE"));
        assert_eq!(result_name(100), Some("CUDA_ERROR_NO_DEVICE"));
        assert_eq!(result_name(209), Some("CUDA_ERROR_NO_BINARY_FOR_GPU"));
        assert_eq!(result_name(500), Some("CUDA_ERROR_NOT_FOUND"));
        assert_eq!(result_name(700), Some("CUDA_ERROR_ILLEGAL_ADDRESS"));
        assert_eq!(result_name(999), Some("CUDA_ERROR_UNKNOWN"));
        assert_eq!(result_name(12345), None);
        assert_eq!(result_name_or_number(12345), "CUDA_ERROR_12345");
        assert_eq!(result_name_or_number(2), "CUDA_ERROR_OUT_OF_MEMORY");
    }

    #[test]
    fn call_errors_become_device_errors() {
        let e = CudaError::Call {
            call: "cuMemAlloc_v2",
            code: 2,
            name: "CUDA_ERROR_OUT_OF_MEMORY".into(),
            message: "out of memory".into(),
        };
        assert_eq!(e.code(), Some(2));
        assert_eq!(
            e.to_string(),
            "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
        );
        let d: DeviceError = e.into();
        assert_eq!((d.call(), d.code()), ("cuMemAlloc_v2", Some(2)));
        assert!(
            matches!(&d, DeviceError::Call { message, .. } if message == "CUDA_ERROR_OUT_OF_MEMORY: out of memory"),
            "{d:?}"
        );
        assert_eq!(
            d.to_string(),
            "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory (code 2)"
        );
    }

    #[test]
    fn other_errors_become_device_errors() {
        let d: DeviceError = CudaError::Load {
            path: "libcuda.so.1".into(),
            reason: "nope".into(),
        }
        .into();
        assert_eq!((d.call(), d.code()), ("libcuda", None));
        assert_eq!(
            chain(&d).to_string(),
            "libcuda unavailable: cannot load libcuda.so.1: nope"
        );
        let d: DeviceError = CudaError::Invalid {
            call: "cuModuleGetFunction",
            message: "bad name".into(),
        }
        .into();
        assert_eq!(
            d.to_string(),
            "cuModuleGetFunction failed: bad name (code -1)"
        );
        let d: DeviceError = CudaError::Unsupported {
            symbol: "cuFuncGetParamInfo",
            needs: "12.4",
        }
        .into();
        assert_eq!(d.call(), "cuFuncGetParamInfo");
        let source = std::error::Error::source(&d).expect("the CUDA error");
        assert!(source.to_string().contains("needs CUDA 12.4"), "{source}");
    }
}
