//! `EventClock`: the events' `t` (CLOCK_MONOTONIC, in nanoseconds), read
//! for a fraction of what `clock_gettime` costs a recording thread.
//!
//! Where the kernel keeps CLOCK_MONOTONIC from the TSC (its clocksource is
//! `tsc`, which it chooses only for an invariant TSC kept in step across
//! CPUs), the clock extrapolates from its last reading of the kernel's
//! clock with the TSC and its own measured rate, and reads the kernel's
//! clock again every [`RESYNC_NS`]. Why not `clock_gettime` each time: on
//! the H200 host it takes 39 ns warm and about 150 cycles once the caches
//! are cold, against 21 ns for the TSC (`benches/host_costs.c`), and the
//! sink reads it for every event; the rate and the last reading live beside
//! the sink's other fields. In one process, a repeated launch's recording
//! went from 5.9 % to 5.3 % of the launch (docs/PERFORMANCE.md).
//!
//! Accuracy: the rate is measured over the whole capture so far, and each
//! resync starts again from the kernel's clock, so `t` is off by at most
//! the rate's error over one interval: tens of nanoseconds, and at most
//! half a microsecond while NTP slews the kernel's clock at its fastest
//! (500 ppm). The sidecar's and HSA's region records, stamped with the
//! kernel's clock, stay ordered against events. It never goes
//! backwards: a resync that reads earlier than the last `t` handed out
//! keeps that `t`. Elsewhere (another clocksource, another architecture)
//! every `now` is `clock_gettime`.

use crate::sys;

/// How often the kernel's clock is read again.
pub const RESYNC_NS: u64 = 1_000_000;
/// A reading of the kernel's clock is taken as a (TSC, ns) pair only when
/// the TSC moved less than this across it (about a microsecond; the call
/// takes tens of nanoseconds): a thread preempted in between would skew the
/// rate.
const PAIR_TICKS: u64 = 2_000;

/// See the module docs.
pub struct EventClock {
    /// The TSC tracks CLOCK_MONOTONIC here.
    tsc: bool,
    /// The first good reading (TSC, ns): the rate's baseline.
    origin: Option<(u64, u64)>,
    /// The last good reading (TSC, ns).
    base: (u64, u64),
    /// Nanoseconds per tick, 32.32 fixed point; 0 until measured over
    /// [`RESYNC_NS`].
    rate: u64,
    /// Ticks after `base` at which the kernel's clock is read again.
    resync_ticks: u64,
    /// The last `t` handed out.
    last: u64,
}

impl EventClock {
    /// A clock that uses the TSC when the kernel's clocksource is `tsc`.
    pub fn new() -> EventClock {
        EventClock::with_tsc(sys::tsc_is_the_clocksource())
    }

    /// A clock that uses the TSC when `tsc` (and the CPU has one).
    pub fn with_tsc(tsc: bool) -> EventClock {
        EventClock {
            tsc: tsc && sys::tsc().is_some(),
            origin: None,
            base: (0, 0),
            rate: 0,
            resync_ticks: 0,
            last: 0,
        }
    }

    /// Now, never before the last `now`.
    #[inline]
    pub fn now(&mut self) -> u64 {
        let t = match sys::tsc() {
            Some(tsc) if self.rate != 0 && tsc.wrapping_sub(self.base.0) < self.resync_ticks => {
                self.ns_of(tsc)
            }
            _ => self.sync(),
        };
        self.hand_out(t)
    }

    /// TSC reading `raw` in nanoseconds, from the base at the measured
    /// rate, on either side of the base.
    #[inline(always)]
    fn ns_of(&self, raw: u64) -> u64 {
        let ahead = raw.wrapping_sub(self.base.0) as i64;
        let ns = ((u128::from(ahead.unsigned_abs()) * u128::from(self.rate)) >> 32) as u64;
        if ahead >= 0 {
            self.base.1 + ns
        } else {
            self.base.1.saturating_sub(ns)
        }
    }

    /// `t`, or the last `t` handed out if that is later.
    #[inline(always)]
    fn hand_out(&mut self, t: u64) -> u64 {
        let t = t.max(self.last);
        self.last = t;
        t
    }

    /// Whether readings taken elsewhere can be converted ([`EventClock::at`]):
    /// the TSC's rate is known, or readings are the kernel's clock already.
    pub fn ready(&self) -> bool {
        !self.tsc || self.rate != 0
    }

    /// Whether readings taken elsewhere are TSC ticks (else nanoseconds).
    pub fn uses_tsc(&self) -> bool {
        self.tsc
    }

