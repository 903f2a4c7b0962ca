//! The CUDA runtime API's signature table (`libcudart.so`, CUDA 13.0):
//! [`cudart_fn!`](crate::cudart_fn) / [`cudart_fns!`](crate::cudart_fns)
//! in `runtime/table.rs`, in the `api-table` crate's shape, beside the
//! driver's ([`crate::cuda_fn!`]). [`fns`]`::NAME` is each entry's
//! `unsafe extern "C" fn` type, [`args`]`::NAME` its arguments as a struct,
//! [`types`] the C type names the lines use. The capture library generates
//! its runtime exports from it and makes its own runtime calls through it.

mod table;
pub mod types;

/// `fns::NAME`: each runtime table entry's `unsafe extern "C" fn` type.
pub mod fns {
    use super::types::*;
    crate::cudart_fns!(
        api_table::for_each,
        [crate::cudart_fn, api_table::fn_type, []]
    );
}

/// `args::NAME`: each runtime table entry's arguments as a struct (one
/// public field per parameter), implementing [`api_table::Entry`].
#[allow(unsafe_code)]
pub mod args {
    use super::types::*;
    crate::cudart_fns!(
        api_table::for_each,
        [crate::cudart_fn, api_table::entry_struct, []]
    );
}

/// `CUDART_FNS` from the names it is given.
macro_rules! names_const {
    ($($name:ident)*) => {
        /// Every runtime table entry's symbol, in table order.
        pub const CUDART_FNS: &[&str] = &[$(stringify!($name)),*];
    };
}
crate::cudart_fns!(names_const, []);

#[cfg(test)]
mod tests {
    use super::types::*;
    use super::*;
    use api_table::Entry;

    #[test]
    fn table_is_whole_and_names_are_runtime_symbols() {
        let mut sorted = CUDART_FNS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), CUDART_FNS.len(), "a name appears twice");
        assert!(
            CUDART_FNS
                .iter()
                .all(|n| n.starts_with("cuda") || n.starts_with("__cuda"))
        );
        assert_eq!(<args::cudaMalloc as Entry>::NAME, "cudaMalloc");
        extern "C" fn f(_: *mut *mut c_void, _: usize) -> cudaError_t {
            0
        }
        let _: fns::cudaMalloc = f;
        // A void entry's result, and a pointer one's.
        let () = <args::__cudaRegisterFatBinaryEnd as Entry>::Ret::default();
        extern "C" fn g(_: *mut c_void) -> *mut *mut c_void {
            core::ptr::null_mut()
        }
        let _: fns::__cudaRegisterFatBinary = g;
    }
}
