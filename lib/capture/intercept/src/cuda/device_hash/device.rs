//! `device`: the device hash's driver side — per-context module, scratch
//! and result page; the launches before a copy; the result read after it.

use std::collections::HashMap;
use std::ffi::{CString, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cuda_api::{CUDA_SUCCESS, CUdevice, CUstream};
use hrr_core::BlobId;
use hrr_recorder::record::recorder::Prehashed;

use super::nvrtc;
use super::plan::{self, Buf, Kernel};
use crate::cuda::driver::{graphs, libcuda};
use crate::cuda::log::diag;

/// The kernel source, compiled at run time.
const SOURCE: &str = include_str!("../device_hash.cu");

/// `CUpointer_attribute` values asked of the source.
const ATTR_CONTEXT: c_int = 1;
const ATTR_MEMORY_TYPE: c_int = 2;
const ATTR_IS_MANAGED: c_int = 8;
const ATTR_RANGE_START: c_int = 11;
const ATTR_RANGE_SIZE: c_int = 12;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR`.
const ATTR_CC_MAJOR: c_int = 75;
const ATTR_CC_MINOR: c_int = 76;
/// `CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP`.
const HOST_ALLOC_FLAGS: c_uint = 0x1 | 0x2;
/// Bytes of the result page.
const RESULT_PAGE: usize = 4096;

/// Off for the process: a device hash disagreed with the host's.
static OFF: AtomicBool = AtomicBool::new(false);

/// One context's loaded hash.
struct Loaded {
    chunks: usize,
    parents: usize,
    /// Device scratch: [`plan::SCRATCH_NODES`] nodes, part A then B.
    scratch: u64,
    /// The pinned, device-mapped result (32 bytes used).
    result: usize,
    /// A device hash is in flight (the scratch and result are one).
    busy: AtomicBool,
    /// The first result was checked against the host's hash.
    checked: AtomicBool,
}

/// A context seen: its device, and its loaded hash (`None`: it failed
/// there).
struct Seen {
    device: CUdevice,
    loaded: Option<Arc<Loaded>>,
}

/// The contexts the hash was asked for, by handle value, while they live,
/// and each device's primary context (as retained).
#[derive(Default)]
struct Contexts {
    seen: HashMap<u64, Seen>,
    primary: HashMap<CUdevice, u64>,
}

fn contexts() -> std::sync::MutexGuard<'static, Contexts> {
    static M: OnceLock<Mutex<Contexts>> = OnceLock::new();
    M.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Device `dev`'s primary context is `ctx` (a successful
/// `cuDevicePrimaryCtxRetain`, at any depth).
pub fn primary_retained(ctx: u64, dev: CUdevice) {
    contexts().primary.insert(dev, ctx);
}

/// Context `ctx` was destroyed (`cuCtxDestroy`): the driver freed the
/// hash's module, scratch and result page with it, and a context made
/// later may get the same handle value, so its entry goes.
pub fn destroyed(ctx: u64) {
    let gone = contexts().seen.remove(&ctx);
    said_gone(gone.map(|s| (ctx, s)));
}

/// Device `dev`'s primary context was destroyed (reset, or released by
/// its last holder): as [`destroyed`]. A primary context this library
/// never saw retained may be any context of the device seen: all go
/// (a live one loads the hash again).
pub fn primary_destroyed(dev: CUdevice) {
    let mut c = contexts();
    let primary = c.primary.get(&dev).copied();
    let gone: Vec<(u64, Seen)> = c
        .seen
        .extract_if(|&ctx, s| primary.map_or(s.device == dev, |p| p == ctx))
        .collect();
    drop(c);
    for g in gone {
        said_gone(Some(g));
    }
}

/// Device `dev`'s primary context was released (`cuDevicePrimaryCtxRelease`):
/// destroyed when that was its last holder, which the driver says
/// (unknown: taken as destroyed, which costs at most a second load).
pub fn primary_released(dev: CUdevice) {
    if libcuda::primary_active(dev) != Some(true) {
        primary_destroyed(dev);
    }
}

/// The `HRR_LOG` line for a context's hash forgotten.
fn said_gone(gone: Option<(u64, Seen)>) {
    if let Some((ctx, s)) = gone {
        diag(|| {
            format!(
                "device hash: context {ctx:#x} (device {}) destroyed: {}",
                s.device,
                if s.loaded.is_some() {
                    "its hash went with it"
                } else {
                    "forgotten"
                }
            )
        });
    }
}

/// A device hash launched before a copy; [`Pending::finish`] once the copy
/// is known complete (or failed).
pub struct Pending {
    loaded: Arc<Loaded>,
    stream: u64,
    len: usize,
}

/// [`begin`] for a copy about to be forwarded, when it is a D2H into
/// memory the recorder does not know as device memory and the recorder is
/// recording.
pub fn before_copy(
    g: &crate::capture::Guard,
    dir: hrr_core::Dir,
    (dst, src, len): (u64, u64, usize),
    stream: u64,
) -> Option<Pending> {
    if dir != hrr_core::Dir::D2h || mode().from().is_none_or(|from| len < from) {
        return None;
    }
    let wanted = g.run(|r| r.recording() && r.is_device(dst) != Some(true))?;
    if !wanted {
        return None;
    }
    begin(src, len, stream)
}

/// Launches the hash of the `len` bytes (at least the mode's threshold,
/// [`before_copy`]'s word) at device address `src` on `stream` (the handle
/// the copy goes to: 0 the legacy stream, `CU_STREAM_PER_THREAD` the
/// calling thread's), to be called right before the copy is forwarded;
/// `None` when the copy is hashed on the host.
fn begin(src: u64, len: usize, stream: u64) -> Option<Pending> {
    if len as u64 > plan::MOST || OFF.load(Ordering::Relaxed) {
        return None;
    }
    // Work on the legacy stream, or a module load, could end another
    // thread's capture.
    if graphs::any_capture() || graphs::captured(stream) {
        return None;
    }
    let (ctx, dev) = libcuda::current_context();
    let dev = dev.filter(|_| ctx != 0)?;
    if !source_fits(src, len, ctx) {
        return None;
    }
    let loaded = loaded(ctx, dev)?;
    if loaded.busy.swap(true, Ordering::AcqRel) {
        return None;
    }
    let p = Pending {
        loaded,
        stream,
        len,
    };
    match p.launch(src) {
        Ok(()) => Some(p),
        Err((launched, why)) => {
            diag(|| {
                format!(
                    "device hash: context {ctx:#x}: {why}; its D2H copies are hashed on the host"
                )
            });
            if launched {
                // Launches in flight use the scratch: done before it is free.
                libcuda::sync_stream(stream);
            }
            contexts().seen.insert(
                ctx,
                Seen {
                    device: dev,
                    loaded: None,
                },
            );
            p.loaded.busy.store(false, Ordering::Release);
            None
        }
    }
}

/// `HRR_DEVICE_HASH` (read once).
fn mode() -> plan::Mode {
    static MODE: OnceLock<plan::Mode> = OnceLock::new();
    *MODE.get_or_init(|| plan::Mode::of(std::env::var_os("HRR_DEVICE_HASH").as_deref()))
}

/// Whether `[src, src + len)` is plain device memory of context `ctx`,
/// inside one allocation.
fn source_fits(src: u64, len: usize, ctx: u64) -> bool {
    let Some(f) = libcuda::get().and_then(|l| l.queries.pointer_get_attribute) else {
        return false;
    };
    let attr = |a: c_int| -> Option<u64> {
        // Every attribute asked is at most 8 bytes; zeroed, a narrower
        // answer reads as its value.
        let mut v: u64 = 0;
        // SAFETY: `v` is 8 writable bytes; the driver only looks `src` up.
        (unsafe { f((&mut v as *mut u64).cast(), a, src) } == CUDA_SUCCESS).then_some(v)
    };
    let (Some(c), Some(t), Some(m), Some(start), Some(size)) = (
        attr(ATTR_CONTEXT),
        attr(ATTR_MEMORY_TYPE),
        attr(ATTR_IS_MANAGED),
        attr(ATTR_RANGE_START),
        attr(ATTR_RANGE_SIZE),
    ) else {
        return false;
    };
    c == ctx
        && t == u64::from(cuda_api::CU_MEMORYTYPE_DEVICE)
        && m == 0
        && start <= src
        && src
            .checked_add(len as u64)
            .is_some_and(|end| end <= start.saturating_add(size))
}

/// Context `ctx`'s loaded hash, loaded on first use (`None`: it failed
/// there, said once).
fn loaded(ctx: u64, dev: CUdevice) -> Option<Arc<Loaded>> {
    let mut m = contexts();
    if let Some(s) = m.seen.get(&ctx) {
        return s.loaded.clone();
    }
    let l = match load(dev) {
        Ok(l) => {
            diag(|| format!("device hash: loaded in context {ctx:#x} (device {dev})"));
            Some(Arc::new(l))
        }
        Err(why) => {
            diag(|| {
                format!(
                    "device hash: context {ctx:#x}: {why}; its D2H copies are hashed on the host"
                )
            });
            None
        }
    };
    m.seen.insert(
        ctx,
        Seen {
            device: dev,
            loaded: l.clone(),
        },
    );
    l
}

/// A compute capability's PTX, or why there is none.
type Compiled = Result<Arc<CString>, String>;

/// PTX for compute capability `cc`, compiled once per capability.
fn ptx(cc: (i32, i32)) -> Compiled {
    static PTX: OnceLock<Mutex<HashMap<(i32, i32), Compiled>>> = OnceLock::new();
    let mut m = PTX
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    m.entry(cc)
        .or_insert_with(|| {
            let source = CString::new(SOURCE).map_err(|_| "the source holds a NUL".to_string())?;
            let candidates = plan::nvrtc_candidates(std::env::var_os("HRR_NVRTC").as_deref());
            nvrtc::compile(&candidates, &source, &[plan::arch_option(cc.0, cc.1)]).map(Arc::new)
        })
        .clone()
}

/// Loads the hash into the current context (of device `dev`).
fn load(dev: CUdevice) -> Result<Loaded, String> {
    let h = &libcuda::get().ok_or("no driver")?.queries.hash;
    let (Some(load), Some(get_fn), Some(_), Some(alloc), Some(host_alloc), Some(attr)) = (
        h.module_load_data,
        h.module_get_function,
        h.launch_kernel,
        h.mem_alloc,
        h.mem_host_alloc,
        h.device_attribute,
    ) else {
        return Err("the driver lacks a function the device hash calls".into());
    };
    let cc = |a: c_int| -> Result<i32, String> {
        let mut v: c_int = 0;
        // SAFETY: `v` is ours; `dev` is the current context's device.
        match unsafe { attr(&mut v, a, dev) } {
            CUDA_SUCCESS => Ok(v),
            r => Err(format!("cuDeviceGetAttribute failed ({r})")),
        }
    };
    let ptx = ptx((cc(ATTR_CC_MAJOR)?, cc(ATTR_CC_MINOR)?))?;
    let mut module = std::ptr::null_mut();
    // SAFETY: NUL-terminated PTX; `module` is ours. Loaded into the
    // current context, the one the copy runs in.
    let r = unsafe { load(&mut module, ptx.as_ptr().cast()) };
    if r != CUDA_SUCCESS {
        return Err(format!("cuModuleLoadData of the PTX failed ({r})"));
    }
    let func = |name: &std::ffi::CStr| -> Result<usize, String> {
        let mut f = std::ptr::null_mut();
        // SAFETY: a module just loaded; a C string; `f` is ours.
        match unsafe { get_fn(&mut f, module, name.as_ptr()) } {
            CUDA_SUCCESS => Ok(f as usize),
            r => Err(format!(
                "cuModuleGetFunction({}) failed ({r})",
                name.to_string_lossy()
            )),
        }
    };
    let (chunks, parents) = (func(c"hrr_blake3_chunks")?, func(c"hrr_blake3_parents")?);
    let mut scratch = 0;
    // SAFETY: `scratch` is ours.
    let r = unsafe { alloc(&mut scratch, plan::SCRATCH_BYTES as usize) };
    if r != CUDA_SUCCESS {
        return Err(format!(
            "cuMemAlloc of {} bytes of scratch failed ({r})",
            plan::SCRATCH_BYTES
        ));
    }
    let mut result: *mut c_void = std::ptr::null_mut();
    // SAFETY: `result` is ours.
    let r = unsafe { host_alloc(&mut result, RESULT_PAGE, HOST_ALLOC_FLAGS) };
    if r != CUDA_SUCCESS {
        return Err(format!("cuMemHostAlloc of the result page failed ({r})"));
    }
    Ok(Loaded {
        chunks,
        parents,
        scratch,
        result: result as usize,
        busy: AtomicBool::new(false),
        checked: AtomicBool::new(false),
    })
}

impl Pending {
    /// Enqueues the launches on the stream; on failure, whether any was
    /// enqueued, and why.
    fn launch(&self, src: u64) -> Result<(), (bool, String)> {
        let l = &self.loaded;
        let launch_kernel = libcuda::get()
            .and_then(|d| d.queries.hash.launch_kernel)
            .ok_or((false, "no cuLaunchKernel".to_string()))?;
        // SAFETY: the result page is ours, 32 bytes of it written here;
        // no launch of this context's hash is in flight (`busy`).
        unsafe { std::ptr::write_volatile(l.result as *mut [u8; 32], [0; 32]) };
        let addr = |b: Buf| match b {
            Buf::Source => src,
            Buf::A => l.scratch,
            Buf::B => l.scratch + plan::SCRATCH_NODES.0 * 32,
            // A pinned, device-mapped page: the same address on the device.
            Buf::Result => l.result as u64,
        };
        for (i, s) in plan::launches(self.len as u64).into_iter().enumerate() {
            let (mut input, mut n, mut output) = (addr(s.input), s.n, addr(s.output));
            let mut params: [*mut c_void; 3] = [
                (&mut input as *mut u64).cast(),
                (&mut n as *mut u64).cast(),
                (&mut output as *mut u64).cast(),
            ];
            let f = match s.kernel {
                Kernel::Chunks => l.chunks,
                Kernel::Parents => l.parents,
            };
            // SAFETY: a function of the module loaded in this context;
            // its three parameters (two pointers, a 64-bit count) point at
            // locals alive for the call, which copies them; the source
            // range was checked to lie in one device allocation of this
            // context, the scratch and result are ours and sized by `plan`.
            let r = unsafe {
                launch_kernel(
                    f as *mut c_void,
                    s.grid,
                    1,
                    1,
                    plan::GROUP as c_uint,
                    1,
                    1,
                    0,
                    self.stream as CUstream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            if r != CUDA_SUCCESS {
                return Err((i > 0, format!("cuLaunchKernel failed ({r})")));
            }
        }
        Ok(())
    }

    /// The blob's name once the copy is known complete (`ok`: it
    /// succeeded and has landed at `dst`, the application's `len` bytes),
    /// as [`Prehashed`] of those bytes; `None` when the host must hash
    /// them (the copy failed, or the first check disagreed).
    /// A `Pending` dropped unfinished keeps the context's scratch taken
    /// (launches may be in flight): its copies go to the host hash.
    pub fn finish(self, ok: bool, dst: *const u8) -> Option<Prehashed> {
        let Pending {
            loaded: l,
            stream,
            len,
        } = self;
        let out = if ok {
            // SAFETY: the kernels ran before the copy on its stream, and
            // the copy has completed: the result page holds the hash.
            let id = BlobId(unsafe { std::ptr::read_volatile(l.result as *const [u8; 32]) });
            check_first(&l, id, dst, len)
        } else {
            // A failed copy says nothing of the launches before it.
            libcuda::sync_stream(stream);
            None
        };
        l.busy.store(false, Ordering::Release);
        out
    }
}

/// The first result of a context checked against the host's hash of the
/// bytes that landed (every result under `HRR_DEVICE_HASH=check`); after
/// that, trusted (`hrr-cap` checks every blob file written against its
/// name).
fn check_first(l: &Loaded, id: BlobId, dst: *const u8, len: usize) -> Option<Prehashed> {
    let every = mode() == plan::Mode::Check;
    if every || !l.checked.load(Ordering::Acquire) {
        // SAFETY: the copy wrote `len` bytes at `dst` (host memory) and
        // has completed.
        let bytes = unsafe { std::slice::from_raw_parts(dst, len) };
        let host = hrr_recorder::sink::hash_pool::id_of_blocked(bytes);
        if every {
            let verdict = if host == id {
                "agrees with"
            } else {
                "DISAGREES with"
            };
            eprintln!(
                "hrr-intercept: cuda: device hash: {len} bytes: {} {verdict} the host's {}",
                id.to_hex(),
                host.to_hex()
            );
            return Some(Prehashed::named(dst as usize, len, host));
        }
        if host != id {
            OFF.store(true, Ordering::Relaxed);
            eprintln!(
                "hrr-intercept: cuda: device hash: {} for {len} bytes, the host's {}: hashed on the host from now on",
                id.to_hex(),
                host.to_hex()
            );
            return None;
        }
        l.checked.store(true, Ordering::Release);
    }
    Some(Prehashed::named(dst as usize, len, id))
}
