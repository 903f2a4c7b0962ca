//! Kernel execution: blocks spread over a persistent pool of std threads.
//!
//! A launch publishes a job; idle workers and the launching thread itself take
//! block indices from the job's atomic counter. No thread is spawned per launch;
//! a single-block launch runs on the calling thread without waking anyone.
//!
//! Blocks run through [`crate::fault::call`]: a block that faults (a bad
//! pointer) ends the launch with a [`Fault`] instead of killing the process;
//! blocks not yet started are then skipped, as a GPU abandons a faulted grid.

use crate::fault::{self, Fault};
use crate::ffi::{CpuKernelFn, CpuLaunch, Dim3};
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// Kernel argument buffer, 16-byte aligned, inline up to 256 bytes.
// Inline on purpose: a launch with a typical argument segment allocates nothing.
#[allow(clippy::large_enum_variant)]
pub enum KernArgs {
    /// Up to 256 bytes in place, with the length used.
    Inline(InlineArgs, usize),
    /// Longer segments on the heap, with the length used.
    Heap(Vec<u128>, usize),
}

#[repr(C, align(16))]
/// 256 bytes, 16-byte aligned.
pub struct InlineArgs([u8; 256]);

impl KernArgs {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> KernArgs {
        if len <= 256 {
            KernArgs::Inline(InlineArgs([0; 256]), len)
        } else {
            KernArgs::Heap(vec![0u128; len.div_ceil(16)], len)
        }
    }
    /// Bytes used.
    pub fn len(&self) -> usize {
        match self {
            KernArgs::Inline(_, l) | KernArgs::Heap(_, l) => *l,
        }
    }
    /// Whether no byte is used.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The bytes, to fill in.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            KernArgs::Inline(b, l) => &mut b.0[..*l],
            KernArgs::Heap(v, l) => {
                let l = *l;
                let bytes: &mut [u8] = bytemuck_u128(v);
                &mut bytes[..l]
            }
        }
    }
    /// The buffer's address, for the kernel call.
    pub fn as_ptr(&self) -> *const c_void {
        match self {
            KernArgs::Inline(b, _) => b.0.as_ptr().cast(),
            KernArgs::Heap(v, _) => v.as_ptr().cast(),
        }
    }
}

