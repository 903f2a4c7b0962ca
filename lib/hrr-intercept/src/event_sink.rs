//! `EventSink`: the ordered, buffered, crash-tolerant writer of
//! `events.ndjson`.
//!
//! - **Order.** `seq` comes from one global counter and is taken, together
//!   with `t`, under the sink lock at the moment the line enters the buffer,
//!   so the file is in `seq` order and `t` never goes backwards along it.
//!   Recording threads encode their event body before taking the lock
//!   (`event_line`); the lock covers only a `memcpy` into the buffer.
//! - **Buffering.** Lines go to the file with write(2) when the buffer holds
//!   64 KiB, when 100 ms have passed since the last write (checked on every
//!   append, and by the recorder's flusher thread when the application is
//!   idle), and at finish. Whole lines only, so a crash can tear nothing.
//! - **Fatal signals.** [`EventSink::flush_from_signal`] writes what is
//!   buffered using only async-signal-safe operations: an atomic try-lock and
//!   write(2). If the lock is held by the very thread the signal interrupted
//!   (it was inside the sink), the buffered lines — at most 64 KiB or 100 ms
//!   of events — are lost: reading a buffer mid-`memcpy` could write a torn
//!   line. If another thread holds it, the handler waits for it (bounded).
//! - **Finish.** [`EventSink::finish`] appends the `eof` event, writes and
//!   fsyncs; later appends are dropped.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use hrr_core::Op;

use crate::event_line;
use crate::sys;

/// Buffered bytes that trigger a write.
pub const FLUSH_BYTES: usize = 64 * 1024;
/// Time since the last write that triggers one.
pub const FLUSH_INTERVAL_NS: u64 = 100_000_000;
/// How long a signal handler waits for another thread to leave the sink.
const SIGNAL_WAIT_SPINS: u32 = 20_000;

/// The events file of one archive.
pub struct EventSink {
    file: File,
    fd: RawFd,
    state: Mutex<SinkState>,
    /// Thread id of the lock holder (0: free). Lets a signal handler tell
    /// "held by the thread I interrupted" from "held by another thread".
    owner: AtomicU64,
    /// Next `seq`; also the number of events appended so far.
    seq: AtomicU64,
}

struct SinkState {
    buf: Vec<u8>,
    last_write_ns: u64,
    finished: bool,
    /// A write failed (disk full, ...): later lines are dropped, not retried.
    failed: bool,
}

/// What [`EventSink::finish`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The `eof` event went out; `events` were recorded before it.
    Done { events: u64 },
    /// Another path finished the sink first.
    AlreadyFinished,
    /// The lock could not be taken (held by the calling thread, e.g. `_exit`
    /// from a signal handler that interrupted the recorder).
    Busy,
}

/// How [`EventSink::finish`] takes the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    Block,
    /// Like the signal path: never wait on ourselves.
    Try,
}

struct Held<'a> {
    guard: MutexGuard<'a, SinkState>,
    owner: &'a AtomicU64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.owner.store(0, Ordering::Release);
    }
}

impl EventSink {
    /// A sink appending to `file` (opened for append; it may be empty).
    pub fn new(file: File) -> EventSink {
        let fd = file.as_raw_fd();
        EventSink {
            file,
            fd,
            state: Mutex::new(SinkState {
                // Twice the threshold, so the buffer never reallocates in
                // steady state (a line can overshoot the threshold).
                buf: Vec::with_capacity(2 * FLUSH_BYTES),
                last_write_ns: sys::monotonic_ns(),
                finished: false,
                failed: false,
            }),
            owner: AtomicU64::new(0),
            seq: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> Held<'_> {
        let guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.owner.store(sys::gettid(), Ordering::Release);
        Held { guard, owner: &self.owner }
    }

    /// Takes the lock without ever waiting on the calling thread itself;
    /// async-signal-safe (atomics and sched_yield only).
    fn try_lock_bounded(&self) -> Option<Held<'_>> {
        let me = sys::gettid_raw();
        for _ in 0..SIGNAL_WAIT_SPINS {
            match self.state.try_lock() {
                Ok(guard) => {
                    self.owner.store(me, Ordering::Release);
                    return Some(Held { guard, owner: &self.owner });
                }
                Err(TryLockError::Poisoned(p)) => {
                    self.owner.store(me, Ordering::Release);
                    return Some(Held { guard: p.into_inner(), owner: &self.owner });
                }
                Err(TryLockError::WouldBlock) => {
                    if self.owner.load(Ordering::Acquire) == me {
                        return None;
                    }
                    sys::yield_now();
                }
            }
        }
        None
    }

    /// Appends one event whose body (from `event_line`) is `body`; returns
    /// its `seq`, or `None` once the sink is finished.
    pub fn append(&self, body: &[u8]) -> Option<u64> {
        let mut h = self.lock();
        let st = &mut *h.guard;
        if st.finished {
            return None;
        }
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let t = sys::monotonic_ns();
        event_line::push_head(&mut st.buf, seq, t);
        st.buf.extend_from_slice(body);
        if st.buf.len() >= FLUSH_BYTES || t.saturating_sub(st.last_write_ns) >= FLUSH_INTERVAL_NS {
            self.write_out(st, t);
        }
        Some(seq)
    }

