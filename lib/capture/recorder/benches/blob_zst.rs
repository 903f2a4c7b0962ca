//! The blob compressor's level: what replacing one raw blob file by its
//! compressed form costs (`BlobStore::replace_with_compressed`: read,
//! compress, fsync, decode and hash again, rename, remove), at zstd levels
//! 1 and 3, on 16 MiB of each kind of blob a capture holds: float arrays
//! as a model's weights hold them (random, roughly normal), float arrays
//! of a smooth field (a simulation's output), and code (this benchmark's
//! own executable: machine code, symbols and debug information). The
//! ratio each level gets is printed once per kind. Figures:
//! docs/PERFORMANCE.md, *Compression*.
//!
//! `blob_zst/compress` times the compression alone (and prints each
//! level's ratio, also where it is below what the replacement keeps).
//!
//! Run: `cargo bench -p hrr-recorder --bench blob_zst`.

use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_main};
use hrr_core::blob_store::BlobStore;

const LEN: usize = 16 << 20;

/// Roughly normal floats (a sum of four uniform ones), as trained weights.
fn weights() -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut uniform = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    (0..LEN / 4)
        .flat_map(|_| ((uniform() + uniform() + uniform() + uniform()) * 0.05).to_le_bytes())
        .collect()
}

/// A smooth 2D field, 1024 floats a row.
fn field() -> Vec<u8> {
    (0..LEN / 4)
        .flat_map(|i| {
            let (x, y) = ((i % 1024) as f32 / 1024.0, (i / 1024) as f32 / 1024.0);
            ((x * 6.3).sin() * (y * 3.1).cos()).to_le_bytes()
        })
        .collect()
}

/// This executable's bytes, repeated to the length.
fn code() -> Vec<u8> {
    let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    exe.iter().copied().cycle().take(LEN).collect()
}

fn bench(c: &mut Criterion) {
    let kinds = [("weights", weights()), ("field", field()), ("code", code())];
    // The compression alone, and its ratio (also where the replacement
    // stores the blob raw: less than 1/8 saved).
    let mut g = c.benchmark_group("blob_zst/compress");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .throughput(Throughput::Bytes(LEN as u64));
    for (kind, bytes) in &kinds {
        for level in [1, 3] {
            let mut cctx = zstd::bulk::Compressor::new(level).unwrap();
            let packed = cctx.compress(bytes).unwrap();
            eprintln!(
                "{kind} level {level}: ratio {:.3}",
                bytes.len() as f64 / packed.len() as f64
            );
            g.bench_with_input(BenchmarkId::new(*kind, level), &level, |b, _| {
                b.iter(|| cctx.compress(bytes).unwrap().len())
            });
        }
    }
    g.finish();
    // The whole replacement, as the compressor's threads run it.
    let mut g = c.benchmark_group("blob_zst/replace");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .throughput(Throughput::Bytes(LEN as u64));
    let dir = tempfile::tempdir().unwrap();
    let store = BlobStore::of_archive(dir.path());
    for (kind, bytes) in &kinds {
        let id = store.put(bytes).unwrap();
        for level in [1, 3] {
            let mut said = false;
            g.bench_with_input(BenchmarkId::new(*kind, level), &level, |b, &level| {
                b.iter_batched(
                    // Raw again, untimed.
                    || {
                        let _ = std::fs::remove_file(store.zst_path(&id));
                        store.put_hashed(&id, bytes).unwrap();
                    },
                    |()| {
                        let r = store
                            .replace_with_compressed(&id, level, &|| false)
                            .unwrap();
                        if !said {
                            said = true;
                            eprintln!("{kind} level {level}: {r:?}");
                        }
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    g.finish();
}

/// The benchmarks as criterion runs them (kept out of this binary's
/// public items).
mod group {
    use criterion::criterion_group;
    criterion_group!(benches, super::bench);
}
criterion_main!(group::benches);
