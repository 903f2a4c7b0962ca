//! `EventSink`: the ordered, buffered, crash-tolerant writer of
//! `events.ndjson`.
//!
//! - **Order.** `seq` comes from one global counter and is taken, together
//!   with `t`, under the sink lock at the moment the line enters the buffer,
//!   so the file is in `seq` order and `t` never goes backwards along it.
//!   Recording threads encode their event body before taking the lock
//!   (`hrr_core::wire::encode`, `event_line`); the lock covers only a `memcpy` into the buffer, after
//!   which the room for the next line is prefetched (it was last touched by
//!   the writer thread, on another CPU).
//! - **Buffering.** Lines go to the file with write(2) in whole lines when
//!   the buffer holds 512 KiB or when 100 ms have passed since the last write
//!   (checked on every append, and by the writer thread when the application
//!   is idle), and at finish.
//! - **Who writes.** With a writer thread running ([`EventSink::run_writer`]),
//!   a full buffer is handed to it (`pending`) and swapped for an empty one,
//!   so recording threads never wait for the kernel's copy into the page
//!   cache (half the cost of a recorded call, measured). The hand-off has
//!   its own lock, which is all the writer ever blocks on. One buffer is in
//!   flight at a time; if the writer falls a further half buffer behind, the
//!   appending thread writes itself, in order, and keeps the written buffer
//!   as the next spare. Without a writer the appending thread writes.
//!   While events stream the writer polls for the next buffer every
//!   `POLL_INTERVAL` instead of being woken: a futex wake from the
//!   application thread is a cross-CPU wake-up (an IPI, on a VM a VM exit),
//!   measured as the costliest part of an append on the 2-core dev VM and as
//!   about 70 ns per recorded launch on the H200 host. After `POLL_IDLE`
//!   without a buffer it sleeps, and the next hand-off wakes it.
//! - **Deferred launches.** A repeated launch line is not appended: its
//!   thread stamps it into a `RepeatRun` of its own (`repeat_run`). Every
//!   append, flush, finish and signal flush, and the writer thread at each
//!   poll, first writes every thread's pending launches (oldest stamp
//!   first, `seq` and `t` given then), so nothing recorded after a launch
//!   returned precedes it.
//! - **Fatal signals.** [`EventSink::flush_from_signal`] writes what is
//!   buffered (the pending buffer, then the current one) with
//!   async-signal-safe operations only: an atomic try-lock, atomic loads,
//!   sched_yield and write(2). It first waits (bounded) for a write the
//!   writer thread has in flight, which keeps the file in order; the writer
//!   thread blocks asynchronous signals, so a handler never runs on it. If
//!   the lock is held by the very thread the signal interrupted (it was
//!   inside the sink), nothing can be written safely — a buffer
//!   mid-`memcpy` could tear a line — and the buffered lines (at most 512 KiB
//!   or 100 ms of events, plus one pending buffer) are lost. If another
//!   thread holds it, the handler waits for it (bounded).
//! - **Finish.** [`EventSink::finish`] appends the `eof` event, writes
//!   everything and fsyncs; later appends are dropped and the writer exits.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use hrr_core::{BlobId, Op};
use spin::mutex::{SpinMutex, SpinMutexGuard};

use super::blob_batch::{BlobBatch, BlobFailure};
use super::blob_zst::BlobZst;
use super::event_clock::EventClock;
use super::repeat_run::RepeatRun;
use crate::kept::Kept;
use crate::sys;
use hrr_core::wire::{LineHead, encode};

/// Buffered bytes that trigger a hand-off to the writer (or a write). Large
/// enough that a buffer takes several `POLL_INTERVAL`s to fill at the
/// fastest event rate measured (≈ 100 MB/s of NDJSON, 250k launches/s).
pub const FLUSH_BYTES: usize = 512 * 1024;
/// Small blob files buffered (`defer_blob`) that trigger a hand-off, like
/// `FLUSH_BYTES` of lines; past twice this, blobs are written by the
/// caller instead.
pub const FLUSH_BLOB_BYTES: usize = 4 << 20;
/// Time since the last write that triggers one.
pub const FLUSH_INTERVAL_NS: u64 = 100_000_000;
/// Backlog at which an appending thread stops waiting for the writer and
/// writes itself: half a buffer more. Growing further would only move the
/// cost into page faults on fresh buffer memory, and memory stays bounded
/// by two buffers.
const BACKLOG_BYTES: usize = FLUSH_BYTES + FLUSH_BYTES / 2;
/// Tries of the state lock that spin before the next ones yield.
const LOCK_SPINS: u32 = 1_000;
/// How long (in yields) a signal handler or `_exit` waits for another
/// thread to leave the sink, or for an in-flight write to end.
const WAIT_SPINS: u32 = 200_000;
/// Room after the last line that an append asks the CPU to fetch for the
/// next one (a recorded launch line is 300–500 bytes).
const PREFETCH_BYTES: usize = 512;
/// How often a writer that saw a buffer recently looks for the next one.
const POLL_INTERVAL: Duration = Duration::from_millis(1);
/// How long without a buffer before the writer sleeps until woken.
const POLL_IDLE: Duration = Duration::from_millis(50);
/// Room a line's head takes at most (`LineHead`).
const HEAD_ROOM: usize = 64;
/// Blob files that could not be written kept with why (the rest are
/// counted).
pub const FAILURES_KEPT: usize = 4;

/// The first blob files that could not be written (see
/// [`EventSink::blob_failures`]).
struct FailureLog {
    first: [(BlobId, BlobFailure); FAILURES_KEPT],
    len: usize,
}

impl Default for FailureLog {
    fn default() -> FailureLog {
        FailureLog {
            first: [(BlobId([0; 32]), BlobFailure::Io(0)); FAILURES_KEPT],
            len: 0,
        }
    }
}

