//! Compiles the device hash's source (`src/cuda/device_hash.cu`) as plain C,
//! through `tests/c/device_hash_cpu.c`, for the test that runs its serial
//! form against the `blake3` crate (`tests/device_hash_cpu.rs`). Linked into
//! test targets only: the library itself embeds the source for NVRTC.

fn main() {
    println!("cargo:rerun-if-changed=src/cuda/device_hash.cu");
    println!("cargo:rerun-if-changed=tests/c/device_hash_cpu.c");
    cc::Build::new()
        .file("tests/c/device_hash_cpu.c")
        .opt_level(2)
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .cargo_metadata(false)
        .compile("hrr_device_hash_cpu");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    println!("cargo:rustc-link-arg-tests=-L{out}");
    println!("cargo:rustc-link-arg-tests=-lhrr_device_hash_cpu");
}
