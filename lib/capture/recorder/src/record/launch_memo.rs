//! `LaunchMemo`: a thread's last recorded launch line of each of its
//! recent kernels, kept for the next identical launch.
//!
//! A launch loop records the same line again and again, but for `seq` and
//! `t` (which the sink writes); a training step launches a few dozen
//! kernels in turn, each with the same arguments step after step. The memo
//! keeps, per launched handle, that line with every input it was encoded
//! from: the entry point, the kernel handle, the configuration, the launch
//! attributes, the argument bytes, and the [`epoch`], which moves with
//! every change of a code registry (so the handle's name, code and layout)
//! and of the [`LiveAllocs`] (so the pointers found in the arguments). A
//! launch whose inputs all match repeats the kept line without looking the
//! kernel up, gathering and scanning its arguments or encoding anything:
//! once the sink holds a copy of that line, a stamp in the thread's
//! [`RepeatRun`] without the sink's lock, else an append. On the H200 that
//! path was about half of the recording cost of a `<<<>>>` launch, and a
//! full recording of a PyTorch launch costs ten times a repeated one
//! (docs/PERFORMANCE.md).
//!
//! Only successful launches are kept, their arguments one pointer each
//! (`kernelParams`, the CUDA launches' `args`) or one packed buffer
//! (`extra`, kept as a single argument); the thread id is fixed
//! because each thread has its own memo ([`record`]). [`WAYS`] handles are
//! kept per thread, the least recently used giving way.
//!
//! [`LiveAllocs`]: crate::record::live_allocs::LiveAllocs

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::record::kernel_args::{ArgValues, same_bytes};
use crate::record::recorder::{LaunchDims, Recorder};
use crate::sink::repeat_run::RepeatRun;

/// Moves after any change that could alter a kept line other than its
/// launch's own inputs: a code registry (CUDA's fat binaries, the driver
/// layer's modules, HIP's code objects: a handle's name, code and layout)
/// or the live allocations (the pointers found in arguments). Each of those
/// moves it after its change, so a key that read it before a lookup is
/// conservative. One word per launch where the key read three, each in a
/// structure of its own: fewer lines for a repeated launch to bring back
/// after the runtime's own work (docs/PERFORMANCE.md).
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// [`LaunchKey::epoch`] now.
#[inline(always)]
pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// Makes every kept line stale (see `EPOCH`); `why` names the change in
/// the capture profile (`HRR_CAPTURE_PROFILE=1`), which counts them: each
/// makes the next launch of every kept kernel a full recording.
pub fn invalidate(why: &'static str) {
    EPOCH.fetch_add(1, Ordering::Release);
    crate::self_profile::count(why);
}

thread_local! {
    static MEMO: RefCell<LaunchMemo> = const { RefCell::new(LaunchMemo::new()) };
}

/// Records a successful launch whose inputs are `key` and whose argument
/// `i` reads as `arg(i, size)`: the thread's kept line when they match it,
/// else `in_full` records it and keeps its line in the [`Slot`] it is given
/// (`None`: the thread has no memo, during its TLS teardown).
#[inline]
pub fn record<'a>(
    r: &Recorder,
    key: LaunchKey,
    arg: impl Fn(usize, usize) -> &'a [u8],
    in_full: impl FnOnce(Option<Slot<'_>>),
) {
    // Outside a capture window nothing is appended, so no line is ever
    // kept: without this every launch would miss, scan the memo and read
    // its arguments in full for nothing (twice a recorded launch's cost).
    if !r.recording() {
        return;
    }
    let mut in_full = Some(in_full);
    let _ = MEMO.try_with(|m| {
        let Ok(mut memo) = m.try_borrow_mut() else {
            return;
        };
        let memo = &mut *memo;
        memo.tick += 1;
        let newest = match memo.find(&key, &arg) {
            Ok(i) => {
                memo.last = i;
                let e = &mut memo.entries[i];
                (e.used, e.misses) = (memo.tick, 0);
                in_full = None;
                // The common case: stamped into the thread's run, no lock.
                if memo
                    .run
                    .as_ref()
                    .is_some_and(|run| run.belongs_to(r.sink_id()) && run.defer(i, e.serial))
                {
                    return;
                }
                crate::self_profile::phase("phase launch: repeated line", || {
                    r.repeat_launch(&e.line, i, e.serial, &mut memo.run)
                });
                return;
            }
            Err(newest) => newest,
        };
        let Some(f) = in_full.take() else {
            return;
        };
        let why = if crate::self_profile::on() {
            memo.why_missed(&key, newest)
        } else {
            "phase launch: in full"
        };
        let slot = memo.slot_after_miss(newest, key.epoch);
        crate::self_profile::phase(why, || match slot {
            Some(i) => f(Some(Slot {
                entry: &mut memo.entries[i],
                key,
            })),
            None => f(None),
        });
    });
    if let Some(f) = in_full {
        f(None);
    }
}

