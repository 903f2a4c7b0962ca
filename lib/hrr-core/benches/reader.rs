//! Reader throughput on typical launch/memcpy lines (target: >= 1M events/s
//! on one core), and the same stream through `ndjson-stream` for comparison
//! (the project brief named that crate; docs/PERFORMANCE.md has the figures
//! and why the per-line reader is used).

// A benchmark binary: `criterion_main!` defines its undocumented `main`.
#![allow(missing_docs)]

use std::borrow::Cow;
use std::io::Write;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hrr_core::event::{Dir, Event, KernelArg, MemKind, Op};
use hrr_core::event_reader::{EventReader, ReadOptions};
use hrr_core::hex::{Addr, BlobId, HexBytes};
use serde::Deserialize;

const EVENTS: u64 = 100_000;

/// Half launches with four arguments, half memcpys (H2D/D2H with blobs).
fn stream() -> Vec<u8> {
    let code = BlobId::of(b"code object");
    let mut out = Vec::new();
    for seq in 0..EVENTS {
        let op = if seq % 2 == 0 {
            let ptr = |p: u64, off: u32| KernelArg {
                offset: Some(off),
                size: 8,
                hex: HexBytes(p.to_le_bytes().to_vec()),
                ptrs: vec![0],
                objs: Vec::new(),
            };
            Op::Launch {
                name: "_Z6vecAddPKfS0_Pfi".into(),
                code,
                func: None,
                grid: [4096, 1, 1],
                block: [256, 1, 1],
                shmem: 0,
                stream: Addr(0x5555_6666_7000),
                args: vec![
                    ptr(0x7fbe_0140_0000 + seq, 0),
                    ptr(0x7fbe_0180_0000, 8),
                    ptr(0x7fbe_01c0_0000, 16),
                    KernelArg {
                        offset: Some(24),
                        size: 4,
                        hex: HexBytes(vec![0, 0, 16, 0]),
                        ptrs: vec![],
                        objs: Vec::new(),
                    },
                ],
                attrs: vec![],
            }
        } else {
            Op::Memcpy {
                dir: if seq % 4 == 1 { Dir::H2d } else { Dir::D2h },
                dst: Addr(0x7fbe_0140_0000),
                src: Addr(0x5566_7788_0000 + seq),
                size: 1 << 20,
                stream: Some(Addr(0x5555_6666_7000)),
                blob: Some(BlobId::of(&seq.to_le_bytes())),
            }
        };
        let api = if seq % 2 == 0 {
            "hipModuleLaunchKernel"
        } else {
            "hipMemcpyAsync"
        };
        Event {
            seq,
            t: 1_000_000_000 + seq * 1000,
            tid: 4242,
            api: api.into(),
            ret: 0,
            dev: 0,
            op,
        }
        .write_line(&mut out);
    }
    out
}

/// An owned mirror of the wire form: ndjson-stream requires `DeserializeOwned`,
/// so the borrowed `Wire<'_>` cannot be used with it.
#[derive(Deserialize)]
#[allow(dead_code)]
struct OwnedWire {
    seq: u64,
    #[serde(default)]
    t: u64,
    #[serde(default)]
    tid: u64,
    api: String,
    op: String,
    #[serde(default)]
    ret: i64,
    ptr: Option<Addr>,
    size: Option<u64>,
    mem: Option<MemKind>,
    dir: Option<Dir>,
    dst: Option<Addr>,
    src: Option<Addr>,
    value: Option<u32>,
    stream: Option<Addr>,
    blob: Option<BlobId>,
    module: Option<Addr>,
    code: Option<BlobId>,
    name: Option<String>,
    func: Option<Addr>,
    grid: Option<[u32; 3]>,
    block: Option<[u32; 3]>,
    shmem: Option<u32>,
    args: Option<Vec<KernelArg>>,
    event: Option<Addr>,
    device: Option<i32>,
    events: Option<u64>,
}

fn bench(c: &mut Criterion) {
    let data = stream();
    eprintln!(
        "stream: {EVENTS} events, {} bytes, {:.0} bytes/event",
        data.len(),
        data.len() as f64 / EVENTS as f64
    );
    let mut g = c.benchmark_group("reader");
    g.throughput(Throughput::Elements(EVENTS));
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));

    g.bench_function("event_reader/memory", |b| {
        b.iter(|| {
            let n = EventReader::from_reader(&data[..], "bench")
                .try_fold(0u64, |n, e| e.map(|_| n + 1))
                .unwrap();
            assert_eq!(n, EVENTS);
        })
    });

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.ndjson");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(&data)
        .unwrap();
    g.bench_function("event_reader/file", |b| {
        b.iter(|| {
            let mut reader = EventReader::open(&path, ReadOptions::default()).unwrap();
            let n = reader.try_fold(0u64, |n, e| e.map(|_| n + 1)).unwrap();
            assert_eq!(n, EVENTS);
        })
    });

    // The serde path alone (borrowed wire form, no Event): what the reader
    // would cost without the scanner fast path.
    g.bench_function("serde_wire", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for line in data.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
                let w: hrr_core::wire::Wire<'_> = serde_json::from_slice(line).unwrap();
                n += u64::from(matches!(w.op, Cow::Borrowed(_)));
            }
            n
        })
    });

    g.bench_function("ndjson_stream/owned_wire", |b| {
        b.iter(|| {
            let chunks = data.chunks(256 * 1024);
            let n = ndjson_stream::from_iter::<OwnedWire, _>(chunks)
                .try_fold(0u64, |n, r| r.map(|_| n + 1))
                .unwrap();
            assert_eq!(n, EVENTS);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
