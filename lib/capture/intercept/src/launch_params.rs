//! A launch's parameters as both families receive them: one pointer per
//! parameter (`kernelParams`, `<<<>>>`'s `args`), read through the
//! kernel's argument layout, and the launch memo's fast path over them.

use std::ffi::c_void;

use hrr_interpose::call_args;
use hrr_recorder::record::kernel_args::{ArgLayout, ArgValues};
use hrr_recorder::record::launch_memo::{self, LaunchKey, Slot};
use hrr_recorder::record::recorder::Recorder;

/// Calls `f` with `kp[i]` cut to the size of parameter `i` of `layout`
/// (`ArgValues::None` without a layout or `kp`).
///
/// # Safety
/// The launch succeeded with this layout's kernel, so the runtime (or
/// driver) read one pointer per parameter and that many bytes behind each.
#[inline]
pub unsafe fn with_params<R>(
    layout: Option<&ArgLayout>,
    kp: *mut *mut c_void,
    f: impl FnOnce(ArgValues<'_, '_>) -> R,
) -> R {
    // SAFETY: per this function's contract.
    unsafe {
        call_args::with_params(layout.map(ArgLayout::sizes), kp, |v| {
            f(v.map_or(ArgValues::None, ArgValues::Params))
        })
    }
}

/// Records a successful launch given one pointer per parameter (`params`)
/// through the thread's `LaunchMemo`: a kept line when every input repeats
/// its launch's, else `in_full` records it. `key` is read before
/// `in_full` looks the kernel up and scans.
///
/// # Safety
/// `params` is null or the argument array of a launch of the kernel that
/// `key` names (by handle and epoch) which the runtime or driver just
/// accepted: it read `params[i]` and the parameter's size behind it, which
/// is the size the memo kept for parameter `i` of that kernel.
#[inline]
pub unsafe fn record_memoised(
    r: &Recorder,
    key: LaunchKey,
    params: *mut *mut c_void,
    in_full: impl FnOnce(Option<Slot<'_>>),
) {
    // SAFETY: per this function's contract (`param`'s).
    let arg = |i: usize, size: usize| unsafe { call_args::param(params, i, size) };
    launch_memo::record(r, key, arg, in_full);
}
