//! The recorder's per-event cost, in-process (no runtime underneath).
//!
//! Run: `cargo bench -p hrr-recorder --bench record` (the recorder alone:
//! no entry point of the capture library is linked in). Figures and
//! method: docs/PERFORMANCE.md, "Capture".

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_main};
use hrr_codeobj::{ArgKind, ArgMeta, KernelMeta};
use hrr_core::manifest::Platform;
use hrr_core::wire::encode::{BlobHex, LaunchRef};
use hrr_core::{BlobId, Dir, MemKind};
use hrr_recorder::kept::Kept;
use hrr_recorder::record::code_objects::{CodeError, Module};
use hrr_recorder::record::event_line::{
    HeadCache, encode_launch_scanned, encode_launch_scanned_cached,
};
use hrr_recorder::record::kernel_args::{ArgLayout, ArgSlot, ArgValues};
use hrr_recorder::record::launch_memo::{self, Entry, LaunchKey};
use hrr_recorder::record::recorder::{Closing, Copy, LaunchDims, Recorder};
use hrr_recorder::sink::blob_batch::BlobBatch;
use hrr_recorder::sink::event_sink::LockMode;

/// A stand-in for a kept launch line (what a memo hit appends): a whole
/// line, so that the events file's line count matches the events appended.
const KEPT_LINE: [u8; 400] = {
    let mut l = [b'x'; 400];
    l[399] = b'\n';
    l
};

/// A recorder with its events writer thread running, as in a capture.
fn recorder(dir: &std::path::Path) -> &'static Recorder {
    let r: &'static Recorder = Box::leak(Box::new(
        Recorder::create(dir, Platform::Cpu, vec!["bench".into()], Default::default()).unwrap(),
    ));
    std::thread::spawn(move || r.run_writer());
    r
}

fn meta() -> KernelMeta {
    let arg = |offset, size, kind| ArgMeta {
        offset,
        size,
        kind,
        address_space: None,
        name: None,
    };
    KernelMeta {
        name: "nop".into(),
        symbol: "nop".into(),
        kernarg_segment_size: 28,
        args: vec![
            arg(0, 8, ArgKind::GlobalBuffer),
            arg(8, 8, ArgKind::GlobalBuffer),
            arg(16, 8, ArgKind::ByValue),
            arg(24, 4, ArgKind::ByValue),
        ],
    }
}

