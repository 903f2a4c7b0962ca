//! CUDA fat binaries, cubin .nv.info and PTX parameters.
//! The body is `hrr_codeobj::fuzzing::cuda_fatbin`, which the stable smoke runs too.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hrr_codeobj::fuzzing::cuda_fatbin(data));
