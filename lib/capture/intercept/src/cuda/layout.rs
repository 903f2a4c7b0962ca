//! A CUDA kernel's parameter layout: the `(offset, size)` of each parameter,
//! in `args[]` order.
//!
//! The authority is the driver: `cuKernelGetParamInfo(CUkernel, i, &offset,
//! &size)` answers per index and `CUDA_ERROR_INVALID_VALUE` past the last one
//! ([`query_params`]). The fat binary's own metadata (cubin
//! `EIATTR_KPARAM_INFO`, or PTX `.param`s; `hrr_codeobj::cuda::kernels`) is
//! the fallback when the driver cannot answer, and a cross-check when it
//! can ([`choose`]). CUDA never says which parameters are pointers, so every
//! parameter is `by_value`: the recorder scans each one word by word against
//! the live allocations (`AllocView::scan_each`) and records the hits as
//! `ptrs`.

#![deny(unsafe_code)]

use hrr_codeobj::{ArgKind, ArgMeta, KernelMeta};
use hrr_core::error_chain::chain;

use super::types::{CUDA_ERROR_INVALID_VALUE, CUDA_SUCCESS, CuResult};

/// Most parameters a kernel can have (CUDA 12.1+: 32764 bytes of
/// parameters, at least one byte each).
pub const MAX_PARAMS: usize = 32_768;
/// Largest parameter buffer CUDA accepts (32764 bytes since CUDA 12.1).
pub const MAX_PARAM_BYTES: u64 = 32_764;

/// Why the driver gave no parameter layout for a kernel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamLayoutError {
    /// An answer that cannot be a parameter.
    #[error(
        "parameter {index}: offset {offset} size {size} is outside a {MAX_PARAM_BYTES} byte parameter buffer"
    )]
    Outside {
        /// The parameter's index.
        index: usize,
        /// Its offset, as the driver said.
        offset: u64,
        /// Its size, as the driver said.
        size: u64,
    },
    /// The query failed for another reason than the end of the list.
    #[error("cuKernelGetParamInfo(index {index}) returned CUresult {result}")]
    Query {
        /// The parameter asked about.
        index: usize,
        /// What the driver returned.
        result: CuResult,
    },
    /// The driver never said the list ended.
    #[error("more than {MAX_PARAMS} parameters")]
    TooMany,
    /// No driver to ask.
    #[error("libcuda.so.1 is not loaded")]
    NoDriver,
    /// The driver lacks the query (named).
    #[error("libcuda.so.1 has no {0} (driver older than CUDA 12.4)")]
    NoQuery(&'static str),
    /// The runtime gave no `cudaKernel_t` to ask about.
    #[error("no cudaKernel_t for it")]
    NoKernel,
    /// `__cudaGetKernel` found none for the kernel's host function.
    #[error("__cudaGetKernel gave no cudaKernel_t for its host function")]
    NoHostKernel,
}

/// Where a layout came from (printed with `HRR_LOG`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The driver's `cuKernelGetParamInfo` (or `cuFuncGetParamInfo`).
    Driver,
    /// The fat binary's own metadata (`.nv.info`).
    FatbinMetadata,
    /// No layout: launches are recorded without arguments.
    None,
}

impl Source {
    /// How `HRR_LOG` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Driver => "driver (cuKernelGetParamInfo)",
            Source::FatbinMetadata => "fat-binary metadata",
            Source::None => "none",
        }
    }
}

/// Asks `query(i)` (a `cuKernelGetParamInfo` call returning `(result,
/// offset, size)`) for every parameter until the driver says there is none
/// (`CUDA_ERROR_INVALID_VALUE`). Any other error, or an answer that cannot be
/// a parameter, is an `Err` naming it.
pub fn query_params(
    mut query: impl FnMut(usize) -> (CuResult, u64, u64),
) -> Result<Vec<(u64, u64)>, ParamLayoutError> {
    let mut out = Vec::new();
    for index in 0..MAX_PARAMS {
        let (r, offset, size) = query(index);
        match r {
            CUDA_SUCCESS => {
                let end = offset.checked_add(size).filter(|&e| e <= MAX_PARAM_BYTES);
                if size == 0 || end.is_none() {
                    return Err(ParamLayoutError::Outside {
                        index,
                        offset,
                        size,
                    });
                }
                out.push((offset, size));
            }
            CUDA_ERROR_INVALID_VALUE => return Ok(out),
            result => return Err(ParamLayoutError::Query { index, result }),
        }
    }
    Err(ParamLayoutError::TooMany)
}

