//! Corrupt, truncated and hostile inputs give errors: never a panic, never an
//! allocation sized by an untrusted field.

mod common;

use common::fixtures;
use hrr_codeobj::bundle::{self, Compression};
use hrr_codeobj::{CodeObjError, amdgpu, cpu, cuda, hipf};
use proptest::prelude::*;

/// Runs every parser over `data`; only panics (or aborts) can fail this.
fn all_parsers(data: &[u8]) {
    let _ = hrr_codeobj::identify(data);
    let _ = hrr_codeobj::kernels(data);
    let _ = hrr_codeobj::describe(data);
    let _ = bundle::parse(data);
    let _ = bundle::extent(data);
    let _ = hrr_codeobj::image_extent(data);
    let _ = hrr_codeobj::read_image_extent(|n| data.get(..n));
    let _ = bundle::targets(data);
    let _ = bundle::ccob_header(data);
    let _ = bundle::decompress(data);
    for t in ["gfx90a", "gfx90a:xnack-", "cpu", ""] {
        let _ = bundle::select(data, t);
    }
    let _ = amdgpu::parse_metadata(data);
    let _ = amdgpu::parse_msgpack(data);
    let _ = cpu::parse_metadata(data);
    let _ = cpu::parse_json(data);
    let _ = hipf::parse(data);
    let _ = cuda::parse_wrapper(data);
    let _ = cuda::extent(data);
    if let Ok(ents) = cuda::entries(data) {
        for e in &ents {
            let _ = cuda::payload(data, e);
        }
    }
    let _ = cuda::kernels(data);
    let _ = cuda::cubin_params(data);
    let _ = cuda::parse_nv_info("k", data);
    let _ = cuda::ptx_params(&String::from_utf8_lossy(data));
    let _ = cuda::lz4_block_decompress(data, 1 << 16);
}

fn read(p: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(p)).unwrap()
}

/// Real inputs of every format, for mutation.
fn corpus() -> Vec<Vec<u8>> {
    let co = read("amd/kernels.gfx90a.co");
    let b = bundle::write(&[
        ("host-x86_64-unknown-linux-gnu-", b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &co),
    ]);
    let mut v = vec![
        co.clone(),
        b.clone(),
        bundle::compress(&b, Compression::Zstd, 3, None).unwrap(),
        bundle::compress(&b, Compression::Zlib, 2, None).unwrap(),
        bundle::compress(&b, Compression::Zlib, 1, None).unwrap(),
        read("cuda/kernels.none.fatbin"),
        read("cuda/kernels.size.fatbin"),
        read("cuda/kernels.speed.fatbin"),
        read("cuda/kernels.compute_90.ptx"),
    ];
    v.push(amdgpu::metadata_note(&co).unwrap().to_vec());
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        all_parsers(&data);
    }

    #[test]
    fn magic_prefixed_random_bytes_never_panic(
        which in 0usize..7,
        data in proptest::collection::vec(any::<u8>(), 0..1024),
    ) {
        let magic: &[u8] = match which {
            0 => bundle::MAGIC,
            1 => b"CCOB\x01\x00\x01\x00",
            2 => b"CCOB\x03\x00\x00\x00",
            3 => &[0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0],
            4 => b"\x7fELF\x02\x01\x01\x40",
            5 => &[0x46, 0x50, 0x49, 0x48],
            _ => &[0x81, 0xae],
        };
        let mut v = magic.to_vec();
        v.extend_from_slice(&data);
        all_parsers(&v);
    }

    #[test]
    fn mutated_real_inputs_never_panic(
        which in 0usize..10,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut v = corpus().swap_remove(which);
        for (i, b) in flips {
            let i = i.index(v.len());
            v[i] = b;
        }
        if truncate {
            v.truncate(cut.index(v.len() + 1));
        }
        all_parsers(&v);
    }

    #[test]
    fn every_truncation_of_a_bundle_errors(cut in any::<prop::sample::Index>()) {
        let co = read("amd/kernels.gfx90a.co");
        let b = bundle::write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &co)]);
        let n = cut.index(b.len());
        let r = bundle::parse(&b[..n]);
        prop_assert!(r.is_err());
    }
}

fn bundle_header(entries: &[(u64, u64, u64, &[u8])], count: u64) -> Vec<u8> {
    let mut v = bundle::MAGIC.to_vec();
    v.extend_from_slice(&count.to_le_bytes());
    for (off, size, id_len, id) in entries {
        v.extend_from_slice(&off.to_le_bytes());
        v.extend_from_slice(&size.to_le_bytes());
        v.extend_from_slice(&id_len.to_le_bytes());
        v.extend_from_slice(id);
    }
    v
}

