//! Compiles `src/fault_guard.c`, the recovery point a faulting kernel jumps
//! back to (see `src/fault.rs`: `sigsetjmp` cannot be called from Rust).

fn main() {
    println!("cargo:rerun-if-changed=src/fault_guard.c");
    cc::Build::new()
        .file("src/fault_guard.c")
        .flag_if_supported("-fno-omit-frame-pointer")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("hrr_fault_guard");
}
