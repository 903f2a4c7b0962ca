//! `BlobZst`: the recorder's blob compressor.
//!
//! Blob files are written raw (from the application's memory, or with the
//! events buffer: `blob_writer`, `blob_batch`); each one written is then
//! offered here by name, and one or two threads of the recorder's own
//! (`hrr-zst-N`, asynchronous signals blocked like the writer's) replace
//! it by its compressed form (`BlobStore::replace_with_compressed`: a
//! piece at a time, fsynced, decoded and hashed, renamed, and only then the
//! raw file removed, so a reader finds the blob in one form or the other
//! at every moment). The application's threads only queue a name: the
//! queue holds names, never bytes, and a name that finds it full
//! ([`QUEUE`]) stays raw.
//!
//! At the capture's clean end ([`BlobZst::finish`], from the recorder's
//! finish) the threads go on with what is queued while the events are
//! compressed, for at most [`DRAIN_TIME`] or [`DRAIN_BYTES`]; what is left
//! then stays raw, and `hrr-cap`'s compaction (which reads both forms)
//! finishes it. A fatal signal or `_exit` from a handler only raises a
//! flag ([`BlobZst::stop_now`]): no lock, no compression there.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use hrr_core::BlobId;
use hrr_core::blob_store::{BlobStore, Replaced};

use crate::sys;

/// zstd level of the blobs compressed while the application runs: level 1
/// (docs/PERFORMANCE.md, *Compression*: on float data and code objects
/// level 3 saves a few percent more at half the speed or less, and these
/// threads share the application's cores).
pub const LEVEL: i32 = 1;

/// Names queued at most (32 bytes each): past this a blob stays raw.
pub const QUEUE: usize = 16 * 1024;

/// How long the capture's end lets the compressor go on.
pub const DRAIN_TIME: Duration = Duration::from_secs(2);

/// How many raw bytes the capture's end lets it compress.
pub const DRAIN_BYTES: u64 = 1 << 30;

/// The compressor of one archive's blobs (threads started at the first
/// blob offered).
pub struct BlobZst {
    inner: Arc<Inner>,
}

struct Inner {
    store: BlobStore,
    state: Mutex<State>,
    /// Wakes the threads (a name queued, the end).
    work: Condvar,
    /// Wakes [`BlobZst::finish`] (a thread done with a blob, or gone).
    idle: Condvar,
    /// Stop after the current piece, leaving the rest raw.
    stop: AtomicBool,
    /// Once ending: `sys::monotonic_ns` past which nothing more is done.
    deadline_ns: AtomicU64,
    /// Once ending: raw bytes still allowed.
    bytes_left: AtomicU64,
    ending: AtomicBool,
}

#[derive(Default)]
struct State {
    queue: VecDeque<BlobId>,
    started: bool,
    running: usize,
    /// What was done, for the tests and the manifest's counts.
    counts: ZstCounts,
}

/// What the compressor did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZstCounts {
    /// Blobs stored compressed.
    pub compressed: u64,
    /// Their raw bytes.
    pub raw_bytes: u64,
    /// Their compressed bytes.
    pub packed_bytes: u64,
    /// Blobs left raw (not worth it, or stopped at the end).
    pub left: u64,
    /// Names not queued (queue full, or offered after the end).
    pub not_queued: u64,
    /// Replacements that failed (the disk is full, ...): left raw.
    pub failed: u64,
}

impl BlobZst {
    /// The compressor of `store`'s blobs.
    pub fn new(store: BlobStore) -> BlobZst {
        BlobZst {
            inner: Arc::new(Inner {
                store,
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                idle: Condvar::new(),
                stop: AtomicBool::new(false),
                deadline_ns: AtomicU64::new(u64::MAX),
                bytes_left: AtomicU64::new(u64::MAX),
                ending: AtomicBool::new(false),
            }),
        }
    }

