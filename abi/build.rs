//! Generates Rust bindings of Debian's real ROCm headers with bindgen:
//!
//! * `$OUT_DIR/debian_hip.rs`: `hip/hip_runtime_api.h` (HIP 5.2.3), with the
//!   options hip-runtime-sys 0.1.2's own build script uses for its `bindgen`
//!   feature (`-D__HIP_PLATFORM_AMD__`, rustified non-exhaustive `hip.*` enums,
//!   `size_t` as `usize`, `::libc` ctypes), so its items have the same shape as
//!   the crate's shipped bindings (which come from HIP 5.4.22804).
//! * `$OUT_DIR/debian_hsa.rs`: `hsa/hsa.h` + `hsa/hsa_ext_amd.h` (ROCm 5.2.3),
//!   `hsa_*` functions and types, C enums rustified (`#[repr(u32)]`).
//!
//! Why not hip-runtime-sys's own `bindgen` feature: its build script writes
//! the regenerated bindings over `src/bindings.rs` *inside the crate's source*,
//! i.e. into `~/.cargo/registry/src/…`, which is shared by every build on the
//! machine and left modified afterwards. Generating into `OUT_DIR` with the same
//! options gives the same Debian-derived bindings without touching the registry,
//! and keeps the crate's shipped ones to compare against as well.
//!
//! Needs libclang (Debian: libclang-15-dev; `LIBCLANG_PATH` is set to
//! `/usr/lib/llvm-15/lib` by scripts/abi-check.sh when unset).

use std::path::PathBuf;

fn include_root() -> PathBuf {
    // The same variable hip-runtime-sys's build script reads.
    std::env::var_os("HIP_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr".into())
}

fn main() {
    println!("cargo:rerun-if-env-changed=HIP_PATH");
    println!("cargo:rerun-if-env-changed=LIBCLANG_PATH");
    println!("cargo:rerun-if-changed=build.rs");
    let root = include_root();
    let inc = root.join("include");
    for h in ["hip/hip_runtime_api.h", "hsa/hsa.h", "hsa/hsa_ext_amd.h"] {
        let p = inc.join(h);
        assert!(
            p.is_file(),
            "{} missing: install Debian's libamdhip64-dev and libhsa-runtime-dev (or set HIP_PATH)",
            p.display()
        );
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));

    let hip = bindgen::Builder::default()
        .header_contents("debian_hip.h", "#include <hip/hip_runtime_api.h>\n")
        .clang_arg(format!("-I{}", inc.display()))
        .clang_arg("-D__HIP_PLATFORM_AMD__")
        .rustified_non_exhaustive_enum("hip.*")
        .size_t_is_usize(true)
        .ctypes_prefix("::libc")
        .layout_tests(false)
        .derive_default(true)
        .generate_comments(false)
        .generate()
        .expect("bindgen of Debian's hip/hip_runtime_api.h");
    hip.write_to_file(out.join("debian_hip.rs"))
        .expect("write debian_hip.rs");

    let hsa = bindgen::Builder::default()
        .header_contents(
            "debian_hsa.h",
            "#include <hsa/hsa.h>\n#include <hsa/hsa_ext_amd.h>\n",
        )
        .clang_arg(format!("-I{}", inc.display()))
        .allowlist_function("hsa_.*")
        .allowlist_type("hsa_.*")
        .allowlist_var("HSA_.*")
        .rustified_non_exhaustive_enum("hsa_.*")
        .size_t_is_usize(true)
        .ctypes_prefix("::libc")
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .expect("bindgen of Debian's hsa/hsa.h + hsa/hsa_ext_amd.h");
    hsa.write_to_file(out.join("debian_hsa.rs"))
        .expect("write debian_hsa.rs");
}