    /// `t` of a reading taken earlier by another thread (a deferred
    /// launch's stamp: TSC ticks when [`EventClock::uses_tsc`], else
    /// nanoseconds), converted from the latest base, either side of it;
    /// never before the last `t` handed out.
    pub fn at(&mut self, raw: u64) -> u64 {
        let t = if !self.tsc {
            raw
        } else if self.rate == 0 {
            self.sync()
        } else {
            let ahead = raw.wrapping_sub(self.base.0) as i64;
            if ahead >= 0 && ahead as u64 >= self.resync_ticks {
                self.sync();
            }
            self.ns_of(raw)
        };
        self.hand_out(t)
    }

    /// Reads the kernel's clock, and the TSC around it to measure the rate.
    #[cold]
    #[inline(never)]
    fn sync(&mut self) -> u64 {
        if !self.tsc {
            return sys::monotonic_ns();
        }
        let (Some(before), ns, Some(after)) = (sys::tsc(), sys::monotonic_ns(), sys::tsc()) else {
            return sys::monotonic_ns();
        };
        if after.wrapping_sub(before) > PAIR_TICKS {
            return ns;
        }
        let tsc = before + (after - before) / 2;
        self.base = (tsc, ns);
        let (t0, ns0) = *self.origin.get_or_insert((tsc, ns));
        if ns.saturating_sub(ns0) >= RESYNC_NS && tsc > t0 {
            self.rate = (((ns - ns0) as u128) << 32).div_ceil(u128::from(tsc - t0)) as u64;
            self.resync_ticks = ((u128::from(RESYNC_NS) << 32) / u128::from(self.rate.max(1)))
                .min(u128::from(u64::MAX)) as u64;
        }
        ns
    }
}

impl Default for EventClock {
    fn default() -> EventClock {
        EventClock::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples `clock` against CLOCK_MONOTONIC read before and after it,
    /// for `ms` milliseconds; returns how many were out of `[before -
    /// slack, after + slack]` and how many went backwards.
    fn track(clock: &mut EventClock, ms: u64, slack: u64) -> (usize, usize, usize) {
        let end = sys::monotonic_ns() + ms * 1_000_000;
        let (mut out, mut back, mut n, mut last) = (0, 0, 0, 0);
        loop {
            let before = sys::monotonic_ns();
            let t = clock.now();
            let after = sys::monotonic_ns();
            n += 1;
            if t + slack < before || t > after + slack {
                out += 1;
            }
            if t < last {
                back += 1;
            }
            last = t;
            if after >= end {
                return (out, back, n);
            }
        }
    }

    #[test]
    fn the_tsc_clock_follows_the_kernel_clock_and_never_goes_back() {
        let mut c = EventClock::new();
        // Several resync intervals: calibrated after the first.
        let (out, back, n) = track(&mut c, 30, 10_000);
        assert_eq!(back, 0, "of {n}");
        assert!(
            out <= n / 100,
            "{out} of {n} readings off by more than 10 µs"
        );
        if c.tsc {
            assert_ne!(c.rate, 0, "calibrated");
        }
    }

    #[test]
    fn a_wrong_rate_is_corrected_at_the_next_resync() {
        let mut c = EventClock::new();
        if !c.tsc {
            return;
        }
        track(&mut c, 5, 10_000);
        // Twice too fast for one interval: `t` runs ahead, then holds (it
        // never goes back) until the kernel's clock catches up.
        c.sync();
        c.rate *= 2;
        c.origin = Some(c.base);
        let (_, back, _) = track(&mut c, 5, u64::MAX / 2);
        assert_eq!(back, 0);
        let (out, back, n) = track(&mut c, 20, 10_000);
        assert_eq!(back, 0);
        assert!(out <= n / 100, "{out} of {n} still off after resyncs");
    }

    #[test]
    fn without_the_tsc_every_reading_is_the_kernel_clock() {
        let mut c = EventClock::with_tsc(false);
        let (out, back, n) = track(&mut c, 20, 0);
        assert_eq!((out, back), (0, 0), "of {n}");
        assert_eq!(c.rate, 0);
    }

    #[test]
    fn readings_taken_earlier_convert_on_either_side_of_the_base() {
        let mut c = EventClock::new();
        if !c.tsc {
            assert!(c.ready() && !c.uses_tsc());
            return;
        }
        track(&mut c, 3, 10_000);
        assert!(c.ready() && c.uses_tsc());
        // Readings 100 µs apart, the clock's base moved in the middle: the
        // first half convert back from it, then some forward, the rest after
        // a resync of their own.
        let mut readings = vec![];
        for i in 0..40 {
            let lo = sys::monotonic_ns();
            let raw = sys::tsc().unwrap();
            readings.push((lo, raw, sys::monotonic_ns()));
            if i == 20 {
                c.sync();
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        for (lo, raw, hi) in readings {
            let t = c.at(raw);
            assert!(
                t + 10_000 >= lo && t <= hi + 10_000,
                "{t} outside [{lo}, {hi}] by more than 10 µs"
            );
        }
    }
}
