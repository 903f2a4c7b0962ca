//! The top-level dispatchers on arbitrary images.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = hrr_codeobj::identify(data);
    let _ = hrr_codeobj::kernels(data);
    let _ = hrr_codeobj::describe(data);
});