/// Kernel metadata for `name` from driver `(offset, size)` pairs: every
/// parameter `by_value` (scanned for pointers when recorded).
pub fn meta_from_pairs(name: &str, pairs: &[(u64, u64)]) -> KernelMeta {
    let args: Vec<ArgMeta> = pairs
        .iter()
        .map(|&(offset, size)| ArgMeta {
            offset: offset as u32,
            size: size as u32,
            kind: ArgKind::ByValue,
            address_space: None,
            name: None,
        })
        .collect();
    let end = args.iter().map(|a| a.offset + a.size).max().unwrap_or(0);
    KernelMeta {
        name: name.to_string(),
        symbol: name.to_string(),
        kernarg_segment_size: end,
        args,
    }
}

/// The host parameters of `meta` as `(offset, size)` pairs, in order.
pub fn pairs_of(meta: &KernelMeta) -> Vec<(u64, u64)> {
    meta.host_args()
        .map(|a| (u64::from(a.offset), u64::from(a.size)))
        .collect()
}

/// Indices of the parameters that are one whole 8-byte word holding a live
/// device address whose low 32 bits are below `MIN_POINTER` (a base aligned
/// at 4 GiB, which CUDA's allocator can hand out). The generic scan skips
/// such words (it takes `{0, n}` int pairs for non-pointers), but a whole
/// 8-byte parameter equal to a live address is a pointer. `is_live` is only
/// asked about words that pass the cheap checks (rare).
pub fn aligned_pointer_params(
    sizes: impl IntoIterator<Item = u32>,
    vals: &[&[u8]],
    is_live: impl Fn(u64) -> bool,
) -> Vec<usize> {
    use hrr_recorder::record::live_allocs::MIN_POINTER;
    sizes
        .into_iter()
        .zip(vals)
        .enumerate()
        .filter_map(|(i, (size, v))| {
            let w = u64::from_le_bytes((size == 8).then_some(*v)?.try_into().ok()?);
            (w >= MIN_POINTER && (w & 0xffff_ffff) < MIN_POINTER && is_live(w)).then_some(i)
        })
        .collect()
}

/// `meta` with the host parameters at `indices` marked `global_buffer`
/// (recorded as a pointer at offset 0 without scanning).
pub fn with_pointers(meta: &KernelMeta, indices: &[usize]) -> KernelMeta {
    let mut m = meta.clone();
    for (i, a) in m.args.iter_mut().filter(|a| !a.is_hidden()).enumerate() {
        if indices.contains(&i) {
            a.kind = ArgKind::GlobalBuffer;
        }
    }
    m
}

/// The layout a kernel's launches are recorded with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// `None`: no layout at all; launches are recorded without arguments.
    pub meta: Option<KernelMeta>,
    /// Where it came from.
    pub source: Source,
    /// Something the user should hear about (printed once per kernel).
    pub warning: Option<String>,
}

