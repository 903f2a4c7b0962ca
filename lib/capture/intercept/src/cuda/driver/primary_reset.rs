//! `cuDevicePrimaryCtxReset` (`_v2` and v1; what `cudaDeviceReset` calls):
//! not recorded, and counted as unrecorded as any driver function without a
//! wrapper is — by the counting stub its lookup hands out (`proc::hand_out`)
//! — but the device hash must learn of it: the reset destroys the primary
//! context with the module, scratch and result page the hash keeps there,
//! and the context retained next has the same handle value
//! (`device_hash::primary_destroyed`).
//!
//! So a lookup of it (`cuGetProcAddress`, `dlsym` on libcuda's handle) hands
//! out a hook in front of what it would hand out: the hook calls that
//! (the stub, which counts the call and jumps to the driver's function
//! untouched; or the function itself when no stub was left), then tells the
//! device hash. The hook counts nothing itself, so the archive's accounting
//! of the call is what it was without it.
//!
//! Not an export: a program linked with `-lcuda` that calls it directly
//! reaches the driver unseen, as before; the CUDA runtime, shared or static,
//! looks it up.

use std::sync::atomic::{AtomicUsize, Ordering};

use cuda_api::types::*;
use cuda_api::{CUDA_SUCCESS, fns};

use crate::cuda::log::diag;

/// Functions hooked at most: the driver's two resets.
const SLOTS: usize = 2;

/// Each hook's target (0: unused).
static TARGETS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

/// The hooks, one per target (a hook has no other way to know its own).
const HOOKS: [fns::cuDevicePrimaryCtxReset_v2; SLOTS] = [hook0, hook1];

/// The v1 export has the `_v2` one's C type (compiles only then).
const _: [fns::cuDevicePrimaryCtxReset; SLOTS] = HOOKS;

/// What a lookup of `name` hands out in place of `target` (the counting
/// stub, or the driver's function): a hook in front of it for a primary
/// context reset, else `target` itself.
pub fn hook(name: &[u8], target: usize) -> usize {
    if !name.starts_with(b"cuDevicePrimaryCtxReset") || target == 0 {
        return target;
    }
    for (slot, t) in TARGETS.iter().enumerate() {
        match t.compare_exchange(0, target, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return HOOKS[slot] as usize,
            Err(had) if had == target => return HOOKS[slot] as usize,
            Err(_) => {}
        }
    }
    diag(|| {
        format!(
            "{}: no hook left: the device hash will not see its resets",
            String::from_utf8_lossy(name)
        )
    });
    target
}

/// Whether `addr` is a hook handed out already (a second routing of the
/// same answer, as `cudaGetDriverEntryPoint` makes, keeps it).
pub fn is_hook(addr: usize) -> bool {
    HOOKS.iter().any(|&h| h as usize == addr)
}

/// The reset through hook `slot`'s target; a successful one forgets the
/// device hash of `dev`'s primary context.
fn reset(slot: usize, dev: CUdevice) -> CUresult {
    let target = TARGETS[slot].load(Ordering::Acquire);
    // SAFETY: set before the hook was handed out, to the driver's reset
    // function of this C type or to the counting stub that jumps to it
    // with the call untouched.
    let f = unsafe { std::mem::transmute::<usize, fns::cuDevicePrimaryCtxReset_v2>(target) };
    // SAFETY: the application's argument, forwarded unchanged.
    let ret = unsafe { f(dev) };
    if ret == CUDA_SUCCESS {
        crate::cuda::device_hash::primary_destroyed(dev);
    }
    ret
}

/// Hook of slot 0.
///
/// # Safety
/// The driver's: `cuDevicePrimaryCtxReset`'s C contract.
unsafe extern "C" fn hook0(dev: CUdevice) -> CUresult {
    reset(0, dev)
}

/// Hook of slot 1.
///
/// # Safety
/// As [`hook0`].
unsafe extern "C" fn hook1(dev: CUdevice) -> CUresult {
    reset(1, dev)
}
