//! Fuzz target bodies (feature `fuzzing`): each takes arbitrary bytes and
//! must give results or errors, never a panic or an allocation sized by an
//! untrusted field, and checks what the parser guarantees where it says
//! something. The cargo-fuzz targets in `lib/hrr-codeobj/fuzz` (libFuzzer,
//! nightly) and the stable smoke `tests/fuzz_corpus.rs` (seeds, past
//! crashes and seeded mutations; docs/FUZZING.md) both run them.

use crate::{amdgpu, bundle, cuda, hipf};

/// A fuzz target body.
pub type Target = fn(&[u8]);

/// The targets, by name (the fuzz crate's binaries and the seed folders).
pub const TARGETS: &[(&str, Target)] = &[
    ("bundle", bundle),
    ("amdgpu_note", amdgpu_note),
    ("cuda_fatbin", cuda_fatbin),
    ("any_image", any_image),
];

/// Byte strings the formats give meaning to, for the smoke's inserts:
/// magics, a huge count, an offset past the end, target ids.
pub const TOKENS: &[&[u8]] = &[
    bundle::MAGIC,
    b"CCOB",
    b"\x7fELF\x02\x01\x01",
    &[0x50, 0xed, 0x55, 0xba],
    b"HIPF",
    &[0x46, 0x50, 0x49, 0x48],
    &[0xff; 8],
    &[0x00, 0x00, 0x00, 0x80],
    b"hipv4-amdgcn-amd-amdhsa--gfx90a",
    b"host-x86_64-unknown-linux-gnu-",
    b"amdhsa.kernels",
    b".hrr.kernels",
    b"\"kernels\":[",
    b".param .u64",
    &[0xde],
    &[0xdd, 0xff, 0xff, 0xff, 0xff],
];

/// Clang offload bundles (plain and `CCOB`) and the `HIPF` wrapper: every
/// entry a bundle parses to lies inside it.
pub fn bundle(data: &[u8]) {
    let _ = hipf::parse(data);
    let _ = bundle::extent(data);
    let _ = bundle::ccob_header(data);
    let _ = bundle::targets(data);
    if let Ok(b) = bundle::parse(data) {
        for e in &b.entries {
            let p = e.data(data).expect("parsed entry out of bounds");
            assert!(
                bundle::extent(data).expect("a parsed bundle's extent")
                    >= (e.offset + e.size) as usize
            );
            let _ = crate::kernels(p);
        }
    }
    for t in ["gfx90a", "gfx90a:sramecc+:xnack-", "cpu"] {
        if let Ok(co) = bundle::select(data, t) {
            let _ = crate::kernels(&co);
        }
    }
}

/// AMDGPU metadata (the MessagePack note alone, and whole ELF images), and
/// CPU metadata: parsed metadata upholds what consumers index by.
pub fn amdgpu_note(data: &[u8]) {
    if let Ok(m) = amdgpu::parse_msgpack(data) {
        for k in &m.kernels {
            k.validate("fuzz", &k.name)
                .expect("parser returned invalid metadata");
            let _ = k.pointer_offsets();
        }
    }
    let _ = amdgpu::parse_metadata(data);
    let _ = crate::cpu::parse_metadata(data);
}

/// CUDA fat binaries, cubin `.nv.info` and PTX parameters.
pub fn cuda_fatbin(data: &[u8]) {
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
}

/// The top-level dispatchers on any image.
pub fn any_image(data: &[u8]) {
    let _ = crate::identify(data);
    let _ = crate::kernels(data);
    let _ = crate::describe(data);
}
