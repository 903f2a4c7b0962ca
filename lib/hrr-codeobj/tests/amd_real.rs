//! Real AMD artefacts: code objects and offload bundles built by Debian's
//! clang-15 for gfx targets, parsed and checked against what the kernel
//! source (fixtures/amd/kernels.hip) declares.
//!
//! The committed fixture (fixtures/amd/kernels.gfx90a.co) is always checked;
//! the rest is built at test time when clang-15 is installed and prints a
//! `SKIP` line otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use hrr_codeobj::bundle::{self, Compression};
use hrr_codeobj::{CodeObjError, amdgpu, hipf};

const ALL: &[&str] = &[
    "saxpy",
    "with_struct",
    "_Z7mangledsdPh",
    "big",
    "noargs",
    "uses_hidden",
];

fn amd_src() -> PathBuf {
    fixtures().join("amd/kernels.hip")
}

fn check_code_object(co: &[u8], processor: &str) -> amdgpu::AmdgpuMeta {
    assert_eq!(
        hrr_codeobj::elf::machine(co),
        Some(hrr_codeobj::elf::EM_AMDGPU)
    );
    let meta = amdgpu::parse_metadata(co).expect("AMDGPU metadata");
    let target = meta.target.as_deref().expect("amdhsa.target");
    assert!(target.starts_with("amdgcn-amd-amdhsa--"), "{target}");
    assert_eq!(
        meta.target_id().unwrap().split(':').next(),
        Some(processor),
        "{target}"
    );
    assert_eq!(meta.kernels.len(), ALL.len(), "{:?}", meta.kernels);
    check_layouts(&meta.kernels, true, ALL);
    // The dispatcher agrees with the direct parser.
    assert_eq!(hrr_codeobj::kernels(co).unwrap(), meta.kernels);
    for k in &meta.kernels {
        assert_eq!(
            k.symbol,
            format!("{}.kd", k.name),
            "kernel descriptor symbol"
        );
    }
    let hidden = meta
        .kernels
        .iter()
        .find(|k| k.name == "uses_hidden")
        .unwrap();
    assert!(
        hidden.args.iter().any(|a| a.is_hidden()),
        "uses_hidden reads the implicit-argument area, so it must have hidden args: {:?}",
        hidden.args
    );
    assert_eq!(hidden.host_arg_count(), 2);
    meta
}