/// [`LaunchKey::attrs`] of a launch with `attrs`.
#[inline]
pub fn attrs_key(attrs: &[hrr_core::LaunchAttr]) -> u64 {
    if attrs.is_empty() {
        return 0;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for a in attrs {
        h.update(&a.id.to_le_bytes());
        h.update(&a.hex.0);
    }
    h.digest() | 1
}

/// Where a launch that [`record`] could not repeat keeps its line.
pub struct Slot<'m> {
    entry: &'m mut Entry,
    key: LaunchKey,
}

impl Slot<'_> {
    /// Keeps `line`, recorded from `values` (see `Recorder::launch`): the
    /// `kernelParams` one by one, a packed buffer as one argument.
    pub fn keep(self, values: &ArgValues<'_, '_>, line: &[u8]) {
        match values {
            ArgValues::Params(vals) => self.entry.keep(self.key, vals.iter().copied(), line),
            ArgValues::Buffer(b) => self.entry.keep(self.key, [*b], line),
            ArgValues::None => {}
        }
    }
}

/// Everything but the argument bytes that a launch line is encoded from.
#[derive(Clone, Copy, Debug, Eq)]
pub struct LaunchKey {
    /// The entry point.
    pub api: &'static str,
    /// The launched handle (a `cudaKernel_t`, a host stub, ...).
    pub func: u64,
    /// Grid, block, shared memory and stream.
    pub dims: LaunchDims,
    /// [`epoch`], read before the handle was looked up and the arguments
    /// scanned.
    pub epoch: u64,
    /// A 64-bit hash of the launch attributes (0: none): two sets of a few
    /// 64-byte values that hash alike (odds 2^-64) would share a line.
    pub attrs: u64,
    /// The arguments came as one packed buffer (`extra`), kept as one
    /// argument: never the same line as `kernelParams` of the same bytes.
    pub packed: bool,
}

impl PartialEq for LaunchKey {
    /// Field by field, `api` by address first: each wrapper passes its own
    /// constant, and comparing the text would call `memcmp` per launch.
    fn eq(&self, o: &LaunchKey) -> bool {
        same_api(self.api, o.api)
            && self.func == o.func
            && self.dims == o.dims
            && self.epoch == o.epoch
            && self.attrs == o.attrs
            && self.packed == o.packed
    }
}

#[inline]
fn same_api(a: &'static str, b: &'static str) -> bool {
    std::ptr::eq(a, b) || a == b
}

/// Lines kept per thread: a training step launches a few dozen kernels
/// in turn (as `HEAD_CACHE_ENTRIES` in the recorder).
pub const WAYS: usize = 32;

/// See the module docs.
pub struct LaunchMemo {
    entries: Vec<Entry>,
    /// The entry of the last launch (a loop of one kernel looks no further).
    last: usize,
    /// Launches so far, for least-recently-used replacement.
    tick: u64,
    /// The thread's deferred repeats (`sink::repeat_run`), once the sink
    /// made it.
    run: Option<Arc<RepeatRun>>,
}

/// One kept line. A handle may have several: one kernel launched from
/// several places of a step, each with its own arguments.
#[derive(Default)]
pub struct Entry {
    key: Option<LaunchKey>,
    /// Size of each argument, in order.
    sizes: Vec<usize>,
    /// The arguments' bytes, end to end.
    args: Vec<u8>,
    /// The line after `seq` and `t` (what the sink appends).
    line: Vec<u8>,
    /// Names this line among all lines ever kept (0: none), for the
    /// thread's [`RepeatRun`], which holds a copy.
    serial: u64,
    /// Launches of its handle that missed since one hit.
    misses: u32,
    /// `tick` at its last use.
    used: u64,
}

impl Default for LaunchMemo {
    fn default() -> LaunchMemo {
        LaunchMemo::new()
    }
}

