//! Blob store throughput: BLAKE3 hashing, `put` (hash + write + rename) and
//! `get` (read or map + hash check) and `read_into` (read into a caller's
//! buffer, as replay lands blobs in pinned memory, + hash check), in GB/s.

// A benchmark binary: `criterion_main!` defines its undocumented `main`.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hrr_core::blob_store::{BlobStore, hash};

fn data(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("blob_store");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for len in [64 << 10, 16 << 20] {
        let bytes = data(len);
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_with_input(BenchmarkId::new("blake3", len), &bytes, |b, bytes| {
            b.iter(|| hash(bytes))
        });

        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::of_archive(dir.path());
        let mut fresh = bytes.clone();
        let mut counter = 0u64;
        g.bench_function(BenchmarkId::new("put_new", len), |b| {
            b.iter(|| {
                // A new blob each time (a counter in the first bytes), so this
                // measures hash + write + rename, not the dedup shortcut.
                counter += 1;
                fresh[..8].copy_from_slice(&counter.to_le_bytes());
                let id = store.put(&fresh).unwrap();
                std::fs::remove_file(store.path(&id)).unwrap();
            })
        });
        let id = store.put(&bytes).unwrap();
        g.bench_with_input(BenchmarkId::new("put_existing", len), &bytes, |b, bytes| {
            b.iter(|| store.put(bytes).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("get_verified", len), &id, |b, id| {
            b.iter(|| store.get(id).unwrap().len())
        });
        let mut dst = vec![0u8; len];
        g.bench_with_input(BenchmarkId::new("read_into_verified", len), &id, |b, id| {
            b.iter(|| store.read_into(id, &mut dst).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
