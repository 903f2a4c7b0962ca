//! Exports `mmap` from the hrr-play executable (defined by `hrr-va-arenas`),
//! so that the CUDA driver's calls reach it: that is how its address arenas
//! are reserved at their recorded bases (placement).

fn main() {
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=mmap");
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol=mmap64");
}
