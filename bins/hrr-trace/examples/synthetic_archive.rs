//! Writes a synthetic capture archive for measuring hrr-trace
//! (docs/PERFORMANCE.md; the criterion bench uses the same generator):
//!
//!     cargo run --release -p hrr-trace --example synthetic_archive -- OUT.hrr [EVENTS]
//!
//! It mimics a multi-threaded capture: 4 threads issuing, over 3 streams
//! each, launches with four arguments, async H2D and D2H copies with blobs,
//! memsets, event records, stream syncs and allocations, 1 µs apart (about
//! 250 bytes per event). Blob ids name no stored blob: hrr-trace never reads
//! blobs.

use std::path::Path;

use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
use hrr_core::event::{Dir, Event, KernelArg, Op};
use hrr_core::hex::{Addr, BlobId, HexBytes};
use hrr_core::manifest::{ArchiveKind, Platform};

const DEV: u64 = 0x7f00_0000_0000;
const HOST: u64 = 0x5555_0000_0000;

/// Writes `events` events (plus `eof`) to a new archive at `dir`.
pub fn write_archive(dir: &Path, events: u64) {
    let mut w = ArchiveWriter::create(
        dir,
        ArchiveKind::Capture,
        Platform::Cpu,
        ManifestExtra::default(),
    )
    .unwrap()
    // Plain: the trace's tests edit its lines, and its benchmark maps it.
    .compress(false);
    let code = BlobId::of(b"code object");
    let blob = BlobId::of(b"payload");
    let ptr = |p: u64| KernelArg {
        offset: None,
        size: 8,
        hex: HexBytes(p.to_le_bytes().to_vec()),
        ptrs: vec![0],
        objs: Vec::new(),
    };
    for seq in 0..events {
        let thread = seq % 4;
        let stream = Addr(0x5600_0000_0000 + thread * 0x100 + (seq / 4) % 3);
        let buf = DEV + (seq % 64) * 0x10000;
        let (api, op) = match (seq / 4) % 8 {
            0 | 4 => (
                "hipModuleLaunchKernel",
                Op::Launch {
                    name: "scale_add".into(),
                    code,
                    func: Some(Addr(0x5555_aaaa_0000)),
                    grid: [64, 1, 1],
                    block: [256, 1, 1],
                    shmem: 0,
                    stream,
                    args: vec![
                        ptr(buf),
                        ptr(buf + 0x8000),
                        ptr(DEV),
                        KernelArg {
                            offset: None,
                            size: 4,
                            hex: HexBytes(vec![0, 1, 0, 0]),
                            ptrs: vec![],
                            objs: Vec::new(),
                        },
                    ],
                    attrs: vec![],
                },
            ),
            1 | 5 => (
                "hipMemcpyAsync",
                Op::Memcpy {
                    dir: if seq % 2 == 0 { Dir::H2d } else { Dir::D2h },
                    dst: Addr(buf),
                    src: Addr(HOST + seq * 64),
                    size: 65536,
                    stream: Some(stream),
                    blob: Some(blob),
                },
            ),
            2 => (
                "hipMemsetAsync",
                Op::Memset {
                    dst: Addr(buf),
                    value: 0,
                    size: 4096,
                    width: 1,
                    stream: Some(stream),
                },
            ),
            3 => (
                "hipEventRecord",
                Op::EventRecord {
                    event: Addr(0x5700_0000_0000 + thread),
                    stream,
                },
            ),
            6 => ("hipStreamSynchronize", Op::StreamSync { stream }),
            _ => (
                "hipMalloc",
                Op::Alloc {
                    ptr: Addr(buf),
                    size: 65536,
                    mem: hrr_core::MemKind::Device,
                },
            ),
        };
        w.append(&Event {
            seq,
            t: 1_000_000 + seq * 1_000,
            tid: 40_000 + thread,
            api: api.into(),
            ret: 0,
            dev: 0,
            op,
        })
        .unwrap();
    }
    w.finish().unwrap();
}

#[allow(dead_code)] // the bench includes this file for `write_archive` alone
fn main() {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .expect("usage: synthetic_archive OUT.hrr [EVENTS]");
    let events = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("EVENTS"));
    write_archive(Path::new(&out), events);
    eprintln!("wrote {out}: {events} events");
}