impl LaunchMemo {
    /// An empty memo.
    pub const fn new() -> LaunchMemo {
        LaunchMemo {
            entries: Vec::new(),
            last: 0,
            tick: 0,
            run: None,
        }
    }

    /// The entry whose line a launch of `key` with arguments `arg` repeats
    /// (`Ok`), else the most recently used one of the same entry point and
    /// handle, if any (`Err`). The last launch's entry is tried first.
    fn find<'a>(
        &self,
        key: &LaunchKey,
        arg: &impl Fn(usize, usize) -> &'a [u8],
    ) -> Result<usize, Option<usize>> {
        if self
            .entries
            .get(self.last)
            .is_some_and(|e| e.hit(key, arg).is_some())
        {
            return Ok(self.last);
        }
        let mut newest: Option<usize> = None;
        for (i, e) in self.entries.iter().enumerate() {
            if !e
                .key
                .is_some_and(|k| k.func == key.func && same_api(k.api, key.api))
            {
                continue;
            }
            if i != self.last && e.hit(key, arg).is_some() {
                return Ok(i);
            }
            if newest.is_none_or(|n| self.entries[n].used < e.used) {
                newest = Some(i);
            }
        }
        Err(newest)
    }

    /// What made a launch of `key` miss, as the profile names it, from the
    /// handle's most recently used entry `newest`.
    #[cold]
    fn why_missed(&self, key: &LaunchKey, newest: Option<usize>) -> &'static str {
        let Some(k) = newest.and_then(|n| self.entries[n].key) else {
            return "phase launch: in full (no line kept for its handle)";
        };
        if k.dims != key.dims {
            "phase launch: in full (configuration changed)"
        } else if k.epoch != key.epoch {
            "phase launch: in full (code or allocations changed)"
        } else if k.attrs != key.attrs {
            "phase launch: in full (attributes changed)"
        } else {
            "phase launch: in full (arguments changed)"
        }
    }

    /// After a miss (`newest`: the handle's most recently used entry):
    /// the entry to keep the launch's line in, emptied — a free one, else
    /// the least recently used —, or `None` while the handle's launches
    /// keep missing (arguments that change every time: keeping would copy
    /// their lines for nothing and push out lines that repeat), but for one
    /// in [`KEEP_RETRY`]. A miss because the handle's line was kept before
    /// the epoch (now `epoch`) moved says nothing about its arguments: that
    /// dead line's entry keeps the new one. (Counted as a miss, a program
    /// that registers its kernels while its first launches run — PyTorch
    /// registers some 20 000 — stopped keeping lines of kernels launched
    /// three times by then, and recorded them in full for 64 launches at a
    /// time.)
    fn slot_after_miss(&mut self, newest: Option<usize>, epoch: u64) -> Option<usize> {
        if let Some(n) = newest
            && self.entries[n].key.is_some_and(|k| k.epoch != epoch)
        {
            let e = &mut self.entries[n];
            (e.key, e.misses, e.used) = (None, 0, self.tick);
            self.last = n;
            return Some(n);
        }
        let misses = newest
            .map_or(0, |n| self.entries[n].misses)
            .saturating_add(1);
        if let Some(n) = newest {
            self.entries[n].misses = misses;
        }
        if misses > 2 && !misses.is_multiple_of(KEEP_RETRY) {
            return None;
        }
        let i = if self.entries.len() < WAYS {
            self.entries.push(Entry::default());
            self.entries.len() - 1
        } else {
            (0..self.entries.len())
                .min_by_key(|&i| self.entries[i].used)
                .unwrap_or(0)
        };
        let e = &mut self.entries[i];
        (e.key, e.misses, e.used) = (None, misses, self.tick);
        self.last = i;
        Some(i)
    }
}

/// See [`LaunchMemo::slot_after_miss`].
const KEEP_RETRY: u32 = 64;