/// One `hipModuleLaunchKernel` of a 4-argument kernel: two pointers into
/// live allocations, a 64-bit and a 32-bit scalar (the scalars are scanned).
fn launch(c: &mut Criterion) {
    let t = tempfile::tempdir().unwrap();
    let r = recorder(t.path());
    let code = BlobId::of(b"code");
    r.code().add_module(1, Module::new(code, Ok(vec![meta()])));
    r.code().add_function(2, 1, "nop");
    // A realistic live set: many allocations, the kernel's two among them.
    for i in 0..1000u64 {
        r.allocs()
            .insert(0x7f00_1000_0000 + i * 0x10_0000, 0x8_0000, MemKind::Device);
    }
    let (a, b) = (
        0x7f00_1000_0000u64 + 0x10_0000 * 17,
        0x7f00_1000_0000u64 + 0x10_0000 * 900,
    );
    let (x, y) = (12345u64, 7u32);
    let (pa, pb, px, py) = (
        a.to_le_bytes(),
        b.to_le_bytes(),
        x.to_le_bytes(),
        y.to_le_bytes(),
    );
    let kernel = r.code().function(2).unwrap();
    let dims = LaunchDims {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        shmem: 0,
        stream: 0,
    };
    c.bench_function("record/launch_4_args", |bch| {
        bch.iter(|| {
            let vals: [&[u8]; 4] = [&pa, &pb, &px, &py];
            let values = ArgValues::Params(&vals);
            r.launch(
                "hipModuleLaunchKernel",
                0,
                Some(&kernel),
                |_| Err(CodeError::Unregistered),
                2,
                &dims,
                &values,
                None,
            );
        })
    });
    // The repeat path of a `<<<>>>` launch (`launch_memo`): what replaces
    // the lookup, argument gathering and encode (`_encode_head_cached` below);
    // the sink's append that follows is the same for both. Flat out, the
    // sink is bound by the page cache (see `record/launch_4_args`).
    let mut memo = Entry::default();
    let key = LaunchKey {
        api: "__cudaLaunchKernel",
        func: 2,
        dims,
        epoch: launch_memo::epoch(),
        attrs: 0,
        packed: false,
    };
    memo.keep(key, [&pa[..], &pb, &px, &py], &KEPT_LINE);
    c.bench_function("record/launch_4_args_memo_hit", |bch| {
        bch.iter(|| {
            let vals: [&[u8]; 4] = [&pa, &pb, &px, &py];
            let key = LaunchKey {
                epoch: launch_memo::epoch(),
                ..key
            };
            let line = memo.hit(&key, |i, _| vals[i]).expect("a repeated launch");
            criterion::black_box(line);
        })
    });
    // What the memo adds to a launch whose 64-bit scalar changes every
    // time (nothing recorded here: `in_full` is empty): the thread's memo,
    // the failed check, and a kept line only one launch in 64.
    let mut n = 0u64;
    c.bench_function("record/launch_4_args_memo_miss", |bch| {
        bch.iter(|| {
            n += 1;
            let px = (x + n).to_le_bytes();
            let vals: [&[u8]; 4] = [&pa, &pb, &px, &py];
            let key = LaunchKey {
                epoch: launch_memo::epoch(),
                ..key
            };
            launch_memo::record(
                r,
                key,
                |i, _| vals[i],
                |slot| {
                    if let Some(s) = slot {
                        s.keep(&ArgValues::Params(&vals), &KEPT_LINE);
                    }
                },
            );
        })
    });
    // The same launch event encoded into a reused buffer: the CPU cost of
    // the record path without the sink's lock and I/O.
    let allocs = hrr_recorder::record::live_allocs::LiveAllocs::new();
    for i in 0..1000u64 {
        allocs.insert(0x7f00_1000_0000 + i * 0x10_0000, 0x8_0000, MemKind::Device);
    }
    let layout = kernel
        .resolve(|_| Err(CodeError::Unregistered))
        .unwrap()
        .layout
        .cloned();
    let hex = BlobHex::of(&code);
    let k = LaunchRef {
        name: "nop",
        code: &hex,
        func: Some(2),
        grid: [1; 3],
        block: [1; 3],
        shmem: 0,
        stream: 0,
    };
    let mut body = Vec::with_capacity(1024);
    c.bench_function("record/launch_4_args_encode_only", |bch| {
        bch.iter(|| {
            let vals: [&[u8]; 4] = [&pa, &pb, &px, &py];
            body.clear();
            let view = allocs.view();
            encode_launch_scanned(
                &mut body,
                7,
                0,
                "hipModuleLaunchKernel",
                0,
                &k,
                ArgValues::Params(&vals).args(layout.as_ref()),
                &view,
            );
            criterion::black_box(&body);
        })
    });
    // The same, as the recorder encodes it after a memo miss, with the
    // 64-bit scalar changing every time: the head copied from the thread's
    // cache, the arguments encoded and scanned.
    let mut heads = HeadCache::new();
    let mut n = 0u64;
    c.bench_function("record/launch_4_args_encode_head_cached", |bch| {
        bch.iter(|| {
            n += 1;
            let px = (x + n).to_le_bytes();
            let vals: [&[u8]; 4] = [&pa, &pb, &px, &py];
            body.clear();
            encode_launch_scanned_cached(
                &mut body,
                &mut heads,
                7,
                0,
                "hipModuleLaunchKernel",
                0,
                &k,
                ArgValues::Params(&vals).args(layout.as_ref()),
                &allocs,
            );
            criterion::black_box(&body);
        })
    });
    // A training step's launches: 25 kernels in turn, each with a 1 KiB
    // by-value struct (PyTorch's TensorIterator and foreach kernels) holding
    // pointers, the same every step. Per launch, encoded in full (head from
    // the thread's cache, arguments scanned): what each would cost without
    // the memo (`_memo` below).
    let names: Vec<String> = (0..25).map(|i| format!("step_kernel_{i}")).collect();
    let refs: Vec<LaunchRef<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| LaunchRef {
            name,
            code: &hex,
            func: Some(100 + i as u64),
            grid: [4; 3],
            block: [128, 1, 1],
            shmem: 0,
            stream: 0,
        })
        .collect();
    let structs: Vec<Vec<u8>> = (0..25u64)
        .map(|i| {
            (0..128u64)
                .flat_map(|w| (0x7f00_1000_0000 + ((i * 128 + w) % 1000) * 0x10_0000).to_le_bytes())
                .collect()
        })
        .collect();
    // One by-value argument of the struct's size (as the driver's layout
    // gives it): without a layout no argument would be read at all.
    let one_arg = |size: u32| ArgLayout {
        slots: vec![ArgSlot {
            offset: 0,
            size,
            pointer: false,
        }],
    };
    let struct_layout = one_arg(1024);
    let mut step_heads = HeadCache::new();
    let mut next = 0usize;
    c.bench_function("record/launch_step_25_kernels_1KiB", |bch| {
        bch.iter(|| {
            let i = next % 25;
            next += 1;
            let vals: [&[u8]; 1] = [&structs[i]];
            body.clear();
            encode_launch_scanned_cached(
                &mut body,
                &mut step_heads,
                7,
                0,
                "__cudaLaunchKernel",
                0,
                &refs[i],
                ArgValues::Params(&vals).args(Some(&struct_layout)),
                &allocs,
            );
            criterion::black_box(&body);
        })
    });
    // PyTorch's foreach kernels (the optimizer step): a 4 KiB by-value list
    // of tensor addresses, pieces of a few large allocator segments (a run
    // of 64 tensors in each: a list's tensors are allocated together), with
    // one word changing every launch, so the line is encoded and its 512
    // words scanned each time.
    let segments = hrr_recorder::record::live_allocs::LiveAllocs::new();
    for s in 0..8u64 {
        segments.insert(
            0x7f40_0000_0000 + s * 0x1000_0000,
            0x0800_0000,
            MemKind::Device,
        );
    }
    let mut list: Vec<u8> = (0..512u64)
        .flat_map(|w| (0x7f40_0000_0000 + (w / 64) * 0x1000_0000 + w * 0x1000).to_le_bytes())
        .collect();
    let list_layout = one_arg(4096);
    let mut list_heads = HeadCache::new();
    let mut n = 0u64;
    c.bench_function("record/launch_foreach_4KiB_list_changed", |bch| {
        bch.iter(|| {
            n += 1;
            list[..8].copy_from_slice(&(0x7f40_0000_0000 + (n % 0x0800_0000)).to_le_bytes());
            let vals: [&[u8]; 1] = [&list];
            body.clear();
            encode_launch_scanned_cached(
                &mut body,
                &mut list_heads,
                7,
                0,
                "__cudaLaunchKernel",
                0,
                &refs[0],
                ArgValues::Params(&vals).args(Some(&list_layout)),
                &segments,
            );
            criterion::black_box(&body);
        })
    });
    // The same kernels' argument as PyTorch lays it out
    // (`TensorListMetadata<2>`, 4 KiB): 2 × 110 tensor addresses, then
    // 110 element counts, 320 block-to-tensor bytes and 320 block-to-chunk
    // ints; 12 addresses are live and most of the rest is stale pointers
    // and small numbers from earlier launches. One count changes per launch.
    let mut meta: Vec<u8> = Vec::with_capacity(4096);
    for w in 0..220u64 {
        meta.extend_from_slice(
            &(0x7f40_0000_0000 + (w % 64) * 0x10_0000 + w * 0x100).to_le_bytes(),
        );
    }
    for n in 0..110u64 {
        meta.extend_from_slice(&(n * 4096 + 17).to_le_bytes());
    }
    meta.extend((0..320u32).map(|b| (b / 27) as u8));
    for c in 0..320u32 {
        meta.extend_from_slice(&(c % 27).to_le_bytes());
    }
    meta.resize(4096, 0);
    let meta_layout = one_arg(4096);
    let mut meta_heads = HeadCache::new();
    c.bench_function("record/launch_foreach_metadata_changed", |bch| {
        bch.iter(|| {
            n += 1;
            meta[1760..1768].copy_from_slice(&(n % 0x0800_0000).to_le_bytes());
            let vals: [&[u8]; 1] = [&meta];
            body.clear();
            encode_launch_scanned_cached(
                &mut body,
                &mut meta_heads,
                7,
                0,
                "__cudaLaunchKernel",
                0,
                &refs[1],
                ArgValues::Params(&vals).args(Some(&meta_layout)),
                &segments,
            );
            criterion::black_box(&body);
        })
    });
    // The same step through the thread's memo (`launch_memo::record`):
    // each of the 25 kernels finds its own kept line, which is appended.
    let mut next = 0usize;
    c.bench_function("record/launch_step_25_kernels_1KiB_memo", |bch| {
        bch.iter(|| {
            let i = next % 25;
            next += 1;
            let vals: [&[u8]; 1] = [&structs[i]];
            let key = LaunchKey {
                func: 100 + i as u64,
                epoch: launch_memo::epoch(),
                ..key
            };
            launch_memo::record(
                r,
                key,
                |j, _| vals[j],
                |slot| {
                    if let Some(s) = slot {
                        s.keep(&ArgValues::Params(&vals), &KEPT_LINE);
                    }
                },
            );
        })
    });
    c.bench_function("record/memset", |bch| {
        bch.iter(|| r.memset("hipMemsetAsync", 0, a, 0, 4096, 1, Some(0x55)));
    });
    r.finish("exit", LockMode::Block, Closing::default);
    let lines = {
        use std::io::Read;
        // A finished archive's events are compressed (HRR_EVENTS unset).
        let file = std::fs::File::open(t.path().join("events.ndjson.zst")).unwrap();
        let mut f = zstd::Decoder::new(file).unwrap();
        let (mut buf, mut n) = (vec![0u8; 1 << 20], 0usize);
        loop {
            match f.read(&mut buf).unwrap() {
                0 => break n,
                k => n += buf[..k].iter().filter(|&&b| b == b'\n').count(),
            }
        }
    };
    assert_eq!(
        lines as u64,
        r.events_appended(),
        "every recorded event reached the file"
    );
}