fn bytemuck_u128(v: &mut [u128]) -> &mut [u8] {
    let len = std::mem::size_of_val(v);
    // SAFETY: u128 has no padding and every byte pattern is a valid u8; the
    // returned slice borrows `v` mutably for its whole lifetime.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

/// One launch, shared with the workers that help.
struct Job {
    entry: CpuKernelFn,
    grid: Dim3,
    block: Dim3,
    shmem: usize,
    kernarg: usize,
    total: u64,
    next: AtomicU64,
    done: AtomicU64,
    /// The first fault a block raised; later blocks are skipped.
    fault: Mutex<Option<Fault>>,
    faulted: AtomicBool,
    finished: Mutex<bool>,
    finished_cv: Condvar,
}

thread_local! {
    static SCRATCH: RefCell<Vec<Align64>> = const { RefCell::new(Vec::new()) };
}

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Align64([u8; 64]);

impl Job {
    /// Runs blocks until none are left; returns when this thread can take no more.
    fn work(&self) {
        if self.shmem == 0 {
            self.work_with(std::ptr::null_mut());
            return;
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let chunks = self.shmem.div_ceil(64);
            if s.len() < chunks {
                s.resize(chunks, Align64([0; 64]));
            }
            self.work_with(s.as_mut_ptr().cast());
        });
    }

    fn work_with(&self, shared: *mut u8) {
        loop {
            let b = self.next.fetch_add(1, Ordering::Relaxed);
            if b >= self.total {
                return;
            }
            if !self.faulted.load(Ordering::Relaxed)
                && let Err(f) = self.run_block(b, shared)
            {
                self.faulted.store(true, Ordering::Relaxed);
                let mut first = self.fault.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert(f);
            }
            if self.done.fetch_add(1, Ordering::AcqRel) + 1 == self.total {
                let mut f = self.finished.lock().unwrap_or_else(|e| e.into_inner());
                *f = true;
                self.finished_cv.notify_all();
            }
        }
    }

    fn run_block(&self, b: u64, shared: *mut u8) -> Result<(), Fault> {
        let gx = u64::from(self.grid.x);
        let gy = u64::from(self.grid.y);
        let block_idx = Dim3 {
            x: (b % gx) as u32,
            y: ((b / gx) % gy) as u32,
            z: (b / (gx * gy)) as u32,
        };
        if !shared.is_null() {
            // SAFETY: `shared` is this thread's scratch of at least `shmem` bytes.
            unsafe { std::ptr::write_bytes(shared, 0, self.shmem) };
        }
        let launch = CpuLaunch {
            grid_dim: self.grid,
            block_dim: self.block,
            block_idx,
            shared: shared.cast(),
        };
        // SAFETY: `entry` is a kernel resolved from a loaded code object (kept alive
        // by the launcher's Arc<Function> until the job completes), and `kernarg`
        // points at an argument buffer of the kernel's declared size that outlives
        // the job (the launcher waits for every block before releasing it).
        unsafe { fault::call(self.entry, &launch, self.kernarg as *const c_void) }
    }

    fn result(&self) -> Result<(), Fault> {
        match *self.fault.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    fn wait(&self) {
        for _ in 0..2000 {
            if self.done.load(Ordering::Acquire) == self.total {
                return;
            }
            std::hint::spin_loop();
        }
        let mut f = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        while !*f {
            f = self.finished_cv.wait(f).unwrap_or_else(|e| e.into_inner());
        }
    }
}

struct PoolState {
    generation: u64,
    job: Option<Arc<Job>>,
}

struct Shared {
    state: Mutex<PoolState>,
    cv: Condvar,
}

/// The block-execution thread pool (available_parallelism - 1 workers plus the
/// launching thread).
pub struct Pool {
    shared: Arc<Shared>,
    workers: OnceLock<usize>,
}

impl Default for Pool {
    fn default() -> Self {
        Self::new()
    }
}

impl Pool {
    /// A pool with one thread per CPU (`HRR_CPU_THREADS` overrides).
    pub fn new() -> Pool {
        Pool {
            shared: Arc::new(Shared {
                state: Mutex::new(PoolState {
                    generation: 0,
                    job: None,
                }),
                cv: Condvar::new(),
            }),
            workers: OnceLock::new(),
        }
    }

    fn spawn_workers(&self) -> usize {
        *self.workers.get_or_init(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            let want = std::env::var("HRR_CPU_THREADS")
                .ok()
                .and_then(|s| s.parse::<usize>().ok())
                .unwrap_or(n)
                .max(1);
            let mut spawned = 0;
            for i in 0..want - 1 {
                let shared = self.shared.clone();
                let r = std::thread::Builder::new()
                    .name(format!("hrr-cpu-block-{i}"))
                    .spawn(move || worker(&shared));
                if r.is_ok() {
                    spawned += 1;
                }
            }
            spawned
        })
    }

    /// Runs every block of a launch and returns when all have finished, or
    /// the first [`Fault`] a block raised (blocks not started by then are
    /// skipped).
    ///
    /// # Safety
    /// `entry` must be a live CPU kernel and `kernarg` a buffer of the kernel's
    /// argument layout, both valid until this returns; the kernel's memory
    /// accesses are the application's contract.
    pub unsafe fn run(
        &self,
        entry: CpuKernelFn,
        grid: Dim3,
        block: Dim3,
        shmem: usize,
        kernarg: *const c_void,
    ) -> Result<(), Fault> {
        // Runtime::launch refused grids whose volume overflows.
        let total = grid.volume().unwrap_or(0);
        if total == 0 {
            return Ok(());
        }
        fault::install();
        let job = Job {
            entry,
            grid,
            block,
            shmem,
            kernarg: kernarg as usize,
            total,
            next: AtomicU64::new(0),
            done: AtomicU64::new(0),
            fault: Mutex::new(None),
            faulted: AtomicBool::new(false),
            finished: Mutex::new(false),
            finished_cv: Condvar::new(),
        };
        if total == 1 || self.spawn_workers() == 0 {
            job.work();
            return job.result();
        }
        let job = Arc::new(job);
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.generation += 1;
        st.job = Some(job.clone());
        drop(st);
        self.shared.cv.notify_all();
        job.work();
        job.wait();
        job.result()
    }
}

