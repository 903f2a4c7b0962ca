//! The exported C entry points: HIP functions with the exact signatures of
//! Debian's `hip_runtime_api.h` (HIP 5.2); the exit paths are in `interpose::process_exit`.
//!
//! Every wrapper has the same shape ([`intercept`]): resolve the next
//! definition once (`real!`), forward the application's arguments unchanged,
//! return exactly what the runtime returned, and — only on a first-level call
//! with recording on — read what the call produced and hand plain values to
//! the `Recorder`. Reads of application memory happen only where the call's
//! success proves the memory valid (the runtime just read or wrote it).
//!
//! The symbols are unversioned: rustc's export list for a cdylib is an
//! anonymous version script (visibility only, no version nodes), so a
//! reference to `hipMalloc@hip_4.2` from an application linked against ROCm
//! binds to this definition (`abi/tests/symbol_versions.rs`).
#![allow(non_snake_case, clippy::missing_safety_doc)]

pub mod launch;
pub mod memory;
pub mod module;
pub mod proc_address;
pub mod sync;

use std::ffi::{CStr, c_char, c_void};

use hrr_core::Dir;

use crate::hip::types::HipError;
use crate::interpose::guard::Guard;
use crate::record::kernel_args::{ArgLayout, ArgValues};
use crate::record::launch_memo::{self, LaunchKey, Slot};
use crate::record::recorder::Recorder;

pub use proc_address::EXPORTED;

pub(crate) use crate::interpose::real_fn::real;

/// Whether a call takes the recorder's lifecycle lock (see `Recorder::lifecycle`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Creates or destroys an address or handle.
    Lifecycle,
    Free,
}

/// What a wrapper returns when no later library defines the function: the
/// application called an entry point its runtime lacks.
fn missing(api: &str) -> HipError {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!("hrr-intercept: {api}: not defined by any library after the interposer");
    }
    crate::hip::types::err::NOT_SUPPORTED
}

/// Forwards through `call` and, on a first-level call, records with `record`.
pub fn intercept<F: Copy>(
    api: &'static str,
    real: Option<F>,
    order: Order,
    call: impl FnOnce(F) -> HipError,
    record: impl FnOnce(&'static Recorder, HipError),
) -> HipError {
    let Some(f) = real else {
        return missing(api);
    };
    let Some(g) = Guard::enter(api) else {
        return call(f);
    };
    let held = if order == Order::Lifecycle {
        g.run(|r| r.lifecycle())
    } else {
        None
    };
    let ret = call(f);
    g.run(|r| record(r, ret));
    drop(held);
    ret
}

/// `*p` after a successful call (the runtime wrote it); 0 otherwise.
/// HIP and CUDA both report success as 0, so the CUDA family uses it too.
///
/// # Safety
/// When `ret == 0` and `p` is non-null, `p` must be valid for reads.
pub unsafe fn out<T: Copy + Default>(ret: HipError, p: *const T) -> T {
    if ret != crate::hip::types::err::SUCCESS || p.is_null() {
        return T::default();
    }
    // SAFETY: per the contract, the successful call wrote *p.
    unsafe { p.read_unaligned() }
}

/// An out-parameter that is a pointer, as an address.
///
/// # Safety
/// As [`out`].
pub unsafe fn out_addr<T>(ret: HipError, p: *const *mut T) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { out(ret, p.cast::<usize>()) as u64 }
}

/// `len` bytes at `p` (empty for a null pointer or zero length).
///
/// # Safety
/// `p` must be valid for `len` bytes of reads for the returned lifetime.
pub unsafe fn bytes<'a>(p: *const std::ffi::c_void, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: per the contract.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// Calls `f` with `kp[i]` (`kernelParams`, `<<<>>>`'s `args`) cut to the
/// size of host argument `i` (stack storage for up to 32 arguments: no
/// allocation per launch).
///
/// # Safety
/// The launch succeeded with this layout's kernel, so the runtime read one
/// pointer per host argument and that many bytes behind each.
pub unsafe fn with_params<R>(
    layout: Option<&ArgLayout>,
    kp: *mut *mut c_void,
    f: impl FnOnce(ArgValues<'_, '_>) -> R,
) -> R {
    let Some(l) = layout.filter(|_| !kp.is_null()) else {
        return f(ArgValues::None);
    };
    let n = l.slots.len();
    let mut small: [&[u8]; 32] = [&[]; 32];
    let mut big: Vec<&[u8]> = Vec::new();
    let vals: &mut [&[u8]] = if n <= small.len() {
        &mut small[..n]
    } else {
        big.resize(n, &[]);
        &mut big
    };
    for (i, s) in l.slots.iter().enumerate() {
        // SAFETY: per the contract, kp has an entry per host argument, each
        // pointing at s.size readable bytes.
        vals[i] = unsafe { bytes(*kp.add(i), s.size as usize) };
    }
    f(ArgValues::Params(vals))
}

/// Records a successful launch given one pointer per argument (`params`:
/// `kernelParams`, `<<<>>>`'s `args`) through the thread's `LaunchMemo`:
/// its kept line when every input repeats it, else `in_full` records it.
/// `key` is read before `in_full` looks the kernel up and scans.
///
/// # Safety
/// `params` is null or the argument array of a launch of the kernel that
/// `key` names (by handle and registry generation) which the runtime just
/// accepted: it read `params[i]` and the argument's size behind it, which
/// is the size the memo kept for argument `i` of that kernel.
pub unsafe fn record_memoised(
    r: &Recorder,
    key: LaunchKey,
    params: *mut *mut c_void,
    in_full: impl FnOnce(Option<Slot<'_>>),
) {
    let arg = |i: usize, size: usize| -> &[u8] {
        if params.is_null() {
            return &[];
        }
        // SAFETY: per the contract.
        unsafe { bytes(*params.add(i), size) }
    };
    launch_memo::record(r, key, arg, in_full);
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

/// The direction of a copy. Explicit kinds are taken at their word;
/// `hipMemcpyDefault` (and anything unknown) is resolved per operand: first
/// from the allocations the recorder saw, then by asking the runtime
/// (`hipPointerGetAttributes`). Called before the copy itself, so a failing
/// query's error state is overwritten by the copy's own result.
pub fn resolve_dir(
    r: &Recorder,
    kind: crate::hip::types::HipMemcpyKind,
    dst: u64,
    src: u64,
) -> Dir {
    match kind {
        crate::hip::types::MEMCPY_HOST_TO_HOST => Dir::H2h,
        crate::hip::types::MEMCPY_HOST_TO_DEVICE => Dir::H2d,
        crate::hip::types::MEMCPY_DEVICE_TO_HOST => Dir::D2h,
        crate::hip::types::MEMCPY_DEVICE_TO_DEVICE => Dir::D2d,
        _ => {
            let dev = |p: u64| {
                r.is_device(p)
                    .unwrap_or_else(|| memory::runtime_says_device(p))
            };
            match (dev(src), dev(dst)) {
                (false, false) => Dir::H2h,
                (false, true) => Dir::H2d,
                (true, false) => Dir::D2h,
                (true, true) => Dir::D2d,
            }
        }
    }
}
