//! `archive_diff::diff` end to end: two archives of 8 MiB D2H blobs in the
//! page cache, every pair differing in byte 0 only.

// A benchmark binary: `criterion_main!` defines its undocumented `main`.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hrr_core::archive::Archive;
use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
use hrr_core::event::{Dir, Event, Op};
use hrr_core::hex::Addr;
use hrr_core::manifest::{ArchiveKind, Platform};
use hrr_diff::archive_diff::diff;
use hrr_replay::compare::Tolerance;

fn floats(len: usize, scale: f32) -> Vec<u8> {
    (0..len / 4)
        .flat_map(|i| ((i % 1000) as f32 * scale).to_le_bytes())
        .collect()
}

/// An archive with `n` D2H blobs of `size` bytes; `salt` makes blobs differ
/// between archives so `diff` has to read and compare every pair.
fn archive(dir: &std::path::Path, kind: ArchiveKind, n: u64, size: usize, salt: u8) -> Archive {
    let mut w = ArchiveWriter::create(dir, kind, Platform::Cpu, ManifestExtra::default()).unwrap();
    for seq in 0..n {
        let mut bytes = floats(size, 1.0 + seq as f32);
        bytes[0] ^= salt;
        let id = w.put_blob(&bytes).unwrap();
        let op = Op::Memcpy {
            dir: Dir::D2h,
            dst: Addr(0x5555_0000),
            src: Addr(0x7f00_0000_0000),
            size: size as u64,
            stream: None,
            blob: Some(id),
        };
        w.append(&Event {
            seq,
            t: seq,
            tid: 1,
            api: "hipMemcpy".into(),
            ret: 0,
            dev: 0,
            op,
        })
        .unwrap();
    }
    w.finish().unwrap();
    Archive::open(dir).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("compare");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    // End to end: 8 pairs of 8 MiB D2H blobs, all differing in byte 0 only.
    let dir = tempfile::tempdir().unwrap();
    let cap = archive(&dir.path().join("a"), ArchiveKind::Capture, 8, 8 << 20, 0);
    let rep = archive(&dir.path().join("b"), ArchiveKind::Replay, 8, 8 << 20, 1);
    g.throughput(Throughput::Bytes(8 * (8 << 20)));
    g.bench_function("diff_archives_64MiB", |b| {
        b.iter(|| {
            let r = diff(&cap, &rep, &Tolerance::exact()).unwrap();
            assert_eq!(r.failed, 8);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