fn worker(shared: &Shared) {
    let mut seen = 0u64;
    loop {
        let job = {
            let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            while st.generation == seen {
                st = shared.cv.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            seen = st.generation;
            st.job.clone()
        };
        if let Some(job) = job {
            job.work();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds (linear block index + 1) to an AtomicU64 and checks its scratch is zero.
    unsafe extern "C" fn count(l: *const CpuLaunch, arg: *const c_void) {
        // SAFETY: the pool passes a valid launch; `arg` points at two AtomicU64.
        let (l, acc) = unsafe { (&*l, &*(arg as *const [AtomicU64; 2])) };
        let b = (u64::from(l.block_idx.z) * u64::from(l.grid_dim.y) + u64::from(l.block_idx.y))
            * u64::from(l.grid_dim.x)
            + u64::from(l.block_idx.x);
        acc[0].fetch_add(b + 1, Ordering::Relaxed);
        if !l.shared.is_null() {
            // SAFETY: `shared` holds 64 bytes (the launch's shmem).
            let s = unsafe { std::slice::from_raw_parts_mut(l.shared.cast::<u8>(), 64) };
            if s.iter().any(|&x| x != 0) {
                acc[1].fetch_add(1, Ordering::Relaxed);
            }
            s.fill(0xFF);
        }
    }

    #[test]
    fn every_block_runs_once_with_zeroed_scratch() {
        let pool = Pool::new();
        for (grid, shmem) in [
            (Dim3::new(1, 1, 1), 0),
            (Dim3::new(7, 5, 3), 64),
            (Dim3::new(1000, 1, 1), 64),
        ] {
            let acc = [AtomicU64::new(0), AtomicU64::new(0)];
            // SAFETY: `count` matches the kernel ABI and `acc` outlives the call.
            unsafe {
                pool.run(
                    count,
                    grid,
                    Dim3::new(1, 1, 1),
                    shmem,
                    (&acc as *const [AtomicU64; 2]).cast(),
                )
            }
            .unwrap();
            let n = grid.volume().unwrap();
            assert_eq!(
                acc[0].load(Ordering::Relaxed),
                n * (n + 1) / 2,
                "grid {grid:?}"
            );
            assert_eq!(acc[1].load(Ordering::Relaxed), 0, "scratch not zeroed");
        }
    }

    /// Writes through the pointer in its argument, for blocks >= the
    /// threshold in the second word (and counts the blocks that ran).
    unsafe extern "C" fn poke(l: *const CpuLaunch, arg: *const c_void) {
        // SAFETY: the pool passes a valid launch; `arg` is [target, threshold, counter].
        let (l, a) = unsafe { (&*l, &*(arg as *const [usize; 3])) };
        // SAFETY: a[2] points at an AtomicU64 that outlives the launch.
        unsafe { &*(a[2] as *const AtomicU64) }.fetch_add(1, Ordering::Relaxed);
        if l.block_idx.x as usize >= a[1] {
            // SAFETY: deliberately not: the test's bad address.
            unsafe { std::ptr::write_volatile(a[0] as *mut u64, 1) };
        }
    }

    #[test]
    fn a_faulting_kernel_is_an_error_not_a_dead_process() {
        let pool = Pool::new();
        for (grid, threshold) in [(1u32, 0usize), (64, 10), (5000, 4999)] {
            let ran = AtomicU64::new(0);
            let arg = [8usize, threshold, &ran as *const AtomicU64 as usize];
            // SAFETY: `poke` matches the kernel ABI; `arg` outlives the call;
            // its bad write is what the pool must survive.
            let r = unsafe {
                pool.run(
                    poke,
                    Dim3::new(grid, 1, 1),
                    Dim3::new(1, 1, 1),
                    0,
                    arg.as_ptr().cast(),
                )
            };
            let f = r.unwrap_err();
            assert_eq!((f.signal, f.addr), (libc::SIGSEGV, 8), "grid {grid}");
            assert_eq!(f.hip_error(), crate::fault::ILLEGAL_ADDRESS);
            assert!(ran.load(Ordering::Relaxed) <= u64::from(grid));
            // The pool still works afterwards, on every thread.
            let ok = [usize::MAX, usize::MAX, &ran as *const AtomicU64 as usize];
            // SAFETY: as above; no block writes.
            unsafe {
                pool.run(
                    poke,
                    Dim3::new(grid, 1, 1),
                    Dim3::new(1, 1, 1),
                    0,
                    ok.as_ptr().cast(),
                )
            }
            .unwrap();
        }
    }

    /// A fault outside any kernel still kills the process (the handler
    /// passes it on): checked in a child process running this test binary.
    #[test]
    fn a_fault_outside_a_kernel_is_not_swallowed() {
        if std::env::var_os("HRR_FAULT_CHILD").is_some() {
            crate::fault::install();
            // SAFETY: deliberately not: the fault the parent expects.
            unsafe { std::ptr::write_volatile(16 as *mut u64, 1) };
            std::process::exit(0);
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "exec::tests::a_fault_outside_a_kernel_is_not_swallowed",
                "--nocapture",
            ])
            .env("HRR_FAULT_CHILD", "1")
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGSEGV), "{out:?}");
    }

    #[test]
    fn kernargs_alignment_and_size() {
        for len in [0, 24, 256, 257, 4096] {
            let mut k = KernArgs::zeroed(len);
            assert_eq!(k.len(), len);
            assert_eq!(k.as_ptr() as usize % 16, 0);
            assert!(k.bytes_mut().iter().all(|&b| b == 0));
        }
    }
}