impl Entry {
    /// The kept line, if `key` is the kept one and argument `i` (read with
    /// `arg(i, size)`, `size` being the kept size of argument `i`) has the
    /// kept bytes for every `i`.
    #[inline(always)]
    pub fn hit<'a>(
        &self,
        key: &LaunchKey,
        arg: impl Fn(usize, usize) -> &'a [u8],
    ) -> Option<&[u8]> {
        if self.key.as_ref() != Some(key) {
            return None;
        }
        let mut at = 0;
        for (i, &size) in self.sizes.iter().enumerate() {
            if !same_bytes(arg(i, size), &self.args[at..at + size]) {
                return None;
            }
            at += size;
        }
        Some(&self.line)
    }

    /// Keeps `line`, encoded from `key` and `args`.
    pub fn keep<'a>(
        &mut self,
        key: LaunchKey,
        args: impl IntoIterator<Item = &'a [u8]>,
        line: &[u8],
    ) {
        // Unkept while it changes: a panic half-way leaves nothing stale.
        self.key = None;
        self.sizes.clear();
        self.args.clear();
        for a in args {
            self.sizes.push(a.len());
            self.args.extend_from_slice(a);
        }
        self.line.clear();
        self.line.extend_from_slice(line);
        static SERIALS: AtomicU64 = AtomicU64::new(1);
        self.serial = SERIALS.fetch_add(1, Ordering::Relaxed);
        self.key = Some(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> LaunchKey {
        LaunchKey {
            api: "__cudaLaunchKernel",
            func: 0x5000,
            dims: LaunchDims {
                grid: [1, 1, 1],
                block: [32, 1, 1],
                shmem: 0,
                stream: 0,
            },
            epoch: 3,
            packed: false,
            attrs: 0,
        }
    }

    const A: [u8; 8] = 0x7f00_0000_1000u64.to_le_bytes();
    const B: [u8; 4] = [1, 2, 3, 4];

    fn kept() -> Entry {
        let mut m = Entry::default();
        m.keep(key(), [&A[..], &B[..]], b"LINE\n");
        m
    }

    fn args<'a>(a: &'a [u8], b: &'a [u8]) -> impl Fn(usize, usize) -> &'a [u8] {
        move |i, size| {
            let v = [a, b][i];
            &v[..size.min(v.len())]
        }
    }

    #[test]
    fn same_inputs_give_the_kept_line() {
        assert_eq!(kept().hit(&key(), args(&A, &B)), Some(&b"LINE\n"[..]));
    }

    #[test]
    fn empty_memo_misses() {
        assert_eq!(Entry::default().hit(&key(), args(&A, &B)), None);
    }

    #[test]
    fn any_key_field_or_argument_byte_changed_misses() {
        let m = kept();
        let mut changed = vec![];
        for f in 0..10 {
            let mut k = key();
            match f {
                0 => k.api = "__cudaLaunchKernel_ptsz",
                1 => k.func += 1,
                2 => k.dims.grid[2] = 2,
                3 => k.dims.block[0] = 64,
                4 => k.dims.shmem = 16,
                5 => k.dims.stream = 0x10,
                6 => k.epoch += 1,
                7 => k.attrs = 0x1234,
                8 => k.packed = true,
                _ => {}
            }
            changed.push(k);
        }
        let same_key = changed.pop().unwrap();
        for k in &changed {
            assert_eq!(m.hit(k, args(&A, &B)), None, "{k:?}");
        }
        for i in 0..A.len() {
            let mut a = A;
            a[i] ^= 1;
            assert_eq!(m.hit(&same_key, args(&a, &B)), None, "byte {i} of A");
        }
        for i in 0..B.len() {
            let mut b = B;
            b[i] ^= 0x80;
            assert_eq!(m.hit(&same_key, args(&A, &b)), None, "byte {i} of B");
        }
    }

    #[test]
    fn keep_replaces_the_line() {
        let mut m = kept();
        let mut k = key();
        k.epoch += 1;
        m.keep(k, [&B[..]], b"OTHER\n");
        assert_eq!(m.hit(&k, args(&B, &[])), Some(&b"OTHER\n"[..]));
        assert_eq!(m.hit(&key(), args(&A, &B)), None);
    }

    /// A launch through the memo as `record` makes it: whether it
    /// repeated a kept line; on a miss its line (`line`) is kept when the
    /// memo says so.
    fn launch(m: &mut LaunchMemo, k: LaunchKey, a: &[u8], line: &[u8]) -> bool {
        m.tick += 1;
        let arg = |_: usize, size: usize| &a[..size.min(a.len())];
        match m.find(&k, &arg) {
            Ok(i) => {
                m.last = i;
                m.entries[i].used = m.tick;
                m.entries[i].misses = 0;
                true
            }
            Err(newest) => {
                if let Some(i) = m.slot_after_miss(newest, k.epoch) {
                    m.entries[i].keep(k, [a], line);
                }
                false
            }
        }
    }

    fn with_func(func: u64) -> LaunchKey {
        LaunchKey { func, ..key() }
    }

    #[test]
    fn a_step_of_25_kernels_repeats_every_line_from_the_second_step() {
        let mut m = LaunchMemo::new();
        for step in 0..3 {
            for f in 0..25 {
                let hit = launch(&mut m, with_func(f), &A, format!("L{f}").as_bytes());
                assert_eq!(hit, step > 0, "step {step}, kernel {f}");
            }
        }
    }

    #[test]
    fn one_kernel_launched_from_several_places_keeps_a_line_for_each() {
        let mut m = LaunchMemo::new();
        let args: Vec<[u8; 8]> = (0..5u64)
            .map(|i| (0x7f00_0000_0000 + i).to_le_bytes())
            .collect();
        let mut hits_per_step = vec![];
        for _ in 0..6 {
            let hits = args
                .iter()
                .filter(|a| launch(&mut m, key(), &a[..], b"L"))
                .count();
            hits_per_step.push(hits);
        }
        // Two new lines kept per step until all five are: then every one hits.
        assert_eq!(hits_per_step, [0, 2, 4, 5, 5, 5]);
    }

    #[test]
    fn a_kernel_whose_arguments_always_change_does_not_push_out_the_others() {
        let mut m = LaunchMemo::new();
        for step in 0..500u64 {
            let hits = (1..=20)
                .filter(|&f| launch(&mut m, with_func(f), &A, b"L"))
                .count();
            assert_eq!(hits, if step == 0 { 0 } else { 20 }, "step {step}");
            launch(&mut m, with_func(0), &step.to_le_bytes(), b"X");
        }
        let changing = m
            .entries
            .iter()
            .filter(|e| e.key.is_some_and(|k| k.func == 0));
        assert!(changing.count() <= WAYS - 20);
    }

    #[test]
    fn past_ways_lines_the_least_recently_used_gives_way() {
        let mut m = LaunchMemo::new();
        for f in 0..=WAYS as u64 {
            launch(&mut m, with_func(f), &A, b"L");
        }
        assert_eq!(m.entries.len(), WAYS);
        // 0 was pushed out by WAYS; 0 then pushes out 1, the oldest.
        assert!(!launch(&mut m, with_func(0), &A, b"L"));
        assert!(!launch(&mut m, with_func(1), &A, b"L"));
        assert!(launch(&mut m, with_func(3), &A, b"L"));
        assert!(launch(&mut m, with_func(WAYS as u64), &A, b"L"));
    }

    #[test]
    fn a_line_gone_stale_with_the_epoch_is_kept_again_at_once() {
        let mut m = LaunchMemo::new();
        // The epoch moves between the first launches (a program still
        // registering its kernels), then stays.
        for epoch in 0..5 {
            let k = LaunchKey { epoch, ..key() };
            assert!(!launch(&mut m, k, &A, b"L"), "epoch {epoch}");
        }
        let k = LaunchKey { epoch: 4, ..key() };
        assert!(launch(&mut m, k, &A, b"L"), "kept at the last move");
        assert_eq!(m.entries.len(), 1, "each dead line's entry reused");
        // Arguments that change still stop the keeping.
        for n in 0..3u64 {
            launch(&mut m, k, &n.to_le_bytes(), b"X");
        }
        assert_eq!(m.entries.len(), 3, "the third miss in a row is not kept");
    }

    #[test]
    fn launches_that_keep_missing_are_kept_one_in_keep_retry() {
        let mut m = LaunchMemo::new();
        for n in 1..=200u64 {
            launch(&mut m, key(), &n.to_le_bytes(), b"X");
        }
        // Kept: the first two, and 64, 128, 192.
        assert_eq!(m.entries.len(), 2 + 3);
        // A hit starts the count over.
        assert!(launch(&mut m, key(), &192u64.to_le_bytes(), b"X"));
        assert!(!launch(&mut m, key(), &1000u64.to_le_bytes(), b"X"));
        assert!(!launch(&mut m, key(), &1001u64.to_le_bytes(), b"X"));
        let n = m.entries.len();
        assert!(!launch(&mut m, key(), &1002u64.to_le_bytes(), b"X"));
        assert_eq!(m.entries.len(), n, "the third miss in a row is not kept");
    }
}
