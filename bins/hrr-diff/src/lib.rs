//! The logic of `hrr-diff`, as a library so its benchmark can drive it.

pub mod archive_diff;
