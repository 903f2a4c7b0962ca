//! The wire form's hot paths one op at a time: the fast encoder
//! (`encode_op`, what a recorder writes every non-launch event with) and
//! the scanner plus its check into an `Event` (what the reader does per
//! line), on a line of each of the common ops and on a mix of every op.

// A benchmark binary: `criterion_main!` defines its undocumented `main`.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hrr_core::event::{Dir, Event, KernelArg, MemKind, Op};
use hrr_core::hex::{Addr, BlobId, HexBytes};
use hrr_core::wire::encode::encode_op;
use hrr_core::wire::{Wire, scan};

/// One op of each shape a capture writes often, by name.
fn common() -> Vec<(&'static str, Op)> {
    let a = Addr(0x7fbe_0140_0000);
    let s = Addr(0x5555_6666_7000);
    let b = BlobId::of(b"bytes");
    vec![
        (
            "alloc",
            Op::Alloc {
                ptr: a,
                size: 1 << 20,
                mem: MemKind::Device,
            },
        ),
        (
            "memcpy",
            Op::Memcpy {
                dir: Dir::H2d,
                dst: a,
                src: Addr(0x5566_7788_0000),
                size: 1 << 20,
                stream: Some(s),
                blob: Some(b),
            },
        ),
        (
            "memset",
            Op::Memset {
                dst: a,
                value: 0,
                size: 4096,
                width: 1,
                stream: Some(s),
            },
        ),
        (
            "event_record",
            Op::EventRecord {
                event: Addr(0x5555_0000_1000),
                stream: s,
            },
        ),
        (
            "mem_map",
            Op::MemMap {
                ptr: a,
                size: 2 << 20,
                offset: 0,
                handle: Addr(0x55),
            },
        ),
        (
            "pool_alloc",
            Op::PoolAlloc {
                ptr: a,
                size: 4096,
                pool: Addr(0x99),
                stream: s,
            },
        ),
        (
            "memset_rect",
            Op::MemsetRect {
                dst: a,
                pitch: [64, 1024],
                extent: [40, 16, 1],
                value: 7,
                width: 4,
                stream: None,
            },
        ),
        (
            "launch",
            Op::Launch {
                name: "_Z6vecAddPKfS0_Pfi".into(),
                code: b,
                func: None,
                grid: [4096, 1, 1],
                block: [256, 1, 1],
                shmem: 0,
                stream: s,
                args: (0..4)
                    .map(|i| KernelArg {
                        offset: Some(8 * i),
                        size: 8,
                        hex: HexBytes((0x7fbe_0140_0000u64 + u64::from(i)).to_le_bytes().to_vec()),
                        ptrs: if i < 3 { vec![0] } else { vec![] },
                        objs: Vec::new(),
                    })
                    .collect(),
                attrs: vec![],
            },
        ),
    ]
}

