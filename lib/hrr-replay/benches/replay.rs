//! Replay cost per event in the engine itself: an archive of launches (four
//! arguments, three of them pointers) and H2D/D2H copies replayed onto a
//! device whose calls return at once, so the figure is hrr's own overhead
//! (read, translate, blob fetch, D2H compare) and not a runtime's.

// A benchmark binary: `criterion_main!` defines its undocumented `main`.
#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use hrr_core::archive::Archive;
use hrr_core::archive_writer::{ArchiveWriter, ManifestExtra};
use hrr_core::manifest::{ArchiveKind, Platform};
use hrr_core::{Addr, BlobId, Dir, Event, HexBytes, KernelArg, MemKind, Op};
use hrr_replay::device::{Device, DeviceError, Handle, Launch};
use hrr_replay::engine::watchdog::Progress;
use hrr_replay::engine::{AddressSpace, PinnedHost, ReplayOptions, Replayer};
use hrr_replay::launch_thread::{LaunchThread, Launcher};

const EVENTS: u64 = 20_000;

/// A device whose every call succeeds at once; D2H reads zeros.
struct Instant {
    next: u64,
    /// How long each launch call takes (0: returns at once).
    launch_ns: u64,
    /// Launches on a thread of their own (`Device::launch_thread`).
    launches: Option<LaunchThread>,
}

/// A launch call busy for `launch_ns`, as a runtime's launch call is: the
/// parser thread then keeps up, and what the replay adds shows.
struct Busy {
    launch_ns: u64,
}

impl Launcher for Busy {
    fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
        std::hint::black_box(l.packed_args());
        let t = std::time::Instant::now();
        while (t.elapsed().as_nanos() as u64) < self.launch_ns {
            std::hint::spin_loop();
        }
        Ok(())
    }
}

