//! Writes the checked-in seeds of hrr-codeobj's fuzz targets from real code
//! objects: the test fixtures (an AMDGPU code object built by clang, CUDA
//! fat binaries and PTX built by nvcc) and CPU code objects compiled from
//! `tests/workloads/kernels/` (what the end-to-end tests load), wrapped the
//! ways programs hand them to a runtime (offload bundles, compressed
//! bundles, the `HIPF` wrapper). `scripts/fuzz-corpus.sh --seeds` runs it:
//!
//! ```sh
//! cargo run -p hrr-codeobj --features fuzzing --example fuzz_seeds -- \
//!     lib/hrr-codeobj/fuzz/seeds KERNEL.so...
//! ```
//!
//! Every seed is at most [`MAX_SEED`] bytes: small inputs are what
//! mutations reach into.

use std::path::{Path, PathBuf};

use hrr_codeobj::bundle::{self, Compression};
use hrr_codeobj::{amdgpu, cuda, hipf};

/// The largest seed written.
const MAX_SEED: usize = 16 << 10;

const HOST: &str = "host-x86_64-unknown-linux-gnu-";
const GFX90A: &str = "hipv4-amdgcn-amd-amdhsa--gfx90a";
const CPU: &str = "hipv4-x86_64-unknown-linux-gnu-cpu";

fn main() {
    let mut args = std::env::args_os().skip(1);
    let out = PathBuf::from(
        args.next()
            .expect("usage: fuzz_seeds OUT_DIR [KERNEL.so...]"),
    );
    let cpu: Vec<(String, Vec<u8>)> = args
        .map(PathBuf::from)
        .map(|p| {
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (name, bytes)
        })
        .collect();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let read = |p: &str| {
        let p = fixtures.join(p);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let co = read("amd/kernels.gfx90a.co");
    let mut seeds: Vec<(&str, String, Vec<u8>)> = Vec::new();

    // bundle: plain and compressed bundles, and the HIPF wrapper.
    let amd = bundle::write(&[(HOST, b""), (GFX90A, &co)]);
    seeds.push(("bundle", "gfx90a.bundle".into(), amd.clone()));
    for (name, method, version) in [
        ("gfx90a.zstd-v3.ccob", Compression::Zstd, 3),
        ("gfx90a.zlib-v2.ccob", Compression::Zlib, 2),
        ("gfx90a.zlib-v1.ccob", Compression::Zlib, 1),
    ] {
        let c = bundle::compress(&amd, method, version, None).expect("compressing a bundle");
        seeds.push(("bundle", name.into(), c));
    }
    let wrapper = hipf::write(&hipf::HipfWrapper {
        version: 1,
        binary: 0x7f00_0000_1000,
        dummy: 0,
    });
    seeds.push(("bundle", "hipf.wrapper".into(), wrapper.to_vec()));
    for (name, so) in &cpu {
        let b = bundle::write(&[(HOST, b""), (CPU, so)]);
        seeds.push(("bundle", format!("cpu-{name}.bundle"), b.clone()));
        seeds.push(("any_image", format!("cpu-{name}.bundle"), b));
    }

    // amdgpu_note: the MessagePack note, whole AMDGPU and CPU images.
    let note = amdgpu::metadata_note(&co).expect("the fixture's metadata note");
    seeds.push(("amdgpu_note", "gfx90a.note".into(), note.to_vec()));
    seeds.push(("amdgpu_note", "gfx90a.co".into(), co.clone()));
    for (name, so) in &cpu {
        seeds.push(("amdgpu_note", format!("cpu-{name}.so"), so.clone()));
    }

    // cuda_fatbin: fat binaries (compressed for size and for speed), their
    // first payload, and PTX.
    for name in [
        "kernels.size.fatbin",
        "kernels.speed.fatbin",
        "kernels.none.fatbin",
    ] {
        let fatbin = read(&format!("cuda/{name}"));
        if let Some(e) = cuda::entries(&fatbin)
            .ok()
            .and_then(|e| e.into_iter().next())
            && let Ok(p) = cuda::payload(&fatbin, &e)
        {
            let stem = name
                .trim_end_matches(".fatbin")
                .trim_start_matches("kernels.");
            seeds.push(("cuda_fatbin", format!("{stem}.payload"), p.to_vec()));
        }
        seeds.push(("cuda_fatbin", name.into(), fatbin.clone()));
        seeds.push(("any_image", name.into(), fatbin));
    }
    seeds.push((
        "cuda_fatbin",
        "compute_90.ptx".into(),
        read("cuda/kernels.compute_90.ptx"),
    ));

    // any_image: every kind of image the dispatchers tell apart.
    seeds.push(("any_image", "gfx90a.co".into(), co));
    seeds.push(("any_image", "gfx90a.bundle".into(), amd));
    for (name, so) in &cpu {
        seeds.push(("any_image", format!("cpu-{name}.so"), so.clone()));
    }

    for (target, name, bytes) in seeds {
        if bytes.len() > MAX_SEED {
            eprintln!(
                "fuzz_seeds: {target}/{name}: {} bytes, left out",
                bytes.len()
            );
            continue;
        }
        let dir = out.join(target);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = dir.join(&name);
        std::fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("{} ({} bytes)", path.display(), bytes.len());
    }
}
