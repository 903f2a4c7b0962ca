//! `write_trace` over a generated 1M-event archive (docs/PERFORMANCE.md):
//!
//!     cargo bench -p hrr-trace --bench trace
//!
//! The archive (`examples/synthetic_archive.rs`) mimics a multi-threaded
//! capture; it is written once to a temporary directory (~250 MB) and read
//! from the page cache; the trace goes to `io::sink()`.
//! `HRR_TRACE_BENCH_EVENTS` changes the size.

// A benchmark binary: `criterion_group!` defines its undocumented functions.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hrr_core::archive::Archive;
use hrr_core::event_reader::ReadOptions;

#[path = "../examples/synthetic_archive.rs"]
mod synthetic;

fn bench(c: &mut Criterion) {
    let events: u64 = std::env::var("HRR_TRACE_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("big.hrr");
    synthetic::write_archive(&dir, events);
    let archive = Archive::open(&dir).unwrap();
    let bytes = std::fs::metadata(archive.events_path()).unwrap().len();
    eprintln!(
        "archive: {events} events, {:.0} MB of events.ndjson",
        bytes as f64 / 1e6
    );

    let mut g = c.benchmark_group("hrr-trace");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(20))
        .throughput(Throughput::Elements(events + 1));
    g.bench_function("write_trace (1M events, to a sink)", |b| {
        b.iter(|| {
            let (_, stats) =
                hrr_trace::write_trace(&archive, std::io::sink(), ReadOptions::default(), |_| {})
                    .unwrap();
            assert_eq!(stats.events, events + 1);
        })
    });
    g.bench_function("EventReader alone (same archive)", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for e in archive.events(ReadOptions::default()).unwrap() {
                e.unwrap();
                n += 1;
            }
            assert_eq!(n, events + 1);
        })
    });
    g.bench_function("EventReader alone, mapped (one thread)", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for e in archive.events_mapped(ReadOptions::default()).unwrap() {
                e.unwrap();
                n += 1;
            }
            assert_eq!(n, events + 1);
        })
    });
    let threads = hrr_trace::convert::parse_threads();
    g.bench_function(
        format!("ParallelReader alone, {threads} threads (what write_trace reads with)"),
        |b| {
            b.iter(|| {
                let mut n = 0u64;
                archive
                    .events_parallel(ReadOptions::default())
                    .unwrap()
                    .threads(threads)
                    .run(
                        |e, _| e.seq,
                        |items: &[u64], _| {
                            n += items.len() as u64;
                            Ok::<(), std::convert::Infallible>(())
                        },
                    )
                    .unwrap();
                assert_eq!(n, events + 1);
            })
        },
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
