//! AMDGPU metadata: the MessagePack note alone, and whole ELF images.
#![no_main]
use hrr_codeobj::amdgpu;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = amdgpu::parse_msgpack(data) {
        for k in &m.kernels {
            // Parsed metadata upholds the invariants consumers index by.
            k.validate("fuzz", &k.name)
                .expect("parser returned invalid metadata");
            let _ = k.pointer_offsets();
        }
    }
    let _ = amdgpu::parse_metadata(data);
    let _ = hrr_codeobj::cpu::parse_metadata(data);
});
