//! Large host↔device copies through page-locked staging buffers, several
//! threads at once.
//!
//! Why: replay's host buffers are ordinary (pageable) memory: blob bytes,
//! and the buffer a D2H lands in before it is compared. The driver copies
//! pageable memory through its own staging at a fraction of the bus: on the
//! H200 (CUDA 13.0, driver 580) 6.4 GB/s H2D and 11.5 GB/s D2H against
//! 55 GB/s from pinned memory, while the applications being replayed
//! usually copy from pinned memory. Here `threads` workers each own a slice
//! of the copy, two pinned chunks and a non-blocking stream: a worker
//! `memcpy`s chunk i into one buffer while the DMA of chunk i-1 from the
//! other is in flight (D2H: the mirror image), so the copy runs at the
//! lesser of the bus and `threads` × one core's `memcpy` (about 4-5 GB/s a
//! thread on that host: 12 threads reached 44 GB/s H2D and 36 GB/s D2H).
//! Faster still is a source that is already pinned; see the crate docs.
//!
//! Ordering: the caller's stream (or the legacy default stream, for a
//! synchronous copy) gets an event first and every worker stream waits on
//! it, so the copy starts after the work queued before it, as the
//! driver's own copy would; the call returns when every chunk has landed,
//! so work queued after it sees the data.

use std::ffi::c_void;

use crate::driver::CudaDriver;
use crate::error::CudaError;
use crate::ffi::{CUcontext, CUdeviceptr, CUevent, CUstream};

/// `cuStreamCreate` flag: no implicit synchronisation with the legacy stream.
const CU_STREAM_NON_BLOCKING: u32 = 0x1;
/// `cuEventCreate` flag: no timing (cheaper record/wait).
const CU_EVENT_DISABLE_TIMING: u32 = 0x2;

/// Copies smaller than this go straight to the driver.
pub const DEFAULT_THRESHOLD: usize = 8 << 20;
/// Bytes per staging buffer.
pub const DEFAULT_CHUNK: usize = 4 << 20;
/// Worker threads (each holds two chunks), at most the core count. Measured
/// on the H200 host (16 cores), 256 MiB pageable: 1 thread 7.5/7.2 GB/s
/// (H2D/D2H), 4: 25/23, 8: 40/25, 12: 44/36, 16: 30/31; pinned 55/55.
pub const DEFAULT_THREADS: usize = 12;

/// How copies are staged: `HRR_CUDA_STAGING_THREADS` (0 = never stage),
/// `HRR_CUDA_STAGING_CHUNK_KIB`, `HRR_CUDA_STAGING_MIN_KIB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StagingConfig {
    /// Worker threads (0: never stage).
    pub threads: usize,
    /// Bytes per staged chunk.
    pub chunk: usize,
    /// Copies smaller than this go directly.
    pub threshold: usize,
}

impl StagingConfig {
    /// The configuration the environment asks for.
    pub fn from_env() -> StagingConfig {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let get = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
        };
        StagingConfig {
            threads: get("HRR_CUDA_STAGING_THREADS").unwrap_or(DEFAULT_THREADS.min(cores)),
            chunk: get("HRR_CUDA_STAGING_CHUNK_KIB")
                .map_or(DEFAULT_CHUNK, |k| (k << 10).max(64 << 10)),
            threshold: get("HRR_CUDA_STAGING_MIN_KIB").map_or(DEFAULT_THRESHOLD, |k| k << 10),
        }
    }

    /// No staging.
    pub fn disabled() -> StagingConfig {
        StagingConfig {
            threads: 0,
            chunk: DEFAULT_CHUNK,
            threshold: usize::MAX,
        }
    }

    /// Whether a copy of `len` bytes is staged.
    pub fn stages(&self, len: usize) -> bool {
        self.threads > 0 && len >= self.threshold
    }
}

/// How a copy of `len` bytes is cut: one contiguous `(start, end)` part per
/// worker (at most `threads`, each at least one chunk unless `len` is
/// smaller), chunk-aligned so that every worker's chunks are full but its last.
pub fn split(len: usize, threads: usize, chunk: usize) -> Vec<(usize, usize)> {
    if len == 0 || threads == 0 || chunk == 0 {
        return Vec::new();
    }
    let chunks = len.div_ceil(chunk);
    let workers = threads.min(chunks);
    let per = chunks / workers;
    let extra = chunks % workers;
    let mut out = Vec::with_capacity(workers);
    let mut c = 0;
    for w in 0..workers {
        let n = per + usize::from(w < extra);
        let start = c * chunk;
        c += n;
        out.push((start, (c * chunk).min(len)));
    }
    out
}