/// Times `record` on `data` made new `iters` times (its first word a count
/// in `n`), so that every blob is really written; after each, outside the
/// timed part, waits `pause`, settles the recorder (a blob written from
/// where it lies is on disk before `data` changes) and removes the blob
/// file so the disk does not fill.
fn each_new(
    r: &Recorder,
    data: &mut [u8],
    n: &mut u64,
    iters: u64,
    pause: Duration,
    mut record: impl FnMut(&[u8]),
) -> Duration {
    let store = hrr_core::blob_store::BlobStore::of_archive(r.dir());
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        *n += 1;
        data[..8].copy_from_slice(&n.to_le_bytes());
        let t0 = Instant::now();
        record(data);
        total += t0.elapsed();
        std::thread::sleep(pause);
        r.settle_code();
        let _ = std::fs::remove_file(store.path(&BlobId::of(data)));
    }
    total
}

/// A 64 MiB H2D copy of new data: hash + blob file + event.
fn h2d_blob(c: &mut Criterion) {
    const SIZE: usize = 64 << 20;
    let t = tempfile::tempdir().unwrap();
    let r = recorder(t.path());
    let mut data: Vec<u8> = (0..SIZE).map(|i| (i * 7 + i / 4096) as u8).collect();
    let mut g = c.benchmark_group("record/h2d_blob");
    g.throughput(Throughput::Bytes(SIZE as u64));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    let copy = Copy {
        dir: Dir::H2d,
        dst: 0x7f00_0000_0000,
        src: 0x5555_0000_0000,
        size: SIZE as u64,
        stream: None,
    };
    let mut n = 0u64;
    g.bench_function(BenchmarkId::from_parameter("64MiB_new"), |bch| {
        bch.iter_custom(|iters| {
            each_new(r, &mut data, &mut n, iters, Duration::ZERO, |d| {
                r.memcpy("hipMemcpy", 0, &copy, Some(d))
            })
        })
    });
    g.bench_function(BenchmarkId::from_parameter("64MiB_repeat"), |bch| {
        bch.iter(|| r.memcpy("hipMemcpy", 0, &copy, Some(&data)))
    });
    g.finish();
}

