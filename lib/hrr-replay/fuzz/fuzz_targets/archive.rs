#![no_main]
//! `hrr_replay::fuzzing::archive` under libFuzzer (see ../README.md).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hrr_replay::fuzzing::archive(data));
