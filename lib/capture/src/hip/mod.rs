//! The HIP family: the runtime's C entry points ([`exports`]) and the C
//! definitions they take ([`types`]).

pub mod types;

#[cfg(not(any(test, feature = "bench")))]
#[allow(unsafe_code)]
pub mod exports;
