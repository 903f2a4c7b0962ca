//! C-level integration tests: C programs compiled with gcc against Debian's real
//! HIP 5.2 / HSA headers, linked against the freshly built libhrr_hip_cpu.so, run,
//! and judged by their output. Sources live in tests/c/.

use hrr_codeobj::bundle::{self, Compression};
use std::path::{Path, PathBuf};
use std::process::Command;

const CPU_ENTRY: &str = "hipv4-x86_64-unknown-linux-gnu-cpu";

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn workspace_include() -> PathBuf {
    crate_dir().join("../../../tests/workloads/include")
}

/// The directory of the libhrr_hip_cpu.so built with this test: cargo compiles
/// the lib target as cdylib + rlib into target/<profile>/deps/ (where this test
/// binary lives) but does not uplift it to target/<profile>/ during `cargo test`,
/// so deps/ is authoritative; target/<profile>/ is the fallback.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("target/<profile>/deps").to_path_buf();
    let profile = deps.parent().expect("target/<profile>").to_path_buf();
    let find = || {
        [&deps, &profile]
            .into_iter()
            .find(|d| d.join("libhrr_hip_cpu.so").exists())
            .cloned()
    };
    if find().is_none() {
        // Some other driver ran us without the cdylib: build it.
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "hrr-runtime-cpu"]);
        if profile.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("run cargo build");
        assert!(st.success(), "cargo build -p hrr-runtime-cpu failed");
    }
    find().unwrap_or_else(|| panic!("no libhrr_hip_cpu.so under {}", profile.display()))
}

fn work_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hrr-runtime-cpu-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    stdout
}

fn require_headers() {
    for h in [
        "/usr/include/hip/hip_runtime_api.h",
        "/usr/include/hsa/hsa.h",
        "/usr/include/hsa/hsa_ext_amd.h",
    ] {
        assert!(
            Path::new(h).exists(),
            "{h} is missing: install Debian's libamdhip64-dev and libhsa-runtime-dev (apt-get install libamdhip64-dev libhsa-runtime-dev)"
        );
    }
}

/// gcc against Debian's headers, linked to our runtime with an rpath.
fn compile_program(out: &Path, sources: &[PathBuf], lib: &Path) {
    let mut cmd = Command::new("gcc");
    cmd.args([
        "-D__HIP_PLATFORM_AMD__",
        "-O1",
        "-g",
        "-Wall",
        "-Werror",
        "-Wno-deprecated-declarations",
    ])
    .arg("-I")
    .arg(crate_dir().join("tests/c"))
    .args(sources)
    .arg("-o")
    .arg(out)
    .arg("-L")
    .arg(lib)
    .arg("-lhrr_hip_cpu")
    .arg(format!("-Wl,-rpath,{}", lib.display()))
    .args(["-lm", "-lpthread"]);
    run(&mut cmd);
}

fn run_program(exe: &Path, args: &[&Path]) -> String {
    let mut cmd = Command::new(exe);
    println!("running {} against {}", exe.display(), lib_dir().display());
    // The library just built, not the copy cargo's LD_LIBRARY_PATH may name
    // first (target/<profile>/, refreshed by `cargo build` only), which
    // would take precedence over the executable's rpath.
    cmd.args(args)
        .env("LD_LIBRARY_PATH", lib_dir())
        .env("HRR_CPU_DEVICE_MEMORY", "8G")
        .env("HRR_CPU_LOG", "1");
    let out = run(&mut cmd);
    println!("{out}");
    out
}

fn assert_clean(out: &str, name: &str) {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no summary line in:\n{out}"));
    assert!(line.ends_with(" 0 failures"), "{line}\n{out}");
    assert!(!out.contains("FAIL "), "{out}");
    let checks: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(checks > 50, "too few checks ran: {line}");
}

#[test]
fn c_api_against_debian_headers() {
    require_headers();
    let lib = lib_dir();
    let dir = work_dir("api");
    let exe = dir.join("api");
    compile_program(&exe, &[crate_dir().join("tests/c/api.c")], &lib);
    let out = run_program(&exe, &[]);
    assert_clean(&out, "api");
}

