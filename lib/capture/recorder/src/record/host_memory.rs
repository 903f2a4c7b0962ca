//! `HostMemory`: host memory the device reads and writes directly — pinned
//! (`hipHostMalloc`, `cuMemHostAlloc`: mapped, and under unified addressing
//! all of it), registered (`hipHostRegister`, `cuMemHostRegister`) and
//! managed (`hipMallocManaged`, `cuMemAllocManaged`) — and what of it the
//! archive has seen.
//!
//! The application's host code writes such memory with plain stores, which
//! no runtime call reports. So, just before a launch that may read it, the
//! bytes that changed since they were last recorded become `host_write`
//! events; and at a synchronisation after a launch that could have written
//! it, the bytes kernels changed become `host_read` events, which replay
//! checks like a D2H result.
//!
//! Change detection is by hash: each range is cut into [`CHUNK`]-byte chunks
//! whose xxh3 hash is kept; a chunk whose hash differs from the kept one is
//! dirty. Adjacent dirty chunks become one event. (Page protection would
//! find writes without reading unchanged memory, but it needs a fault
//! handler in the application's process, fights the runtime's own use of
//! the pages, and costs a fault per first write of a page per launch; the
//! figures are in PERFORMANCE.md.)
//!
//! Which launches read what: a range is reached when a pointer argument (an
//! aligned 8-byte word of any argument) points into it; the whole range is
//! then compared. Managed memory is always reached: kernels find it
//! through pointers stored in memory too, which the arguments do not show.
//!
//! The common path costs one atomic load: with no such memory tracked,
//! [`HostMemory::any`] is false and launches and syncs do nothing more.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use hrr_core::MemKind;

/// Bytes per hashed chunk: small enough that a few changed bytes cost one
/// chunk's copy, large enough that the hashes of a 64 GiB range fit in 8 MiB.
pub const CHUNK: usize = 64 << 10;

/// One range of host memory the device reaches.
struct Range {
    size: u64,
    mem: MemKind,
    /// Per chunk: the hash of what the archive last recorded there, `None`
    /// when it has recorded nothing (registered memory holds the
    /// application's data from the start).
    hashes: Vec<Option<u64>>,
}

#[derive(Default)]
struct State {
    /// Ranges by base address.
    ranges: BTreeMap<u64, Range>,
    /// Ranges a launch since the last synchronisation could have written,
    /// with the streams of those launches (base → streams).
    pending: BTreeMap<u64, Vec<u64>>,
    /// The stream each event was last recorded on.
    events: HashMap<u64, u64>,
}

/// A run of changed bytes to record: `[ptr, ptr + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dirty {
    /// Its first byte.
    pub ptr: u64,
    /// Its length.
    pub len: usize,
}

/// What a synchronisation completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// Every stream (device synchronisation).
    All,
    /// One stream.
    Stream(u64),
    /// The work before an event's last record.
    Event(u64),
}

/// The tracked ranges and their recorded state.
pub struct HostMemory {
    /// Tracked ranges: the one check of the common path.
    live: AtomicUsize,
    state: Mutex<State>,
    /// Off (`HRR_HOST_MEMORY=off`): nothing is ever tracked.
    enabled: bool,
}

impl Default for HostMemory {
    fn default() -> HostMemory {
        HostMemory::new(true)
    }
}

impl HostMemory {
    /// Nothing tracked; `enabled: false` tracks nothing ever.
    pub fn new(enabled: bool) -> HostMemory {
        HostMemory {
            live: AtomicUsize::new(0),
            state: Mutex::default(),
            enabled,
        }
    }

