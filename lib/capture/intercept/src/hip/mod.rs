//! The HIP family: the runtime's C entry points ([`exports`]) and the C
//! definitions they take ([`types`]).

pub mod types;

// FFI: the runtime's C entry points, reading the application's arguments.
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod exports;