#[test]
fn committed_gfx90a_fixture() {
    let co = std::fs::read(fixtures().join("amd/kernels.gfx90a.co")).unwrap();
    assert!(co.len() < 20 * 1024);
    let meta = check_code_object(&co, "gfx90a");
    assert_eq!(meta.version, Some((1, 1)), "clang-15 emits code object v4");
    // Built with -fhip-kernel-arg-name: argument names are there.
    for &(kname, names) in ARG_NAMES {
        let k = meta.kernels.iter().find(|k| k.name == kname).unwrap();
        let got: Vec<_> = k
            .host_args()
            .map(|a| a.name.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(got, names, "{kname}");
    }
    let saxpy = meta.kernels.iter().find(|k| k.name == "saxpy").unwrap();
    assert_eq!(saxpy.args[1].address_space.as_deref(), Some("global"));
    assert_eq!(saxpy.kernarg_segment_size, 28);
}

struct Clang {
    clang: PathBuf,
    dir: tempfile::TempDir,
}

impl Clang {
    fn find(test: &str) -> Option<Clang> {
        let Some(clang) = clang() else {
            skip(test, "clang++-15 not found");
            return None;
        };
        Some(Clang {
            clang,
            dir: tempfile::tempdir().unwrap(),
        })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `clang++-15 -x hip` on the fixture source with `args`, output `out`.
    fn build(&self, args: &[&str], out: &str) -> Vec<u8> {
        let o = self.path(out);
        run(Command::new(&self.clang)
            .args([
                "-x",
                "hip",
                "-nogpuinc",
                "-O2",
                "-fhip-kernel-arg-name",
                "-c",
            ])
            .arg(amd_src())
            .args(args)
            .arg("-o")
            .arg(&o));
        std::fs::read(&o).unwrap()
    }

    fn code_object(&self, arch: &str, extra: &[&str]) -> Vec<u8> {
        let mut args = vec!["--cuda-device-only", "-nogpulib", "--no-gpu-bundle-output"];
        let arch_flag = format!("--offload-arch={arch}");
        args.push(&arch_flag);
        args.extend_from_slice(extra);
        self.build(&args, &format!("k-{}.co", arch.replace(':', "_")))
    }
}

#[test]
fn clang_single_code_objects() {
    let Some(c) = Clang::find("clang_single_code_objects") else {
        return;
    };
    for (arch, proc_) in [
        ("gfx90a", "gfx90a"),
        ("gfx1030", "gfx1030"),
        ("gfx908:xnack-", "gfx908"),
    ] {
        let co = c.code_object(arch, &[]);
        let meta = check_code_object(&co, proc_);
        if arch.contains("xnack-") {
            assert_eq!(meta.target_id(), Some("gfx908:xnack-"));
        }
    }
}

#[test]
fn clang_code_object_v5() {
    let Some(c) = Clang::find("clang_code_object_v5") else {
        return;
    };
    let co = c.code_object("gfx90a", &["-mcode-object-version=5"]);
    let meta = check_code_object(&co, "gfx90a");
    assert_eq!(
        meta.version,
        Some((1, 2)),
        "code object v5 is amdhsa.version [1, 2]"
    );
    let k = meta
        .kernels
        .iter()
        .find(|k| k.name == "uses_hidden")
        .unwrap();
    let kinds: Vec<_> = k
        .args
        .iter()
        .filter(|a| a.is_hidden())
        .map(|a| a.kind.as_str())
        .collect();
    assert!(
        kinds.contains(&"hidden_block_count_x"),
        "v5 hidden args: {kinds:?}"
    );
}

#[test]
fn clang_with_rocm_device_libs() {
    let libs = Path::new("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
    let Some(c) = Clang::find("clang_with_rocm_device_libs") else {
        return;
    };
    if !libs.join("ocml.bc").exists() {
        skip(
            "clang_with_rocm_device_libs",
            "rocm-device-libs not installed",
        );
        return;
    }
    // A kernel calling into the device libraries (ocml), linked by lld.
    let src = c.path("dl.hip");
    std::fs::write(
        &src,
        format!(
            "#include \"{}\"\nextern \"C\" __device__ float __ocml_sin_f32(float);\n\
             extern \"C\" __global__ void sines(float *y, int n) {{\n\
               int i = __builtin_amdgcn_workitem_id_x();\n  if (i < n) y[i] = __ocml_sin_f32(y[i]);\n}}\n",
            fixtures().join("amd/hip_min.h").display()
        ),
    )
    .unwrap();
    let out = c.path("dl.co");
    run(Command::new(&c.clang)
        .args([
            "-x",
            "hip",
            "--cuda-device-only",
            "--offload-arch=gfx90a",
            "-nogpuinc",
            "-O2",
        ])
        .arg(format!("--rocm-device-lib-path={}", libs.display()))
        .args(["--no-gpu-bundle-output", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&out));
    let co = std::fs::read(out).unwrap();
    let meta = amdgpu::parse_metadata(&co).unwrap();
    let k = &meta.kernels[0];
    assert_eq!(k.name, "sines");
    let host: Vec<_> = k
        .host_args()
        .map(|a| (a.offset, a.size, a.is_pointer()))
        .collect();
    assert_eq!(host, [(0, 8, true), (8, 4, false)]);
}

fn check_bundle_selection(data: &[u8], what: &str) {
    let ids = bundle::targets(data).unwrap();
    assert!(
        ids.iter().any(|i| i.starts_with("host-")),
        "{what}: {ids:?}"
    );
    assert!(
        ids.contains(&"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-".to_string()),
        "{what}: {ids:?}"
    );
    assert!(
        ids.contains(&"hipv4-amdgcn-amd-amdhsa--gfx1030".to_string()),
        "{what}: {ids:?}"
    );
    assert_eq!(bundle::extent(data).unwrap(), data.len(), "{what}: extent");

    // HIP reports targets like this; xnack- in the entry is compatible.
    for (target, proc_) in [
        ("gfx90a:sramecc+:xnack-", "gfx90a"),
        ("gfx90a", "gfx90a"),
        ("gfx1030", "gfx1030"),
        ("hipv4-amdgcn-amd-amdhsa--gfx1030", "gfx1030"),
    ] {
        let co =
            bundle::select(data, target).unwrap_or_else(|e| panic!("{what}: select {target}: {e}"));
        check_code_object(&co, proc_);
    }
    // Incompatible features or a missing processor: a clear error.
    for target in ["gfx90a:xnack+", "gfx908", "cpu"] {
        match bundle::select(data, target) {
            Err(CodeObjError::NoMatchingTarget {
                target: t,
                available,
            }) => {
                assert_eq!(t, target);
                assert_eq!(available, ids);
                let msg = bundle::select(data, target).unwrap_err().to_string();
                assert!(msg.contains("gfx1030") && msg.contains(target), "{msg}");
            }
            other => panic!("{what}: select {target}: {other:?}"),
        }
    }
    match hrr_codeobj::kernels(data) {
        Err(CodeObjError::NeedsSelect { targets, .. }) => assert_eq!(targets, ids),
        other => panic!("{what}: kernels(bundle) = {other:?}"),
    }
}

#[test]
fn clang_multi_target_bundle() {
    let Some(c) = Clang::find("clang_multi_target_bundle") else {
        return;
    };
    if offload_bundler().is_none() {
        skip(
            "clang_multi_target_bundle",
            "clang-offload-bundler-15 not found",
        );
        return;
    }
    let b = c.build(
        &[
            "--cuda-device-only",
            "-nogpulib",
            "--offload-arch=gfx90a:xnack-",
            "--offload-arch=gfx1030",
        ],
        "k.hipfb",
    );
    assert!(bundle::is_bundle(&b));
    let parsed = bundle::parse(&b).unwrap();
    for e in &parsed.entries {
        if e.size > 0 {
            assert_eq!(
                e.offset % 4096,
                0,
                "clang aligns HIP bundle entries to 4096: {e:?}"
            );
        }
    }
    check_bundle_selection(&b, "clang bundle");

    // The same bundle compressed in every CCOB version and method.
    for method in [Compression::Zlib, Compression::Zstd] {
        for version in [1, 2, 3] {
            let ccob = bundle::compress(&b, method, version, None).unwrap();
            let h = bundle::ccob_header(&ccob).unwrap();
            assert_eq!(
                (h.version, h.method, h.uncompressed_size),
                (version, method, b.len() as u64)
            );
            assert_eq!(bundle::decompress(&ccob).unwrap(), b);
            check_bundle_selection(&ccob, &format!("CCOB v{version} {method:?}"));
            // extent() works from the header alone (v2, v3), with trailing bytes after it.
            let mut padded = ccob.clone();
            padded.extend_from_slice(&[0xAA; 100]);
            assert_eq!(bundle::extent(&padded).unwrap(), ccob.len());
        }
    }
}

#[test]
fn clang_host_object_hipf_wrapper() {
    let Some(c) = Clang::find("clang_host_object_hipf_wrapper") else {
        return;
    };
    if offload_bundler().is_none() {
        skip(
            "clang_host_object_hipf_wrapper",
            "clang-offload-bundler-15 not found",
        );
        return;
    }
    // A full HIP compile: host object with the device bundle embedded.
    let o = c.build(
        &[
            "-nogpulib",
            "--offload-arch=gfx90a",
            "--offload-arch=gfx1030",
        ],
        "host.o",
    );
    use object::{Object, ObjectSection};
    let file = object::File::parse(&*o).unwrap();
    let seg = file
        .section_by_name(".hipFatBinSegment")
        .expect(".hipFatBinSegment");
    let w = hipf::parse(seg.data().unwrap()).unwrap();
    assert_eq!(w.version, 1);
    assert_eq!(
        w.binary, 0,
        "in a .o the pointer is a relocation against .hip_fatbin"
    );
    let fb = file
        .section_by_name(".hip_fatbin")
        .expect(".hip_fatbin")
        .data()
        .unwrap();
    assert!(bundle::is_bundle(fb));
    let n = bundle::extent(fb).unwrap();
    assert!(n <= fb.len(), "extent {n} > section {}", fb.len());
    // What the interposer does with a pointer: take extent() bytes and select.
    let co = bundle::select(&fb[..n], "gfx1030").unwrap();
    check_code_object(&co, "gfx1030");
}

#[test]
fn offload_bundler_interop() {
    let Some(c) = Clang::find("offload_bundler_interop") else {
        return;
    };
    let Some(bundler) = offload_bundler() else {
        skip(
            "offload_bundler_interop",
            "clang-offload-bundler-15 not found",
        );
        return;
    };
    let a = c.code_object("gfx90a", &[]);
    let b = c.code_object("gfx1030", &[]);
    let (pa, pb) = (c.path("k-gfx90a.co"), c.path("k-gfx1030.co"));
    let host = c.path("empty");
    std::fs::write(&host, b"").unwrap();
    let ids = [
        "host-x86_64-unknown-linux-gnu",
        "hipv4-amdgcn-amd-amdhsa--gfx90a",
        "hipv4-amdgcn-amd-amdhsa--gfx1030",
    ];

    // Our writer -> clang-offload-bundler reads it back byte for byte.
    let ours = bundle::write(&[(ids[0], b""), (ids[1], &a), (ids[2], &b)]);
    let ours_path = c.path("ours.bundle");
    std::fs::write(&ours_path, &ours).unwrap();
    let list = Command::new(&bundler)
        .args(["-list", "-type=o"])
        .arg(format!("-input={}", ours_path.display()))
        .output()
        .unwrap();
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    let listed = String::from_utf8_lossy(&list.stdout);
    for id in ids {
        assert!(listed.lines().any(|l| l == id), "bundler -list: {listed}");
    }
    let (ua, ub) = (c.path("ua.co"), c.path("ub.co"));
    run(Command::new(&bundler)
        .args(["-unbundle", "-type=o"])
        .arg(format!("-targets={},{}", ids[1], ids[2]))
        .arg(format!("-input={}", ours_path.display()))
        .arg(format!("-output={}", ua.display()))
        .arg(format!("-output={}", ub.display())));
    assert_eq!(std::fs::read(&ua).unwrap(), a);
    assert_eq!(std::fs::read(&ub).unwrap(), b);

    // clang-offload-bundler's writer -> our reader.
    let theirs = c.path("theirs.bundle");
    run(Command::new(&bundler)
        .arg("-type=o")
        .arg(format!("-targets={}", ids.join(",")))
        .arg(format!("-input={}", host.display()))
        .arg(format!("-input={}", pa.display()))
        .arg(format!("-input={}", pb.display()))
        .arg(format!("-output={}", theirs.display())));
    let theirs = std::fs::read(&theirs).unwrap();
    let parsed = bundle::parse(&theirs).unwrap();
    assert_eq!(parsed.ids(), ids);
    assert_eq!(&*bundle::select(&theirs, "gfx90a:xnack+").unwrap(), &a[..]);
    assert_eq!(&*bundle::select(&theirs, "gfx1030").unwrap(), &b[..]);
    assert_eq!(bundle::extent(&theirs).unwrap(), theirs.len());
}

#[test]
fn describe_bundle_and_code_object() {
    let co = std::fs::read(fixtures().join("amd/kernels.gfx90a.co")).unwrap();
    let d = hrr_codeobj::describe(&co).unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].0, "amdgcn-amd-amdhsa--gfx90a");
    let b = bundle::write(&[
        ("host-x86_64-unknown-linux-gnu-", b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &co),
    ]);
    for img in [
        b.clone(),
        bundle::compress(&b, Compression::Zstd, 3, None).unwrap(),
    ] {
        let d = hrr_codeobj::describe(&img).unwrap();
        assert_eq!(d.len(), 1, "the empty host entry is skipped");
        assert_eq!(d[0].0, "hipv4-amdgcn-amd-amdhsa--gfx90a");
        check_layouts(&d[0].1, true, ALL);
    }
}
