//! The top-level dispatchers on arbitrary images.
//! The body is `hrr_codeobj::fuzzing::any_image`, which the stable smoke runs too.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| hrr_codeobj::fuzzing::any_image(data));
