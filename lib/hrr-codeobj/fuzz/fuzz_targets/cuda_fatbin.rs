//! CUDA fat binaries, cubin .nv.info and PTX parameters.
#![no_main]
use hrr_codeobj::cuda;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cuda::parse_wrapper(data);
    let _ = cuda::extent(data);
    if let Ok(ents) = cuda::entries(data) {
        for e in &ents {
            if let Ok(p) = cuda::payload(data, e) {
                let _ = cuda::cubin_params(&p);
            }
        }
    }
    let _ = cuda::parse_nv_info("k", data);
    let _ = cuda::ptx_params(&String::from_utf8_lossy(data));
    let _ = cuda::lz4_block_decompress(data, 1 << 20);
});
