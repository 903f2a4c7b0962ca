//! CUDA fat binaries built by nvcc 13.0 on the H200 (fixtures/cuda/build.sh,
//! from fixtures/cuda/kernels.cu): uncompressed, zstd (`--compress-mode=size`)
//! and LZ4 (`--compress-mode=speed`). The expected parameter layouts are the
//! source's, and agree with `cuobjdump -elf` (fixtures/cuda/kernels.sm_90.kparam.txt).

mod common;

use common::*;
use hrr_codeobj::cuda::{self, FatbinCompression, FatbinKind};

const NAMES: &[&str] = &["saxpy", "with_struct", "_Z7mangledsdPh", "big", "noargs"];

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("cuda").join(name)).unwrap()
}

#[test]
fn fatbin_layout_matches_nvcc_13() {
    for (file, compression) in [
        ("kernels.none.fatbin", None),
        ("kernels.size.fatbin", Some(FatbinCompression::Zstd)),
        ("kernels.speed.fatbin", Some(FatbinCompression::Lz4)),
    ] {
        let fb = fixture(file);
        assert!(cuda::is_fatbin(&fb));
        let h = cuda::header(&fb).unwrap();
        assert_eq!((h.version, h.header_size), (1, 16), "{file}");
        assert_eq!(cuda::extent(&fb).unwrap(), fb.len(), "{file}: extent");
        // extent() needs only the 16-byte header.
        assert_eq!(cuda::extent(&fb[..16]).unwrap(), fb.len());
        let ents = cuda::entries(&fb).unwrap();
        assert_eq!(ents.len(), 2, "{file}: {ents:?}");
        let ptx = &ents[0];
        assert_eq!(
            (ptx.kind, ptx.sm_arch, ptx.version),
            (FatbinKind::Ptx, 90, 0x0101),
            "{file}"
        );
        assert_eq!(ptx.ptx_version, (9, 0), "{file}: PTX ISA 9.0");
        assert_eq!(
            ptx.offset - ptx.header_offset,
            80,
            "{file}: PTX entry headers are 80 bytes"
        );
        assert_eq!(ptx.compression(), compression, "{file}");
        let elf = &ents[1];
        assert_eq!((elf.kind, elf.sm_arch), (FatbinKind::Elf, 90), "{file}");
        assert_eq!(elf.offset - elf.header_offset, 64, "{file}");
        assert!(elf.flags & cuda::FLAG_64BIT != 0 && elf.flags & cuda::FLAG_LINUX != 0);

        let ptx_text = cuda::payload(&fb, ptx).unwrap();
        let ptx_text = String::from_utf8_lossy(&ptx_text);
        assert!(ptx_text.contains(".target sm_90"), "{file}");
        let cubin = cuda::payload(&fb, elf).unwrap();
        assert!(cubin.starts_with(b"\x7fELF"), "{file}");
        // All three carry the same cubin.
        assert_eq!(cubin.len(), 10512, "{file}");

        let kernels = hrr_codeobj::kernels(&fb).unwrap();
        check_layouts(&kernels, false, NAMES);
        let big = kernels.iter().find(|k| k.name == "big").unwrap();
        assert_eq!(big.kernarg_segment_size, 0x88, "EIATTR_CBANK_PARAM_SIZE");
    }
}

#[test]
fn cubin_kparam_info() {
    let fb = fixture("kernels.none.fatbin");
    let ents = cuda::entries(&fb).unwrap();
    let cubin = cuda::payload(&fb, &ents[1]).unwrap();
    let ks = cuda::cubin_params(&cubin).unwrap();
    let saxpy = ks.iter().find(|k| k.name == "saxpy").unwrap();
    let got: Vec<_> = saxpy
        .params
        .iter()
        .map(|p| (p.ordinal, p.offset, p.size))
        .collect();
    assert_eq!(got, [(0, 0, 4), (1, 8, 8), (2, 16, 8), (3, 24, 4)]);
    assert_eq!(saxpy.param_size, Some(0x1c));
    let noargs = ks.iter().find(|k| k.name == "noargs").unwrap();
    assert!(noargs.params.is_empty());
    check_layouts(&hrr_codeobj::kernels(&cubin).unwrap(), false, NAMES);
}

#[test]
fn ptx_params_match_source() {
    let ptx = String::from_utf8(fixture("kernels.compute_90.ptx")).unwrap();
    let ks = cuda::ptx_params(&ptx).unwrap();
    let metas: Vec<_> = ks.iter().map(cuda::PtxKernel::to_kernel_meta).collect();
    check_layouts(&metas, false, NAMES);
    let big = ks.iter().find(|k| k.name == "big").unwrap();
    assert_eq!(big.param_size(), 0x88);
}

#[test]
fn describe_lists_every_entry() {
    let fb = fixture("kernels.speed.fatbin");
    let d = hrr_codeobj::describe(&fb).unwrap();
    let targets: Vec<_> = d.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(targets, ["compute_90", "sm_90"]);
    for (_, ks) in &d {
        check_layouts(ks, false, NAMES);
    }
    let ents = cuda::entries(&fb).unwrap();
    let cubin = cuda::payload(&fb, &ents[1]).unwrap();
    assert_eq!(hrr_codeobj::describe(&cubin).unwrap()[0].0, "sm_90");
}