    /// Whether any range is tracked (the hot path's only check).
    #[inline(always)]
    pub fn any(&self) -> bool {
        self.live.load(Ordering::Relaxed) != 0
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tracks `[base, base + size)` of kind `mem` (pinned or managed;
    /// others are ignored): memory a successful allocation or registration
    /// call just reported, readable until it is untracked, which callers do
    /// when the application frees or unregisters it.
    /// `zeroed`: fresh memory from the runtime, which
    /// replay's zero-filled allocation matches until the application writes
    /// it; otherwise (registered memory) all of it is recorded at the first
    /// launch that reaches it.
    pub fn track(&self, base: u64, size: u64, mem: MemKind, zeroed: bool) {
        if !self.enabled
            || !matches!(mem, MemKind::Pinned | MemKind::Managed)
            || base == 0
            || size == 0
        {
            return;
        }
        let chunks = (size as usize).div_ceil(CHUNK);
        let hashes = if zeroed {
            let zero = zero_hash();
            let mut h = vec![Some(zero); chunks];
            let tail = size as usize - (chunks - 1) * CHUNK;
            if tail != CHUNK {
                h[chunks - 1] = Some(xxhash_rust::xxh3::xxh3_64(&ZEROS[..tail]));
            }
            h
        } else {
            vec![None; chunks]
        };
        let mut s = self.state();
        if s.ranges.insert(base, Range { size, mem, hashes }).is_none() {
            self.live.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Stops tracking the range based at `base`.
    pub fn untrack(&self, base: u64) {
        if !self.any() {
            return;
        }
        let mut s = self.state();
        if s.ranges.remove(&base).is_some() {
            s.pending.remove(&base);
            self.live.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Before a launch on `stream` whose arguments' aligned 8-byte words are
    /// `words`: the changed runs of every range it reaches (as
    /// `changed`), handed to `record` with their bytes; the
    /// ranges are then pending until a synchronisation of `stream`.
    /// `first`, when it reaches any, runs before they are read (without
    /// the lock: waiting for host functions that write them).
    pub fn before_launch(
        &self,
        stream: u64,
        words: impl Iterator<Item = u64>,
        first: impl FnOnce(),
        mut record: impl FnMut(Dirty, &[u8]),
    ) {
        let mut reached: Vec<u64> = {
            let s = self.state();
            let mut reached: Vec<u64> = s
                .ranges
                .iter()
                .filter(|(_, r)| r.mem == MemKind::Managed)
                .map(|(b, _)| *b)
                .collect();
            for w in words {
                if let Some((b, r)) = s.ranges.range(..=w).next_back()
                    && w - b < r.size
                    && !reached.contains(b)
                {
                    reached.push(*b);
                }
            }
            reached
        };
        if reached.is_empty() {
            return;
        }
        first();
        let mut s = self.state();
        // Freed meanwhile: nothing to read there.
        reached.retain(|b| s.ranges.contains_key(b));
        for base in reached {
            changed(&mut s, base, &mut record);
            let streams = s.pending.entry(base).or_default();
            if !streams.contains(&stream) {
                streams.push(stream);
            }
        }
    }

    /// An event recorded on a stream (for a later event synchronisation).
    pub fn event_recorded(&self, event: u64, stream: u64) {
        if self.any() {
            self.state().events.insert(event, stream);
        }
    }

    /// After a synchronisation: the changed runs of every range a launch
    /// it completes could have written, handed to `record`; those ranges
    /// are no longer pending.
    pub fn after_sync(&self, sync: Sync, mut record: impl FnMut(Dirty, &[u8])) {
        let mut s = self.state();
        if s.pending.is_empty() {
            return;
        }
        let stream = match sync {
            Sync::All => None,
            Sync::Stream(st) => Some(st),
            // An event never recorded completes nothing we know of.
            Sync::Event(e) => match s.events.get(&e) {
                Some(&st) => Some(st),
                None => return,
            },
        };
        let mut done = Vec::new();
        for (base, streams) in s.pending.iter_mut() {
            match stream {
                None => done.push(*base),
                Some(st) => {
                    if streams.contains(&st) {
                        streams.retain(|&x| x != st);
                        if streams.is_empty() {
                            done.push(*base);
                        }
                    }
                }
            }
        }
        for base in &done {
            s.pending.remove(base);
        }
        // A stream's sync completes its launches, whether or not other
        // streams still run: the ranges they reached are read now.
        let read: Vec<u64> = match stream {
            None => done,
            Some(st) => {
                let mut v = done;
                v.extend(
                    s.pending
                        .iter()
                        .filter(|(_, sts)| sts.contains(&st))
                        .map(|(b, _)| *b),
                );
                v
            }
        };
        for base in read {
            changed(&mut s, base, &mut record);
        }
    }
}

/// 64 KiB of zeros: what a fresh chunk holds.
static ZEROS: [u8; CHUNK] = [0; CHUNK];

fn zero_hash() -> u64 {
    static H: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *H.get_or_init(|| xxhash_rust::xxh3::xxh3_64(&ZEROS))
}

/// Hands the runs of the range at `base` whose chunks changed since last
/// recorded to `record`, and takes their hashes as recorded.
fn changed(s: &mut State, base: u64, record: &mut impl FnMut(Dirty, &[u8])) {
    let Some(r) = s.ranges.get_mut(&base) else {
        return;
    };
    // SAFETY: a tracked range is memory the runtime allocated or the
    // application registered, as a successful call reported, and it is
    // untracked when freed or unregistered (see `track`), so all of it is
    // mapped and readable. Kernels may write it meanwhile (a launch still
    // running): the bytes read are then some state of it, as the
    // application's own read would be.
    let bytes = unsafe { std::slice::from_raw_parts(base as *const u8, r.size as usize) };
    let mut run: Option<usize> = None;
    for (i, chunk) in bytes.chunks(CHUNK).enumerate() {
        let h = xxhash_rust::xxh3::xxh3_64(chunk);
        let dirty = r.hashes[i] != Some(h);
        r.hashes[i] = Some(h);
        match (dirty, run) {
            (true, None) => run = Some(i),
            (false, Some(start)) => {
                emit(base, bytes, start, i, record);
                run = None;
            }
            _ => {}
        }
    }
    if let Some(start) = run {
        emit(base, bytes, start, bytes.len().div_ceil(CHUNK), record);
    }
}

fn emit(base: u64, bytes: &[u8], from: usize, to: usize, record: &mut impl FnMut(Dirty, &[u8])) {
    let lo = from * CHUNK;
    let hi = (to * CHUNK).min(bytes.len());
    record(
        Dirty {
            ptr: base + lo as u64,
            len: hi - lo,
        },
        &bytes[lo..hi],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(f: impl FnOnce(&mut dyn FnMut(Dirty, &[u8]))) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        f(&mut |d: Dirty, b: &[u8]| out.push((d.ptr, b.to_vec())));
        out
    }

    #[test]
    fn only_changed_chunks_are_recorded_once_each() {
        let mut buf = vec![0u8; 3 * CHUNK + 100];
        let base = buf.as_ptr() as u64;
        let h = HostMemory::default();
        assert!(!h.any());
        h.track(base, buf.len() as u64, MemKind::Pinned, true);
        assert!(h.any());
        // Fresh memory, unchanged: nothing to record.
        let got = collect(|f| h.before_launch(0, [base].into_iter(), || {}, f));
        assert!(got.is_empty());
        buf[5] = 1;
        buf[3 * CHUNK + 99] = 2;
        let got = collect(|f| h.before_launch(0, [base + 8].into_iter(), || {}, f));
        assert_eq!(got.len(), 2, "two runs");
        assert_eq!(got[0].0, base);
        assert_eq!(got[0].1.len(), CHUNK);
        assert_eq!(got[1].0, base + 3 * CHUNK as u64);
        assert_eq!(got[1].1.len(), 100);
        // Recorded: the same bytes are not recorded again.
        let got = collect(|f| h.before_launch(0, [base].into_iter(), || {}, f));
        assert!(got.is_empty());
        // A launch that does not reach the range does not record it, nor
        // wait for host functions (`first`); one that does, waits first.
        buf[CHUNK] = 3;
        let mut waited = false;
        let got = collect(|f| h.before_launch(0, [0x1234].into_iter(), || waited = true, f));
        assert!(got.is_empty() && !waited);
        let got = collect(|f| h.before_launch(0, [base].into_iter(), || waited = true, f));
        assert_eq!(got.len(), 1);
        assert!(waited);
        h.untrack(base);
        assert!(!h.any());
        let off = HostMemory::new(false);
        off.track(base, buf.len() as u64, MemKind::Pinned, true);
        assert!(!off.any(), "switched off: nothing tracked");
    }

    #[test]
    fn registered_memory_is_recorded_whole_and_managed_always() {
        let reg = vec![7u8; 100];
        let man = vec![0u8; 100];
        let h = HostMemory::default();
        h.track(reg.as_ptr() as u64, 100, MemKind::Pinned, false);
        h.track(man.as_ptr() as u64, 100, MemKind::Managed, false);
        let got = collect(|f| h.before_launch(0, std::iter::empty(), || {}, f));
        assert_eq!(
            got,
            vec![(man.as_ptr() as u64, man.clone())],
            "managed without a pointer"
        );
        let got = collect(|f| h.before_launch(0, [reg.as_ptr() as u64 + 99].into_iter(), || {}, f));
        assert_eq!(got, vec![(reg.as_ptr() as u64, reg.clone())]);
    }

    #[test]
    fn syncs_read_back_what_launches_on_their_streams_reached() {
        let mut a = vec![0u8; 64];
        let mut b = vec![0u8; 64];
        let (pa, pb) = (a.as_ptr() as u64, b.as_ptr() as u64);
        let h = HostMemory::default();
        h.track(pa, 64, MemKind::Pinned, true);
        h.track(pb, 64, MemKind::Pinned, true);
        let none = collect(|f| h.before_launch(1, [pa].into_iter(), || {}, f));
        assert!(none.is_empty());
        let _ = collect(|f| h.before_launch(2, [pb].into_iter(), || {}, f));
        h.event_recorded(0xe, 2);
        a[0] = 1; // "kernel" writes
        b[0] = 2;
        // A sync of another stream reads nothing.
        assert!(collect(|f| h.after_sync(Sync::Stream(3), f)).is_empty());
        let got = collect(|f| h.after_sync(Sync::Stream(1), f));
        assert_eq!(got, vec![(pa, a.clone())]);
        let got = collect(|f| h.after_sync(Sync::Event(0xe), f));
        assert_eq!(got, vec![(pb, b.clone())]);
        // Nothing pending any more.
        b[1] = 9;
        assert!(collect(|f| h.after_sync(Sync::All, f)).is_empty());
    }
}