/// The events file of one archive.
pub struct EventSink {
    file: File,
    fd: RawFd,
    /// The appenders' state. Lock order: `state`, then `handoff`. A spin
    /// lock, waited for with yields ([`EventSink::lock`]): its release is a
    /// plain store where a futex mutex's is an atomic exchange, one of the
    /// few costs left on a repeated launch's path (docs/PERFORMANCE.md).
    state: SpinMutex<SinkState>,
    /// `sys::thread_self` of the `state` holder (0: free). Lets a signal
    /// handler tell "held by the thread I interrupted" from "held by another
    /// thread".
    owner: AtomicU64,
    /// Between appenders and the writer thread. The writer waits only for
    /// this lock, never for `state` (it only tries it): a writer queued on
    /// the appenders' hot lock starved (measured: every buffer ended up
    /// written by the application thread, and each unlock paid a futex
    /// wake).
    handoff: Mutex<Handoff>,
    wake: Condvar,
    /// Next `seq`; also the number of events appended so far. Written only
    /// under `state`; an atomic so that it is read without it.
    seq: AtomicU64,
    /// The writer thread is inside write(2) with a buffer it took; set under
    /// `handoff`, cleared without it (so lock holders can wait for it).
    writing: AtomicBool,
    /// A writer thread is running.
    has_writer: AtomicBool,
    /// A thread has deferred launches (`state.runs` is not empty): the
    /// writer looks at every poll.
    has_runs: AtomicBool,
    /// See [`EventSink::id`].
    id: usize,
    /// errno of the first failed write (0: none); the lines of that write
    /// and every later one are lost (see [`EventSink::write_error`]).
    write_errno: AtomicI32,
    /// Blob files of batches that could not be written (see
    /// [`EventSink::blob_failures`]).
    blob_failed: AtomicUsize,
    /// The first [`FAILURES_KEPT`] of them, with why. A spin lock, only
    /// tried: a signal handler that finds it taken counts only.
    blob_failures: SpinMutex<FailureLog>,
    /// Blob files queued from where their bytes lie (`defer_kept`) and not
    /// yet written or dropped: what [`EventSink::settle_kept`] waits for.
    kept_unwritten: AtomicUsize,
    /// Where blob files written are offered for compression.
    zst: OnceLock<Arc<BlobZst>>,
    /// Set on the signal and `_exit` paths: no offers there (they lock).
    zst_off: AtomicBool,
}

struct SinkState {
    /// Lines not yet handed to anyone.
    buf: Vec<u8>,
    /// Blob files those lines (or later ones) name, written before them.
    blobs: BlobBatch,
    last_write_ns: u64,
    finished: bool,
    /// The last line's `{"seq":N,"t":T`, rewritten for the next.
    head: LineHead,
    /// Where `t` comes from.
    clock: EventClock,
    /// Threads' deferred repeated launches, each with the lines its memo
    /// slots hold (see `repeat_run`): written before anything else is.
    runs: Vec<(Arc<RepeatRun>, Vec<Vec<u8>>)>,
}

struct Handoff {
    /// A full buffer waiting for the writer thread (empty: none).
    pending: Vec<u8>,
    /// Its blob files (each buffer's batch moves with it).
    pending_blobs: BlobBatch,
    /// An empty buffer to swap in for a full one (capacity 0: in flight).
    spare: Vec<u8>,
    spare_blobs: BlobBatch,
    /// A write failed (disk full, ...): later lines are dropped, not retried.
    failed: bool,
    stop: bool,
    /// The writer thread sleeps on `wake` until notified (it is not
    /// polling); only then does a hand-off notify it.
    sleeping: bool,
}

/// What [`EventSink::finish`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The `eof` event went out; `events` were recorded before it.
    Done {
        /// Events before it.
        events: u64,
    },
    /// Another path finished the sink first.
    AlreadyFinished,
    /// The lock could not be taken (held by the calling thread, e.g. `_exit`
    /// from a signal handler that interrupted the recorder).
    Busy,
}

/// How [`EventSink::finish`] takes the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// Wait for the lock.
    Block,
    /// Like the signal path: never wait on ourselves, give up after a while.
    Try,
}

struct Held<'a> {
    guard: SpinMutexGuard<'a, SinkState>,
    owner: &'a AtomicU64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.owner.store(0, Ordering::Release);
    }
}

fn spin_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    for _ in 0..WAIT_SPINS {
        match m.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => sys::yield_now(),
        }
    }
    None
}

impl EventSink {
    /// A sink appending to `file` (opened for append; it may be empty).
    pub fn new(file: File) -> EventSink {
        let fd = file.as_raw_fd();
        EventSink {
            file,
            fd,
            state: SpinMutex::new(SinkState {
                // Twice the threshold: a line can overshoot it, and the
                // buffer should not reallocate in steady state.
                buf: Vec::with_capacity(2 * FLUSH_BYTES),
                blobs: BlobBatch::default(),
                last_write_ns: sys::monotonic_ns(),
                finished: false,
                head: LineHead::new(),
                clock: EventClock::new(),
                runs: Vec::new(),
            }),
            owner: AtomicU64::new(0),
            handoff: Mutex::new(Handoff {
                pending: Vec::new(),
                pending_blobs: BlobBatch::default(),
                spare: Vec::with_capacity(2 * FLUSH_BYTES),
                spare_blobs: BlobBatch::default(),
                failed: false,
                stop: false,
                sleeping: false,
            }),
            wake: Condvar::new(),
            seq: AtomicU64::new(0),
            writing: AtomicBool::new(false),
            has_writer: AtomicBool::new(false),
            has_runs: AtomicBool::new(false),
            id: {
                static SINKS: AtomicUsize = AtomicUsize::new(1);
                SINKS.fetch_add(1, Ordering::Relaxed)
            },
            write_errno: AtomicI32::new(0),
            blob_failed: AtomicUsize::new(0),
            blob_failures: SpinMutex::new(FailureLog::default()),
            kept_unwritten: AtomicUsize::new(0),
            zst: OnceLock::new(),
            zst_off: AtomicBool::new(false),
        }
    }

    /// Offers every blob file this sink writes to `z` once written (see
    /// `blob_zst`); set once.
    pub fn compress_written(&self, z: Arc<BlobZst>) {
        let _ = self.zst.set(z);
    }

