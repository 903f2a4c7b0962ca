#![no_main]
//! `hrr_core::fuzzing::manifest` under libFuzzer (see ../README.md).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hrr_core::fuzzing::manifest(data));