    fn write_out(&self, st: &mut SinkState, now: u64) {
        if !st.buf.is_empty() && !st.failed && !sys::write_all(self.fd, &st.buf) {
            st.failed = true;
        }
        st.buf.clear();
        st.last_write_ns = now;
    }

    /// Writes what is buffered if the last write is `FLUSH_INTERVAL_NS` old
    /// (the flusher thread's tick).
    pub fn flush_if_due(&self) {
        let mut h = self.lock();
        let now = sys::monotonic_ns();
        if !h.guard.buf.is_empty() && now.saturating_sub(h.guard.last_write_ns) >= FLUSH_INTERVAL_NS {
            self.write_out(&mut h.guard, now);
        }
    }

    /// Writes what is buffered now.
    pub fn flush(&self) {
        let mut h = self.lock();
        self.write_out(&mut h.guard, sys::monotonic_ns());
    }

    /// The fatal-signal path: write what is buffered with async-signal-safe
    /// calls only. Returns whether the buffer could be written (see the
    /// module docs for when it cannot).
    pub fn flush_from_signal(&self) -> bool {
        let Some(mut h) = self.try_lock_bounded() else {
            return false;
        };
        let st = &mut *h.guard;
        if !st.buf.is_empty() && !st.failed {
            // clear() only sets the length: no allocator call in the handler.
            let ok = sys::write_all(self.fd, &st.buf);
            st.buf.clear();
            return ok;
        }
        true
    }

    /// Appends the `eof` event (api `api`, by thread `tid`), writes and
    /// fsyncs; the sink takes no more events.
    pub fn finish(&self, api: &str, tid: u64, mode: LockMode) -> Finish {
        let h = match mode {
            LockMode::Block => Some(self.lock()),
            LockMode::Try => self.try_lock_bounded(),
        };
        let Some(mut h) = h else {
            return Finish::Busy;
        };
        let st = &mut *h.guard;
        if st.finished {
            return Finish::AlreadyFinished;
        }
        st.finished = true;
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut body = Vec::with_capacity(96);
        event_line::encode_op(&mut body, tid, api, 0, &Op::Eof { events: seq });
        let t = sys::monotonic_ns();
        event_line::push_head(&mut st.buf, seq, t);
        st.buf.extend_from_slice(&body);
        self.write_out(st, t);
        sys::fsync(self.fd);
        Finish::Done { events: seq }
    }

    /// Events appended so far (the `eof` event included once finished).
    pub fn appended(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// Whether a write to the events file failed.
    pub fn failed(&self) -> bool {
        self.lock().guard.failed
    }

    /// The file (kept open for the sink's life).
    pub fn file(&self) -> &File {
        &self.file
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;
    use std::sync::Arc;

    fn sink(dir: &std::path::Path) -> (EventSink, std::path::PathBuf) {
        let path = dir.join("events.ndjson");
        let f = OpenOptions::new().create(true).append(true).open(&path).unwrap();
        (EventSink::new(f), path)
    }

    fn body(api: &str) -> Vec<u8> {
        let mut b = Vec::new();
        event_line::encode_op(&mut b, 1, api, 0, &Op::DeviceSync);
        b
    }

    #[test]
    fn lines_stay_buffered_until_threshold_then_finish_writes_eof() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        assert_eq!(s.append(&body("hipDeviceSynchronize")), Some(0));
        assert_eq!(std::fs::read(&path).unwrap().len(), 0, "buffered");
        assert_eq!(s.finish("exit", 1, LockMode::Block), Finish::Done { events: 1 });
        assert_eq!(s.append(&body("late")), None);
        assert_eq!(s.finish("exit", 1, LockMode::Block), Finish::AlreadyFinished);
        let text = std::fs::read_to_string(&path).unwrap();
        let events: Vec<_> = text.lines().map(|l| hrr_core::Event::parse(l.as_bytes()).unwrap()).collect();
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].op, Op::Eof { events: 1 });
        assert!(events[0].t <= events[1].t);
    }

    #[test]
    fn signal_flush_writes_whole_lines() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        for _ in 0..10 {
            s.append(&body("a"));
        }
        assert!(s.flush_from_signal());
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 10);
    }

    #[test]
    fn signal_flush_gives_up_when_this_thread_holds_the_lock() {
        let t = tempfile::tempdir().unwrap();
        let (s, _) = sink(t.path());
        let held = s.lock();
        assert!(!s.flush_from_signal());
        assert_eq!(s.finish("_exit", 1, LockMode::Try), Finish::Busy);
        drop(held);
        assert!(s.flush_from_signal());
    }

    #[test]
    fn many_threads_get_unique_contiguous_seqs_in_file_order() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let s = Arc::new(s);
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        s.append(&body("hipEventRecord")).unwrap();
                    }
                })
            })
            .collect();
        for th in threads {
            th.join().unwrap();
        }
        s.finish("exit", 0, LockMode::Block);
        let text = std::fs::read_to_string(&path).unwrap();
        let seqs: Vec<u64> =
            text.lines().map(|l| hrr_core::Event::parse(l.as_bytes()).unwrap().seq).collect();
        assert_eq!(seqs, (0..16001).collect::<Vec<_>>());
    }
}
