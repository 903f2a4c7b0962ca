//! One declaration of HIP's C ABI, as ROCm 5.2's `hip/hip_runtime_api.h`
//! (Debian's) lays it out: the entry points' signatures (the table), the C
//! types they take, and the constants hrr uses.
//!
//! # How an entry point is declared
//!
//! Every HIP entry point hrr knows is one line of the table, [`hip_fn!`]
//! (`table.rs`), in the shape the `api-table` crate describes:
//!
//! ```text
//! (hipMalloc, $cb:path, [$($x:tt)*]) => { $cb! { $($x)* hipMalloc(ptr: *mut *mut c_void, size: usize) -> hipError_t } };
//! ```
//!
//! The table is generated, not written: `bash scripts/gen-hip-signatures.sh`
//! runs `abi/`'s `gen-hip-table` over bindgen of Debian's header, keeps the
//! functions ROCm's `libamdhip64.so.5` exports, and adds the entry points no
//! C header declares from `abi/src/reference.rs` (the compiler ABI such as
//! `__hipRegisterFatBinary`, C++-mangled symbols such as ROCm 5.2's
//! `_Z24hipExtModuleLaunchKernel…`, ROCm 6's `hipGetProcAddress`). `abi/`
//! checks every entry against Debian's header (or the reference) at compile
//! time, once, and `scripts/abi-check.sh` fails when the checked-in table
//! differs from a fresh generation.
//!
//! Everything else is generated from the table:
//!
//! * here: [`fns`]`::NAME`, the entry's C function type, and [`args`]`::NAME`,
//!   a struct of its arguments (fields named as the header names the
//!   parameters) implementing [`api_table::Entry`] (`call` forwards them to a
//!   function pointer); [`HIP_FNS`], every name;
//! * the capture library exports and forwards every entry (its
//!   `hip::exports` classifies each as recorded, query or unrecorded);
//! * the CPU runtime exports the entries it implements;
//! * the HIP replay backend types its function table with [`fns`].
//!
//! To add an entry point: declare it where the generator reads it (a newer
//! header, or `abi/src/reference.rs` for one no header declares, with its
//! source), regenerate, then classify it in the capture library (a compile
//! error names it until then) and write its recording or implementation if
//! it needs one. No other file restates its signature.
//!
//! `no_std` and dependency-free but for `api-table`: plain data. The only
//! `unsafe` is generated, in [`args`] (calling through a function pointer).
#![no_std]
#![deny(unsafe_code)]
// A transcription of the C header: each item is the header's, under its C
// name, and documented there.
#![allow(missing_docs)]

pub mod array;
pub mod attr;
mod device_prop;
pub mod err;
pub mod graph;
mod handles;
mod launch;
mod memory;
pub mod rect;
mod table;
pub mod types;

pub use device_prop::HipDeviceProp;
pub use err::HipError;
pub use handles::*;
pub use launch::*;
pub use memory::*;

/// `HIP_VERSION` of Debian's 5.2 headers (5.2.21153).
pub const HIP_VERSION: core::ffi::c_int = 50_221_153;

/// `fns::NAME`: each table entry's `unsafe extern "C" fn` type.
pub mod fns {
    use crate::types::*;
    crate::hip_fns!(api_table::for_each, [crate::hip_fn, api_table::fn_type, []]);
}

/// `args::NAME`: each table entry's arguments as a struct (one public field
/// per parameter, named as in the header), implementing [`api_table::Entry`].
#[allow(unsafe_code)]
pub mod args {
    use crate::types::*;
    crate::hip_fns!(
        api_table::for_each,
        [crate::hip_fn, api_table::entry_struct, []]
    );
}

/// `HIP_FNS` from the names it is given (a list macro's callback expands in
/// item position).
macro_rules! names_const {
    ($($name:ident)*) => {
        /// Every table entry's symbol, in table order.
        pub const HIP_FNS: &[&str] = &[$(stringify!($name)),*];
    };
}
hip_fns!(names_const, []);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_whole() {
        let mut sorted = HIP_FNS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), HIP_FNS.len(), "a name appears twice");
        for must in [
            "hipMalloc",
            "hipLaunchKernel",
            "__hipRegisterFatBinary",
            "hipMemcpy2D",
            "hipGetProcAddress",
            "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j",
        ] {
            assert!(HIP_FNS.contains(&must), "{must}");
        }
    }

    #[test]
    fn args_name_their_symbol() {
        use api_table::Entry;
        assert_eq!(args::hipMemcpy2D::NAME, "hipMemcpy2D");
        assert_eq!(args::hipMalloc::SYMBOL.to_bytes(), b"hipMalloc");
        // Fields are the header's parameter names.
        let a = args::hipMemsetD32 {
            dest: core::ptr::null_mut(),
            value: 7,
            count: 3,
        };
        assert_eq!((a.value, a.count), (7, 3));
        assert_eq!(
            core::mem::size_of::<fns::hipMalloc>(),
            core::mem::size_of::<usize>()
        );
    }
}
