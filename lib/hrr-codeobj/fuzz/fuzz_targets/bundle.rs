//! Clang offload bundles (plain and CCOB) and the HIPF wrapper.
//! The body is `hrr_codeobj::fuzzing::bundle`, which the stable smoke runs too.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hrr_codeobj::fuzzing::bundle(data));
