//! Exports `mmap` from the hrr-extract executable (defined by `hrr-va-arenas`),
//! so that the CUDA driver's calls reach it: that is how its own mappings
//! are kept clear of the recorded ranges placement reserves.

fn main() {
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=mmap");
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=mmap64");
}