fn incbin(dir: &Path, entries: &[(&str, &str)]) -> PathBuf {
    let mut asm = String::from(".section .rodata.hrr_bundles,\"a\"\n");
    for (sym, path) in entries {
        asm += &format!(".p2align 12\n.globl {sym}\n{sym}:\n.incbin \"{path}\"\n");
    }
    asm += ".section .note.GNU-stack,\"\",@progbits\n";
    let p = dir.join("bundles.S");
    std::fs::write(&p, asm).unwrap();
    p
}

#[test]
fn c_kernels_module_and_fatbinary_paths() {
    require_headers();
    let lib = lib_dir();
    let dir = work_dir("launch");
    let so = dir.join("kernels.so");
    run(Command::new("gcc")
        .args(["-O2", "-shared", "-fPIC", "-Wall", "-Werror"])
        .arg("-I")
        .arg(workspace_include())
        .arg(crate_dir().join("tests/c/kernels.c"))
        .arg("-o")
        .arg(&so));

    // The kernels .so carries the metadata our own parser expects.
    let elf = std::fs::read(&so).unwrap();
    let kernels = hrr_hip_cpu::module::elf_kernels(&elf).expect("metadata of kernels.so");
    let names: Vec<&str> = kernels.iter().map(|(k, _)| k.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "saxpy",
            "scale_struct",
            "block_sum",
            "grid_index",
            "sleep_then_set",
            "empty"
        ]
    );
    assert_eq!(kernels[1].1, 32);

    let bundle = bundle::write(&[("host-x86_64-unknown-linux-gnu-", b""), (CPU_ENTRY, &elf)]);
    let gpu_only = bundle::write(&[
        ("host-x86_64-unknown-linux-gnu-", b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF not for us"),
    ]);
    // Compressed bundles (clang --offload-compress): zstd v3 and, with the
    // pre-HIP-6 entry id, zlib v2.
    let ccob = bundle::compress(&bundle, Compression::Zstd, 3, None).unwrap();
    let old_id = bundle::write(&[
        ("host-x86_64-unknown-linux-gnu-", b""),
        ("hip-x86_64-unknown-linux-gnu-cpu", &elf),
    ]);
    let ccob_v2 = bundle::compress(&old_id, Compression::Zlib, 2, None).unwrap();
    let files = [
        ("hrr_test_bundle", "bundle.bin", &bundle),
        ("hrr_gpu_only_bundle", "gpu_only.bin", &gpu_only),
        ("hrr_test_ccob", "bundle.ccob", &ccob),
        ("hrr_test_ccob_v2", "bundle_v2.ccob", &ccob_v2),
    ];
    let mut syms = Vec::new();
    for (sym, file, bytes) in files {
        let p = dir.join(file);
        std::fs::write(&p, bytes).unwrap();
        syms.push((sym, p.to_str().unwrap().to_string()));
    }
    let syms: Vec<(&str, &str)> = syms.iter().map(|(s, p)| (*s, p.as_str())).collect();
    let asm = incbin(&dir, &syms);
    let exe = dir.join("launch");
    compile_program(&exe, &[crate_dir().join("tests/c/launch.c"), asm], &lib);
    let out = run_program(&exe, &[&so]);
    assert_clean(&out, "launch");
    assert!(out.contains("launch overhead:"), "{out}");
}

#[test]
fn c_graphs_captured_and_built() {
    require_headers();
    let lib = lib_dir();
    let dir = work_dir("graph");
    let so = dir.join("kernels.so");
    run(Command::new("gcc")
        .args(["-O2", "-shared", "-fPIC", "-Wall", "-Werror"])
        .arg("-I")
        .arg(workspace_include())
        .arg(crate_dir().join("tests/c/kernels.c"))
        .arg("-o")
        .arg(&so));
    let exe = dir.join("graph");
    compile_program(&exe, &[crate_dir().join("tests/c/graph.c")], &lib);
    let out = run_program(&exe, &[&so]);
    assert_clean(&out, "graph");
}