    #[inline]
    fn lock(&self) -> Held<'_> {
        let guard = match self.state.try_lock() {
            Some(g) => g,
            // Timed: a holder preempted mid-copy (a VM's vCPU descheduled)
            // would show here, as the main thread's time but no recorder
            // work of its own.
            None => crate::self_profile::phase("phase events: waited for the sink's lock", || {
                self.lock_contended()
            }),
        };
        self.owner.store(sys::thread_self(), Ordering::Release);
        Held {
            guard,
            owner: &self.owner,
        }
    }

    /// Waits for `state`: spins briefly (holders copy a line), then yields
    /// (a holder may be writing a buffer itself, or be preempted).
    #[cold]
    #[inline(never)]
    fn lock_contended(&self) -> SpinMutexGuard<'_, SinkState> {
        let mut tries = 0u32;
        loop {
            if let Some(g) = self.state.try_lock() {
                return g;
            }
            tries = tries.saturating_add(1);
            if tries < LOCK_SPINS {
                std::hint::spin_loop();
            } else {
                sys::yield_now();
            }
        }
    }

    fn lock_handoff(&self) -> MutexGuard<'_, Handoff> {
        self.handoff.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the state lock without ever waiting on the calling thread
    /// itself, and not forever; async-signal-safe (atomics and sched_yield).
    fn try_lock_bounded(&self) -> Option<Held<'_>> {
        let me = sys::thread_self();
        for _ in 0..WAIT_SPINS {
            if let Some(guard) = self.state.try_lock() {
                self.owner.store(me, Ordering::Release);
                return Some(Held {
                    guard,
                    owner: &self.owner,
                });
            }
            if self.owner.load(Ordering::Acquire) == me {
                return None;
            }
            sys::yield_now();
        }
        None
    }

    /// Waits until no write is in flight on the writer thread (bounded).
    /// Called with `handoff` held, so no new write can start meanwhile.
    fn wait_in_flight(&self) -> bool {
        for _ in 0..WAIT_SPINS {
            if !self.writing.load(Ordering::Acquire) {
                return true;
            }
            sys::yield_now();
        }
        !self.writing.load(Ordering::Acquire)
    }

    /// Writes `blobs`' files, then `b`, unless an earlier write failed,
    /// then empties both (clear() only sets lengths: no allocator call, fine
    /// in a signal handler).
    fn write(&self, h: &mut Handoff, b: &mut Vec<u8>, blobs: &mut BlobBatch) {
        if h.failed {
            self.drop_blobs(blobs);
        } else {
            self.write_blobs(blobs);
        }
        if !b.is_empty()
            && !h.failed
            && let Err(e) = sys::write_all(self.fd, b)
        {
            h.failed = true;
            self.note_write_error(e);
        }
        b.clear();
    }

    /// Writes a batch's files, noting those that could not be (signal-safe),
    /// and offers those written to the compressor (not on the signal path).
    fn write_blobs(&self, blobs: &mut BlobBatch) {
        let kept = blobs.kept();
        let zst = match self.zst_off.load(Ordering::Acquire) {
            true => None,
            false => self.zst.get(),
        };
        blobs.write(
            |id, why| self.note_blob_failure(id, why),
            |id| {
                if let Some(z) = zst {
                    z.offer(*id);
                }
            },
        );
        self.kept_unwritten.fetch_sub(kept, Ordering::AcqRel);
    }

    /// Counts a blob file that could not be written and keeps the first
    /// few (atomics and a tried spin lock: signal-safe).
    fn note_blob_failure(&self, id: &BlobId, why: BlobFailure) {
        self.blob_failed.fetch_add(1, Ordering::AcqRel);
        if let Some(mut log) = self.blob_failures.try_lock()
            && log.len < FAILURES_KEPT
        {
            let at = log.len;
            log.first[at] = (*id, why);
            log.len += 1;
        }
    }

    /// Drops a batch's files unwritten (after a failed write).
    fn drop_blobs(&self, blobs: &mut BlobBatch) {
        let kept = blobs.kept();
        blobs.clear();
        self.kept_unwritten.fetch_sub(kept, Ordering::AcqRel);
    }

    /// Blob files queued here that could not be written: how many, and the
    /// first [`FAILURES_KEPT`] of them with why. Events name them, and no
    /// file holds what they name.
    pub fn blob_failures(&self) -> (usize, Vec<(BlobId, BlobFailure)>) {
        let n = self.blob_failed.load(Ordering::Acquire);
        let log = self.blob_failures.lock();
        (n, log.first[..log.len].to_vec())
    }

    /// Queues a small blob file (`data`, blob `id`, written at `tmp`,
    /// renamed to `path`) with the lines being buffered, to be written
    /// before them; `false` when the caller must write it itself (the sink
    /// is finished, or holds `2 × FLUSH_BLOB_BYTES` of blobs already).
    pub fn defer_blob(&self, tmp: &[u8], path: &[u8], data: &[u8], id: BlobId) -> bool {
        let mut held = self.lock();
        let st = &mut *held.guard;
        if st.finished || st.blobs.held() >= 2 * FLUSH_BLOB_BYTES {
            return false;
        }
        st.blobs.push(tmp, path, data, id);
        true
    }

    /// Queues a blob file written from `data` where it lies (see
    /// [`Kept`]; `id` what the bytes hashed to), with the lines being
    /// buffered, and hands the buffer to the writer thread at once where
    /// it can; `false` when the sink is finished (the caller writes it).
    /// Nothing is copied here and there is no budget: the memory stays
    /// until [`EventSink::settle_kept`], and whoever writes the file checks
    /// that it is still blob `id` ([`BlobBatch::write`]).
    pub fn defer_kept(&self, tmp: &[u8], path: &[u8], data: Kept, id: BlobId) -> bool {
        let mut held = self.lock();
        let st = &mut *held.guard;
        if st.finished {
            return false;
        }
        st.blobs.push_kept(tmp, path, data, id);
        self.kept_unwritten.fetch_add(1, Ordering::AcqRel);
        if self.has_writer.load(Ordering::Acquire) {
            let _ = self.hand_off(st, self.lock_handoff(), sys::monotonic_ns());
        }
        true
    }

    /// Waits until every file queued by [`EventSink::defer_kept`] is
    /// written, writing what is buffered from the calling thread (bounded:
    /// three flushes, each waiting a bounded time for a write in flight);
    /// `false` when some still are not (a stalled disk, or other threads
    /// queueing more meanwhile).
    pub fn settle_kept(&self) -> bool {
        for _ in 0..3 {
            if self.kept_unwritten.load(Ordering::Acquire) == 0 {
                return true;
            }
            self.flush();
        }
        self.kept_unwritten.load(Ordering::Acquire) == 0
    }

    /// Keeps the first write error (an atomic store: signal-safe).
    fn note_write_error(&self, errno: i32) {
        let _ = self
            .write_errno
            .compare_exchange(0, errno, Ordering::AcqRel, Ordering::Acquire);
    }

    /// errno of the first failed write to the events file (disk full, …).
    pub fn write_error(&self) -> Option<i32> {
        match self.write_errno.load(Ordering::Acquire) {
            0 => None,
            e => Some(e),
        }
    }

    /// Writes everything buffered, in order, from the calling thread.
    fn drain(&self, st: &mut SinkState, h: &mut Handoff, now: u64) -> bool {
        if !self.wait_in_flight() {
            return false;
        }
        let mut pending = std::mem::take(&mut h.pending);
        let mut pending_blobs = std::mem::take(&mut h.pending_blobs);
        self.write(h, &mut pending, &mut pending_blobs);
        // A pending buffer written here is the spare the writer would have
        // returned; without this, one drain stops all later hand-offs.
        if h.spare.capacity() == 0 {
            h.spare = pending;
            h.spare_blobs = pending_blobs;
        } else {
            h.pending = pending;
            h.pending_blobs = pending_blobs;
        }
        self.write(h, &mut st.buf, &mut st.blobs);
        st.last_write_ns = now;
        true
    }

    /// Appends one event whose body (from `hrr_core::wire::encode`) is `body`; returns
    /// its `seq`, or `None` once the sink is finished.
    #[inline]
    pub fn append(&self, body: &[u8]) -> Option<u64> {
        crate::self_profile::phase("phase events: append", || self.append_now(body))
    }

    // Inlined into its callers, as the memo's repeat path and the guard:
    // one stack frame where there were several, each of its lines a miss
    // after the runtime's own code ran (docs/PERFORMANCE.md).
    #[inline]
    fn append_now(&self, body: &[u8]) -> Option<u64> {
        let mut held = self.lock();
        self.append_held(&mut held.guard, body)
    }

    /// Appends a repeated launch line, the one memo slot `slot` (of `slots`)
    /// keeps under `serial`, and lets the thread's later launches repeating
    /// it be deferred: `run` is the thread's [`RepeatRun`], created here
    /// once the clock can convert its stamps.
    pub fn append_repeat(
        &self,
        body: &[u8],
        slot: usize,
        serial: u64,
        slots: usize,
        run: &mut Option<Arc<RepeatRun>>,
    ) -> Option<u64> {
        crate::self_profile::phase("phase events: append", || {
            let mut held = self.lock();
            let st = &mut *held.guard;
            let seq = self.append_held(st, body)?;
            if st.clock.ready() && slot < slots {
                // Every run was written out by `append_held`: no pending
                // launch of this thread reads the slot's old line.
                if run.as_ref().is_some_and(|r| !r.belongs_to(self.id())) {
                    // The thread's run of another sink (tests make several).
                    *run = None;
                }
                let (tsc, id) = (st.clock.uses_tsc(), self.id());
                let run = run.get_or_insert_with(|| Arc::new(RepeatRun::new(slots, tsc, id)));
                // Already held: the ring was full, nothing to copy.
                if !run.holds(slot, serial) {
                    let at = match st.runs.iter().position(|(r, _)| Arc::ptr_eq(r, run)) {
                        Some(at) => at,
                        None => {
                            st.runs.push((run.clone(), vec![Vec::new(); slots]));
                            self.has_runs.store(true, Ordering::Relaxed);
                            st.runs.len() - 1
                        }
                    };
                    let line = &mut st.runs[at].1[slot];
                    line.clear();
                    line.extend_from_slice(body);
                    run.hold(slot, serial);
                }
            }
            Some(seq)
        })
    }

    /// Names this sink among others in a process (a [`RepeatRun`]'s).
    #[inline(always)]
    pub fn id(&self) -> usize {
        self.id
    }

    /// Writes every thread's deferred launches into the buffer, oldest
    /// stamp first across threads, while the buffer stays within `room`
    /// bytes (`false`: it is full, write it and call again). Bounded (the
    /// signal path) it neither grows the buffer nor frees anything;
    /// unbounded it then forgets the runs of threads that are gone.
    fn write_runs(&self, st: &mut SinkState, room: usize) -> bool {
        let SinkState {
            buf,
            head,
            clock,
            runs,
            ..
        } = st;
        loop {
            // The run with the oldest pending launch, and the next run's
            // oldest: that run's launches up to it go in one stretch.
            let mut first: Option<(usize, u64)> = None;
            let mut bound = u64::MAX;
            for (i, (r, _)) in runs.iter().enumerate() {
                let (k, end) = r.pending();
                if k == end {
                    continue;
                }
                let stamp = r.at(k).0;
                match first {
                    Some((_, f)) if f <= stamp => bound = bound.min(stamp),
                    _ => {
                        if let Some((_, f)) = first {
                            bound = bound.min(f);
                        }
                        first = Some((i, stamp));
                    }
                }
            }
            let Some((i, _)) = first else {
                break;
            };
            let (r, lines) = &runs[i];
            let (mut k, end) = r.pending();
            while k < end {
                let (stamp, slot) = r.at(k);
                if stamp > bound {
                    break;
                }
                let line = lines.get(slot).map_or(&[][..], Vec::as_slice);
                if !buf.is_empty() && buf.len() + HEAD_ROOM + line.len() > room {
                    r.consume(k);
                    return false;
                }
                // Set before any launch was deferred on it (`append_repeat`).
                debug_assert!(!line.is_empty());
                let seq = self.seq.load(Ordering::Relaxed);
                self.seq.store(seq + 1, Ordering::Relaxed);
                head.push(buf, seq, clock.at(stamp));
                buf.extend_from_slice(line);
                k += 1;
            }
            r.consume(k);
        }
        if room == usize::MAX {
            runs.retain(|(r, _)| {
                let (k, end) = r.pending();
                Arc::strong_count(r) > 1 || k != end
            });
        }
        true
    }

    /// Appends under the lock (see [`EventSink::append`]).
    #[inline]
    fn append_held(&self, st: &mut SinkState, body: &[u8]) -> Option<u64> {
        if st.finished {
            return None;
        }
        if !st.runs.is_empty() {
            self.write_runs(st, usize::MAX);
        }
        // Only `state`'s holder changes `seq`: no read-modify-write needed.
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq + 1, Ordering::Relaxed);
        let t = st.clock.now();
        st.head.push(&mut st.buf, seq, t);
        st.buf.extend_from_slice(body);
        let room = st.buf.spare_capacity_mut();
        sys::prefetch(&room[..room.len().min(PREFETCH_BYTES)]);
        if st.buf.len() >= FLUSH_BYTES
            || st.blobs.held() >= FLUSH_BLOB_BYTES
            || t.saturating_sub(st.last_write_ns) >= FLUSH_INTERVAL_NS
        {
            let writer = self.has_writer.load(Ordering::Acquire);
            let mut h = self.lock_handoff();
            if writer {
                match self.hand_off(st, h, t) {
                    Ok(()) => return Some(seq),
                    Err(back) => h = back,
                }
            }
            if !writer
                || st.buf.len() >= BACKLOG_BYTES
                || st.blobs.held() >= FLUSH_BLOB_BYTES + FLUSH_BLOB_BYTES / 2
            {
                self.drain(st, &mut h, t);
            }
        }
        Some(seq)
    }

    /// Hands what is buffered to the writer thread (`now`: the time of the
    /// hand-off) and wakes it if asleep, unless a buffer waits for it
    /// already: then `h` comes back.
    fn hand_off<'h>(
        &self,
        st: &mut SinkState,
        mut h: MutexGuard<'h, Handoff>,
        now: u64,
    ) -> Result<(), MutexGuard<'h, Handoff>> {
        // Hand off only into the spare buffer: two buffers circulate and
        // nothing is allocated in steady state.
        if !(h.pending.is_empty() && h.pending_blobs.is_empty()) || h.spare.capacity() == 0 {
            return Err(h);
        }
        let spare = std::mem::take(&mut h.spare);
        h.pending = std::mem::replace(&mut st.buf, spare);
        let spare_blobs = std::mem::take(&mut h.spare_blobs);
        h.pending_blobs = std::mem::replace(&mut st.blobs, spare_blobs);
        st.last_write_ns = now;
        // Set and cleared under `handoff` around the wait: a writer not
        // asleep checks `pending` before it next waits.
        let asleep = h.sleeping;
        drop(h);
        if asleep {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// The writer thread's body: writes handed-off buffers, and what is
    /// buffered once it is `FLUSH_INTERVAL_NS` old (when the application is
    /// idle), until the sink finishes. Blocks asynchronous signals on its
    /// thread first (see module docs).
    pub fn run_writer(&self) {
        sys::block_async_signals();
        let mut h = self.lock_handoff();
        self.has_writer.store(true, Ordering::Release);
        // When the writer last wrote, and last checked for an idle flush.
        let mut last_write = Instant::now();
        let mut last_idle_check = Instant::now();
        loop {
            if h.stop {
                self.has_writer.store(false, Ordering::Release);
                return;
            }
            // Deferred launches written out at every poll, so that the
            // launching threads seldom write their own; and the idle flush,
            // at most every POLL_IDLE. Polling otherwise takes no lock the
            // appenders use. try_lock: lock order is state → handoff, and a
            // busy state lock means an appender is writing them itself.
            let idle_due = last_idle_check.elapsed() >= POLL_IDLE;
            if h.pending.is_empty()
                && h.spare.capacity() > 0
                && (idle_due || self.has_runs.load(Ordering::Relaxed))
            {
                if idle_due {
                    last_idle_check = Instant::now();
                }
                if let Some(mut st) = self.state.try_lock() {
                    let before = self.seq.load(Ordering::Relaxed);
                    if !st.runs.is_empty() {
                        // Timed: how long the appenders' lock is held here.
                        crate::self_profile::phase(
                            "phase writer: deferred launches written",
                            || self.write_runs(&mut st, usize::MAX),
                        );
                    }
                    if self.seq.load(Ordering::Relaxed) != before {
                        // Events stream: keep polling.
                        last_write = Instant::now();
                    }
                    let now = sys::monotonic_ns();
                    if st.buf.len() >= FLUSH_BYTES
                        || !(st.buf.is_empty() && st.blobs.is_empty())
                            && now.saturating_sub(st.last_write_ns) >= FLUSH_INTERVAL_NS
                    {
                        let spare = std::mem::take(&mut h.spare);
                        h.pending = std::mem::replace(&mut st.buf, spare);
                        let spare_blobs = std::mem::take(&mut h.spare_blobs);
                        h.pending_blobs = std::mem::replace(&mut st.blobs, spare_blobs);
                        st.last_write_ns = now;
                    }
                }
            }
            if (h.pending.is_empty() && h.pending_blobs.is_empty()) || h.failed {
                h.pending.clear();
                self.drop_blobs(&mut h.pending_blobs);
                let polling = !h.failed && last_write.elapsed() < POLL_IDLE;
                h.sleeping = !polling;
                let wait = if polling { POLL_INTERVAL } else { POLL_IDLE };
                h = self
                    .wake
                    .wait_timeout(h, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                h.sleeping = false;
                continue;
            }
            last_write = Instant::now();
            let mut full = std::mem::take(&mut h.pending);
            let mut full_blobs = std::mem::take(&mut h.pending_blobs);
            self.writing.store(true, Ordering::Release);
            drop(h);
            self.write_blobs(&mut full_blobs);
            let r = if full.is_empty() {
                Ok(())
            } else {
                sys::write_all(self.fd, &full)
            };
            self.writing.store(false, Ordering::Release);
            full.clear();
            h = self.lock_handoff();
            if let Err(e) = r {
                h.failed = true;
                self.note_write_error(e);
            }
            if h.spare.capacity() == 0 {
                h.spare = full;
                h.spare_blobs = full_blobs;
            }
        }
    }

    /// Writes what is buffered now (tests, and callers that must see the file).
    pub fn flush(&self) {
        let mut held = self.lock();
        self.write_runs(&mut held.guard, usize::MAX);
        let mut h = self.lock_handoff();
        self.drain(&mut held.guard, &mut h, sys::monotonic_ns());
    }

    /// The fatal-signal path: write what is buffered with async-signal-safe
    /// calls only. Returns whether it could (see the module docs for when
    /// it cannot).
    pub fn flush_from_signal(&self) -> bool {
        self.zst_off.store(true, Ordering::Release);
        let Some(mut held) = self.try_lock_bounded() else {
            return false;
        };
        // Only the writer thread (which never runs a handler) or a holder of
        // `state` (excluded above) takes `handoff`: the wait is short.
        let Some(mut h) = spin_lock(&self.handoff) else {
            return false;
        };
        if !self.wait_in_flight() {
            return false;
        }
        let mut pending = std::mem::take(&mut h.pending);
        let mut pending_blobs = std::mem::take(&mut h.pending_blobs);
        self.write(&mut h, &mut pending, &mut pending_blobs);
        h.pending = pending;
        h.pending_blobs = pending_blobs;
        let st = &mut *held.guard;
        // Deferred launches too, in buffers' worth: the buffer must not
        // grow here (no allocation in a signal handler).
        loop {
            let room = st.buf.capacity();
            let done = self.write_runs(st, room);
            self.write(&mut h, &mut st.buf, &mut st.blobs);
            if done {
                return true;
            }
        }
    }

    /// Appends the `eof` event (api `api`, by thread `tid`), writes and
    /// fsyncs; the sink takes no more events and the writer stops.
    pub fn finish(&self, api: &str, tid: u64, mode: LockMode) -> Finish {
        if mode == LockMode::Try {
            // Perhaps in a signal handler: no compressor's lock.
            self.zst_off.store(true, Ordering::Release);
        }
        let held = match mode {
            LockMode::Block => Some(self.lock()),
            LockMode::Try => self.try_lock_bounded(),
        };
        let Some(mut held) = held else {
            return Finish::Busy;
        };
        let st = &mut *held.guard;
        if st.finished {
            return Finish::AlreadyFinished;
        }
        let h = match mode {
            LockMode::Block => Some(self.lock_handoff()),
            LockMode::Try => spin_lock(&self.handoff),
        };
        let Some(mut h) = h else {
            return Finish::Busy;
        };
        if !self.wait_in_flight() {
            return Finish::Busy;
        }
        // Bounded by the buffer in `Try` mode (`_exit` from a handler).
        loop {
            let room = match mode {
                LockMode::Block => usize::MAX,
                LockMode::Try => st.buf.capacity(),
            };
            if self.write_runs(st, room) {
                break;
            }
            let now = st.last_write_ns;
            if !self.drain(st, &mut h, now) {
                return Finish::Busy;
            }
        }
        st.finished = true;
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut body = Vec::with_capacity(96);
        encode::encode_op(&mut body, tid, 0, api, 0, &Op::Eof { events: seq });
        let t = st.clock.now();
        st.head.push(&mut st.buf, seq, t);
        st.buf.extend_from_slice(&body);
        self.drain(st, &mut h, t);
        sys::fsync(self.fd);
        h.stop = true;
        drop(h);
        self.wake.notify_all();
        Finish::Done { events: seq }
    }

    /// Events appended so far (the `eof` event included once finished).
    pub fn appended(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// Whether a write to the events file failed.
    pub fn failed(&self) -> bool {
        self.lock_handoff().failed
    }

    /// The file (kept open for the sink's life).
    pub fn file(&self) -> &File {
        &self.file
    }
}

#[cfg(test)]
mod tests {
    use super::super::repeat_run::RUN_CAP;
    use super::*;
    use std::fs::OpenOptions;
    use std::sync::Arc;

    fn sink(dir: &std::path::Path) -> (EventSink, std::path::PathBuf) {
        let path = dir.join("events.ndjson");
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap();
        (EventSink::new(f), path)
    }

    fn body(api: &str) -> Vec<u8> {
        let mut b = Vec::new();
        encode::encode_op(&mut b, 1, 0, api, 0, &Op::DeviceSync);
        b
    }

    fn seqs(path: &std::path::Path) -> Vec<u64> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .map(|l| hrr_core::Event::parse(l.as_bytes()).unwrap().seq)
            .collect()
    }

    #[test]
    fn lines_stay_buffered_until_threshold_then_finish_writes_eof() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        assert_eq!(s.append(&body("hipDeviceSynchronize")), Some(0));
        assert_eq!(std::fs::read(&path).unwrap().len(), 0, "buffered");
        assert_eq!(
            s.finish("exit", 1, LockMode::Block),
            Finish::Done { events: 1 }
        );
        assert_eq!(s.append(&body("late")), None);
        assert_eq!(
            s.finish("exit", 1, LockMode::Block),
            Finish::AlreadyFinished
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let events: Vec<_> = text
            .lines()
            .map(|l| hrr_core::Event::parse(l.as_bytes()).unwrap())
            .collect();
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
        assert_eq!(seqs(&path), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn every_write_path_writes_its_buffers_blob_files_first() {
        let t = tempfile::tempdir().unwrap();
        let name = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let (s, path) = sink(t.path());
        let id = |b: &[u8]| BlobId::of(b);
        assert!(s.defer_blob(&name(".tmp-a"), &name("a"), b"A", id(b"A")));
        s.append(&body("a"));
        assert!(!t.path().join("a").exists(), "buffered with its line");
        assert!(s.flush_from_signal());
        assert_eq!(std::fs::read(t.path().join("a")).unwrap(), b"A");
        assert!(s.defer_blob(&name(".tmp-b"), &name("b"), b"B", id(b"B")));
        s.append(&body("b"));
        s.finish("exit", 1, LockMode::Block);
        assert_eq!(std::fs::read(t.path().join("b")).unwrap(), b"B");
        assert!(
            !s.defer_blob(&name(".tmp-c"), &name("c"), b"C", id(b"C")),
            "finished"
        );
        assert_eq!(seqs(&path), [0, 1, 2]);
        assert_eq!(s.blob_failures(), (0, vec![]));
    }

    #[test]
    fn a_kept_file_is_written_by_settling_at_the_latest() {
        static CODE: [u8; 8192] = [0x3c; 8192];
        let t = tempfile::tempdir().unwrap();
        let name = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let (s, path) = sink(t.path());
        assert!(s.settle_kept(), "nothing queued");
        let (kept, id) = (Kept::of_static(&CODE), BlobId::of(&CODE));
        assert!(s.defer_kept(&name(".tmp-k"), &name("k"), kept, id));
        s.append(&body("launch"));
        assert!(!t.path().join("k").exists(), "no writer: buffered");
        assert!(s.settle_kept());
        assert_eq!(std::fs::read(t.path().join("k")).unwrap(), CODE);
        assert_eq!(seqs(&path), [0], "its line went with it");
        s.finish("exit", 1, LockMode::Block);
        assert!(
            !s.defer_kept(&name(".tmp-l"), &name("l"), kept, id),
            "finished: the caller writes"
        );
        assert!(s.settle_kept());
    }

    #[test]
    // A `Kept` over memory the test owns (and changes or unmaps).
    #[allow(unsafe_code)]
    fn a_kept_file_that_changed_is_settled_and_reported_not_written() {
        let t = tempfile::tempdir().unwrap();
        let name = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let (s, _) = sink(t.path());
        let mut code = vec![0x11u8; 10_000];
        let id = BlobId::of(&code);
        // SAFETY: `code` outlives the sink's writes; it changes, which is
        // the test.
        let kept = unsafe { Kept::new(code.as_ptr(), code.len()) };
        assert!(s.defer_kept(&name(".tmp-k"), &name("k"), kept, id));
        s.append(&body("launch"));
        code[9_999] = 0x22;
        assert!(s.settle_kept(), "tried, so settled");
        assert!(!t.path().join("k").exists());
        let (n, first) = s.blob_failures();
        assert_eq!(n, 1);
        assert_eq!(
            first,
            [(
                id,
                BlobFailure::Changed {
                    actual: BlobId::of(&code)
                }
            )]
        );
        s.finish("exit", 1, LockMode::Block);
    }

    #[test]
    fn kept_files_queued_beside_a_writer_are_all_settled() {
        static CODE: [u8; 4096] = [0x7e; 4096];
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let s = Arc::new(s);
        let w = writer(&s);
        let names: Vec<String> = (0..64).map(|i| format!("k{i}")).collect();
        for n in &names {
            let tmp = t.path().join(format!(".tmp-{n}")).into_os_string();
            let at = t.path().join(n).into_os_string();
            let (kept, id) = (Kept::of_static(&CODE), BlobId::of(&CODE));
            let (tmp, at) = (tmp.as_encoded_bytes(), at.as_encoded_bytes());
            assert!(s.defer_kept(tmp, at, kept, id));
            s.append(&body(n));
        }
        assert!(s.settle_kept());
        for n in &names {
            assert_eq!(std::fs::read(t.path().join(n)).unwrap(), CODE, "{n}");
        }
        s.finish("exit", 1, LockMode::Block);
        w.join().unwrap();
        assert_eq!(seqs(&path).len(), names.len() + 1);
    }

    #[test]
    fn a_wait_for_the_lock_is_in_the_profile() {
        crate::self_profile::turn_on();
        let t = tempfile::tempdir().unwrap();
        let (s, _) = sink(t.path());
        let s = Arc::new(s);
        let held = s.lock();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let s = s.clone();
            std::thread::spawn(move || {
                tx.send(()).unwrap();
                s.append(&body("waits"));
            })
        };
        rx.recv().unwrap();
        // Long enough for the waiter to reach the lock (its send was the
        // step before); were it late, it would not wait and the test fail.
        std::thread::sleep(Duration::from_millis(50));
        drop(held);
        waiter.join().unwrap();
        let r = crate::self_profile::report();
        assert!(
            r.iter()
                .any(|l| l.starts_with("phase events: waited for the sink's lock: ")),
            "{r:?}"
        );
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

    /// A writer thread for `s`.
    fn writer(s: &Arc<EventSink>) -> std::thread::JoinHandle<()> {
        let s = s.clone();
        std::thread::spawn(move || s.run_writer())
    }

    fn hammer(s: &Arc<EventSink>, threads: usize, each: usize) {
        let ts: Vec<_> = (0..threads)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for _ in 0..each {
                        s.append(&body("hipEventRecord")).unwrap();
                    }
                })
            })
            .collect();
        for th in ts {
            th.join().unwrap();
        }
    }

    #[test]
    fn many_threads_get_unique_contiguous_seqs_in_file_order() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let s = Arc::new(s);
        hammer(&s, 8, 2000);
        s.finish("exit", 0, LockMode::Block);
        assert_eq!(seqs(&path), (0..16001).collect::<Vec<_>>());
    }

    #[test]
    fn an_appender_drain_recycles_the_buffer_so_hand_offs_continue() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        // A writer that never runs (descheduled): the appender hands off
        // once, then must drain itself, and after that hand off again.
        s.has_writer.store(true, Ordering::Release);
        let b = body("hipLaunchKernel");
        let mut n = 0;
        let mut append_until = |what: &str, done: &dyn Fn(&EventSink) -> bool| {
            while !done(&s) {
                s.append(&b);
                n += 1;
                assert!(n < 100_000, "{what} never happened");
            }
        };
        append_until("first hand-off", &|s| !s.lock_handoff().pending.is_empty());
        append_until("drain", &|_| !std::fs::read(&path).unwrap().is_empty());
        let h = s.lock_handoff();
        assert!(
            h.pending.is_empty() && h.spare.capacity() > 0,
            "drained, and the spare is back"
        );
        drop(h);
        append_until("second hand-off", &|s| !s.lock_handoff().pending.is_empty());
        s.has_writer.store(false, Ordering::Release);
        s.finish("exit", 0, LockMode::Block);
        assert_eq!(seqs(&path), (0..=n as u64).collect::<Vec<_>>());
    }

    #[test]
    fn with_a_writer_thread_order_holds_and_a_signal_flush_gets_everything() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let s = Arc::new(s);
        let w = writer(&s);
        while !s.has_writer.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        hammer(&s, 4, 5000);
        assert!(s.flush_from_signal());
        assert_eq!(
            seqs(&path),
            (0..20000).collect::<Vec<_>>(),
            "pending and current buffers, in order"
        );
        hammer(&s, 2, 3000);
        assert_eq!(
            s.finish("exit", 0, LockMode::Block),
            Finish::Done { events: 26000 }
        );
        w.join().unwrap();
        assert_eq!(seqs(&path), (0..26001).collect::<Vec<_>>());
    }

    /// Appends `line` as memo slot 0's line until the sink lets launches
    /// repeating it be deferred (its clock calibrated); returns the run and
    /// the lines appended.
    fn deferring(s: &EventSink, line: &[u8]) -> (Arc<RepeatRun>, u64) {
        let mut run = None;
        let mut n = 0;
        while run.is_none() {
            s.append_repeat(line, 0, 7, 4, &mut run).unwrap();
            n += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
        (run.unwrap(), n)
    }

    fn events(path: &std::path::Path) -> Vec<hrr_core::Event> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .map(|l| hrr_core::Event::parse(l.as_bytes()).unwrap())
            .collect()
    }

    #[test]
    fn deferred_repeats_are_written_before_the_next_event_and_past_a_full_ring() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let launch = body("hipModuleLaunchKernel");
        let (run, first) = deferring(&s, &launch);
        assert!(!run.defer(0, 8), "another kept line: not deferred");
        assert!(!run.defer(1, 7), "another slot: not deferred");
        let mut deferred = 0;
        for _ in 0..3 * RUN_CAP {
            if run.defer(0, 7) {
                deferred += 1;
            } else {
                // The ring is full: the memo's path appends it itself.
                s.append_repeat(&launch, 0, 7, 4, &mut Some(run.clone()));
            }
        }
        assert!(deferred >= 2 * RUN_CAP, "{deferred}");
        s.append(&body("hipMemcpy")).unwrap();
        s.finish("exit", 1, LockMode::Block);
        let ev = events(&path);
        let n = first as usize + 3 * RUN_CAP;
        assert_eq!(ev.len(), n + 2);
        assert!(ev.iter().enumerate().all(|(i, e)| e.seq == i as u64));
        assert!(ev.windows(2).all(|w| w[0].t <= w[1].t), "t in order");
        assert!(ev[..n].iter().all(|e| e.api == "hipModuleLaunchKernel"));
        assert_eq!(ev[n].api, "hipMemcpy", "after every deferred launch");
    }

    #[test]
    fn a_thread_recording_into_another_sink_gets_a_run_of_that_sink() {
        let t = tempfile::tempdir().unwrap();
        let (da, db) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(&da).unwrap();
        std::fs::create_dir_all(&db).unwrap();
        let ((a, pa), (b, pb)) = (sink(&da), sink(&db));
        let launch = body("hipModuleLaunchKernel");
        let (of_a, na) = deferring(&a, &launch);
        assert!(of_a.belongs_to(a.id()) && !of_a.belongs_to(b.id()));
        let mut run = Some(of_a.clone());
        let mut nb = 0;
        while run.as_ref().is_some_and(|r| Arc::ptr_eq(r, &of_a)) && nb < 500 {
            b.append_repeat(&launch, 0, 7, 4, &mut run).unwrap();
            nb += 1;
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(run.unwrap().belongs_to(b.id()), "still a's after {nb}");
        a.finish("exit", 1, LockMode::Block);
        b.finish("exit", 1, LockMode::Block);
        assert_eq!(seqs(&pa).len() as u64, na + 1);
        assert_eq!(seqs(&pb).len() as u64, nb + 1);
    }

    #[test]
    fn deferred_stamps_read_as_the_kernel_clock() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let launch = body("hipModuleLaunchKernel");
        let (run, first) = deferring(&s, &launch);
        let mut bounds = vec![];
        for _ in 0..50 {
            let before = sys::monotonic_ns();
            assert!(run.defer(0, 7));
            bounds.push((before, sys::monotonic_ns()));
            std::thread::sleep(Duration::from_micros(200));
        }
        s.flush();
        let ev = events(&path);
        for (e, (lo, hi)) in ev[first as usize..].iter().zip(bounds) {
            assert!(
                e.t + 10_000 >= lo && e.t <= hi + 10_000,
                "t {} outside [{lo}, {hi}] by more than 10 µs",
                e.t
            );
        }
    }

    #[test]
    fn signal_flush_and_the_writer_write_deferred_repeats() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let s = Arc::new(s);
        let launch = body("hipModuleLaunchKernel");
        let (run, first) = deferring(&s, &launch);
        for _ in 0..10 {
            assert!(run.defer(0, 7));
        }
        assert!(s.flush_from_signal());
        assert_eq!(seqs(&path), (0..first + 10).collect::<Vec<_>>());
        let w = writer(&s);
        for _ in 0..10 {
            assert!(run.defer(0, 7));
        }
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            seqs(&path),
            (0..first + 20).collect::<Vec<_>>(),
            "written without another event"
        );
        s.finish("exit", 0, LockMode::Block);
        w.join().unwrap();
    }

    #[test]
    fn threads_deferring_at_once_keep_their_order_and_every_launch() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let s = Arc::new(s);
        let w = writer(&s);
        let each = 20_000;
        let ts: Vec<_> = (0..4)
            .map(|k| {
                let s = s.clone();
                std::thread::spawn(move || {
                    let api = ["k0", "k1", "k2", "k3"][k];
                    let line = body(api);
                    let (run, first) = deferring(&s, &line);
                    let mut run = Some(run);
                    for _ in first..each {
                        if !run.as_ref().unwrap().defer(0, 7) {
                            s.append_repeat(&line, 0, 7, 4, &mut run);
                        }
                    }
                    s.append(&body("hipDeviceSynchronize")).unwrap();
                })
            })
            .collect();
        for th in ts {
            th.join().unwrap();
        }
        s.finish("exit", 0, LockMode::Block);
        w.join().unwrap();
        let ev = events(&path);
        assert_eq!(ev.len() as u64, 4 * (each + 1) + 1);
        assert!(ev.iter().enumerate().all(|(i, e)| e.seq == i as u64));
        assert!(ev.windows(2).all(|w| w[0].t <= w[1].t), "t in order");
        for k in ["k0", "k1", "k2", "k3"] {
            assert_eq!(ev.iter().filter(|e| e.api == k).count() as u64, each);
        }
    }

    #[test]
    fn the_writer_flushes_an_idle_buffer_after_the_interval() {
        let t = tempfile::tempdir().unwrap();
        let (s, path) = sink(t.path());
        let s = Arc::new(s);
        let w = writer(&s);
        s.append(&body("a"));
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(seqs(&path), vec![0], "written without another append");
        s.finish("exit", 0, LockMode::Block);
        w.join().unwrap();
    }
}
