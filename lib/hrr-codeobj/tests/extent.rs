//! `image_extent` / `read_image_extent`: the length of an image known only by
//! its start. For every valid image and every prefix, the answer is either the
//! full length or a Truncated error asking for more than the prefix holds;
//! arbitrary input never panics.

mod common;

use common::fixtures;
use hrr_codeobj::bundle::{self, Compression};
use hrr_codeobj::{CodeObjError, image_extent, read_image_extent};
use proptest::prelude::*;

/// Checks the prefix property of `img`, whose extent is `len`, at `k`.
fn check_prefix(img: &[u8], len: usize, k: usize) -> Result<(), TestCaseError> {
    match image_extent(&img[..k]) {
        Ok(n) => prop_assert_eq!(n, len, "prefix {} of {}", k, len),
        Err(e) => {
            let need = e.needed_len();
            prop_assert!(
                need.is_some_and(|n| n > k as u64),
                "prefix {} of {}: {} (needed_len {:?})",
                k,
                len,
                e,
                need
            );
        }
    }
    Ok(())
}

/// Checks a valid image: its extent, a pointer-style read, and prefixes:
/// every one up to 256 bytes plus `cuts`.
fn check_image(img: &[u8], cuts: &[prop::sample::Index]) -> Result<(), TestCaseError> {
    let len = image_extent(img).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(len, img.len());
    if len >= 64 {
        let mut reads = 0;
        let got = read_image_extent(|n| {
            reads += 1;
            img.get(..n)
        });
        prop_assert_eq!(got, Ok(len));
        // At most two reads per bundle entry (its fixed fields, then its id).
        prop_assert!(reads <= 3 + 2 * bundle_entry_count(img), "{} reads", reads);
    }
    for k in 0..len.min(256) {
        check_prefix(img, len, k)?;
    }
    for c in cuts {
        check_prefix(img, len, c.index(len))?;
    }
    Ok(())
}

fn bundle_entry_count(img: &[u8]) -> usize {
    if bundle::is_bundle(img) {
        bundle::parse(img).map_or(0, |b| b.entries.len())
    } else {
        2
    }
}

/// A section: (sh_type, offset, size).
type Sec = (u32, u64, u64);

/// An ELF64 image with these sections and segments ((offset, filesz)),
/// program headers after the ELF header and the section header table either
/// right after them or at the end; padded to its extent, which it returns.
fn synth_elf(big: bool, sections: &[Sec], segments: &[(u64, u64)], sht_at_end: bool) -> Vec<u8> {
    let u16b = |v: u16| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u32b = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u64b = |v: u64| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let nseg = segments.len() as u64;
    let nsec = sections.len() as u64 + 1; // + the SHT_NULL section 0
    let phoff = if nseg > 0 { 64 } else { 0 };
    let pht_end = 64 + 56 * nseg;
    let mut data_end = pht_end;
    for &(ty, off, size) in sections {
        if ty != 8 {
            data_end = data_end.max(off + size);
        }
    }
    for &(off, size) in segments {
        data_end = data_end.max(off + size);
    }
    let shoff = if sht_at_end {
        data_end.next_multiple_of(8)
    } else {
        pht_end
    };
    let len = data_end.max(shoff + 64 * nsec);
    let mut v = vec![0u8; len as usize];
    v[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, if big { 2 } else { 1 }]);
    v[18..20].copy_from_slice(&u16b(62));
    v[32..40].copy_from_slice(&u64b(phoff));
    v[40..48].copy_from_slice(&u64b(shoff));
    v[52..54].copy_from_slice(&u16b(64));
    v[54..56].copy_from_slice(&u16b(56));
    v[56..58].copy_from_slice(&u16b(nseg as u16));
    v[58..60].copy_from_slice(&u16b(64));
    v[60..62].copy_from_slice(&u16b(nsec as u16));
    for (i, &(off, size)) in segments.iter().enumerate() {
        let p = 64 + 56 * i;
        v[p..p + 4].copy_from_slice(&u32b(1));
        v[p + 8..p + 16].copy_from_slice(&u64b(off));
        v[p + 32..p + 40].copy_from_slice(&u64b(size));
    }
    for (i, &(ty, off, size)) in sections.iter().enumerate() {
        let s = shoff as usize + 64 * (i + 1);
        v[s + 4..s + 8].copy_from_slice(&u32b(ty));
        v[s + 24..s + 32].copy_from_slice(&u64b(off));
        v[s + 32..s + 40].copy_from_slice(&u64b(size));
    }
    v
}

fn section() -> impl Strategy<Value = Sec> {
    prop_oneof![
        (0u64..6000, 0u64..3000).prop_map(|(o, s)| (1, o, s)),
        (0u64..6000, 0u64..3000).prop_map(|(o, s)| (3, o, s)),
        // NOBITS takes no file space, whatever its size.
        (0u64..6000, any::<u32>()).prop_map(|(o, s)| (8, o, u64::from(s))),
    ]
}

