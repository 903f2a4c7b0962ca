//! The recorder's own time per entry point (`HRR_CAPTURE_PROFILE=1` in the
//! environment of `hrr-cap`): every piece of recorder work a wrapper runs
//! (`Guard::run`: reading arguments, hashing and buffering blobs,
//! synchronising before a D2H is read, encoding) is timed and summed per
//! entry point, and printed to stderr when the capture finishes. It answers
//! "where does the capture's overhead on my program go" without a profiler
//! on the machine. Off, it costs one relaxed load and a branch per timed
//! part (a recorded call, and each phase it passes through).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};

use super::sys;

/// 0: not decided yet, 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);
static TOTALS: Mutex<Option<HashMap<&'static str, Spread>>> = Mutex::new(None);

/// Power-of-two buckets of nanoseconds: 2^40 ns is 18 minutes.
const BUCKETS: usize = 41;

/// The times of one entry point's (or phase's) work: a mean hides what a
/// profile is for, the rare call that costs a millisecond among a million
/// that cost nothing, so each time also lands in a power-of-two bucket.
#[derive(Clone)]
struct Spread {
    n: u64,
    ns: u64,
    max: u64,
    buckets: [u64; BUCKETS],
}

impl Spread {
    fn add(&mut self, ns: u64) {
        self.n += 1;
        self.ns += ns;
        self.max = self.max.max(ns);
        let b = (u64::BITS - ns.leading_zeros()) as usize;
        self.buckets[b.min(BUCKETS - 1)] += 1;
    }

    /// The upper bound of the bucket holding the `q`-quantile, in ns.
    fn quantile(&self, q: f64) -> u64 {
        let want = ((self.n as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &k) in self.buckets.iter().enumerate() {
            seen += k;
            if seen >= want {
                return if b == 0 { 0 } else { (1u64 << b) - 1 }.min(self.max);
            }
        }
        self.max
    }
}

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

/// Turns profiling on in this process (tests of the parts it times).
#[cfg(test)]
pub fn turn_on() {
    STATE.store(2, Ordering::Relaxed);
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
    OPEN.with(|o| o.set(0));
    sum(api, sys::monotonic_ns().saturating_sub(t0));
}

fn sum(key: &'static str, ns: u64) {
    let mut t = TOTALS.lock().unwrap_or_else(PoisonError::into_inner);
    t.get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert(Spread {
            n: 0,
            ns: 0,
            max: 0,
            buckets: [0; BUCKETS],
        })
        .add(ns);
}

/// Runs `f`, the recording work of a call to `api`, and when profiling is
/// on adds its time to `api`'s total (outermost work only: nested work is
/// part of the outer one's, see [`start`]).
#[inline(always)]
pub fn timed<T>(api: &'static str, f: impl FnOnce() -> T) -> T {
    let t0 = on().then(start).flatten();
    let v = f();
    if let Some(t0) = t0 {
        add(api, t0);
    }
    v
}

/// Runs `f`, and when profiling is on adds its time to the phase `name`
/// (printed as `phase NAME`): a part of the recorder's work that several
/// entry points share (a stream wait before a D2H is read, the first launch
/// of a kernel), timed at any depth.
#[inline(always)]
pub fn phase<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    if !on() {
        return f();
    }
    let t0 = sys::monotonic_ns();
    let v = f();
    sum(name, sys::monotonic_ns().saturating_sub(t0));
    v
}

/// Counts something that costs the recorder no work of its own, listed by
/// the profile with the times: a nested call forwarded unrecorded (what a
/// runtime calls underneath each recorded call), a move of the launch
/// memo's epoch (what turns repeated launches into full recordings).
#[inline(always)]
pub fn count(name: &'static str) {
    if on() {
        sum(name, 0);
    }
}

/// The totals as printed: one line per entry point or phase, most time
/// first, with the spread of single calls (bucket bounds: within 2×).
pub fn report() -> Vec<String> {
    let t = TOTALS.lock().unwrap_or_else(PoisonError::into_inner);
    let mut rows: Vec<_> = t.iter().flatten().map(|(&a, s)| (a, s.clone())).collect();
    rows.sort_by(|a, b| b.1.ns.cmp(&a.1.ns).then(a.0.cmp(b.0)));
    let us = |ns: u64| ns as f64 / 1e3;
    rows.into_iter()
        .map(|(api, s)| {
            format!(
                "{api}: {} calls, {:.3} ms recording (median < {:.1} µs, 99 % < {:.1} µs, max {:.1} µs), {:.2} µs per call",
                s.n,
                s.ns as f64 / 1e6,
                us(s.quantile(0.5)),
                us(s.quantile(0.99)),
                us(s.max),
                us(s.ns) / s.n.max(1) as f64
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

    #[test]
    fn quantiles_show_the_rare_slow_call() {
        let mut s = Spread {
            n: 0,
            ns: 0,
            max: 0,
            buckets: [0; BUCKETS],
        };
        for _ in 0..990 {
            s.add(100);
        }
        for _ in 0..10 {
            s.add(1_000_000);
        }
        assert_eq!(s.quantile(0.5), 127);
        assert_eq!(s.quantile(0.99), 127);
        assert_eq!(s.quantile(0.995), 1_000_000);
        assert_eq!(s.max, 1_000_000);
        s.add(0);
        assert_eq!(s.quantile(0.0001), 0);
    }
}
