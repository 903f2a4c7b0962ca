//! The capture's part of encoding an event line: kernel arguments written
//! while they are scanned for pointers into the live allocations, and the
//! per-thread cache of launch heads.
//!
//! The line format itself, and the encoder of everything else, is
//! `hrr_core::wire::encode` (checked byte for byte against the reference
//! encoding there). What stays here depends on capture state: the
//! application's argument values ([`ArgIn`]) and the allocations they may
//! point into ([`LiveAllocs`]).

use hrr_core::wire::encode::{BlobHex, EventLine, LaunchRef, launch_head};

use crate::record::kernel_args::ArgIn;
use crate::record::live_allocs::{AllocView, LiveAllocs};

/// `"args":[…]` from arguments as they come from the application: a
/// `global_buffer` is a pointer at offset 0, anything else is scanned
/// against the live allocations while it is written (no intermediate
/// storage on this hot path).
#[inline]
fn write_args_scanned<'b>(
    l: &mut EventLine<'_>,
    args: impl IntoIterator<Item = ArgIn<'b>>,
    allocs: &AllocView<'_>,
) {
    l.open_args();
    for (i, a) in args.into_iter().enumerate() {
        let objs = if a.pointer {
            Vec::new()
        } else {
            allocs.objects_in(a.bytes)
        };
        l.arg_with(
            i,
            a.offset,
            a.bytes,
            |ptrs| {
                if a.pointer {
                    if a.bytes.len() >= 8 {
                        ptrs.push(0);
                    }
                } else {
                    allocs.scan_each(a.bytes, |off| ptrs.push(off));
                }
            },
            &objs,
        );
    }
    l.close_args();
}

/// Encodes the body of a `launch` event straight from the application's
/// argument values, finding embedded pointers as it goes.
#[allow(clippy::too_many_arguments)]
pub fn encode_launch_scanned<'b>(
    buf: &mut Vec<u8>,
    tid: u64,
    dev: u32,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
    args: impl IntoIterator<Item = ArgIn<'b>>,
    allocs: &AllocView<'_>,
) {
    let mut l = launch_head(buf, tid, dev, api, ret, k);
    write_args_scanned(&mut l, args, allocs);
    l.end();
}

