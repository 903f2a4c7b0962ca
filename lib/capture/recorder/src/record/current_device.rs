//! The device each recorded call ran on: the calling thread's current
//! device, which every event line carries as `dev` (absent for 0).
//!
//! The family layers set it (HIP: `hipSetDevice`, per thread, 0 until set;
//! CUDA: the device of the context made current); the recorder reads it
//! when it encodes a line. The devices events were recorded on are kept
//! for the manifest's `devices`.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::record::launch_memo;

/// Devices past this one share its bit in [`used`] (never seen in practice:
/// the manifest then lists the ones below it and this one).
const MAX_TRACKED: u32 = 63;

thread_local! {
    /// The thread's current device.
    static CURRENT: Cell<u32> = const { Cell::new(0) };
    /// The devices this thread already marked in [`USED`]: the shared word
    /// is written once per thread and device, not per event.
    static MARKED: Cell<u64> = const { Cell::new(0) };
}

/// A bit per device an event was recorded on.
static USED: AtomicU64 = AtomicU64::new(0);

/// The calling thread's current device.
pub fn current() -> u32 {
    CURRENT.with(Cell::get)
}

/// Makes `dev` the calling thread's current device. A change moves the
/// launch memo's epoch: a kept launch line names the device it ran on.
pub fn set(dev: u32) {
    if CURRENT.with(|c| c.replace(dev)) != dev {
        launch_memo::invalidate("current device");
    }
}

/// Runs `f` with `dev` current on this thread, then restores the device
/// that was (a window's preamble writes each handle's creating event on
/// the device it was made on).
pub fn with<R>(dev: u32, f: impl FnOnce() -> R) -> R {
    let was = CURRENT.with(|c| c.replace(dev));
    let r = f();
    CURRENT.with(|c| c.set(was));
    r
}

/// The device of the event being encoded on this thread, noted as used.
#[inline]
pub fn for_event() -> u32 {
    let dev = current();
    let bit = 1u64 << dev.min(MAX_TRACKED);
    if MARKED.with(Cell::get) & bit == 0 {
        MARKED.with(|m| m.set(m.get() | bit));
        USED.fetch_or(bit, Ordering::Relaxed);
    }
    dev
}

/// The devices events were recorded on, ascending (the manifest's `devices`).
pub fn used() -> Vec<u32> {
    let bits = USED.load(Ordering::Relaxed);
    (0..=MAX_TRACKED).filter(|d| bits & (1 << d) != 0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_carry_the_threads_device_and_mark_it_used() {
        assert_eq!(for_event(), 0);
        set(3);
        assert_eq!(for_event(), 3);
        assert_eq!(with(5, for_event), 5);
        assert_eq!(current(), 3, "with restores the device");
        std::thread::spawn(|| assert_eq!(current(), 0, "per thread"))
            .join()
            .unwrap();
        set(0);
        let used = used();
        assert!([0, 3, 5].iter().all(|d| used.contains(d)), "{used:?}");
    }
}
