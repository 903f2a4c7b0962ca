#![no_main]
//! `hrr_core::fuzzing::event_reader` under libFuzzer (see ../README.md).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hrr_core::fuzzing::event_reader(data));