/// Picks the layout of kernel `name` from the driver's answer or, where it
/// has none, the fat binary's metadata (`fatbin`: the kernel's entry there,
/// or why there is none; the registry reads it only then).
pub fn choose<D: std::error::Error, F: std::error::Error>(
    name: &str,
    driver: Result<Vec<(u64, u64)>, D>,
    fatbin: Result<&KernelMeta, F>,
) -> Choice {
    match (driver, fatbin) {
        (Ok(pairs), _) => Choice {
            meta: Some(meta_from_pairs(name, &pairs)),
            source: Source::Driver,
            warning: None,
        },
        (Err(d), Ok(m)) => Choice {
            meta: Some(meta_from_pairs(name, &pairs_of(m))),
            source: Source::FatbinMetadata,
            warning: Some(format!(
                "kernel {name}: no parameter layout from the driver ({}); using the fat binary's metadata",
                chain(&d)
            )),
        },
        (Err(d), Err(f)) => Choice {
            meta: None,
            source: Source::None,
            warning: Some(format!(
                "kernel {name}: no parameter layout (driver: {}; fat binary: {}); its launches are recorded WITHOUT arguments and cannot be replayed",
                chain(&d),
                chain(&f)
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver that knows `params` and answers like cuKernelGetParamInfo.
    fn driver(params: &[(u64, u64)]) -> impl FnMut(usize) -> (CuResult, u64, u64) + '_ {
        move |i| match params.get(i) {
            Some(&(o, s)) => (CUDA_SUCCESS, o, s),
            None => (CUDA_ERROR_INVALID_VALUE, 0, 0),
        }
    }

    #[test]
    fn saxpy_and_struct_layouts_as_measured() {
        // saxpy(int n, float a, float* x, float* y) and axpby(Args) on the H200.
        let saxpy = [(0, 4), (4, 4), (8, 8), (16, 8)];
        assert_eq!(query_params(driver(&saxpy)).unwrap(), saxpy);
        assert_eq!(query_params(driver(&[(0, 56)])).unwrap(), [(0, 56)]);
        assert_eq!(query_params(driver(&[])).unwrap(), [], "no parameters");
    }

    #[test]
    fn driver_errors_are_not_an_empty_layout() {
        let e = query_params(|_| (400, 0, 0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cuKernelGetParamInfo(index 0) returned CUresult 400"
        );
        let e = query_params(|i| if i == 0 { (0, 8, 0) } else { (1, 0, 0) }).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter 0: offset 8 size 0 is outside a 32764 byte parameter buffer"
        );
        assert!(
            query_params(|_| (0, 32_760, 8)).is_err(),
            "past the parameter buffer"
        );
        assert!(query_params(|_| (0, 0, 4)).is_err(), "never ends");
    }

    #[test]
    fn meta_is_all_by_value_in_order() {
        let m = meta_from_pairs("_Z5saxpyifPfS_", &[(0, 4), (4, 4), (8, 8), (16, 8)]);
        assert_eq!(m.kernarg_segment_size, 24);
        assert_eq!(m.host_arg_count(), 4);
        assert!(m.args.iter().all(|a| a.kind == ArgKind::ByValue));
        assert_eq!(pairs_of(&m), [(0, 4), (4, 4), (8, 8), (16, 8)]);
    }

    #[test]
    fn the_driver_wins_and_the_metadata_is_the_fallback() {
        let fat = meta_from_pairs("k", &[(0, 8), (8, 4)]);
        let c =
            choose::<ParamLayoutError, ParamLayoutError>("k", Ok(vec![(0, 8), (8, 8)]), Ok(&fat));
        assert_eq!((c.source, c.warning), (Source::Driver, None));
        assert_eq!(pairs_of(c.meta.as_ref().unwrap()), [(0, 8), (8, 8)]);
        let c = choose::<ParamLayoutError, _>("k", Ok(vec![]), Err(ParamLayoutError::TooMany));
        assert_eq!((c.source, c.meta.unwrap().args.len()), (Source::Driver, 0));
        let c = choose::<_, ParamLayoutError>("k", Err(ParamLayoutError::NoDriver), Ok(&fat));
        assert_eq!(c.source, Source::FatbinMetadata);
        assert_eq!(pairs_of(c.meta.as_ref().unwrap()), [(0, 8), (8, 4)]);
        assert_eq!(
            c.warning.unwrap(),
            "kernel k: no parameter layout from the driver (libcuda.so.1 is not loaded); using the fat binary's metadata"
        );
    }

    #[test]
    fn four_gib_aligned_pointers_are_kept() {
        let base = 0x7f40_0000_0000u64; // low 32 bits zero
        let live = |w: u64| (base..base + (1 << 20)).contains(&w);
        let (p, q, small) = (
            base.to_le_bytes(),
            (base + 0x100).to_le_bytes(),
            7u64.to_le_bytes(),
        );
        let n = 5i32.to_le_bytes();
        let other = (0x7f41_0000_0000u64).to_le_bytes(); // not live
        let vals: [&[u8]; 5] = [&n, &p, &small, &q, &other];
        let sizes = [4, 8, 8, 8, 8];
        assert_eq!(aligned_pointer_params(sizes, &vals, live), [1, 3]);
        // Ordinary addresses are the scan's business, not this one's.
        let normal = 0x7f12_3456_0000u64.to_le_bytes();
        assert!(aligned_pointer_params([8], &[&normal[..]], |_| true).is_empty());
        let m = with_pointers(
            &meta_from_pairs("k", &[(0, 4), (8, 8), (16, 8), (24, 8)]),
            &[1, 3],
        );
        let kinds: Vec<bool> = m.args.iter().map(|a| a.is_pointer()).collect();
        assert_eq!(kinds, [false, true, false, true]);
    }

    #[test]
    fn fallbacks() {
        let fat = meta_from_pairs("k", &[(0, 56)]);
        let no_query = ParamLayoutError::NoQuery("cuKernelGetParamInfo");
        let c = choose::<_, ParamLayoutError>("k", Err(no_query), Ok(&fat));
        assert_eq!(c.source, Source::FatbinMetadata);
        assert_eq!(pairs_of(c.meta.as_ref().unwrap()), [(0, 56)]);
        assert!(c.warning.unwrap().contains("libcuda"));
        let c = choose(
            "k",
            Err(ParamLayoutError::NoKernel),
            Err(ParamLayoutError::TooMany),
        );
        assert_eq!((c.source, c.meta), (Source::None, None));
        assert_eq!(
            c.warning.unwrap(),
            "kernel k: no parameter layout (driver: no cudaKernel_t for it; fat binary: more than 32768 parameters); its launches are recorded WITHOUT arguments and cannot be replayed"
        );
    }
}