/// A 4-byte D2H whose bytes are new every time (a training loop's loss
/// read back each step): blob file + event. Paced (1 ms apart, outside the
/// timed part) like such a loop, so the blob files are written by the
/// writer thread between calls, as in a capture.
fn d2h_small(c: &mut Criterion) {
    let t = tempfile::tempdir().unwrap();
    let r = recorder(t.path());
    let copy = Copy {
        dir: Dir::D2h,
        dst: 0x5555_0000_0000,
        src: 0x7f00_0000_0000,
        size: 4,
        stream: None,
    };
    let mut n = 0u32;
    let mut g = c.benchmark_group("record/d2h_4B_new");
    g.sample_size(20);
    g.bench_function("paced_1ms", |bch| {
        bch.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n = n.wrapping_add(1);
                let t0 = Instant::now();
                r.memcpy("hipMemcpy", 0, &copy, Some(&n.to_le_bytes()));
                total += t0.elapsed();
                std::thread::sleep(Duration::from_millis(1));
            }
            total
        })
    });
    g.finish();
}

/// A 2 MiB code object, new each time (a framework's first launch of a
/// kernel from a fat binary not yet written): hash + blob file (+ module),
/// as the recording thread pays it. Paced 20 ms apart, like a start-up's
/// first launches.
fn code_object(c: &mut Criterion) {
    const SIZE: usize = 2 << 20;
    let t = tempfile::tempdir().unwrap();
    let r = recorder(t.path());
    let mut data: Vec<u8> = (0..SIZE).map(|i| (i * 13 + i / 4096) as u8).collect();
    let mut g = c.benchmark_group("record/code_object");
    g.throughput(Throughput::Bytes(SIZE as u64));
    g.sample_size(10);
    let mut n = 0u64;
    // `_kept`: a registered fat binary's path, hashed here and written by
    // the writer thread from where it lies; else hashed and written here.
    for (name, kept) in [("2MiB_new", false), ("2MiB_new_kept", true)] {
        g.bench_function(BenchmarkId::from_parameter(name), |bch| {
            bch.iter_custom(|iters| {
                let pace = Duration::from_millis(20);
                each_new(r, &mut data, &mut n, iters, pace, |d| {
                    let _module = if kept {
                        // SAFETY: `each_new` settles the recorder before it
                        // changes or drops `d`.
                        r.load_code_kept(unsafe { Kept::new(d.as_ptr(), d.len()) })
                    } else {
                        r.load_code(d)
                    };
                })
            })
        });
    }
    g.finish();
}

