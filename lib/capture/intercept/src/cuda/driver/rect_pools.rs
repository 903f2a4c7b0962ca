//! Recording the driver's 2D/3D copies and memsets (`memcpy_rect`,
//! `memset_rect`) and its memory pools (`pool_*`, `pool_alloc`). A copy
//! whose description names a `CUarray` (not linear memory) is a
//! `memcpy_array` ([`super::arrays`]); one the driver could not have read
//! (null, a memory type it does not define) is counted as unrecorded.

use std::ffi::c_void;

use cuda_api::rect::{ArrayCopy, CUDA_MEMCPY2D, CUDA_MEMCPY3D, Rect, RectError};
use cuda_api::{CU_STREAM_PER_THREAD, CUDA_SUCCESS, CUresult, CUstream};
use hrr_core::Dir;
use hrr_interpose::call_args::gather;

use super::arrays;
use super::libcuda;
use super::record::{on_device, s};
use hrr_interpose::unrecorded::Counter;
use hrr_recorder::record::pools::PoolOp;
use hrr_recorder::record::recorder::Recorder;
use hrr_recorder::record::rect::RectCopy;

/// `CUmemPool_attribute`'s `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`: this and
/// later attributes are u64s, the reuse flags before it ints.
const FIRST_U64_ATTR: i32 = 4;

/// Counts a copy whose description is not one, under its entry point.
fn count_copy(api: &str) {
    static C2: Counter = Counter::new("cuMemcpy2D_v2");
    static C2U: Counter = Counter::new("cuMemcpy2DUnaligned_v2");
    static C2A: Counter = Counter::new("cuMemcpy2DAsync_v2");
    static C3: Counter = Counter::new("cuMemcpy3D_v2");
    static C3A: Counter = Counter::new("cuMemcpy3DAsync_v2");
    static C2T: Counter = Counter::new("cuMemcpy2D_v2_ptds");
    static C2UT: Counter = Counter::new("cuMemcpy2DUnaligned_v2_ptds");
    static C2AT: Counter = Counter::new("cuMemcpy2DAsync_v2_ptsz");
    static C3T: Counter = Counter::new("cuMemcpy3D_v2_ptds");
    static C3AT: Counter = Counter::new("cuMemcpy3DAsync_v2_ptsz");
    for c in [&C2, &C2U, &C2A, &C3, &C3A, &C2T, &C2UT, &C2AT, &C3T, &C3AT] {
        if c.name() == api {
            c.bump();
        }
    }
}

/// What a 2D/3D copy description says.
pub enum Described {
    /// A copy between linear memory.
    Linear(Rect),
    /// A copy with an array on a side.
    Array(ArrayCopy),
    /// Not a copy the driver could make.
    Invalid,
}

impl Described {
    fn of(
        rect: Result<Rect, RectError>,
        array: impl FnOnce() -> Result<ArrayCopy, RectError>,
    ) -> Self {
        match rect {
            Ok(r) => Self::Linear(r),
            Err(RectError::Array) => array().map_or(Self::Invalid, Self::Array),
            Err(RectError::Invalid) => Self::Invalid,
        }
    }
}

/// What a `CUDA_MEMCPY2D` describes.
///
/// # Safety
/// `p` is null or the application's description, valid for reads.
pub unsafe fn describe_2d(p: *const c_void) -> Described {
    // SAFETY: per the contract.
    match unsafe { p.cast::<CUDA_MEMCPY2D>().as_ref() } {
        Some(c) => Described::of(c.rect(), || c.array_copy()),
        None => Described::Invalid,
    }
}

/// What a `CUDA_MEMCPY3D` describes.
///
/// # Safety
/// `p` is null or the application's description, valid for reads.
pub unsafe fn describe_3d(p: *const c_void) -> Described {
    // SAFETY: per the contract.
    match unsafe { p.cast::<CUDA_MEMCPY3D>().as_ref() } {
        Some(c) => Described::of(c.rect(), || c.array_copy()),
        None => Described::Invalid,
    }
}

/// Before a D2H copy's host bytes are read: an asynchronous copy's stream
/// (`_ptsz`: the per-thread default stream for 0) has finished.
pub fn wait_for_d2h(api: &str, stream: Option<CUstream>) {
    if let Some(st) = stream {
        let h = match (st as u64, api.ends_with("_ptsz")) {
            (0, true) => CU_STREAM_PER_THREAD,
            (h, _) => h,
        };
        libcuda::sync_stream(h);
    }
}

/// Records a 2D/3D copy: `memcpy_rect`, or `memcpy_array` when it names an
/// array; one that is no copy is counted as unrecorded instead.
///
/// # Safety
/// The call succeeded (or `ret` says not): every row of the host source was
/// read, every row of the host destination written.
pub unsafe fn copy_rect(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    copy: Described,
    stream: Option<CUstream>,
) {
    let c = match copy {
        Described::Linear(c) => c,
        // SAFETY: per the contract.
        Described::Array(a) => return unsafe { arrays::copy(r, api, ret, &a, stream) },
        Described::Invalid => return count_copy(api),
    };
    let dir = Dir::between(
        on_device(r, c.src_side, c.src),
        on_device(r, c.dst_side, c.dst),
    );
    let rc = RectCopy {
        dir,
        dst: c.dst,
        dpitch: c.dpitch,
        src: c.src,
        spitch: c.spitch,
        extent: c.extent,
        stream: stream.map(s),
    };
    let data = match dir {
        _ if ret != CUDA_SUCCESS => None,
        // SAFETY: per the contract, every host source row was read.
        Dir::H2d => Some(unsafe { gather(c.src, c.spitch, c.extent) }),
        Dir::D2h => {
            wait_for_d2h(api, stream);
            // SAFETY: per the contract, every host destination row was
            // written, and the copy is done.
            Some(unsafe { gather(c.dst, c.dpitch, c.extent) })
        }
        _ => None,
    };
    r.memcpy_rect(api, ret, &rc, data.as_deref());
}

/// `cuMemsetD2D{8,16,32}`: `w` elements of `width` bytes per row, `h` rows.
#[allow(clippy::too_many_arguments)]
pub fn memset_2d(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    (dst, pitch): (u64, usize),
    (value, width): (u32, u8),
    (w, h): (usize, usize),
    stream: Option<CUstream>,
) {
    let pitch = pitch as u64;
    r.memset_rect(
        api,
        ret,
        dst,
        [pitch, pitch.saturating_mul(h as u64)],
        [(w as u64).saturating_mul(u64::from(width)), h as u64, 1],
        (value, width),
        stream.map(s),
    );
}

/// `cuMemPoolSetAttribute`'s value, as the driver just read it.
///
/// # Safety
/// After success, `value` points at the attribute's value.
pub unsafe fn pool_attr(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    pool: u64,
    attr: i32,
    value: *mut c_void,
) {
    let v = if ret != CUDA_SUCCESS || value.is_null() {
        0
    } else if attr >= FIRST_U64_ATTR {
        // SAFETY: per the contract: a cuuint64_t for these attributes.
        unsafe { value.cast::<u64>().read_unaligned() }
    } else {
        // SAFETY: per the contract: an int for the reuse flags.
        unsafe { value.cast::<i32>().read_unaligned() as u64 }
    };
    r.pool(api, ret, PoolOp::Attr(pool, attr as u32, v));
}
