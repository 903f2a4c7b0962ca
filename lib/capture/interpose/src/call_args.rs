//! Reading what a forwarded call read or wrote in the application's memory:
//! its out-parameters ([`out`], [`out_addr`]), buffers and strings it
//! took ([`bytes`], [`c_str`]), the rows of a 2D/3D copy ([`gather`]) and
//! a launch's kernel arguments ([`with_params`], [`param`]).
//!
//! Family-neutral: each reads only where the call's success proves the
//! memory valid (the runtime just read or wrote it), which is what every
//! function's contract asks of its caller. A call's result is a
//! [`Status`]: HIP and CUDA both report success as 0.

use std::ffi::{CStr, c_char, c_int, c_void};

/// A call's result, as far as reading its out-parameters goes: whether it
/// succeeded (and so wrote them).
pub trait Status: Copy {
    /// Whether the call succeeded.
    fn succeeded(self) -> bool;
}

/// `hipError_t`, `cudaError_t`, `CUresult`: success is 0.
impl Status for c_int {
    #[inline(always)]
    fn succeeded(self) -> bool {
        self == 0
    }
}

/// `*p` after a successful call (the runtime wrote it); `T::default()`
/// otherwise.
///
/// # Safety
/// When `ret` says success and `p` is non-null, `p` must be valid for
/// reads.
#[inline]
pub unsafe fn out<T: Copy + Default>(ret: impl Status, p: *const T) -> T {
    if !ret.succeeded() || p.is_null() {
        return T::default();
    }
    // SAFETY: per the contract, the successful call wrote *p.
    unsafe { p.read_unaligned() }
}

/// An out-parameter that is a pointer, as an address.
///
/// # Safety
/// As [`out`].
#[inline]
pub unsafe fn out_addr<T>(ret: impl Status, p: *const *mut T) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { out(ret, p.cast::<usize>()) as u64 }
}

/// `len` bytes at `p` (empty for a null pointer or zero length).
///
/// # Safety
/// `p` must be valid for `len` bytes of reads for the returned lifetime.
#[inline]
pub unsafe fn bytes<'a>(p: *const c_void, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: per the contract.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// A C string argument, lossily as UTF-8.
///
/// # Safety
/// `p` must be null or a valid NUL-terminated string.
pub unsafe fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: per the contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The packed bytes of the rows at `base` (each `extent[0]` bytes, rows
/// and slices `pitch` apart), row after row.
///
/// # Safety
/// Every row must be readable: the runtime just read or wrote it.
pub unsafe fn gather(base: u64, pitch: [u64; 2], extent: [u64; 3]) -> Vec<u8> {
    let [w, h, d] = extent;
    let mut out = Vec::with_capacity((w * h * d) as usize);
    for z in 0..d {
        for y in 0..h {
            let row = base + z * pitch[1] + y * pitch[0];
            // SAFETY: per the contract, the row is readable.
            out.extend_from_slice(unsafe {
                std::slice::from_raw_parts(row as usize as *const u8, w as usize)
            });
        }
    }
    out
}

/// Calls `f` with `kp[i]` (`kernelParams`, `<<<>>>`'s `args`) cut to
/// `sizes[i]` bytes, one per host argument (stack storage for up to 32
/// arguments: no allocation per launch); `None` without sizes or with a
/// null `kp`.
///
/// # Safety
/// The launch succeeded with a kernel of these argument sizes, so the
/// runtime read one pointer per argument and that many bytes behind each.
#[inline]
pub unsafe fn with_params<R>(
    sizes: Option<impl ExactSizeIterator<Item = usize>>,
    kp: *mut *mut c_void,
    f: impl FnOnce(Option<&[&[u8]]>) -> R,
) -> R {
    let Some(sizes) = sizes.filter(|_| !kp.is_null()) else {
        return f(None);
    };
    let n = sizes.len();
    let mut small: [&[u8]; 32] = [&[]; 32];
    let mut big: Vec<&[u8]> = Vec::new();
    let vals: &mut [&[u8]] = if n <= small.len() {
        &mut small[..n]
    } else {
        big.resize(n, &[]);
        &mut big
    };
    for (i, size) in sizes.enumerate().take(n) {
        // SAFETY: per the contract, kp has an entry per argument, each
        // pointing at `size` readable bytes.
        vals[i] = unsafe { bytes(*kp.add(i), size) };
    }
    f(Some(vals))
}

/// Argument `i` of a launch's `params` (`kernelParams`, `<<<>>>`'s
/// `args`), `size` bytes (empty for a null `params`).
///
/// # Safety
/// `params` is null or the argument array of a launch the runtime just
/// accepted, whose argument `i` is `size` bytes: the runtime read
/// `params[i]` and that many bytes behind it.
#[inline(always)]
pub unsafe fn param<'a>(params: *mut *mut c_void, i: usize, size: usize) -> &'a [u8] {
    if params.is_null() {
        return &[];
    }
    // SAFETY: per the contract.
    unsafe { bytes(*params.add(i), size) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_parameters_are_read_only_after_success() {
        let v: u64 = 0x1234;
        // SAFETY: `v` is ours, readable.
        assert_eq!(unsafe { out(0, &v) }, 0x1234);
        // SAFETY: not read: the call failed.
        assert_eq!(unsafe { out(2, &v) }, 0);
        // SAFETY: not read: null.
        assert_eq!(unsafe { out(0, std::ptr::null::<u64>()) }, 0);
    }

    #[test]
    fn params_are_cut_to_their_sizes() {
        let (a, b) = (7u32.to_le_bytes(), 9u64.to_le_bytes());
        let mut kp = [a.as_ptr() as *mut c_void, b.as_ptr() as *mut c_void];
        let sizes = [4usize, 8];
        // SAFETY: `kp` points at two arguments of these sizes, ours.
        let got = unsafe {
            with_params(Some(sizes.iter().copied()), kp.as_mut_ptr(), |v| {
                v.map(|v| v.iter().map(|s| s.to_vec()).collect::<Vec<_>>())
            })
        };
        assert_eq!(got, Some(vec![a.to_vec(), b.to_vec()]));
        // SAFETY: as above.
        assert_eq!(unsafe { param(kp.as_mut_ptr(), 1, 8) }, b);
        // SAFETY: null params read nothing.
        assert!(unsafe { param(std::ptr::null_mut(), 1, 8) }.is_empty());
        // SAFETY: no sizes: nothing is read.
        let none = unsafe {
            with_params(None::<std::vec::IntoIter<usize>>, kp.as_mut_ptr(), |v| {
                v.is_none()
            })
        };
        assert!(none);
    }
}