/// The writer thread's side of a kept code object: its blob file written
/// from where the bytes lie (`BlobBatch::write` of one 2 MiB kept file),
/// what the writer pays per new code object. The file is removed after
/// each write, outside the timed part.
fn kept_write(c: &mut Criterion) {
    const SIZE: usize = 2 << 20;
    let t = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..SIZE).map(|i| (i * 13 + i / 4096) as u8).collect();
    let id = BlobId::of(&data);
    let name = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
    let (tmp, path) = (name(".tmp-kept"), name("kept"));
    let mut batch = BlobBatch::default();
    let mut g = c.benchmark_group("record/kept_write");
    g.throughput(Throughput::Bytes(SIZE as u64));
    g.sample_size(20);
    g.bench_function(BenchmarkId::from_parameter("2MiB"), |bch| {
        bch.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // SAFETY: `data` outlives the batch's write, unchanged.
                let kept = unsafe { Kept::new(data.as_ptr(), data.len()) };
                batch.push_kept(&tmp, &path, kept, id);
                let t0 = Instant::now();
                batch.write(|_, _| panic!("the kept file was not written"), |_| {});
                total += t0.elapsed();
                std::fs::remove_file(t.path().join("kept")).unwrap();
            }
            total
        })
    });
    g.finish();
}

/// The benchmarks as criterion runs them (`criterion_group!` makes them one
/// function, kept out of this binary's public items).
mod group {
    use criterion::criterion_group;
    criterion_group!(
        benches,
        super::launch,
        super::h2d_blob,
        super::d2h_small,
        super::code_object,
        super::kept_write
    );
}
criterion_main!(group::benches);