/// The common ops and the rest of the vocabulary, one of each.
fn mix() -> Vec<Op> {
    let a = Addr(0x7f00_dead_0000);
    let s = Addr(0x55aa);
    let mut ops: Vec<Op> = common().into_iter().map(|(_, op)| op).collect();
    ops.extend([
        Op::Free { ptr: a, mem: None },
        Op::ModuleLoad {
            module: s,
            code: BlobId::of(b"c"),
        },
        Op::ModuleUnload { module: s },
        Op::Function {
            module: s,
            name: "saxpy".into(),
            func: a,
        },
        Op::StreamCreate { stream: s },
        Op::StreamDestroy { stream: s },
        Op::StreamSync { stream: s },
        Op::StreamWaitEvent {
            stream: s,
            event: a,
        },
        Op::DeviceSync,
        Op::EventCreate { event: a },
        Op::EventDestroy { event: a },
        Op::EventSync { event: a },
        Op::SetDevice { device: 0 },
        Op::HostRegister { ptr: a, size: 9 },
        Op::HostUnregister { ptr: a },
        Op::CtxCreate { ctx: s, device: 0 },
        Op::CtxDestroy { ctx: s },
        Op::CtxSet {
            ctx: s,
            device: Some(0),
        },
        Op::VaReserve {
            ptr: a,
            size: 1 << 40,
        },
        Op::VaFree {
            ptr: a,
            size: 1 << 40,
        },
        Op::MemCreate {
            handle: s,
            size: 2 << 20,
            mem: MemKind::Device,
        },
        Op::MemRelease { handle: s },
        Op::MemUnmap {
            ptr: a,
            size: 2 << 20,
        },
        Op::MemAccess {
            ptr: a,
            size: 2 << 20,
        },
        Op::Global {
            module: s,
            name: "table".into(),
            code: BlobId::of(b"c"),
            ptr: a,
            size: 256,
        },
        Op::Relocate {
            dst: a,
            size: 24,
            blob: BlobId::of(b"o"),
        },
        Op::GraphLaunch {
            exec: s,
            stream: a,
            blobs: vec![],
        },
        Op::GraphExecDestroy { exec: s },
        Op::HostWrite {
            ptr: a,
            size: 64,
            blob: BlobId::of(b"h"),
        },
        Op::HostRead {
            ptr: a,
            size: 64,
            blob: BlobId::of(b"h"),
        },
        Op::MemcpyRect {
            dir: Dir::D2h,
            dst: a,
            dpitch: [40, 640],
            src: s,
            spitch: [64, 1024],
            extent: [40, 16, 1],
            stream: Some(s),
            blob: Some(BlobId::of(b"p")),
        },
        Op::PoolCreate { pool: s },
        Op::PoolDestroy { pool: s },
        Op::PoolTrim { pool: s, size: 0 },
        Op::PoolAttr {
            pool: s,
            attr: 4,
            value: 1 << 30,
        },
        Op::DevicePool { device: 0, pool: s },
        Op::Eof { events: 42 },
    ]);
    ops
}

fn line_of(op: &Op) -> Vec<u8> {
    let e = Event {
        seq: 123_456,
        t: 3_057_529_788_756,
        tid: 7575,
        api: "hipMemcpyAsync".into(),
        ret: 0,
        dev: 0,
        op: op.clone(),
    };
    let mut line = Vec::new();
    e.write_line(&mut line);
    line.pop();
    line
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("wire/encode_op");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut buf = Vec::with_capacity(4096);
    for (name, op) in common() {
        g.bench_with_input(BenchmarkId::from_parameter(name), &op, |b, op| {
            b.iter(|| {
                buf.clear();
                encode_op(
                    &mut buf,
                    7575,
                    0,
                    "hipMemcpyAsync",
                    0,
                    std::hint::black_box(op),
                );
                buf.len()
            })
        });
    }
    let ops = mix();
    g.throughput(Throughput::Elements(ops.len() as u64));
    g.bench_function("mix", |b| {
        b.iter(|| {
            let mut n = 0;
            for op in &ops {
                buf.clear();
                encode_op(
                    &mut buf,
                    7575,
                    0,
                    "hipMemcpyAsync",
                    0,
                    std::hint::black_box(op),
                );
                n += buf.len();
            }
            n
        })
    });
    g.finish();

    let mut g = c.benchmark_group("wire/scan_event");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, op) in common() {
        let line = line_of(&op);
        g.bench_with_input(BenchmarkId::from_parameter(name), &line, |b, line| {
            b.iter(|| {
                let mut w = Wire::default();
                assert!(scan::scan_into(std::hint::black_box(line), &mut w));
                Event::from_wire(w).unwrap()
            })
        });
    }
    let lines: Vec<Vec<u8>> = ops.iter().map(line_of).collect();
    g.throughput(Throughput::Elements(lines.len() as u64));
    g.bench_function("mix", |b| {
        b.iter(|| {
            let mut n = 0;
            for line in &lines {
                let mut w = Wire::default();
                assert!(scan::scan_into(std::hint::black_box(line), &mut w));
                n += Event::from_wire(w).unwrap().seq;
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