struct Worker {
    stream: CUstream,
    host: [*mut u8; 2],
    done: [CUevent; 2],
}

/// The pinned buffers, streams and events, made on first use and kept.
pub struct Staging {
    cfg: StagingConfig,
    workers: Vec<Worker>,
    start: CUevent,
}

/// Raw pointers handed to scoped worker threads.
#[derive(Clone, Copy)]
struct SendPtr(*mut u8);
impl SendPtr {
    fn get(self) -> *mut u8 {
        self.0
    }
}
// SAFETY: each worker touches only its own disjoint part of the user buffer
// and its own staging buffers; the scope joins them before the borrow ends.
unsafe impl Send for SendPtr {}
// SAFETY: as for `Send`: shared only to hand each worker its own part.
unsafe impl Sync for SendPtr {}

#[derive(Clone, Copy)]
struct Ctx(CUcontext);
impl Ctx {
    fn get(self) -> CUcontext {
        self.0
    }
}
// SAFETY: a CUcontext may be made current on any thread.
unsafe impl Send for Ctx {}
// SAFETY: a CUcontext handle is a plain value; sharing it lets no thread mutate it.
unsafe impl Sync for Ctx {}

#[derive(Clone, Copy)]
struct Raw(*mut c_void);
impl Raw {
    fn get(self) -> *mut c_void {
        self.0
    }
}
// SAFETY: driver handles (streams, events) are usable from any thread of the context.
unsafe impl Send for Raw {}
// SAFETY: as for `Send`: the driver synchronises its own handles.
unsafe impl Sync for Raw {}