impl Device for Instant {
    fn name(&self) -> String {
        "instant".into()
    }
    fn target(&self) -> String {
        "cpu".into()
    }
    fn alloc(&mut self, size: u64, _: MemKind) -> Result<u64, DeviceError> {
        self.next += size.next_multiple_of(256);
        Ok(self.next)
    }
    fn free(&mut self, _: u64, _: MemKind) -> Result<(), DeviceError> {
        Ok(())
    }
    fn copy_h2d(&mut self, _: u64, _: &[u8], _: Option<Handle>) -> Result<(), DeviceError> {
        Ok(())
    }
    fn copy_d2h(&mut self, dst: &mut [u8], _: u64, _: Option<Handle>) -> Result<(), DeviceError> {
        if let Some(q) = &self.launches {
            q.wait()?;
        }
        dst.fill(0);
        Ok(())
    }
    fn copy_d2d(&mut self, _: u64, _: u64, _: u64, _: Option<Handle>) -> Result<(), DeviceError> {
        Ok(())
    }
    fn memset(&mut self, _: u64, _: u8, _: u64, _: Option<Handle>) -> Result<(), DeviceError> {
        Ok(())
    }
    fn stream_create(&mut self) -> Result<Handle, DeviceError> {
        Ok(1)
    }
    fn stream_destroy(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn stream_sync(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn stream_wait_event(&mut self, _: Handle, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn device_sync(&mut self) -> Result<(), DeviceError> {
        if let Some(q) = &self.launches {
            q.wait()?;
        }
        Ok(())
    }
    fn event_create(&mut self) -> Result<Handle, DeviceError> {
        Ok(1)
    }
    fn event_destroy(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn event_record(&mut self, _: Handle, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn event_sync(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn event_elapsed_ms(&mut self, _: Handle, _: Handle) -> Result<f32, DeviceError> {
        Ok(0.0)
    }
    fn module_load(&mut self, _: &[u8]) -> Result<Handle, DeviceError> {
        Ok(1)
    }
    fn module_unload(&mut self, _: Handle) -> Result<(), DeviceError> {
        Ok(())
    }
    fn function(&mut self, _: Handle, _: &str) -> Result<Handle, DeviceError> {
        Ok(1)
    }
    fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
        match &mut self.launches {
            Some(q) => q.push(l),
            None => Busy {
                launch_ns: self.launch_ns,
            }
            .launch(l),
        }
    }
    fn launch_thread(
        &mut self,
        on: bool,
        progress: Option<&Arc<Progress>>,
    ) -> Result<bool, DeviceError> {
        let launch_ns = self.launch_ns;
        let busy = || Busy { launch_ns };
        LaunchThread::switch(&mut self.launches, on, "launch", busy, progress)
    }
}

/// Where the benchmarks' archives put their device memory.
const BASE: u64 = 0x7f00_0000_0000;

/// An archive being written at `dir`.
fn writer(dir: &std::path::Path) -> ArchiveWriter {
    ArchiveWriter::create(
        dir,
        ArchiveKind::Capture,
        Platform::Cpu,
        ManifestExtra::default(),
    )
    .unwrap()
}

/// Event `seq` of thread 1 (its time: `seq`).
fn ev(seq: u64, api: &str, op: Op) -> Event {
    Event {
        seq,
        t: seq,
        tid: 1,
        api: api.into(),
        ret: 0,
        dev: 0,
        op,
    }
}

/// A pointer argument `p` at kernarg offset `off`.
fn ptr(p: u64, off: u32) -> KernelArg {
    KernelArg {
        offset: Some(off),
        size: 8,
        hex: HexBytes(p.to_le_bytes().to_vec()),
        ptrs: vec![0],
        objs: Vec::new(),
    }
}

/// `hrr-play`'s side of an application's launch loop: one kernel launched
/// `EVENTS` times on two buffers (as `launch_loop.cu`'s `tick`).
fn launch_loop_archive(dir: &std::path::Path) -> Archive {
    let mut w = writer(dir);
    for (seq, p) in [(0, BASE), (1, BASE + 4096)] {
        let op = Op::Alloc {
            ptr: Addr(p),
            size: 4096,
            mem: MemKind::Device,
        };
        w.append(&ev(seq, "cudaMalloc", op)).unwrap();
    }
    let code = w.put_blob(b"not a real code object").unwrap();
    for seq in 2..EVENTS {
        let op = Op::Launch {
            name: "_Z4tickPjS_".into(),
            code,
            func: Some(Addr(0x5555_1000)),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shmem: 0,
            stream: Addr(0),
            args: vec![ptr(BASE, 0), ptr(BASE + 4096, 8)],
            attrs: vec![],
        };
        w.append(&ev(seq, "__cudaLaunchKernel", op)).unwrap();
    }
    w.finish().unwrap();
    Archive::open(dir).unwrap()
}

fn archive(dir: &std::path::Path) -> Archive {
    let mut w = writer(dir);
    let base = BASE;
    w.append(&ev(
        0,
        "hipMalloc",
        Op::Alloc {
            ptr: Addr(base),
            size: 1 << 20,
            mem: MemKind::Device,
        },
    ))
    .unwrap();
    let code = w.put_blob(b"not a real code object").unwrap();
    let payload = vec![0u8; 4096];
    let blob = w.put_blob(&payload).unwrap();
    for seq in 1..EVENTS {
        let op = match seq % 4 {
            0 => Op::Memcpy {
                dir: Dir::H2d,
                dst: Addr(base + 64),
                src: Addr(0x5555_0000),
                size: 4096,
                stream: None,
                blob: Some(blob),
            },
            1 => Op::Memcpy {
                dir: Dir::D2h,
                dst: Addr(0x5555_0000),
                src: Addr(base + 64),
                size: 4096,
                stream: None,
                blob: Some(blob),
            },
            _ => Op::Launch {
                name: "saxpy".into(),
                code,
                func: None,
                grid: [64, 1, 1],
                block: [256, 1, 1],
                shmem: 0,
                stream: Addr(0),
                args: vec![
                    ptr(base + 4096, 0),
                    ptr(base + 8192, 8),
                    ptr(base + 16384, 16),
                    KernelArg {
                        offset: Some(24),
                        size: 4,
                        hex: HexBytes(vec![1, 0, 0, 0]),
                        ptrs: vec![],
                        objs: Vec::new(),
                    },
                ],
                attrs: vec![],
            },
        };
        w.append(&ev(seq, "api", op)).unwrap();
    }
    w.finish().unwrap();
    let _ = BlobId::of(b"");
    Archive::open(dir).unwrap()
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let a = archive(&tmp.path().join("cap.hrr"));
    let opts = ReplayOptions {
        regions: true,
        ..ReplayOptions::default()
    };
    let mut g = c.benchmark_group("replay");
    g.throughput(Throughput::Elements(EVENTS));
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("engine_per_event", |b| {
        b.iter(|| {
            let mut dev = Instant {
                next: 0x1000,
                launch_ns: 0,
                launches: None,
            };
            let space = AddressSpace {
                regions_enabled: true,
                ..AddressSpace::default()
            };
            let mut pinned = PinnedHost::new(0);
            let (s, e) = Replayer::new(&mut dev, &a, &opts, space, None, &mut pinned).run(|_| {});
            assert!(e.is_none() && s.d2h_exact > 0);
        })
    });
    let loop_archive = launch_loop_archive(&tmp.path().join("loop.hrr"));
    // Each launch call busy for 3 µs (an H200's `cuLaunchKernel` of a tiny
    // kernel takes about 4): time per event minus 3 µs is what the replay's
    // own thread adds to a launch.
    // The same with the launches on a thread of their own: the replay
    // thread's work overlaps the launch calls instead of adding to them.
    for (name, launch_thread) in [
        ("engine_per_launch_loop_3us_launches", false),
        ("engine_per_launch_loop_3us_launches_launch_thread", true),
    ] {
        let opts = ReplayOptions {
            launch_thread,
            ..ReplayOptions::default()
        };
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut dev = Instant {
                    next: 0x1000,
                    launch_ns: 3000,
                    launches: None,
                };
                let mut pinned = PinnedHost::new(0);
                let (s, e) = Replayer::new(
                    &mut dev,
                    &loop_archive,
                    &opts,
                    AddressSpace::default(),
                    None,
                    &mut pinned,
                )
                .run(|_| {});
                assert!(e.is_none() && s.launches == EVENTS - 2);
                assert_eq!(s.launch_thread, launch_thread);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