/// [`encode_launch_scanned`] for a launch with CUDA launch attributes
/// (written after the arguments, in `Wire` order).
#[allow(clippy::too_many_arguments)]
pub fn encode_launch_scanned_attrs<'b, 'c>(
    buf: &mut Vec<u8>,
    tid: u64,
    dev: u32,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
    args: impl IntoIterator<Item = ArgIn<'b>>,
    allocs: &AllocView<'_>,
    attrs: impl IntoIterator<Item = (u32, &'c [u8])>,
) {
    let mut l = launch_head(buf, tid, dev, api, ret, k);
    write_args_scanned(&mut l, args, allocs);
    l.attrs(attrs);
    l.end();
}

/// Launch heads per thread: how many different ones are kept. A training
/// step launches a few dozen kernels in turn (PyTorch: ~25 for a small
/// MLP); those whose arguments change every step (foreach lists) find
/// their head here. A loop of one kernel finds it in the first entry.
const HEAD_CACHE_ENTRIES: usize = 32;

/// The heads (everything before `,"args":`) of a thread's recent launch
/// events, with the values each was encoded from. A launch of the same
/// kernel with the same configuration copies the bytes instead of encoding
/// them again; the key holds every input of [`launch_head`], so the bytes
/// are those the encoder would write. (A launch whose arguments are the same
/// too does not get here: `launch_memo` repeats its whole line.)
#[derive(Default)]
pub struct HeadCache {
    entries: Vec<HeadEntry>,
    /// The entry the next miss replaces once all are in use.
    next: usize,
}

#[derive(Default)]
struct HeadEntry {
    tid: u64,
    dev: u32,
    ret: i64,
    stream: u64,
    func: Option<u64>,
    grid: [u32; 3],
    block: [u32; 3],
    shmem: u32,
    code: BlobHex,
    api: String,
    name: String,
    bytes: Vec<u8>,
}

impl HeadEntry {
    fn matches(&self, tid: u64, dev: u32, api: &str, ret: i64, k: &LaunchRef<'_>) -> bool {
        self.func == k.func
            && self.tid == tid
            && self.dev == dev
            && self.ret == ret
            && self.stream == k.stream
            && self.grid == k.grid
            && self.block == k.block
            && self.shmem == k.shmem
            && self.name == k.name
            && self.api == api
            && self.code == *k.code
    }

    fn set(&mut self, tid: u64, dev: u32, api: &str, ret: i64, k: &LaunchRef<'_>) {
        self.tid = tid;
        self.dev = dev;
        self.ret = ret;
        self.stream = k.stream;
        self.func = k.func;
        self.grid = k.grid;
        self.block = k.block;
        self.shmem = k.shmem;
        self.code = *k.code;
        self.api.clear();
        self.api.push_str(api);
        self.name.clear();
        self.name.push_str(k.name);
        self.bytes.clear();
        launch_head(&mut self.bytes, tid, dev, api, ret, k);
    }
}

impl HeadCache {
    /// An empty cache.
    pub const fn new() -> HeadCache {
        HeadCache {
            entries: Vec::new(),
            next: 0,
        }
    }

    /// The entry for this head, made (and its head encoded) on a miss.
    fn entry(
        &mut self,
        tid: u64,
        dev: u32,
        api: &str,
        ret: i64,
        k: &LaunchRef<'_>,
    ) -> &mut HeadEntry {
        if let Some(i) = self
            .entries
            .iter()
            .position(|e| e.matches(tid, dev, api, ret, k))
        {
            return &mut self.entries[i];
        }
        let i = if self.entries.len() < HEAD_CACHE_ENTRIES {
            self.entries.push(HeadEntry::default());
            self.entries.len() - 1
        } else {
            let i = self.next;
            self.next = (self.next + 1) % HEAD_CACHE_ENTRIES;
            i
        };
        let e = &mut self.entries[i];
        e.set(tid, dev, api, ret, k);
        e
    }
}

/// [`encode_launch_scanned`] through `cache` (the head), its arguments
/// scanned under a view of `allocs`.
#[allow(clippy::too_many_arguments)]
pub fn encode_launch_scanned_cached<'b>(
    buf: &mut Vec<u8>,
    cache: &mut HeadCache,
    tid: u64,
    dev: u32,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
    args: impl IntoIterator<Item = ArgIn<'b>>,
    allocs: &LiveAllocs,
) {
    buf.extend_from_slice(&cache.entry(tid, dev, api, ret, k).bytes);
    let mut l = EventLine::resume(buf);
    write_args_scanned(&mut l, args, &allocs.view());
    l.end();
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::wire::encode::line;
    use hrr_core::{Addr, BlobId, Event, HexBytes, KernelArg, MemKind, Op};
    use proptest::prelude::*;

    fn reference(seq: u64, t: u64, tid: u64, api: &str, ret: i64, op: &Op) -> Vec<u8> {
        let e = Event {
            seq,
            t,
            tid,
            api: api.to_string(),
            ret,
            dev: 0,
            op: op.clone(),
        };
        let mut v = Vec::new();
        e.write_line(&mut v);
        v
    }

    #[test]
    fn scanned_launch_matches_hrr_core() {
        use crate::record::kernel_args::ArgIn;
        let allocs = crate::record::live_allocs::LiveAllocs::new();
        allocs.insert(0x7f12_3456_0000, 0x1000, MemKind::Device);
        let p = 0x7f12_3456_0010u64.to_le_bytes();
        let mut s = vec![1u8];
        s.extend_from_slice(&p);
        s.extend_from_slice(&[0; 3]);
        let short = [1u8, 2, 3, 4];
        let args = [
            ArgIn {
                offset: Some(0),
                bytes: &p,
                pointer: true,
            },
            ArgIn {
                offset: Some(8),
                bytes: &s,
                pointer: false,
            },
            ArgIn {
                offset: Some(20),
                bytes: &short,
                pointer: true,
            },
        ];
        let code = BlobId::of(b"c");
        let k = LaunchRef {
            name: "k",
            code: &BlobHex::of(&code),
            func: Some(0x42),
            grid: [2, 1, 1],
            block: [64, 1, 1],
            shmem: 16,
            stream: 0x99,
        };
        let mut body = Vec::new();
        encode_launch_scanned(
            &mut body,
            5,
            0,
            "hipModuleLaunchKernel",
            0,
            &k,
            args,
            &allocs.view(),
        );
        let arg = |offset, hex: &[u8], ptrs: Vec<u32>| KernelArg {
            offset: Some(offset),
            size: hex.len() as u32,
            hex: HexBytes(hex.to_vec()),
            ptrs,
            objs: Vec::new(),
        };
        let op = Op::Launch {
            name: "k".into(),
            code,
            func: Some(Addr(0x42)),
            grid: [2, 1, 1],
            block: [64, 1, 1],
            shmem: 16,
            stream: Addr(0x99),
            args: vec![
                arg(0, &p, vec![0]),
                arg(8, &s, vec![1]),
                arg(20, &short, vec![]),
            ],
            attrs: vec![],
        };
        assert_eq!(
            line(3, 4, &body),
            reference(3, 4, 5, "hipModuleLaunchKernel", 0, &op)
        );
    }

    proptest! {
        /// Arguments encoded while scanned (pointers at random offsets,
        /// several arguments, pointer and scanned ones) match hrr-core.
        #[test]
        fn scanned_args_match_hrr_core(
            parts in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..20), 0u8..3, any::<bool>(), 0u32..100_000),
                0..5,
            ),
        ) {
            use crate::record::kernel_args::ArgIn;
            let allocs = crate::record::live_allocs::LiveAllocs::new();
            allocs.insert(0x7f12_3456_0000, 0x1000, MemKind::Device);
            let datas: Vec<Vec<u8>> = parts
                .iter()
                .map(|(pre, n, _, _)| {
                    let mut d = pre.clone();
                    for i in 0..*n {
                        d.extend_from_slice(&(0x7f12_3456_0010u64 + u64::from(i)).to_le_bytes());
                        d.extend_from_slice(pre);
                    }
                    d
                })
                .collect();
            let args: Vec<ArgIn<'_>> = parts
                .iter()
                .zip(&datas)
                .map(|((_, _, ptr, off), d)| ArgIn { offset: (*off != 7).then_some(*off), bytes: d, pointer: *ptr })
                .collect();
            let code = BlobId::of(b"c");
            let k = LaunchRef {
                name: "k",
                code: &BlobHex::of(&code),
                func: None,
                grid: [2, 1, 1],
                block: [64, 1, 1],
                shmem: 0,
                stream: 0,
            };
            let mut body = Vec::new();
            encode_launch_scanned(&mut body, 5, 0, "hipLaunchKernel", 0, &k, args.iter().copied(), &allocs.view());
            let kargs = args
                .iter()
                .map(|a| {
                    let mut ptrs = Vec::new();
                    if a.pointer {
                        if a.bytes.len() >= 8 {
                            ptrs.push(0);
                        }
                    } else {
                        allocs.view().scan(a.bytes, &mut ptrs);
                    }
                    KernelArg { offset: a.offset, size: a.bytes.len() as u32, hex: HexBytes(a.bytes.to_vec()), ptrs, objs: Vec::new() }
                })
                .collect();
            let op = Op::Launch {
                name: "k".into(),
                code,
                func: None,
                grid: [2, 1, 1],
                block: [64, 1, 1],
                shmem: 0,
                stream: Addr(0),
                args: kargs,
                attrs: vec![],
            };
            prop_assert_eq!(line(3, 4, &body), reference(3, 4, 5, "hipLaunchKernel", 0, &op));
        }

        /// A launch line from the cache is the bytes the encoder writes,
        /// whichever launches came before (keys drawn from small pools, so
        /// hits, misses and evictions all happen), and whatever allocations
        /// came and went in between (an argument word that points into an
        /// allocation made or freed since the last launch must be rescanned).
        #[test]
        fn cached_launch_lines_match_the_encoder(
            seq in proptest::collection::vec((0u8..3, 0u8..2, 0u8..3, 0u8..2, 0u8..6, 0u8..2, 0u8..3, 0u8..3), 1..40),
            arg in proptest::collection::vec(any::<u8>(), 0..24),
        ) {
            use crate::record::kernel_args::ArgIn;
            let allocs = crate::record::live_allocs::LiveAllocs::new();
            allocs.insert(0x7f12_3456_0000, 0x1000, MemKind::Device);
            let late = 0x7f99_0001_0000u64;
            let mut words = late.to_le_bytes().to_vec();
            words.extend_from_slice(&0x7f12_3456_0010u64.to_le_bytes());
            let pool: [&[u8]; 3] = [&arg, &words, &words[..8]];
            let codes = [BlobHex::of(&BlobId::of(b"a")), BlobHex::of(&BlobId::of(b"b"))];
            let names = ["k", "k2", "we\"ird"];
            let apis = ["hipModuleLaunchKernel", "cudaLaunchKernel"];
            let mut cache = HeadCache::new();
            for (name, code, tid, api, cfg, ret, which, change) in seq {
                match change {
                    1 => allocs.insert(late, 0x100, MemKind::Device),
                    2 => { allocs.remove(late); }
                    _ => {}
                }
                let c = u32::from(cfg);
                let k = LaunchRef {
                    name: names[name as usize],
                    code: &codes[code as usize],
                    func: (cfg != 5).then_some(0x42 + u64::from(cfg % 2)),
                    grid: [1 + c % 2, 1, 1],
                    block: [64, 1 + c % 3, 1],
                    shmem: c / 3,
                    stream: u64::from(cfg % 2) * 0x99,
                };
                let args = [ArgIn { offset: Some(0), bytes: pool[which as usize], pointer: false }];
                let (tid, ret) = (u64::from(tid) + 7, -i64::from(ret));
                let dev = u32::from(cfg % 3 == 1);
                let api = apis[api as usize];
                let mut want = Vec::new();
                encode_launch_scanned(&mut want, tid, dev, api, ret, &k, args, &allocs.view());
                let mut got = b"x".to_vec();
                encode_launch_scanned_cached(&mut got, &mut cache, tid, dev, api, ret, &k, args, &allocs);
                prop_assert_eq!(&got[1..], &want[..]);
            }
        }
    }
}
