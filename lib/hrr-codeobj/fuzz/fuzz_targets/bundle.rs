//! Clang offload bundles (plain and CCOB) and the HIPF wrapper.
#![no_main]
use hrr_codeobj::{bundle, hipf};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = hipf::parse(data);
    let _ = bundle::extent(data);
    let _ = bundle::ccob_header(data);
    let _ = bundle::targets(data);
    if let Ok(b) = bundle::parse(data) {
        for e in &b.entries {
            // parse() guarantees every entry lies inside the input.
            let p = e.data(data).expect("parsed entry out of bounds");
            assert!(bundle::extent(data).unwrap() >= (e.offset + e.size) as usize);
            let _ = hrr_codeobj::kernels(p);
        }
    }
    for t in ["gfx90a", "gfx90a:sramecc+:xnack-", "cpu"] {
        if let Ok(co) = bundle::select(data, t) {
            let _ = hrr_codeobj::kernels(&co);
        }
    }
});
