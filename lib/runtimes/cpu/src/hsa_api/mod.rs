//! The exported HSA subset (`hsa/hsa.h`, `hsa/hsa_ext_amd.h`): a CPU agent and a
//! GPU agent, one memory pool each. GPU-pool memory is device memory from the same
//! reservation as hipMalloc (valid in copies, never seen by the HIP API); CPU-pool
//! memory is host memory. `hsa_init`/`hsa_shut_down` are reference counted.
//!
//! Safety contract of every export: that of the HSA API it implements.
//!
//! Each export is generated from hsa-sys's signature table (`hsa_sys::hsa_fn!`)
//! with the header's exact C signature, and hands its arguments to the
//! implementation in [`imp`] as the table's argument struct.
#![allow(clippy::missing_safety_doc)]

mod imp;

pub use imp::{CPU_AGENT, CPU_POOL, GPU_AGENT, GPU_POOL};

use hsa_sys::raw::*;
use std::ffi::{c_char, c_void};

/// Callback of the table's lookup: the exported definition of one entry
/// point, handing its arguments to `imp::NAME`.
macro_rules! export {
    ($name:ident ($($p:ident : $t:ty),* $(,)?) -> $r:ty) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($p: $t),*) -> $r {
            // SAFETY: the application called this entry point with these
            // arguments under HSA's contract, which is the implementation's.
            unsafe { imp::$name(args::$name { $($p),* }) }
        }
        // The export has exactly the table's type.
        const _: fns::$name = $name;
    };
}

hsa_sys::hsa_fns!(api_table::for_each, [hsa_sys::hsa_fn, export, []]);