const IDS: [&str; 5] = [
    "host-x86_64-unknown-linux-gnu-",
    "hipv4-x86_64-unknown-linux-gnu-cpu",
    "hip-x86_64-unknown-linux-gnu-cpu",
    "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
    "hipv4-amdgcn-amd-amdhsa--gfx1030",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn elf_prefixes(
        big in any::<bool>(),
        sections in proptest::collection::vec(section(), 0..12),
        segments in proptest::collection::vec((0u64..6000, 0u64..3000), 0..6),
        sht_at_end in any::<bool>(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 16),
    ) {
        check_image(&synth_elf(big, &sections, &segments, sht_at_end), &cuts)?;
    }

    #[test]
    fn bundle_and_ccob_prefixes(
        entries in proptest::collection::vec((0usize..IDS.len(), proptest::collection::vec(any::<u8>(), 0..300)), 0..5),
        version in 2u16..4,
        zstd in any::<bool>(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 16),
    ) {
        let e: Vec<(&str, &[u8])> = entries.iter().map(|(i, d)| (IDS[*i], &d[..])).collect();
        let b = bundle::write(&e);
        check_image(&b, &cuts)?;
        // CCOB v1 has no size field: it is sized by walking the whole stream,
        // so prefixes are not meaningful for it (v2 and v3 only here).
        let m = if zstd { Compression::Zstd } else { Compression::Zlib };
        check_image(&bundle::compress(&b, m, version, None).unwrap(), &cuts)?;
    }

    #[test]
    fn real_image_prefixes(which in 0usize..5, cuts in proptest::collection::vec(any::<prop::sample::Index>(), 32)) {
        let img = real_images().swap_remove(which);
        check_image(&img, &cuts)?;
    }

    #[test]
    fn random_and_truncated_input_never_panics(
        prefix in 0usize..5,
        data in proptest::collection::vec(any::<u8>(), 0..2048),
        cut in any::<prop::sample::Index>(),
    ) {
        let magic: &[u8] = match prefix {
            0 => b"\x7fELF\x02\x01",
            1 => b"\x7fELF\x02\x02",
            2 => bundle::MAGIC,
            3 => b"CCOB\x03\x00\x01\x00",
            _ => b"",
        };
        let mut v = magic.to_vec();
        v.extend_from_slice(&data);
        let v = &v[..cut.index(v.len() + 1)];
        let _ = image_extent(v);
        let _ = read_image_extent(|n| v.get(..n));
    }

    #[test]
    fn mutated_elf_headers_never_panic(
        flips in proptest::collection::vec((0usize..256, any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut v = synth_elf(false, &[(1, 300, 40), (8, 0, 1 << 20)], &[(0, 400)], true);
        for (i, b) in flips {
            let i = i % v.len();
            v[i] = b;
        }
        let v = &v[..cut.index(v.len() + 1)];
        if let Ok(n) = image_extent(v) {
            prop_assert!(n as u64 <= hrr_codeobj::MAX_IMAGE_SIZE);
        }
        let _ = read_image_extent(|n| v.get(..n));
    }
}

/// Real images: a clang-built AMDGPU code object, nvcc fat binaries, and a
/// gcc-built executable (this test).
fn real_images() -> Vec<Vec<u8>> {
    let f = |p: &str| std::fs::read(fixtures().join(p)).unwrap();
    vec![
        f("amd/kernels.gfx90a.co"),
        f("cuda/kernels.none.fatbin"),
        f("cuda/kernels.size.fatbin"),
        f("cuda/kernels.speed.fatbin"),
        std::fs::read(std::env::current_exe().unwrap()).unwrap(),
    ]
}

#[test]
fn real_images_extent_is_their_length() {
    for img in real_images() {
        assert_eq!(image_extent(&img).unwrap(), img.len());
        assert_eq!(read_image_extent(|n| img.get(..n)).unwrap(), img.len());
    }
}

#[test]
fn ccob_v1_needs_its_whole_stream() {
    let b = bundle::write(&[("hipv4-x86_64-unknown-linux-gnu-cpu", &[7u8; 5000][..])]);
    for m in [Compression::Zlib, Compression::Zstd] {
        let c = bundle::compress(&b, m, 1, None).unwrap();
        assert_eq!(image_extent(&c).unwrap(), c.len());
        // With trailing bytes after the stream, still the stream's end.
        let mut t = c.clone();
        t.extend_from_slice(&[0u8; 100]);
        assert_eq!(image_extent(&t).unwrap(), c.len());
        assert!(image_extent(&c[..c.len() - 1]).is_err());
    }
}

#[test]
fn hostile_reads_are_bounded() {
    // An ELF whose section table claims to lie at 15 GiB: the extent reader
    // asks for it (within the limit) and the reader says it cannot supply it.
    let mut h = [0u8; 64];
    h[..6].copy_from_slice(b"\x7fELF\x02\x01");
    h[40..48].copy_from_slice(&(15u64 << 30).to_le_bytes());
    h[58..60].copy_from_slice(&64u16.to_le_bytes());
    h[60..62].copy_from_slice(&1u16.to_le_bytes());
    let mut asked = Vec::new();
    let r = read_image_extent(|n| {
        asked.push(n);
        h.get(..n)
    });
    assert!(matches!(r, Err(CodeObjError::Truncated { .. })), "{r:?}");
    assert_eq!(asked, [64, (15 << 30) + 64]);
    // Beyond 16 GiB: refused without asking.
    h[40..48].copy_from_slice(&(16u64 << 30).to_le_bytes());
    asked.clear();
    let r = read_image_extent(|n| {
        asked.push(n);
        h.get(..n)
    });
    assert!(matches!(r, Err(CodeObjError::Malformed { .. })), "{r:?}");
    assert_eq!(asked, [64]);
}
