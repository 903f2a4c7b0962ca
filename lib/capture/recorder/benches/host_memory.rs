//! What finding the host's writes to host memory kernels read costs, per
//! launch, on a 64 MiB pinned buffer of which 1 % changed since the last
//! launch: the recorder's per-chunk hashing (with the changed chunks'
//! `host_write` blobs and events written, as in a capture), against page
//! protection (re-protecting the buffer and taking a write fault on each
//! changed page). Also the scan alone (nothing changed), and a plain read
//! of the buffer for scale. Times are the measuring thread's CPU time (user
//! and system: page faults count), not wall time, so that other processes
//! on a shared machine do not inflate them. Figures: docs/PERFORMANCE.md,
//! "Host memory snapshots".
//!
//! Run: `cargo bench -p hrr-recorder --bench host_memory`.

use std::sync::atomic::{AtomicUsize, Ordering};

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput, criterion_main};
use hrr_core::MemKind;
use hrr_core::manifest::Platform;
use hrr_recorder::record::kernel_args::ArgValues;
use hrr_recorder::record::recorder::Recorder;

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
struct ThreadCpu;

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; the clock exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

impl Measurement for ThreadCpu {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        thread_cpu()
    }
    fn end(&self, i: Duration) -> Duration {
        thread_cpu() - i
    }
    fn add(&self, v1: &Duration, v2: &Duration) -> Duration {
        *v1 + *v2
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        criterion::measurement::WallTime.formatter()
    }
}

const SIZE: usize = 64 << 20;
const PAGE: usize = 4096;
/// 1 % of the buffer: ten 64 KiB chunks, spread over it.
const CHANGED_CHUNKS: usize = 10;
const CHUNK: usize = hrr_recorder::record::host_memory::CHUNK;

/// A page-aligned anonymous mapping of `SIZE` bytes, touched.
fn buffer() -> &'static mut [u8] {
    // SAFETY: a fresh private anonymous mapping; checked below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    // SAFETY: SIZE bytes just mapped read-write, never unmapped (leaked).
    let b = unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), SIZE) };
    b.fill(1);
    b
}

fn touch(b: &mut [u8], round: u8) {
    let stride = SIZE / CHANGED_CHUNKS;
    for i in 0..CHANGED_CHUNKS {
        let at = i * stride;
        for page in (at..at + CHUNK).step_by(PAGE) {
            b[page] = round;
        }
    }
}

fn hashing(c: &mut Criterion<ThreadCpu>) {
    let t = tempfile::tempdir().unwrap();
    let r: &'static Recorder = Box::leak(Box::new(
        Recorder::create(
            t.path(),
            Platform::Cpu,
            vec!["bench".into()],
            Default::default(),
        )
        .unwrap(),
    ));
    std::thread::spawn(move || r.run_writer());
    let b = buffer();
    let base = b.as_ptr() as u64;
    r.alloc("hipHostMalloc", 0, base, SIZE as u64, MemKind::Pinned);
    let arg = base.to_le_bytes();
    let mut g = c.benchmark_group("host_memory");
    g.throughput(Throughput::Bytes(SIZE as u64));
    let mut round = 0u8;
    g.bench_function("hash_64MiB_1pct_changed", |bench| {
        bench.iter(|| {
            round = round.wrapping_add(1);
            touch(b, round);
            r.host_writes_before_launch("hipModuleLaunchKernel", 0, &ArgValues::Buffer(&arg), None);
        })
    });
    g.bench_function("read_64MiB", |bench| {
        bench.iter(|| {
            let words = b
                .chunks_exact(8)
                .map(|w| u64::from_ne_bytes(w.try_into().unwrap()));
            std::hint::black_box(words.fold(0u64, u64::wrapping_add))
        })
    });
    g.bench_function("hash_64MiB_unchanged", |bench| {
        bench.iter(|| {
            r.host_writes_before_launch("hipModuleLaunchKernel", 0, &ArgValues::Buffer(&arg), None);
        })
    });
    g.finish();
}

static FAULTS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_fault(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SIGSEGV.
    let addr = unsafe { (*info).si_addr() } as usize & !(PAGE - 1);
    FAULTS.fetch_add(1, Ordering::Relaxed);
    // SAFETY: the page belongs to the protected buffer: unprotecting it
    // lets the faulting write run again.
    unsafe {
        libc::mprotect(
            addr as *mut libc::c_void,
            PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
}

fn protection(c: &mut Criterion<ThreadCpu>) {
    let b = buffer();
    // SAFETY: a handler that only unprotects the faulting page.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_fault as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut());
    }
    let mut g = c.benchmark_group("host_memory");
    g.throughput(Throughput::Bytes(SIZE as u64));
    let mut round = 0u8;
    // Per launch: protect the whole buffer, then the host's writes fault
    // once per changed page (the dirty set is the pages that faulted).
    g.bench_function("protect_64MiB_1pct_changed", |bench| {
        bench.iter(|| {
            // SAFETY: the buffer is ours, mapped for its whole length.
            unsafe { libc::mprotect(b.as_mut_ptr().cast(), SIZE, libc::PROT_READ) };
            round = round.wrapping_add(1);
            touch(b, round);
        })
    });
    g.finish();
    // SAFETY: as above.
    unsafe {
        libc::mprotect(
            b.as_mut_ptr().cast(),
            SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
    assert!(FAULTS.load(Ordering::Relaxed) > 0);
}

/// The benchmarks as criterion runs them (`criterion_group!` makes them one
/// function, kept out of this binary's public items).
mod group {
    use criterion::{Criterion, criterion_group};
    criterion_group! {
        name = benches;
        config = Criterion::default().with_measurement(super::ThreadCpu);
        targets = super::hashing, super::protection
    }
}
criterion_main!(group::benches);
