//! `LaunchMemo`: a thread's last recorded launch line, kept for the next
//! identical launch.
//!
//! A launch loop records the same line again and again, but for `seq` and
//! `t` (which the sink writes). The memo keeps that line with every input it
//! was encoded from: the entry point, the kernel handle and the registry
//! generation it was resolved under (so name, code and layout), the
//! configuration, the argument bytes, and the [`LiveAllocs`] generation
//! (so the pointers found in them). A launch whose inputs all match appends
//! the kept line without looking the kernel up, gathering and scanning its
//! arguments or encoding anything. On the H200 that path was about half of
//! the recording cost of a `<<<>>>` launch (docs/PERFORMANCE.md).
//!
//! Only successful launches whose arguments came one pointer each
//! (`kernelParams`, the CUDA launches' `args`) are kept; the thread id is fixed
//! because each thread has its own memo ([`record`]).
//!
//! [`LiveAllocs`]: crate::record::live_allocs::LiveAllocs

use std::cell::RefCell;

use crate::record::kernel_args::ArgValues;
use crate::record::recorder::{LaunchDims, Recorder};

thread_local! {
    static MEMO: RefCell<LaunchMemo> = const { RefCell::new(LaunchMemo::new()) };
}

/// Records a successful launch whose inputs are `key` and whose argument
/// `i` reads as `arg(i, size)`: the thread's kept line when they match it,
/// else `in_full` records it and keeps its line in the [`Slot`] it is given
/// (`None`: the thread has no memo, during its TLS teardown).
pub fn record<'a>(
    r: &Recorder,
    key: LaunchKey,
    arg: impl Fn(usize, usize) -> &'a [u8],
    in_full: impl FnOnce(Option<Slot<'_>>),
) {
    let mut in_full = Some(in_full);
    let _ = MEMO.try_with(|m| {
        let Ok(mut memo) = m.try_borrow_mut() else {
            return;
        };
        if let Some(line) = memo.hit(&key, &arg) {
            crate::interpose::self_profile::phase("phase launch: repeated line", || {
                r.repeat_launch(line)
            });
            memo.misses = 0;
            in_full = None;
            return;
        }
        let Some(f) = in_full.take() else {
            return;
        };
        crate::interpose::self_profile::phase("phase launch: in full", || {
            if memo.keeps_next() {
                f(Some(Slot {
                    memo: &mut memo,
                    key,
                }));
            } else {
                f(None);
            }
        });
    });
    if let Some(f) = in_full {
        f(None);
    }
}

/// Where a launch that [`record`] could not repeat keeps its line.
pub struct Slot<'m> {
    memo: &'m mut LaunchMemo,
    key: LaunchKey,
}

impl Slot<'_> {
    /// Keeps `line`, recorded from `values` (only `ArgValues::Params`; see
    /// `Recorder::launch`).
    pub fn keep(self, values: &ArgValues<'_, '_>, line: &[u8]) {
        if let ArgValues::Params(vals) = values {
            self.memo.keep(self.key, vals.iter().copied(), line);
        }
    }
}

/// Everything but the argument bytes that a launch line is encoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchKey {
    /// The entry point.
    pub api: &'static str,
    /// The launched handle (a `cudaKernel_t`, a host stub, ...).
    pub func: u64,
    /// Grid, block, shared memory and stream.
    pub dims: LaunchDims,
    /// Generation of the registry the handle was resolved in (CUDA's
    /// fat-binary registry, HIP's `CodeObjects`), read before the lookup.
    pub registry: u64,
    /// [`LiveAllocs::generation`](crate::record::live_allocs::LiveAllocs::generation),
    /// read before the arguments were scanned.
    pub allocs: u64,
}

/// See the module docs.
#[derive(Default)]
pub struct LaunchMemo {
    key: Option<LaunchKey>,
    /// Size of each argument, in order.
    sizes: Vec<usize>,
    /// The arguments' bytes, end to end.
    args: Vec<u8>,
    /// The line after `seq` and `t` (what the sink appends).
    line: Vec<u8>,
    /// Launches since the last hit.
    misses: u32,
}

/// See [`LaunchMemo::keeps_next`].
const KEEP_RETRY: u32 = 64;

impl LaunchMemo {
    /// An empty memo.
    pub const fn new() -> LaunchMemo {
        LaunchMemo {
            key: None,
            sizes: Vec::new(),
            args: Vec::new(),
            line: Vec::new(),
            misses: 0,
        }
    }

    /// After a miss: whether that launch's line is worth keeping. Not while
    /// launches keep missing (a kernel whose arguments change every time:
    /// keeping would copy its line for nothing), but for one in
    /// [`KEEP_RETRY`]. What stays kept is still right for its key.
    fn keeps_next(&mut self) -> bool {
        self.misses = self.misses.saturating_add(1);
        self.misses <= 2 || self.misses.is_multiple_of(KEEP_RETRY)
    }

    /// The kept line, if `key` is the kept one and argument `i` (read with
    /// `arg(i, size)`, `size` being the kept size of argument `i`) has the
    /// kept bytes for every `i`.
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
            if !same(arg(i, size), &self.args[at..at + size]) {
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
        self.key = Some(key);
    }
}

/// `a == b`, without a `bcmp` call for the common 8-byte argument.
fn same(a: &[u8], b: &[u8]) -> bool {
    match (<[u8; 8]>::try_from(a), <[u8; 8]>::try_from(b)) {
        (Ok(x), Ok(y)) => u64::from_ne_bytes(x) == u64::from_ne_bytes(y),
        _ => a == b,
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
            registry: 3,
            allocs: 7,
        }
    }

    const A: [u8; 8] = 0x7f00_0000_1000u64.to_le_bytes();
    const B: [u8; 4] = [1, 2, 3, 4];

    fn kept() -> LaunchMemo {
        let mut m = LaunchMemo::new();
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
        assert_eq!(LaunchMemo::new().hit(&key(), args(&A, &B)), None);
    }

    #[test]
    fn any_key_field_or_argument_byte_changed_misses() {
        let m = kept();
        let mut changed = vec![];
        for f in 0..9 {
            let mut k = key();
            match f {
                0 => k.api = "__cudaLaunchKernel_ptsz",
                1 => k.func += 1,
                2 => k.dims.grid[2] = 2,
                3 => k.dims.block[0] = 64,
                4 => k.dims.shmem = 16,
                5 => k.dims.stream = 0x10,
                6 => k.registry += 1,
                7 => k.allocs += 1,
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
        k.allocs += 1;
        m.keep(k, [&B[..]], b"OTHER\n");
        assert_eq!(m.hit(&k, args(&B, &[])), Some(&b"OTHER\n"[..]));
        assert_eq!(m.hit(&key(), args(&A, &B)), None);
    }

    #[test]
    fn launches_that_keep_missing_are_kept_one_in_keep_retry() {
        let mut m = LaunchMemo::new();
        let kept: Vec<u32> = (1..=200).filter(|_| m.keeps_next()).collect();
        assert_eq!(kept, [1, 2, 64, 128, 192]);
        // A hit (record resets the count) starts over.
        m.misses = 0;
        assert!(m.keeps_next() && m.keeps_next() && !m.keeps_next());
    }
}
