#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code, clippy::all)]
pub mod debian_hip { include!(concat!(env!("OUT_DIR"), "/debian_hip.rs")); }
pub mod debian_hsa { include!(concat!(env!("OUT_DIR"), "/debian_hsa.rs")); }
