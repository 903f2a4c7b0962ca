//! D2H comparison throughput: `compare` on identical buffers (the exact
//! path) and on buffers that differ slightly everywhere (the element-wise
//! path). `hrr-diff`'s own bench measures whole archives.

// A benchmark binary: `criterion_main!` defines its undocumented `main`.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hrr_replay::compare::{Tolerance, Verdict, compare};

const LEN: usize = 64 << 20;

fn floats(len: usize, scale: f32) -> Vec<u8> {
    (0..len / 4)
        .flat_map(|i| ((i % 1000) as f32 * scale).to_le_bytes())
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("compare");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Bytes(LEN as u64));

    let a = floats(LEN, 1.0);
    let same = a.clone();
    g.bench_function("exact_identical_64MiB", |b| {
        b.iter(|| {
            assert_eq!(
                compare(&a, &same, &Tolerance::default()).verdict,
                Verdict::Exact
            )
        })
    });
    let near: Vec<u8> = a
        .chunks_exact(4)
        .flat_map(|x| (f32::from_le_bytes(x.try_into().unwrap()) * (1.0 + 1e-7)).to_le_bytes())
        .collect();
    g.bench_function("tolerance_all_differ_64MiB", |b| {
        b.iter(|| {
            assert_ne!(
                compare(&a, &near, &Tolerance::default()).verdict,
                Verdict::Mismatch
            )
        })
    });

    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
