//! Address translation (DESIGN.md §5): `AllocMap` lookups with 100k live
//! allocations (target: ≤ 100 ns per lookup).

// A benchmark binary: `criterion_main!` defines its undocumented `main`.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hrr_core::MemKind;
use hrr_replay::alloc_map::{Alloc, AllocMap};

const LIVE: u64 = 100_000;
const STRIDE: u64 = 0x1_0000;
const BASE: u64 = 0x7f00_0000_0000;

fn map() -> AllocMap {
    let mut m = AllocMap::new();
    for i in 0..LIVE {
        let base = BASE + i * STRIDE;
        m.insert(Alloc {
            base,
            size: STRIDE / 2,
            mem: MemKind::Device,
            live: base + (1 << 40),
            materialised: false,
        })
        .unwrap();
    }
    m
}

fn bench(c: &mut Criterion) {
    let m = map();
    // A fixed pseudo-random walk over interior pointers, so lookups miss the cache like replay does.
    let probes: Vec<u64> = (0..4096u64)
        .map(|i| BASE + (i.wrapping_mul(2_654_435_761) % LIVE) * STRIDE + (i * 8) % (STRIDE / 2))
        .collect();
    let mut g = c.benchmark_group("alloc_map_100k");
    g.bench_function("translate_interior", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % probes.len();
            black_box(m.translate(black_box(probes[i])))
        })
    });
    g.bench_function("translate_range", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % probes.len();
            black_box(m.translate_range(black_box(probes[i]), 64))
        })
    });
    g.bench_function("miss", |b| {
        b.iter(|| black_box(m.translate(black_box(BASE + STRIDE / 2 + 8))))
    });
    g.bench_function("insert_remove", |b| {
        let mut m = m.clone();
        b.iter(|| {
            let base = BASE + LIVE * STRIDE;
            m.insert(Alloc {
                base,
                size: 64,
                mem: MemKind::Device,
                live: 1,
                materialised: false,
            })
            .unwrap();
            black_box(m.remove(base).unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
