//! Counting calls that are forwarded but not recorded.
//!
//! An entry point classified *unrecorded* (it has device effects the archive
//! format does not capture yet: graphs, 2D/3D copies, pools, …) is forwarded
//! like any other, and each call is counted, per entry point, in a
//! [`Counter`] of its own. The recorder writes the non-zero counts into the
//! manifest when it finishes (`"unrecorded": {"hipMemcpy2D": 2}`), so tools
//! can say what a replay cannot reproduce.
//!
//! Family-agnostic: any family declares `static C: Counter =
//! Counter::new("cuGraphLaunch")` and calls [`Counter::bump`].
//!
//! Cost: one relaxed `fetch_add` per call on the entry point's own counter
//! (no shared cache line between entry points). A counter joins the registry
//! on its first increment, once, under a mutex.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// The calls of one entry point.
pub struct Counter {
    name: &'static str,
    calls: AtomicU64,
}

/// Counters that have counted at least once.
static REGISTRY: Mutex<Vec<&'static Counter>> = Mutex::new(Vec::new());

impl Counter {
    pub const fn new(name: &'static str) -> Counter {
        Counter {
            name,
            calls: AtomicU64::new(0),
        }
    }

    /// Counts one call.
    #[inline]
    pub fn bump(&'static self) {
        if self.calls.fetch_add(1, Ordering::Relaxed) == 0 {
            // Only the call that saw 0 registers: each counter joins once.
            REGISTRY
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(self);
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

/// Every entry point counted so far, by name (counters of the same name, if
/// two families share one, are added).
pub fn snapshot() -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for c in REGISTRY
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        *m.entry(c.name.to_string()).or_insert(0) += c.calls();
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_register_once_and_add_up() {
        static A: Counter = Counter::new("testUnrecordedA");
        static B: Counter = Counter::new("testUnrecordedB");
        static NEVER: Counter = Counter::new("testUnrecordedNever");
        for _ in 0..3 {
            A.bump();
        }
        B.bump();
        let s = snapshot();
        assert_eq!(s.get("testUnrecordedA"), Some(&3));
        assert_eq!(s.get("testUnrecordedB"), Some(&1));
        assert!(
            !s.contains_key(NEVER.name()),
            "a counter that never counted is absent"
        );
        let registered = REGISTRY
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.name() == "testUnrecordedA")
            .count();
        assert_eq!(registered, 1);
    }

    #[test]
    fn concurrent_bumps_are_all_counted() {
        static C: Counter = Counter::new("testUnrecordedThreads");
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..1000 {
                        C.bump();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(snapshot().get("testUnrecordedThreads"), Some(&4000));
    }
}