#[test]
fn hostile_bundles() {
    // A huge entry count is refused before anything is allocated for it.
    let e = bundle::parse(&bundle_header(&[], u64::MAX)).unwrap_err();
    assert!(matches!(e, CodeObjError::Truncated { .. }), "{e}");
    assert!(e.to_string().contains("entry table"), "{e}");
    // A huge id length.
    let e = bundle::parse(&bundle_header(&[(4096, 1, u64::MAX - 10, b"x")], 1)).unwrap_err();
    assert!(e.to_string().contains("entry 0 id"), "{e}");
    // offset + size overflows.
    let e = bundle::parse(&bundle_header(&[(u64::MAX, 2, 1, b"x")], 1)).unwrap_err();
    assert!(e.to_string().contains("overflows"), "{e}");
    assert!(bundle::extent(&bundle_header(&[(u64::MAX, 2, 1, b"x")], 1)).is_err());
    // A payload outside the input.
    let e = bundle::parse(&bundle_header(&[(100, 50, 1, b"x")], 1)).unwrap_err();
    assert!(matches!(e, CodeObjError::BadEntry { index: 0, .. }), "{e}");
    // ... which extent() accepts: it reads the header only.
    assert_eq!(
        bundle::extent(&bundle_header(&[(100, 50, 1, b"x")], 1)).unwrap(),
        150
    );
    // A payload overlapping the header.
    let e = bundle::parse(&bundle_header(&[(8, 4, 1, b"x")], 1)).unwrap_err();
    assert!(e.to_string().contains("overlaps"), "{e}");
    // Non-UTF-8 id.
    let mut v = bundle_header(&[(64, 0, 2, b"\xff\xfe")], 1);
    v.resize(64, 0);
    assert!(bundle::parse(&v).unwrap_err().to_string().contains("UTF-8"));
    // A short header tells how much more to read.
    let full = bundle::write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &[1, 2, 3])]);
    let e = bundle::extent(&full[..40]).unwrap_err();
    let need = e.needed_len().unwrap();
    assert!(need > 40 && need as usize <= 4096, "{e}");
    assert_eq!(bundle::extent(&full[..4096]).unwrap(), full.len());
}

#[test]
fn hostile_ccob() {
    let co = read("amd/kernels.gfx90a.co");
    let b = bundle::write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &co)]);
    let good = bundle::compress(&b, Compression::Zstd, 3, None).unwrap();
    // A zip-bomb claim: uncompressed size far beyond what the stream can hold.
    let mut v = good.clone();
    v[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let e = bundle::decompress(&v).unwrap_err();
    assert!(e.to_string().contains("beyond the limit"), "{e}");
    // A size that lies by a little: inflated size must match exactly.
    let mut v = good.clone();
    v[16..24].copy_from_slice(&(b.len() as u64 - 1).to_le_bytes());
    assert!(matches!(
        bundle::decompress(&v),
        Err(CodeObjError::Decompress { .. })
    ));
    // Total size smaller than the header, and larger than the input.
    let mut v = good.clone();
    v[8..16].copy_from_slice(&3u64.to_le_bytes());
    assert!(bundle::ccob_header(&v).is_err());
    let mut v = good.clone();
    v[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        bundle::decompress(&v),
        Err(CodeObjError::Truncated { .. })
    ));
    // Unknown version and method.
    let mut v = good.clone();
    v[4] = 9;
    assert!(
        bundle::ccob_header(&v)
            .unwrap_err()
            .to_string()
            .contains("version 9")
    );
    let mut v = good;
    v[6] = 7;
    assert!(
        bundle::ccob_header(&v)
            .unwrap_err()
            .to_string()
            .contains("method 7")
    );
}