    /// Queues blob `id`, just written raw, for compression (a name: no
    /// bytes are copied). Never from a signal handler.
    pub fn offer(&self, id: BlobId) {
        let inner = &self.inner;
        let mut st = inner.lock();
        if inner.ending.load(Ordering::Relaxed)
            || inner.stop.load(Ordering::Relaxed)
            || st.queue.len() >= QUEUE
        {
            st.counts.not_queued += 1;
            return;
        }
        st.queue.push_back(id);
        if !st.started {
            st.started = true;
            st.running = Inner::start(inner);
            if st.running == 0 {
                // No thread: the blobs stay raw (hrr-cap compresses them).
                st.counts.not_queued += st.queue.len() as u64;
                st.queue.clear();
                return;
            }
        }
        drop(st);
        inner.work.notify_one();
    }

    /// The capture's clean end: the threads go on with what is queued
    /// for at most `time` and `bytes` more raw bytes; returns at once
    /// (see [`BlobZst::wait`]).
    pub fn finish(&self, time: Duration, bytes: u64) {
        let inner = &self.inner;
        let deadline = sys::monotonic_ns().saturating_add(time.as_nanos() as u64);
        inner.deadline_ns.store(deadline, Ordering::Relaxed);
        inner.bytes_left.store(bytes, Ordering::Relaxed);
        inner.ending.store(true, Ordering::Release);
        drop(inner.lock());
        inner.work.notify_all();
    }

