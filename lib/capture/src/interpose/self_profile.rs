//! The recorder's own time per entry point (`HRR_CAPTURE_PROFILE=1` in the
//! environment of `hrr-cap`): every piece of recorder work a wrapper runs
//! (`Guard::run`: reading arguments, hashing and buffering blobs,
//! synchronising before a D2H is read, encoding) is timed and summed per
//! entry point, and printed to stderr when the capture finishes. It answers
//! "where does the capture's overhead on my program go" without a profiler
//! on the machine. Off, it costs one relaxed load per recorded call.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};

use super::sys;

/// 0: not decided yet, 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);
static TOTALS: Mutex<Option<HashMap<&'static str, (u64, u64)>>> = Mutex::new(None);

thread_local! {
    /// Recorder work running on this thread: only the outermost is timed
    /// (a wrapper's work may run more inside it).
    static OPEN: Cell<u32> = const { Cell::new(0) };
}

/// Whether profiling is on (the environment is read once).
#[inline(always)]
pub fn on() -> bool {
    match STATE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => decide(),
    }
}

#[cold]
fn decide() -> bool {
    let on = std::env::var_os("HRR_CAPTURE_PROFILE").is_some_and(|v| v != "0" && !v.is_empty());
    STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
    on
}

/// The current time, for [`add`], when no timed work is open on this
/// thread (`None`: nested, already timed by the outer one).
pub fn start() -> Option<u64> {
    let open = OPEN.with(|o| o.replace(o.get() + 1));
    (open == 0).then(sys::monotonic_ns)
}

/// Adds the time since `t0` to `api`'s total; every [`start`] that
/// returned `Some` is ended with it.
pub fn add(api: &'static str, t0: u64) {
    let ns = sys::monotonic_ns().saturating_sub(t0);
    OPEN.with(|o| o.set(0));
    let mut t = TOTALS.lock().unwrap_or_else(PoisonError::into_inner);
    let e = t.get_or_insert_with(HashMap::new).entry(api).or_default();
    e.0 += 1;
    e.1 += ns;
}

/// The totals as printed: one line per entry point, most time first.
pub fn report() -> Vec<String> {
    let t = TOTALS.lock().unwrap_or_else(PoisonError::into_inner);
    let mut rows: Vec<_> = t
        .iter()
        .flatten()
        .map(|(&a, &(n, ns))| (a, n, ns))
        .collect();
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
    rows.into_iter()
        .map(|(api, n, ns)| {
            format!(
                "{api}: {n} calls, {:.3} ms recording, {:.2} µs per call",
                ns as f64 / 1e6,
                ns as f64 / 1e3 / n.max(1) as f64
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_per_entry_point_and_sorts_by_time() {
        add("b", sys::monotonic_ns().saturating_sub(2_000));
        add("a", sys::monotonic_ns().saturating_sub(50_000));
        add("b", sys::monotonic_ns().saturating_sub(2_000));
        // Nested work is the outer one's: timed once.
        let outer = start().unwrap();
        assert_eq!(start(), None);
        add("c", outer);
        let r = report();
        let a = r.iter().position(|l| l.starts_with("a: 1 calls")).unwrap();
        let b = r.iter().position(|l| l.starts_with("b: 2 calls")).unwrap();
        assert!(r.iter().any(|l| l.starts_with("c: 1 calls")), "{r:?}");
        assert!(a < b, "{r:?}");
    }
}
