//! Hashing one very large blob (256 MiB, a pinned copy's size in
//! `launch_loop bw`) with BLAKE3 on 1, 4 and 8 threads of a rayon pool of
//! its own, as the recorder's pools hash (`sink/hash_pool.rs`: four
//! threads, and the wide pool of a thread per core, at most 16, while the
//! application's thread is blocked in a synchronous copy). Also the hash
//! of a 256 MiB upload's source taken while a stand-in for the copy (a
//! memcpy of the same bytes on the calling thread) runs, against the two
//! one after the other: what `hash_pool::id_while` saves. On a machine of
//! fewer cores the wider pools only show the cost of oversubscription.
//! Figures: docs/PERFORMANCE.md, *The copying thread's cost*.
//!
//! Run: `cargo bench -p hrr-recorder --bench hash_threads`.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_main};
use hrr_core::BlobId;

const LEN: usize = 256 << 20;

fn bytes() -> Vec<u8> {
    (0..LEN as u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect()
}

fn threads(c: &mut Criterion) {
    let data = bytes();
    let mut g = c.benchmark_group("hash_256MiB");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1))
        .throughput(Throughput::Bytes(LEN as u64));
    for n in [1, 4, 8] {
        let pool = rayon_core::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        g.bench_with_input(BenchmarkId::new("threads", n), &n, |b, _| {
            b.iter(|| pool.install(|| BlobId::of(&data)))
        });
    }
    g.finish();
}

fn overlap(c: &mut Criterion) {
    let data = bytes();
    let mut dst = vec![0u8; LEN];
    let mut g = c.benchmark_group("upload_256MiB");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1))
        .throughput(Throughput::Bytes(LEN as u64));
    g.bench_function("copy_then_hash", |b| {
        b.iter(|| {
            dst.copy_from_slice(&data);
            hrr_recorder::sink::hash_pool::id_of_blocked(&data)
        })
    });
    g.bench_function("hash_while_copying", |b| {
        b.iter(|| hrr_recorder::sink::hash_pool::id_while(&data, || dst.copy_from_slice(&data)).1)
    });
    g.finish();
}

/// The benchmarks as criterion runs them (kept out of this binary's
/// public items).
mod group {
    use criterion::criterion_group;
    criterion_group!(benches, super::threads, super::overlap);
}
criterion_main!(group::benches);