    /// Waits until the threads are gone (after [`BlobZst::finish`]), for
    /// at most `most`; what they did.
    pub fn wait(&self, most: Duration) -> ZstCounts {
        let inner = &self.inner;
        let until = Instant::now() + most;
        let mut st = inner.lock();
        while st.running > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            st = inner
                .idle
                .wait_timeout(st, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        st.counts.not_queued += st.queue.len() as u64;
        st.queue.clear();
        st.counts
    }

    /// Stops the threads after their current piece, leaving the rest
    /// raw: one atomic store (the `_exit` path, maybe in a signal handler).
    pub fn stop_now(&self) {
        self.inner.stop.store(true, Ordering::Relaxed);
    }

    /// What was done so far.
    pub fn counts(&self) -> ZstCounts {
        self.inner.lock().counts
    }
}

impl Drop for BlobZst {
    fn drop(&mut self) {
        // An archive dropped unfinished (a test, a window abandoned): its
        // threads end after the blob in hand.
        self.inner.stop.store(true, Ordering::Relaxed);
        drop(self.inner.lock());
        self.inner.work.notify_all();
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the threads; how many started.
    fn start(this: &Arc<Inner>) -> usize {
        let n = (hrr_core::cores() / 8).clamp(1, 2);
        (0..n)
            .filter(|i| {
                let me = Arc::clone(this);
                std::thread::Builder::new()
                    .name(format!("hrr-zst-{i}"))
                    .spawn(move || me.run())
                    .is_ok()
            })
            .count()
    }

    /// Whether to give up on what is left (stopped, or the end's budget
    /// spent).
    fn over(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.ending.load(Ordering::Acquire)
                && (self.bytes_left.load(Ordering::Relaxed) == 0
                    || sys::monotonic_ns() > self.deadline_ns.load(Ordering::Relaxed))
    }

    /// A thread's loop: the next name, its replacement, until the queue is
    /// empty at the end, or the end's budget is spent, or it is stopped.
    fn run(&self) {
        sys::block_async_signals();
        loop {
            let id = {
                let mut st = self.lock();
                loop {
                    if self.over() {
                        break None;
                    }
                    if let Some(id) = st.queue.pop_front() {
                        break Some(id);
                    }
                    if self.ending.load(Ordering::Acquire) {
                        break None;
                    }
                    st = self.work.wait(st).unwrap_or_else(PoisonError::into_inner);
                }
            };
            let Some(id) = id else { break };
            let r = self
                .store
                .replace_with_compressed(&id, LEVEL, &|| self.over());
            let mut st = self.lock();
            match r {
                Ok(Replaced::Compressed { raw, packed }) => {
                    st.counts.compressed += 1;
                    st.counts.raw_bytes += raw;
                    st.counts.packed_bytes += packed;
                    if self.ending.load(Ordering::Acquire) {
                        let left = self.bytes_left.load(Ordering::Relaxed);
                        self.bytes_left
                            .store(left.saturating_sub(raw), Ordering::Relaxed);
                    }
                }
                Ok(Replaced::Absent) => {}
                Ok(_) => st.counts.left += 1,
                Err(_) => st.counts.failed += 1,
            }
            drop(st);
            self.idle.notify_all();
        }
        let mut st = self.lock();
        st.running -= 1;
        drop(st);
        self.idle.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that compress.
    fn floats(n: usize, seed: u32) -> Vec<u8> {
        (0..n as u32 / 4)
            .flat_map(|i| ((i.wrapping_mul(seed) % 977) as f32 * 0.5).to_le_bytes())
            .collect()
    }

    #[test]
    fn offered_blobs_end_compressed_and_readable() {
        let t = tempfile::tempdir().unwrap();
        let store = BlobStore::of_archive(t.path());
        let z = BlobZst::new(store.clone());
        let blobs: Vec<Vec<u8>> = (1..6).map(|k| floats(k * 100_000, k as u32)).collect();
        let ids: Vec<BlobId> = blobs.iter().map(|b| store.put(b).unwrap()).collect();
        for id in &ids {
            z.offer(*id);
        }
        z.finish(Duration::from_secs(30), u64::MAX);
        let c = z.wait(Duration::from_secs(30));
        assert_eq!(c.compressed, 5, "{c:?}");
        for (id, b) in ids.iter().zip(&blobs) {
            assert!(!store.path(id).exists() && store.zst_path(id).exists());
            assert_eq!(&*store.get(id).unwrap(), &b[..]);
        }
        // After the end a name is not queued: that blob stays raw.
        let late = store.put(&floats(50_000, 9)).unwrap();
        z.offer(late);
        assert!(store.path(&late).exists());
        assert_eq!(z.counts().not_queued, 1);
    }

    #[test]
    fn a_spent_budget_leaves_the_rest_raw_and_readable() {
        let t = tempfile::tempdir().unwrap();
        let store = BlobStore::of_archive(t.path());
        let z = BlobZst::new(store.clone());
        // Stopped before the end: the threads leave what they have.
        z.stop_now();
        let a = store.put(&floats(300_000, 3)).unwrap();
        z.offer(a);
        z.finish(Duration::ZERO, 0);
        let c = z.wait(Duration::from_secs(30));
        assert_eq!(c.compressed, 0, "{c:?}");
        assert!(store.path(&a).exists());
        assert!(store.get(&a).is_ok());
        assert_eq!(store.list().unwrap(), [a]);
    }

    #[test]
    fn the_threads_are_named_and_block_signals() {
        let t = tempfile::tempdir().unwrap();
        let store = BlobStore::of_archive(t.path());
        let z = BlobZst::new(store.clone());
        z.offer(store.put(&floats(10_000, 1)).unwrap());
        // The name is set by the new thread itself: looked for a while.
        let blocked = (0..200).find_map(|_| {
            let found = std::fs::read_dir("/proc/self/task").unwrap().find_map(|e| {
                let task = e.ok()?.path();
                let comm = std::fs::read_to_string(task.join("comm")).ok()?;
                (comm.trim() == "hrr-zst-0")
                    .then(|| std::fs::read_to_string(task.join("status")).ok())?
            });
            if found.is_none() {
                std::thread::sleep(Duration::from_millis(10));
            }
            found
        });
        let status = blocked.expect("a thread named hrr-zst-0");
        let sigblk = status
            .lines()
            .find_map(|l| l.strip_prefix("SigBlk:"))
            .map(|v| u64::from_str_radix(v.trim(), 16).unwrap())
            .unwrap();
        // SIGTERM (15) and SIGUSR2 (12) among the blocked.
        assert_ne!(sigblk & (1 << 14), 0, "{sigblk:x}");
        assert_ne!(sigblk & (1 << 11), 0, "{sigblk:x}");
        z.finish(Duration::from_secs(30), u64::MAX);
        z.wait(Duration::from_secs(30));
    }
}