impl Staging {
    /// Staging as `cfg` says (buffers made on first use).
    pub fn new(cfg: StagingConfig) -> Staging {
        Staging {
            cfg,
            workers: Vec::new(),
            start: std::ptr::null_mut(),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> StagingConfig {
        self.cfg
    }

    /// Creates the buffers, streams and events (context must be current).
    fn ensure(&mut self, drv: &CudaDriver) -> Result<(), CudaError> {
        if !self.workers.is_empty() {
            return Ok(());
        }
        let api = drv.api();
        let mut start: CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; documented flag.
        drv.check("cuEventCreate", unsafe {
            (api.cuEventCreate)(&mut start, CU_EVENT_DISABLE_TIMING)
        })?;
        self.start = start;
        for _ in 0..self.cfg.threads {
            let mut w = Worker {
                stream: std::ptr::null_mut(),
                host: [std::ptr::null_mut(); 2],
                done: [std::ptr::null_mut(); 2],
            };
            // Pushed first so that Drop frees whatever was made if a step fails.
            let r = (|| {
                // SAFETY: valid out-pointers; documented flags.
                drv.check("cuStreamCreate", unsafe {
                    (api.cuStreamCreate)(&mut w.stream, CU_STREAM_NON_BLOCKING)
                })?;
                for k in 0..2 {
                    let mut p: *mut c_void = std::ptr::null_mut();
                    // SAFETY: as above.
                    drv.check("cuMemAllocHost_v2", unsafe {
                        (api.cuMemAllocHost)(&mut p, self.cfg.chunk)
                    })?;
                    w.host[k] = p.cast();
                    // SAFETY: as above.
                    drv.check("cuEventCreate", unsafe {
                        (api.cuEventCreate)(&mut w.done[k], CU_EVENT_DISABLE_TIMING)
                    })?;
                }
                Ok(())
            })();
            self.workers.push(w);
            r?;
        }
        Ok(())
    }

    /// Host → device, `src` pageable. Returns when the data is on the device.
    pub fn h2d(
        &mut self,
        drv: &CudaDriver,
        ctx: CUcontext,
        dst: CUdeviceptr,
        src: &[u8],
        after: CUstream,
    ) -> Result<(), CudaError> {
        self.run(
            drv,
            ctx,
            after,
            src.len(),
            SendPtr(src.as_ptr().cast_mut()),
            dst,
            true,
        )
    }

    /// Device → host, `dst` pageable. Returns when the data is in `dst`.
    pub fn d2h(
        &mut self,
        drv: &CudaDriver,
        ctx: CUcontext,
        dst: &mut [u8],
        src: CUdeviceptr,
        after: CUstream,
    ) -> Result<(), CudaError> {
        self.run(
            drv,
            ctx,
            after,
            dst.len(),
            SendPtr(dst.as_mut_ptr()),
            src,
            false,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        drv: &CudaDriver,
        ctx: CUcontext,
        after: CUstream,
        len: usize,
        host: SendPtr,
        dev: CUdeviceptr,
        to_device: bool,
    ) -> Result<(), CudaError> {
        self.ensure(drv)?;
        let api = drv.api();
        // SAFETY: live event; `after` is a live stream or the legacy default (null).
        drv.check("cuEventRecord", unsafe {
            (api.cuEventRecord)(self.start, after)
        })?;
        let chunk = self.cfg.chunk;
        let parts = split(len, self.workers.len(), chunk);
        let start = Raw(self.start);
        let ctx = Ctx(ctx);
        let results: Vec<Result<(), CudaError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .iter()
                .zip(&self.workers)
                .map(|(&(lo, hi), w)| {
                    let w = WorkerRef {
                        stream: w.stream,
                        host: w.host,
                        done: w.done,
                    };
                    scope.spawn(move || {
                        // Whole wrappers move in (methods, not fields, are used inside).
                        let (w, host, start, ctx) = (w, host, start, ctx);
                        // SAFETY: the context is the device's retained primary context.
                        drv.check("cuCtxSetCurrent", unsafe {
                            (drv.api().cuCtxSetCurrent)(ctx.get())
                        })?;
                        // SAFETY: live stream and event.
                        drv.check("cuStreamWaitEvent", unsafe {
                            (drv.api().cuStreamWaitEvent)(w.stream, start.get(), 0)
                        })?;
                        let r = if to_device {
                            // SAFETY: `host[lo..hi]` is this worker's part of the caller's buffer.
                            unsafe { w.h2d(drv, dev, host.get(), lo, hi, chunk) }
                        } else {
                            // SAFETY: as above.
                            unsafe { w.d2h(drv, dev, host.get(), lo, hi, chunk) }
                        };
                        // Whatever happened, nothing of ours is in flight afterwards.
                        // SAFETY: a live stream.
                        let s = drv.check("cuStreamSynchronize", unsafe {
                            (drv.api().cuStreamSynchronize)(w.stream)
                        });
                        r.and(s)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        results.into_iter().collect()
    }

    /// Frees the staging resources (context must be current).
    pub fn release(&mut self, drv: &CudaDriver) {
        let api = drv.api();
        for w in self.workers.drain(..) {
            // SAFETY: handles created in `ensure`, idle (every run synchronises).
            unsafe {
                if !w.stream.is_null() {
                    (api.cuStreamDestroy)(w.stream);
                }
                for k in 0..2 {
                    if !w.host[k].is_null() {
                        (api.cuMemFreeHost)(w.host[k].cast());
                    }
                    if !w.done[k].is_null() {
                        (api.cuEventDestroy)(w.done[k]);
                    }
                }
            }
        }
        if !self.start.is_null() {
            // SAFETY: created in `ensure`.
            unsafe { (api.cuEventDestroy)(self.start) };
            self.start = std::ptr::null_mut();
        }
    }
}

/// A worker's resources inside its thread.
struct WorkerRef {
    stream: CUstream,
    host: [*mut u8; 2],
    done: [CUevent; 2],
}
// SAFETY: the handles and buffers belong to one worker thread at a time.
unsafe impl Send for WorkerRef {}

impl WorkerRef {
    /// # Safety
    /// `host + lo .. host + hi` is readable and no one writes it meanwhile;
    /// the staging buffers and handles are this worker's alone.
    unsafe fn h2d(
        &self,
        drv: &CudaDriver,
        dev: CUdeviceptr,
        host: *mut u8,
        lo: usize,
        hi: usize,
        chunk: usize,
    ) -> Result<(), CudaError> {
        let api = drv.api();
        for (i, off) in (lo..hi).step_by(chunk).enumerate() {
            let n = chunk.min(hi - off);
            let k = i % 2;
            if i >= 2 {
                // SAFETY: the event was recorded after this buffer's previous DMA.
                drv.check("cuEventSynchronize", unsafe {
                    (api.cuEventSynchronize)(self.done[k])
                })?;
            }
            // SAFETY: `n <= chunk` bytes inside both buffers (caller's contract).
            unsafe { std::ptr::copy_nonoverlapping(host.add(off), self.host[k], n) };
            // SAFETY: pinned source of `n` bytes, live stream; the device range
            // is the caller's, validated by the driver.
            drv.check("cuMemcpyHtoDAsync_v2", unsafe {
                (api.cuMemcpyHtoDAsync)(dev + off as u64, self.host[k].cast(), n, self.stream)
            })?;
            // SAFETY: live event and stream.
            drv.check("cuEventRecord", unsafe {
                (api.cuEventRecord)(self.done[k], self.stream)
            })?;
        }
        Ok(())
    }

    /// # Safety
    /// `host + lo .. host + hi` is writable and no one else touches it
    /// meanwhile; the staging buffers and handles are this worker's alone.
    unsafe fn d2h(
        &self,
        drv: &CudaDriver,
        dev: CUdeviceptr,
        host: *mut u8,
        lo: usize,
        hi: usize,
        chunk: usize,
    ) -> Result<(), CudaError> {
        let api = drv.api();
        let offs: Vec<usize> = (lo..hi).step_by(chunk).collect();
        let issue = |i: usize| -> Result<(), CudaError> {
            let (off, k) = (offs[i], i % 2);
            let n = chunk.min(hi - off);
            // SAFETY: pinned destination of `n <= chunk` bytes, live stream.
            drv.check("cuMemcpyDtoHAsync_v2", unsafe {
                (api.cuMemcpyDtoHAsync)(self.host[k].cast(), dev + off as u64, n, self.stream)
            })?;
            // SAFETY: live event and stream.
            drv.check("cuEventRecord", unsafe {
                (api.cuEventRecord)(self.done[k], self.stream)
            })
        };
        for i in 0..offs.len().min(2) {
            issue(i)?;
        }
        for i in 0..offs.len() {
            let (off, k) = (offs[i], i % 2);
            let n = chunk.min(hi - off);
            // SAFETY: recorded right after this chunk's DMA.
            drv.check("cuEventSynchronize", unsafe {
                (api.cuEventSynchronize)(self.done[k])
            })?;
            // SAFETY: the DMA has landed; `n` bytes inside both buffers.
            unsafe { std::ptr::copy_nonoverlapping(self.host[k], host.add(off), n) };
            if i + 2 < offs.len() {
                issue(i + 2)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(len: usize, parts: &[(usize, usize)], chunk: usize) {
        let mut at = 0;
        for &(lo, hi) in parts {
            assert_eq!(lo, at, "contiguous");
            assert!(hi > lo, "non-empty");
            assert_eq!(lo % chunk, 0, "chunk-aligned start");
            at = hi;
        }
        assert_eq!(at, len, "covers everything");
    }

    #[test]
    fn splits_evenly_by_chunks() {
        let c = 4 << 20;
        let p = split(256 << 20, 8, c);
        assert_eq!(p.len(), 8);
        assert!(p.iter().all(|&(lo, hi)| hi - lo == 32 << 20));
        covers(256 << 20, &p, c);
    }

    #[test]
    fn uneven_and_small_sizes() {
        let c = 4 << 20;
        for len in [
            1,
            c - 1,
            c,
            c + 1,
            3 * c + 17,
            9 * c,
            100 * c + 5,
            (8 << 20) + 3,
        ] {
            for t in [1, 2, 3, 8, 16] {
                let p = split(len, t, c);
                assert!(p.len() <= t && !p.is_empty());
                assert_eq!(p.len(), t.min(len.div_ceil(c)));
                covers(len, &p, c);
                // Balanced to within one chunk.
                let sizes: Vec<usize> = p.iter().map(|&(lo, hi)| (hi - lo).div_ceil(c)).collect();
                assert!(
                    sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
                    "{len} {t} {sizes:?}"
                );
            }
        }
        assert!(split(0, 8, c).is_empty());
        assert!(split(10, 0, c).is_empty());
    }

    #[test]
    fn config_thresholds() {
        let on = StagingConfig {
            threads: 4,
            chunk: 1 << 20,
            threshold: 8 << 20,
        };
        assert!(on.stages(8 << 20) && !on.stages((8 << 20) - 1));
        assert!(!StagingConfig::disabled().stages(usize::MAX - 1));
        assert!(!StagingConfig { threads: 0, ..on }.stages(1 << 30));
    }
}
