//! The logic of `hrr-diff`, as a library so its benchmark can drive it.
#![forbid(unsafe_code)]

pub mod archive_diff;
pub mod job_pairs;
pub mod job_side;
