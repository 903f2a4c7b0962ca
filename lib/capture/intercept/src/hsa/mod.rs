//! The HSA family: the pool allocation entry points ([`exports`]) and the
//! built-in region producer they feed ([`regions`]), both inert unless
//! `hrr-cap --hsa-regions` turned the producer on.

pub mod regions;

// FFI: the pool entry points, reading the application's arguments.
#[cfg(not(test))]
#[allow(unsafe_code)]
pub mod exports;
