//! `RepeatRun`: one thread's repeated launch lines, stamped but not yet in
//! the events buffer.
//!
//! A launch that repeats a line the thread's launch memo kept is the
//! commonest event of all (a launch loop, a training step's kernels step
//! after step), and appending it under the sink's lock was half of its
//! recording cost on the H200: the lock, `seq`, the head and the buffer are
//! a handful of cache lines the driver's own work has pushed out by the
//! next launch (docs/PERFORMANCE.md). Here the owning thread only reads the
//! clock and publishes `(stamp, slot)` in a ring of its own, lock-free;
//! the line, `seq` and `t` are written later, under the sink's lock, by
//! whichever thread takes it next (`EventSink`: every append, flush,
//! finish, signal flush and the writer thread's poll first writes every
//! thread's pending lines, so an event recorded after a launch returned is
//! never ahead of it in the file).
//!
//! The lines themselves live in the sink's state, one per memo slot, set
//! by the owner under the lock; `serials` mirrors which kept line each slot
//! holds so the owner can check without the lock. Protocol (one writer per
//! field):
//! - `count`: the owner's, published with `Release` after the entry.
//! - `consumed`: the lock holder's, stored with `Release` after reading the
//!   entries; the owner reuses a ring entry only after seeing it pass.
//! - `serials[i]`: the owner's, written under the lock after the slot's
//!   line, read by the owner alone.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::sys;

/// Launches a thread may have pending (then it writes them itself): 16 KiB
/// of ring, about 4 ms of a tight launch loop on the H200, where the
/// writer thread empties it every millisecond.
pub const RUN_CAP: usize = 1024;

/// One pending launch.
#[derive(Default)]
struct Pending {
    /// Raw clock reading ([`RepeatRun::stamp`]).
    stamp: AtomicU64,
    /// The memo slot whose line it repeats.
    slot: AtomicU64,
}

/// See the module docs.
pub struct RepeatRun {
    ring: Box<[Pending]>,
    count: AtomicU64,
    consumed: AtomicU64,
    serials: Box<[AtomicU64]>,
    /// Stamps are TSC ticks (else CLOCK_MONOTONIC ns), as the sink's clock
    /// converts them.
    tsc: bool,
    /// `EventSink::id` of the sink holding its lines.
    sink: usize,
}

impl RepeatRun {
    /// A run for a memo of `slots` lines, stamping with the TSC or not,
    /// whose lines sink `sink` holds.
    pub fn new(slots: usize, tsc: bool, sink: usize) -> RepeatRun {
        RepeatRun {
            ring: (0..RUN_CAP).map(|_| Pending::default()).collect(),
            count: AtomicU64::new(0),
            consumed: AtomicU64::new(0),
            serials: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            tsc,
            sink,
        }
    }

    /// The clock reading a pending launch carries.
    #[inline(always)]
    fn stamp(&self) -> u64 {
        match self.tsc.then(sys::tsc).flatten() {
            Some(t) => t,
            None => sys::monotonic_ns(),
        }
    }

    /// Owner only: records a launch repeating kept line `serial` of memo
    /// slot `slot`, if the sink holds that line for the slot and the ring
    /// has room; `false`: append it under the lock instead.
    #[inline]
    pub fn defer(&self, slot: usize, serial: u64) -> bool {
        if !self.holds(slot, serial) {
            return false;
        }
        let c = self.count.load(Ordering::Relaxed);
        if c.wrapping_sub(self.consumed.load(Ordering::Acquire)) >= RUN_CAP as u64 {
            return false;
        }
        let p = &self.ring[c as usize % RUN_CAP];
        p.stamp.store(self.stamp(), Ordering::Relaxed);
        p.slot.store(slot as u64, Ordering::Relaxed);
        self.count.store(c + 1, Ordering::Release);
        true
    }

    /// Owner only: whether the sink holds kept line `serial` for `slot`.
    #[inline(always)]
    pub fn holds(&self, slot: usize, serial: u64) -> bool {
        self.serials
            .get(slot)
            .is_some_and(|s| s.load(Ordering::Relaxed) == serial)
    }

    /// Owner only, under the sink's lock, after its line for `slot` was
    /// set: launches repeating `serial` there may be deferred.
    pub fn hold(&self, slot: usize, serial: u64) {
        if let Some(s) = self.serials.get(slot) {
            s.store(serial, Ordering::Relaxed);
        }
    }

    /// Lock holder: the pending launches, from the oldest, as
    /// `(next, end)` ring positions.
    pub fn pending(&self) -> (u64, u64) {
        (
            self.consumed.load(Ordering::Relaxed),
            self.count.load(Ordering::Acquire),
        )
    }

    /// Lock holder: the stamp and slot of pending launch `k`.
    pub fn at(&self, k: u64) -> (u64, usize) {
        let p = &self.ring[k as usize % RUN_CAP];
        (
            p.stamp.load(Ordering::Relaxed),
            p.slot.load(Ordering::Relaxed) as usize,
        )
    }

    /// Lock holder: launches before `k` are written.
    pub fn consume(&self, k: u64) {
        self.consumed.store(k, Ordering::Release);
    }

    /// Whether sink `id` (`EventSink::id`) holds its lines.
    #[inline(always)]
    pub fn belongs_to(&self, id: usize) -> bool {
        self.sink == id
    }
}
