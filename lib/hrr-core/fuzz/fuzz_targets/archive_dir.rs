#![no_main]
//! `hrr_core::fuzzing::archive_dir` under libFuzzer (see ../README.md): an
//! archive written as real files, FIFOs, links and sparse files, read and
//! repaired.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hrr_core::fuzzing::archive_dir(data));