#[test]
fn hostile_msgpack() {
    // map32 / array32 claiming 4 billion items, with nothing behind them.
    for bytes in [
        &[0xdf, 0xff, 0xff, 0xff, 0xff][..],
        &[0xdd, 0xff, 0xff, 0xff, 0xff][..],
        // {"amdhsa.kernels": array32(0xffffffff)}
        &[
            &[0x81, 0xae][..],
            b"amdhsa.kernels",
            &[0xdd, 0xff, 0xff, 0xff, 0xff],
        ]
        .concat()[..],
        // str32 of 4 GiB
        &[0xdb, 0xff, 0xff, 0xff, 0xff, b'a'][..],
    ] {
        assert!(amdgpu::parse_msgpack(bytes).is_err());
    }
    // Deep nesting is bounded.
    let deep = vec![0x91u8; 100_000];
    assert!(amdgpu::parse_msgpack(&deep).is_err());
    // Field errors name the field.
    let mut doc = vec![0x81, 0xae];
    doc.extend_from_slice(b"amdhsa.kernels");
    doc.extend_from_slice(&[0x91, 0x80]); // [ {} ]
    let e = amdgpu::parse_msgpack(&doc).unwrap_err();
    assert!(e.to_string().contains("amdhsa.kernels[0].name"), "{e}");
}

#[test]
fn hostile_fatbins() {
    let fb = read("cuda/kernels.none.fatbin");
    // Body size beyond the input / overflowing.
    let mut v = fb.clone();
    v[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(cuda::extent(&v).is_err());
    assert!(cuda::entries(&v).is_err());
    // Entry header size 0 would loop forever: refused.
    let mut v = fb.clone();
    v[16 + 4..16 + 8].copy_from_slice(&0u32.to_le_bytes());
    assert!(matches!(
        cuda::entries(&v),
        Err(CodeObjError::BadEntry { index: 0, .. })
    ));
    // Payload size running past the body.
    let mut v = fb.clone();
    v[16 + 8..16 + 16].copy_from_slice(&(1u64 << 62).to_le_bytes());
    assert!(
        cuda::entries(&v)
            .unwrap_err()
            .to_string()
            .contains("entry 0")
    );
    // Compressed flag with a bogus uncompressed size.
    let zs = read("cuda/kernels.size.fatbin");
    let ents = cuda::entries(&zs).unwrap();
    let mut e = ents[1].clone();
    e.uncompressed_size = 1 << 40;
    assert!(cuda::payload(&zs, &e).is_err());
    e.uncompressed_size = ents[1].uncompressed_size + 1;
    assert!(cuda::payload(&zs, &e).is_err());
    // LZ4 with a back-reference before the start of the output.
    assert!(cuda::lz4_block_decompress(&[0x10, b'a', 0x05, 0x00], 100).is_err());
    // nv.info with a value running past the section.
    assert!(cuda::parse_nv_info("k", &[0x04, 0x17, 0xff, 0xff, 0]).is_err());
    assert!(cuda::parse_nv_info("k", &[0x04, 0x17, 0x04, 0x00, 0, 0, 0, 0]).is_err());
}

#[test]
fn hostile_metadata_values() {
    // Offsets past the kernarg segment, overflows, oversize segments.
    let bad = [
        r#"{"kernels":[{"name":"k","kernarg_segment_size":8,"args":[{"offset":4,"size":8,"value_kind":"by_value"}]}]}"#,
        r#"{"kernels":[{"name":"k","args":[{"offset":4294967295,"size":8,"value_kind":"by_value"}]}]}"#,
        r#"{"kernels":[{"name":"k","kernarg_segment_size":4294967295,"args":[]}]}"#,
        r#"{"kernels":[{"name":"k","args":[{"offset":-1,"size":8,"value_kind":"by_value"}]}]}"#,
        r#"{"kernels":[{"name":"k","args":[{"size":8,"value_kind":"by_value"}]}]}"#,
        r#"{"kernels":{}}"#,
        r#"{"kernels":[{"name":"k""#,
    ];
    for j in bad {
        let e = cpu::parse_json(j.as_bytes()).unwrap_err();
        let s = e.to_string();
        assert!(s.contains("kernels") || s.contains("offset"), "{j}: {s}");
    }
    let e = cpu::parse_json(bad[0].as_bytes()).unwrap_err();
    assert!(e.to_string().contains("kernels[0].args[0]"), "{e}");
    // NUL-terminated text is fine; whatever follows a NUL is another document.
    let ok = b"{\"kernels\":[{\"name\":\"k\",\"args\":[]}]}\0\0";
    assert_eq!(cpu::parse_json(ok).unwrap()[0].name, "k");
    let trailing = b"{\"kernels\":[{\"name\":\"k\",\"args\":[]}]}\0\0garbage";
    assert!(matches!(
        cpu::parse_json(trailing),
        Err(CodeObjError::Malformed { offset: 34.., .. })
    ));
}
