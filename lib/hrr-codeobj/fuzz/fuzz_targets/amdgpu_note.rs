//! AMDGPU metadata: the MessagePack note alone, and whole ELF images.
//! The body is `hrr_codeobj::fuzzing::amdgpu_note`, which the stable smoke runs too.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hrr_codeobj::fuzzing::amdgpu_note(data));
