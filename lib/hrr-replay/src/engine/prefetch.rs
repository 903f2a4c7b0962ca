//! Prefetch hints for the events the replay thread is about to read.
//!
//! Events are parsed one batch ahead on another thread, so each one's heap
//! pieces (the launch's argument list, each argument's bytes and pointer
//! offsets) sit in that thread's cache; reading them costs a cache miss per
//! piece, one after the other, since each piece's address is in the one
//! before. Hinted while the device call of an earlier event runs, they are
//! at hand when their turn comes.

use hrr_core::{Event, Op};

/// The event's first-level pieces: a launch's argument list and name.
pub fn event_top(e: &Event) {
    if let Op::Launch { name, args, .. } = &e.op {
        line(args.as_ptr().cast());
        line(name.as_ptr());
    }
}

/// The event's second-level pieces: each launch argument's bytes and
/// pointer offsets (their addresses are in the argument list, which
/// [`event_top`] fetched one event earlier).
pub fn event_bytes(e: &Event) {
    if let Op::Launch { args, .. } = &e.op {
        for a in args.iter().take(8) {
            line(a.hex.0.as_ptr());
            line(a.ptrs.as_ptr().cast());
        }
    }
}

fn line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults (whatever the address)
    // and changes no memory.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
