//! Host functions the application enqueued on streams (`cuLaunchHostFunc`,
//! `cuStreamAddCallback`, `hipStreamAddCallback`), from their enqueueing
//! until they have run.
//!
//! A host function runs later, on a thread of the runtime's, and may write
//! pinned or managed memory that the next launch reads. The snapshot of host
//! memory before a launch (`host_write`, [`super::host_memory`]) must see
//! those writes, so it first waits until every host function enqueued
//! before it has run. That cannot deadlock on the device's work: what a
//! host function waits for is work enqueued before it (an event wait binds
//! the event's latest record when it is enqueued). A host function that
//! waits for the application's own thread to go on is waited for at most
//! [`WAIT`], with a warning; its writes are then recorded at a later launch
//! or synchronisation.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a launch waits for earlier host functions at most.
pub const WAIT: Duration = Duration::from_secs(10);

/// The host functions enqueued and not yet run, by ticket.
#[derive(Debug, Default)]
pub struct HostFuncs {
    next: AtomicU64,
    /// Tickets pending: the one check of the common path.
    live: AtomicUsize,
    pending: Mutex<BTreeSet<u64>>,
    ran: Condvar,
}

/// The process's host functions.
pub static HOST_FUNCS: HostFuncs = HostFuncs::new();

impl HostFuncs {
    /// None pending.
    pub const fn new() -> HostFuncs {
        HostFuncs {
            next: AtomicU64::new(0),
            live: AtomicUsize::new(0),
            pending: Mutex::new(BTreeSet::new()),
            ran: Condvar::new(),
        }
    }

    /// A host function is about to be enqueued: its ticket, for
    /// [`HostFuncs::ran`].
    pub fn enqueued(&self) -> u64 {
        let t = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(t);
        self.live.fetch_add(1, Ordering::Release);
        t
    }

    /// Host function `ticket` has run (or was refused: it never will).
    pub fn ran(&self, ticket: u64) {
        if self.lock().remove(&ticket) {
            self.live.fetch_sub(1, Ordering::Release);
            self.ran.notify_all();
        }
    }

    /// Waits until every host function enqueued before this call has run,
    /// at most `limit`; whether they all had.
    pub fn wait_for_earlier(&self, limit: Duration) -> bool {
        if self.live.load(Ordering::Acquire) == 0 {
            return true;
        }
        let upto = self.next.load(Ordering::Relaxed);
        let deadline = Instant::now() + limit;
        let mut p = self.lock();
        while p.first().is_some_and(|&t| t < upto) {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            p = self
                .ran
                .wait_timeout(p, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<u64>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_launch_waits_for_the_host_functions_enqueued_before_it() {
        let f = Arc::new(HostFuncs::new());
        assert!(f.wait_for_earlier(Duration::ZERO), "none pending");
        let a = f.enqueued();
        let b = f.enqueued();
        // Not run yet: the wait gives up at its limit.
        assert!(!f.wait_for_earlier(Duration::from_millis(1)));
        let g = Arc::clone(&f);
        let t = std::thread::spawn(move || {
            g.ran(b);
            g.ran(a);
        });
        assert!(f.wait_for_earlier(WAIT));
        t.join().unwrap();
        // One enqueued later does not hold up a wait for the earlier ones.
        let c = f.enqueued();
        f.ran(c);
        f.ran(c);
        assert!(f.wait_for_earlier(Duration::ZERO));
    }
}
