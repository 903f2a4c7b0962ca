//! `Watchdog`: a replay that stops making progress ends with a fatal line
//! instead of hanging.
//!
//! A runtime call cannot be interrupted from outside: a kernel that never
//! finishes (a spin on a flag another process would have set, a grid of
//! billions of blocks) keeps `hipStreamSynchronize` or the launch itself
//! waiting for ever. The replayer marks each event it starts in a
//! [`Progress`] (two relaxed atomic stores, nothing on the hot path waits);
//! a watchdog thread checks it periodically, and when the same event has
//! been in progress for the whole limit it calls the `on_stall` action it
//! was given — `hrr-play` prints
//! `hrr-play: fatal: event N (api): no progress after S s (watchdog)` and
//! exits the process with status 1. Exiting is the only way out: the stuck
//! call owns the replay thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What the replayer tells the watchdog: which event it is in.
#[derive(Debug, Default)]
pub struct Progress {
    /// Events started so far (changes on every event).
    started: AtomicU64,
    /// `seq` of the event in progress (`u64::MAX`: the final synchronisation).
    seq: AtomicU64,
    /// The replay is over: the watchdog stops.
    done: AtomicBool,
    /// Launches made on the launch thread ([`crate::launch_thread`]): its
    /// progress while the replay thread waits for it.
    launches: AtomicU64,
    /// `seq + 1` of the launch the launch thread is making (0: none): the
    /// event a stall inside that launch is reported at.
    launching: AtomicU64,
}

/// `seq` marking the synchronisation after the last event.
pub const FINAL_SYNC: u64 = u64::MAX;

impl Progress {
    /// A fresh progress record, shared by the replayer and the watchdog.
    pub fn new() -> Arc<Progress> {
        Arc::new(Progress::default())
    }

    /// The replayer starts event `seq`.
    pub fn enter(&self, seq: u64) {
        self.seq.store(seq, Ordering::Relaxed);
        self.started.fetch_add(1, Ordering::Relaxed);
    }

    /// The replay is over (the watchdog thread exits at its next check).
    pub fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
    }

    /// The launch thread starts making the launch of event `seq`.
    pub fn launch_begin(&self, seq: u64) {
        self.launching.store(seq.wrapping_add(1), Ordering::Relaxed);
    }

    /// The launch thread has made its launch.
    pub fn launch_end(&self) {
        self.launching.store(0, Ordering::Relaxed);
        self.launches.fetch_add(1, Ordering::Relaxed);
    }

    /// The `seq` of the event the replay is in now ([`FINAL_SYNC`] after
    /// the last one): a launch the launch thread is making, or else the
    /// replay thread's event.
    pub fn current(&self) -> u64 {
        Progress::stalled_at(self.snapshot())
    }

    fn snapshot(&self) -> [u64; 4] {
        [
            self.started.load(Ordering::Relaxed),
            self.seq.load(Ordering::Relaxed),
            self.launches.load(Ordering::Relaxed),
            self.launching.load(Ordering::Relaxed),
        ]
    }

    /// The event a stall at `snapshot` is in: a launch stuck on the launch
    /// thread, or else the replay thread's event (which may be waiting for
    /// that launch).
    fn stalled_at(snapshot: [u64; 4]) -> u64 {
        match snapshot[3] {
            0 => snapshot[1],
            launching => launching - 1,
        }
    }
}

/// Starts the watchdog thread over `progress`: when no event has started
/// and no launch been made for `limit`, `on_stall(seq, limit)` is called
/// once with the `seq` of the event in progress ([`FINAL_SYNC`] after the
/// last one), or of the launch the launch thread is stuck in. `on_stall` is
/// expected not to return (it exits the process); if it does, the watchdog
/// stops. A zero `limit` starts nothing.
pub fn spawn(
    progress: Arc<Progress>,
    limit: Duration,
    on_stall: impl FnOnce(u64, Duration) + Send + 'static,
) -> std::io::Result<()> {
    if limit.is_zero() {
        return Ok(());
    }
    // Checked a few times per limit, at least once a second: the stall is
    // reported at most a quarter of the limit (or a second) late.
    let tick = (limit / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    std::thread::Builder::new()
        .name("hrr-watchdog".into())
        .spawn(move || {
            let mut last = progress.snapshot();
            let mut since = Instant::now();
            loop {
                std::thread::sleep(tick);
                if progress.done.load(Ordering::Relaxed) {
                    return;
                }
                let now = progress.snapshot();
                if now != last {
                    last = now;
                    since = Instant::now();
                } else if since.elapsed() >= limit {
                    on_stall(Progress::stalled_at(now), limit);
                    return;
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_stalled_event_is_reported_once_with_its_seq() {
        let p = Progress::new();
        p.enter(7);
        let (tx, rx) = mpsc::channel();
        spawn(p.clone(), Duration::from_millis(20), move |seq, limit| {
            tx.send((seq, limit)).unwrap();
        })
        .unwrap();
        // Blocks until the watchdog fires: no timing assumption beyond "eventually".
        assert_eq!(rx.recv().unwrap(), (7, Duration::from_millis(20)));
    }

    #[test]
    fn a_launch_stuck_on_the_launch_thread_is_reported_at_its_own_event() {
        let p = Progress::new();
        p.enter(3);
        p.launch_begin(7);
        p.launch_end();
        p.launch_begin(9);
        p.enter(12); // the replay thread went on, then waited for the launch
        let (tx, rx) = mpsc::channel();
        spawn(p.clone(), Duration::from_millis(20), move |seq, _| {
            tx.send(seq).unwrap();
        })
        .unwrap();
        assert_eq!(rx.recv().unwrap(), 9);
    }

    #[test]
    fn a_finished_replay_stops_the_watchdog() {
        let p = Progress::new();
        p.finish();
        let (tx, rx) = mpsc::channel::<u64>();
        spawn(p, Duration::from_millis(10), move |seq, _| {
            tx.send(seq).unwrap();
        })
        .unwrap();
        // The thread returns without firing: the sender is dropped, recv fails.
        assert!(rx.recv().is_err());
    }
}
