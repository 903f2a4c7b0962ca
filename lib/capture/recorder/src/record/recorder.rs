//! `Recorder`: one process's capture — the archive it writes and the state
//! the events depend on (live allocations, modules, kernels).
//!
//! The capture library's exported entry points read the application's
//! arguments and call the methods here with plain values; everything below
//! is safe Rust. Each method records the call whatever its outcome, but
//! changes the recorder's maps only when the call succeeded (`ret == 0`).
//!
//! The capture library makes one per process ([`Recorder::from_config`]) at
//! its first recorded call, not when it is loaded: a shell or launcher that
//! never calls a GPU runtime but inherits `LD_PRELOAD` leaves no archive
//! and claims nothing (see `archive_claim`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use hrr_core::manifest::{BLOB_FAILURES_FIELD, Platform, VaArena};
use hrr_core::{Addr, BlobId, Dir, MemKind, Op};
use serde_json::{Map, Value};

use crate::config::{Config, ConfigError, detect_platform};
use crate::kept::Kept;
use crate::record::code_objects::{
    CodeError, CodeObjects, FatBin, Kernel, MetadataError, Module, kernels_of,
};
use crate::record::current_device;
use crate::record::event_line::{self, HeadCache};
use crate::record::host_memory::{self, HostMemory};
use crate::record::kernel_args::{ArgLayout, ArgValues};
use crate::record::launch_memo::Slot;
use crate::record::live_allocs::LiveAllocs;
use crate::record::out::Out;
use crate::record::window::Window;
use crate::sink::archive_claim::{ArchiveClaim, ClaimError};
use crate::sink::blob_batch::BlobFailure;
use crate::sink::blob_writer::BlobHash;
use crate::sink::event_sink::{Finish, LockMode};
use crate::sys;
use hrr_core::error_chain::chain;
use hrr_core::window::{WINDOW_FIELD, WindowInfo, WindowSpec};
use hrr_core::wire::encode::{self, BlobHex, LaunchRef};

/// The recorder could not start; the application runs unrecorded.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error(transparent)]
    /// The environment asks for something the recorder cannot do.
    Config(#[from] ConfigError),
    #[error(transparent)]
    /// The archive directory could not be claimed.
    Claim(#[from] ClaimError),
    #[error("{}", path.display())]
    /// A file of the archive could not be created.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    #[error(transparent)]
    /// The manifest could not be written.
    Manifest(#[from] hrr_core::manifest::ManifestError),
}

/// The most windows one run records (one archive each).
pub const MAX_WINDOWS: usize = 1024;

/// Warnings printed before the rest are counted silently.
const MAX_WARNINGS: u32 = 10;

/// Whether a call takes the recorder's lifecycle lock
/// ([`Recorder::lifecycle`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Creates or destroys an address or handle.
    Lifecycle,
    /// Neither: runs without the lock.
    Free,
}

/// What the layers above the recorder add to a finished archive's manifest
/// ([`Recorder::finish`]).
#[derive(Debug, Default)]
pub struct Closing {
    /// Calls forwarded without being recorded, by entry point (the
    /// manifest's `unrecorded`).
    pub unrecorded: BTreeMap<String, u64>,
    /// More manifest fields.
    pub fields: Map<String, Value>,
    /// The GPU driver's address arenas noted during the capture.
    pub va_arenas: Vec<VaArena>,
}

/// A copy's operands, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy {
    /// The copy's direction.
    pub dir: Dir,
    /// Destination address.
    pub dst: u64,
    /// Source address.
    pub src: u64,
    /// Bytes copied.
    pub size: u64,
    /// `None`: a synchronous API.
    pub stream: Option<u64>,
}

/// The hash of an H2D copy's source taken while the copy ran
/// ([`Recorder::forward_h2d`]), with where the bytes were.
#[derive(Clone, Copy, Debug)]
pub struct Prehashed {
    at: usize,
    len: usize,
    id: BlobId,
}

impl Prehashed {
    /// The `len` bytes at `at` named `id` by a hash computed elsewhere (a
    /// D2H copy's source hashed on the device before the copy). A large
    /// blob so named is written without being hashed here; `hrr-cap`
    /// checks every blob file against its name.
    pub fn named(at: usize, len: usize, id: BlobId) -> Prehashed {
        Prehashed { at, len, id }
    }
}

/// A launch's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDims {
    /// Grid dimensions, in blocks.
    pub grid: [u32; 3],
    /// Block dimensions, in threads.
    pub block: [u32; 3],
    /// Dynamic shared memory, in bytes.
    pub shmem: u32,
    /// The stream (0: the default stream).
    pub stream: u64,
}

/// One process's capture.
pub struct Recorder {
    /// The archives written: one for a whole-run capture, one per window
    /// otherwise (`window`), kept to the end: a thread may still hold the
    /// previous one for the call it is recording.
    outs: Box<[OnceLock<Out>]>,
    /// The index in `outs` of the archive being written.
    current: AtomicUsize,
    pid: u32,
    allocs: LiveAllocs,
    /// Live arrays' element sizes (see `arrays`).
    arrays: crate::record::arrays::LiveArrays,
    /// Host memory kernels read and write (see `host_memory`).
    host: HostMemory,
    /// Whether `finish` leaves `events.ndjson` plain (`HRR_EVENTS=plain`).
    events_plain: bool,
    code: CodeObjects,
    /// The capture window, when `HRR_WINDOW` asks for one.
    window: Option<Window>,
    /// Serialises calls that create or destroy handles (allocations,
    /// streams, events, modules) with their recording, so that when the
    /// runtime hands a freed address or handle to another thread, the `free`
    /// is recorded before the new `alloc`.
    lifecycle: Mutex<()>,
    warnings: AtomicU32,
}

/// A thread's reusable encoding state.
struct Scratch {
    /// The event body under construction.
    body: Vec<u8>,
    /// Recent launch heads (see `event_line::HeadCache`).
    heads: HeadCache,
}

thread_local! {
    // Reused so the hot path does not allocate. A thread in TLS teardown
    // falls back to a fresh one.
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch {
        body: Vec::with_capacity(4096),
        heads: HeadCache::new(),
    });
}

fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let mut f = Some(f);
    let r = SCRATCH.try_with(|s| {
        let mut s = s.try_borrow_mut().ok()?;
        s.body.clear();
        let r = (f.take().expect("called once"))(&mut s);
        if s.body.capacity() > 1 << 20 {
            s.body = Vec::with_capacity(4096);
        }
        Some(r)
    });
    match r {
        Ok(Some(r)) => r,
        _ => (f.take().expect("not yet called"))(&mut Scratch {
            body: Vec::new(),
            heads: HeadCache::new(),
        }),
    }
}

fn with_body<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    with_scratch(|s| f(&mut s.body))
}

impl Recorder {
    /// Creates the archive at `dir` (already claimed): `blobs/`, an empty
    /// `events.ndjson`, and `manifest.json` with `complete:false`.
    pub fn create(
        dir: &Path,
        platform: Platform,
        argv: Vec<String>,
        extra: Map<String, Value>,
    ) -> Result<Recorder, RecorderError> {
        Recorder::with_window(dir, platform, argv, extra, None)
    }

    /// [`Recorder::create`] recording only inside the windows `spec` picks
    /// (`record::window`); `dir` is the first window's archive.
    pub fn with_window(
        dir: &Path,
        platform: Platform,
        argv: Vec<String>,
        extra: Map<String, Value>,
        spec: Option<WindowSpec>,
    ) -> Result<Recorder, RecorderError> {
        let window = spec.map(|s| Window::new(s, dir, platform, argv.clone(), extra.clone()));
        let out = Out::create(dir, platform, argv, extra)?;
        Ok(Recorder {
            outs: {
                let n = if window.is_some() { MAX_WINDOWS } else { 1 };
                let outs: Box<[OnceLock<Out>]> = (0..n).map(|_| OnceLock::new()).collect();
                let _ = outs[0].set(out);
                outs
            },
            current: AtomicUsize::new(0),
            pid: sys::getpid(),
            allocs: LiveAllocs::new(),
            arrays: Default::default(),
            host: HostMemory::new(crate::config::host_memory_on(std::env::var_os(
                crate::config::ENV_HOST_MEMORY,
            ))),
            events_plain: crate::config::events_plain(std::env::var_os(crate::config::ENV_EVENTS)),
            code: CodeObjects::new(),
            window,
            lifecycle: Mutex::new(()),
            warnings: AtomicU32::new(0),
        })
    }

    /// The archive being written.
    #[inline(always)]
    pub(crate) fn out(&self) -> &Out {
        self.outs[self.current.load(Ordering::Acquire)]
            .get()
            .expect("the current archive is set before it is made current")
    }

    /// Makes `out` the archive written from now on (window `index`,
    /// 1-based); `false` past [`MAX_WINDOWS`].
    pub(crate) fn set_out(&self, index: usize, out: Out) -> bool {
        let Some(slot) = self.outs.get(index - 1) else {
            return false;
        };
        if slot.set(out).is_err() {
            return false;
        }
        self.current.store(index - 1, Ordering::Release);
        true
    }

    /// The capture window, if any.
    pub(crate) fn window(&self) -> Option<&Window> {
        self.window.as_ref()
    }

    /// Whether the run records windows only (`HRR_WINDOW`).
    #[inline(always)]
    pub fn windowed(&self) -> bool {
        self.window.is_some()
    }

    /// Whether calls are recorded now: always without a window, only inside
    /// one otherwise.
    #[inline(always)]
    pub fn recording(&self) -> bool {
        match &self.window {
            None => true,
            Some(w) => w.is_open(),
        }
    }

    /// The recorder `config` asks for: claims the directory and creates the archive.
    pub fn from_config(config: &Config, runtime: Option<&Path>) -> Result<Recorder, RecorderError> {
        let pid = sys::getpid();
        let claim = ArchiveClaim::claim(&config.out, pid)?;
        let platform = config.platform.unwrap_or_else(|| detect_platform(runtime));
        let mut extra = Map::new();
        extra.insert("pid".into(), Value::from(pid));
        // Who this process is in its run, read once, at its first recorded
        // call: a program may set its rank variables before it starts the
        // GPU (Python's multiprocessing workers do).
        let process = hrr_core::process_info::ProcessInfo::current();
        if let Ok(v) = serde_json::to_value(&process) {
            extra.insert(hrr_core::process_info::PROCESS_FIELD.into(), v);
        }
        if let Some(rt) = runtime {
            extra.insert(
                "runtime".into(),
                Value::from(rt.to_string_lossy().into_owned()),
            );
        }
        if claim.fallback {
            extra.insert(
                "requested_out".into(),
                Value::from(config.out.to_string_lossy().into_owned()),
            );
            eprintln!(
                "hrr-intercept: {} is recorded by another process; pid {pid} records into {}",
                config.out.display(),
                claim.dir.display()
            );
        }
        Recorder::with_window(
            &claim.dir,
            platform,
            sys::argv(),
            extra,
            config.window.clone(),
        )
    }

    /// The archive directory.
    pub fn dir(&self) -> &Path {
        &self.out().dir
    }

    /// The live arrays' element sizes.
    pub(crate) fn arrays_map(&self) -> &crate::record::arrays::LiveArrays {
        &self.arrays
    }

    /// The live allocations.
    pub fn allocs(&self) -> &LiveAllocs {
        &self.allocs
    }

    /// The code objects.
    pub fn code(&self) -> &CodeObjects {
        &self.code
    }

    /// Held across a handle-creating or -destroying call and its recording.
    pub fn lifecycle(&self) -> MutexGuard<'_, ()> {
        self.lifecycle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Prints a warning on stderr (never stdout: it belongs to the app).
    pub fn warn(&self, msg: &str) {
        let n = self.warnings.fetch_add(1, Ordering::Relaxed);
        if n < MAX_WARNINGS {
            eprintln!("hrr-intercept: warning: {msg}");
        } else if n == MAX_WARNINGS {
            eprintln!("hrr-intercept: warning: further warnings suppressed");
        }
    }

    /// Counts an event lost to a recorder failure (reported in the manifest).
    pub fn lose(&self, api: &str, why: &str) {
        self.out().lost.fetch_add(1, Ordering::Relaxed);
        self.warn(&format!("{api} not recorded: {why}"));
    }

    pub(crate) fn put_blob(&self, what: &str, bytes: &[u8]) -> Option<BlobId> {
        if !self.recording() {
            return None;
        }
        let out = self.out();
        self.stored(what, bytes.len(), || out.blobs.put(bytes, &out.sink))
    }

    /// [`Recorder::put_blob`] of bytes that stay where they lie until
    /// [`Recorder::settle_code`]: hashed here, written by the events
    /// buffer's writer.
    fn put_kept(&self, what: &str, bytes: Kept) -> Option<BlobId> {
        let out = self.out();
        self.stored(what, bytes.len(), || out.blobs.put_kept(bytes, &out.sink))
    }

    /// The id `put` stored a blob of `len` bytes under (timed), or a
    /// warning.
    fn stored(
        &self,
        what: &str,
        len: usize,
        put: impl FnOnce() -> std::io::Result<BlobId>,
    ) -> Option<BlobId> {
        match crate::self_profile::phase("phase blob: hash and store", put) {
            Ok(id) => Some(id),
            Err(e) => {
                self.warn(&format!("cannot write the {what} blob ({len} bytes): {e}"));
                None
            }
        }
    }

    /// Waits until every code object queued from where it lies
    /// ([`Recorder::load_code_kept`], [`Recorder::load_bundle_kept`]) is on
    /// disk: called before such memory can go (a fat binary unregistered, a
    /// driver-layer copy dropped). Bounded: past it, a warning says so (a
    /// file written later from memory that changed meanwhile is not
    /// written, and the capture says so at its end).
    pub fn settle_code(&self) {
        if !self.out().sink.settle_kept() {
            self.warn(
                "code objects queued for writing were still unwritten when their memory was \
                 released; any whose bytes change before they are written will be missing",
            );
        }
    }

    /// Records any op that needs no bookkeeping (streams, events, syncs).
    /// After a successful synchronisation, the host memory kernels it
    /// completes could have written is recorded (`host_read`).
    pub fn op(&self, api: &str, ret: i32, op: &Op) {
        if let Some(w) = &self.window {
            w.note(api, ret, op);
            if !w.is_open() {
                return;
            }
        }
        with_body(|b| {
            encode::encode_op(
                b,
                sys::gettid(),
                current_device::for_event(),
                api,
                i64::from(ret),
                op,
            );
            self.out().sink.append(b);
        });
        if ret == 0 && self.host.any() {
            self.host_memory_after(api, op);
        }
    }

    /// The host-memory side of a recorded op (see [`Recorder::op`]).
    #[cold]
    fn host_memory_after(&self, api: &str, op: &Op) {
        let sync = match *op {
            Op::DeviceSync => host_memory::Sync::All,
            Op::StreamSync { stream } => host_memory::Sync::Stream(stream.0),
            Op::EventSync { event } => host_memory::Sync::Event(event.0),
            Op::EventRecord { event, stream } => {
                self.host.event_recorded(event.0, stream.0);
                return;
            }
            _ => return,
        };
        let record = |d: host_memory::Dirty, bytes: &[u8]| {
            if let Some(blob) = self.put_blob("host memory", bytes) {
                let op = Op::HostRead {
                    ptr: Addr(d.ptr),
                    size: d.len as u64,
                    blob,
                };
                self.op(api, 0, &op);
            }
        };
        crate::self_profile::phase("phase host memory: after a sync", || {
            self.host.after_sync(sync, record)
        });
    }

    /// The host memory kernels read and write.
    pub fn host_memory(&self) -> &HostMemory {
        &self.host
    }

    /// Whether a launch must look for the host memory it reaches: some is
    /// known and calls are recorded now (before a capture window opens,
    /// the window's state preamble snapshots that memory instead).
    #[inline]
    pub fn watches_host_memory(&self) -> bool {
        self.recording() && self.host.any()
    }

    /// Before a launch on `stream` is forwarded: records (`host_write`) the
    /// bytes the application changed in host memory the launch reaches
    /// through `values` (pointer arguments) or always (managed memory).
    /// Callers check [`HostMemory::any`] first.
    #[cold]
    pub fn host_writes_before_launch(
        &self,
        api: &str,
        stream: u64,
        values: &ArgValues<'_, '_>,
        layout: Option<&ArgLayout>,
    ) {
        let words = values
            .args(layout)
            .flat_map(|a| a.bytes.chunks_exact(8))
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")));
        self.host_writes(api, stream, words);
    }

    /// Records (`host_write`) the changed bytes of the host memory reached
    /// through `words` (a launch's aligned 8-byte argument words) or always
    /// (managed memory), before work on `stream` that may read it; those
    /// ranges are then pending until `stream` is synchronised.
    pub(crate) fn host_writes(&self, api: &str, stream: u64, words: impl Iterator<Item = u64>) {
        if !self.recording() {
            return;
        }
        // What host functions enqueued before this launch wrote to the host
        // memory it reaches is for it to read: they run first (a launch
        // that reaches none does not wait).
        let wait = || {
            if !super::host_funcs::HOST_FUNCS.wait_for_earlier(super::host_funcs::WAIT) {
                self.warn(&format!(
                    "{api}: a host function enqueued before it has not run after {:?}: what it writes to host memory is recorded later",
                    super::host_funcs::WAIT
                ));
            }
        };
        let record = |d: host_memory::Dirty, bytes: &[u8]| {
            if let Some(blob) = self.put_blob("host memory", bytes) {
                let op = Op::HostWrite {
                    ptr: Addr(d.ptr),
                    size: d.len as u64,
                    blob,
                };
                self.op(api, 0, &op);
            }
        };
        crate::self_profile::phase("phase launch: host memory", || {
            self.host.before_launch(stream, words, wait, record)
        });
    }

    /// Records an allocation call.
    pub fn alloc(&self, api: &str, ret: i32, ptr: u64, size: u64, mem: MemKind) {
        let ptr = if ret == 0 { ptr } else { 0 };
        if ret == 0 && ptr != 0 {
            self.allocs.insert(ptr, size, mem);
            // Fresh from the runtime: zero, as replay's allocation is.
            self.host.track(ptr, size, mem, true);
        }
        self.op(
            api,
            ret,
            &Op::Alloc {
                ptr: Addr(ptr),
                size,
                mem,
            },
        );
    }

    /// `hint`: the kind the API implies (hipHostFree: pinned); otherwise the
    /// kind comes from the allocation being freed.
    pub fn free(&self, api: &str, ret: i32, ptr: u64, hint: Option<MemKind>) {
        let known = if ret == 0 && ptr != 0 {
            self.host.untrack(ptr);
            self.allocs.remove(ptr)
        } else {
            None
        };
        self.op(
            api,
            ret,
            &Op::Free {
                ptr: Addr(ptr),
                mem: known.or(hint),
            },
        );
    }

    /// Records a reset of `device` (`hipDeviceReset`,
    /// `hipDevicePrimaryCtxReset`, `cuDevicePrimaryCtxReset`). On success
    /// everything the process had made on that device is forgotten as if
    /// freed or destroyed: its allocations (so pointer scans and a window's
    /// snapshot never read them, and the runtime may hand their addresses
    /// out again), its host-memory tracking, its pools and, in a window's
    /// ledger, its streams, events, graphs, virtual memory and arrays.
    /// Host memory (pinned, registered) goes only `with_host`: CUDA's
    /// belongs to the context, HIP's to no device. Other devices' are
    /// untouched.
    pub fn device_reset(&self, api: &str, ret: i32, device: i32, with_host: bool) {
        if ret == 0
            && let Ok(d) = u32::try_from(device)
        {
            for base in self.allocs.remove_device(d, with_host) {
                self.host.untrack(base);
            }
            crate::record::pools::forget_device(d);
        }
        self.op(api, ret, &Op::DeviceReset { device });
    }

    /// Records a host registration.
    pub fn host_register(&self, api: &str, ret: i32, ptr: u64, size: u64) {
        if ret == 0 && ptr != 0 {
            // Registered host memory is device-accessible: kernels may get it.
            self.allocs.insert(ptr, size, MemKind::Pinned);
            // It holds the application's data already.
            self.host.track(ptr, size, MemKind::Pinned, false);
        }
        self.op(
            api,
            ret,
            &Op::HostRegister {
                ptr: Addr(ptr),
                size,
            },
        );
    }

    /// Records a host unregistration.
    pub fn host_unregister(&self, api: &str, ret: i32, ptr: u64) {
        if ret == 0 {
            self.host.untrack(ptr);
            self.allocs.remove(ptr);
        }
        self.op(api, ret, &Op::HostUnregister { ptr: Addr(ptr) });
    }

    /// Whether `ptr` lies in a live device-side allocation (`Some(false)`:
    /// a live host-side one; `None`: not one the recorder saw).
    pub fn is_device(&self, ptr: u64) -> Option<bool> {
        self.allocs.view().find(ptr).map(MemKind::is_device)
    }

    /// Records a copy; `data` is the blob (H2D source, D2H result) when the
    /// call succeeded and the bytes could be read. A synchronous copy's
    /// (no stream) is hashed by the wide pool when very large: the
    /// application's thread waits in its call anyway (`hash_pool`).
    pub fn memcpy(&self, api: &str, ret: i32, c: &Copy, data: Option<&[u8]>) {
        self.memcpy_hashed(api, ret, c, data, None);
    }

    /// Whether `[ptr, ptr + len)` lies in live host memory the runtime
    /// allocated or registered for the process: readable until the program
    /// frees it, so a synchronous copy from it may be hashed while the
    /// copy runs ([`Recorder::forward_h2d`]).
    pub fn is_host_range(&self, ptr: u64, len: usize) -> bool {
        self.allocs.view().is_host_range(ptr, len as u64)
    }

    /// Forwards a synchronous H2D copy with `call` while its source `src`
    /// (memory [`Recorder::is_host_range`] vouched for, which the program's
    /// thread cannot change while it waits in the call) is hashed in the
    /// recorder's pool; returns `call`'s result and, when it was hashed,
    /// the hash for [`Recorder::memcpy_hashed`]. `src` is not read once
    /// this returns. Without recording, or for a blob too small to be
    /// hashed in parallel, only `call` runs.
    pub fn forward_h2d<R>(&self, src: &[u8], call: impl FnOnce() -> R) -> (R, Option<Prehashed>) {
        if !self.recording() || !BlobId::hashed_in_parallel(src.len()) {
            return (call(), None);
        }
        let (ret, id) = crate::sink::hash_pool::id_while(src, call);
        let pre = Prehashed {
            at: src.as_ptr() as usize,
            len: src.len(),
            id,
        };
        (ret, Some(pre))
    }

    /// [`Recorder::memcpy`] of a copy forwarded by
    /// [`Recorder::forward_h2d`]: `pre` names `data` when it hashed the
    /// same bytes (same place and length); a failed call writes no blob.
    pub fn memcpy_hashed(
        &self,
        api: &str,
        ret: i32,
        c: &Copy,
        data: Option<&[u8]>,
        pre: Option<Prehashed>,
    ) {
        // A device-to-device copy may read or write host memory the device
        // reaches (pinned, registered, managed: one address space): what
        // the host wrote there is recorded before it, as before a launch,
        // and what it writes there is checked at the next synchronisation.
        if c.dir == Dir::D2d && ret == 0 && self.host.any() {
            self.host_writes(api, c.stream.unwrap_or(0), [c.src, c.dst].into_iter());
        }
        let blob = match data {
            Some(d) if ret == 0 && self.recording() => {
                let out = self.out();
                let how = match pre {
                    Some(p) if p.at == d.as_ptr() as usize && p.len == d.len() => {
                        BlobHash::Known(p.id)
                    }
                    _ if c.stream.is_none() => BlobHash::Blocked,
                    _ => BlobHash::Pool,
                };
                self.stored(api, d.len(), || out.blobs.put_with(d, &out.sink, how))
            }
            _ => None,
        };
        let op = Op::Memcpy {
            dir: c.dir,
            dst: Addr(c.dst),
            src: Addr(c.src),
            size: c.size,
            stream: c.stream.map(Addr),
            blob,
        };
        self.op(api, ret, &op);
    }

    #[allow(clippy::too_many_arguments)]
    /// Records a memset call.
    pub fn memset(
        &self,
        api: &str,
        ret: i32,
        dst: u64,
        value: u32,
        size: u64,
        width: u8,
        stream: Option<u64>,
    ) {
        self.op(
            api,
            ret,
            &Op::Memset {
                dst: Addr(dst),
                value,
                size,
                width,
                stream: stream.map(Addr),
            },
        );
    }

    /// A code object turned into a module: its blob and metadata.
    fn module_of(&self, what: &str, image: &[u8]) -> Module {
        self.module_with(what, image, self.code_of(what, image))
    }

    /// A code object whose blob is `code` turned into a module.
    fn module_with(&self, what: &str, image: &[u8], code: BlobId) -> Module {
        let kernels = kernels_of(image);
        if let Err(e) = &kernels {
            self.warn(&format!(
                "{what}: no kernel metadata ({}); launch arguments are recorded without layout",
                chain(e)
            ));
        }
        Module::new(code, kernels)
    }

    /// `hipModuleLoad*`. `image`: the code object's bytes, or why they could
    /// not be read (a failed call records the empty blob).
    pub fn module_load<E>(&self, api: &str, ret: i32, module: u64, image: Result<&[u8], E>)
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let m = match (ret, image) {
            (0, Ok(img)) => self.module_of(api, img),
            (0, Err(why)) => {
                self.warn(&format!(
                    "{api}: cannot read the code object: {}",
                    chain(&why)
                ));
                Module::new(
                    self.empty_blob(),
                    Err(MetadataError::Unreadable(Arc::new(why))),
                )
            }
            _ => Module::new(self.empty_blob(), Err(MetadataError::LoadFailed)),
        };
        let code = m.code;
        if ret == 0 {
            self.code.add_module(module, m);
        }
        self.op(
            api,
            ret,
            &Op::ModuleLoad {
                module: Addr(if ret == 0 { module } else { 0 }),
                code,
            },
        );
    }

    fn empty_blob(&self) -> BlobId {
        self.code_of("empty", b"")
    }

    /// Records a module unload.
    pub fn module_unload(&self, api: &str, ret: i32, module: u64) {
        if ret == 0 {
            self.code.remove_module(module);
        }
        self.op(
            api,
            ret,
            &Op::ModuleUnload {
                module: Addr(module),
            },
        );
    }

    /// Records a kernel lookup in a module.
    pub fn get_function(&self, api: &str, ret: i32, func: u64, module: u64, name: &str) {
        if ret == 0 && !self.code.add_function(func, module, name) {
            self.warn(&format!(
                "{api}: function {name} of unknown module {module:#x}"
            ));
        }
        let func = if ret == 0 { func } else { 0 };
        self.op(
            api,
            ret,
            &Op::Function {
                module: Addr(module),
                name: name.to_string(),
                func: Addr(func),
            },
        );
    }

    /// `__hipRegisterFatBinary`: keeps where the bundle is; nothing is read
    /// or written until a kernel from it is launched.
    pub fn register_fatbin(&self, handle: u64, addr: usize, len: usize) {
        self.code.add_fatbin(handle, FatBin::new(addr, len));
    }

    /// `__hipRegisterFunction`: recorded as a `function` event whose module
    /// is the fat-binary handle and whose `func` is the host stub.
    pub fn register_function(&self, api: &str, handle: u64, stub: u64, name: &str) {
        if !self.code.add_stub(stub, handle, name) {
            self.warn(&format!(
                "{api}: kernel {name} of unknown fat binary {handle:#x}"
            ));
        }
        self.op(
            api,
            0,
            &Op::Function {
                module: Addr(handle),
                name: name.to_string(),
                func: Addr(stub),
            },
        );
    }

    /// `__hipUnregisterFatBinary`: forgets the fat binary (nothing is
    /// recorded) once its queued code is on disk.
    pub fn unregister_fatbin(&self, handle: u64) {
        self.settle_code();
        self.code.remove_fatbin(handle);
    }

    /// Loads a fat binary's bundle (its bytes read by the caller): the code
    /// blob and the kernel metadata of its device entries.
    pub fn load_bundle(&self, bytes: &[u8]) -> Arc<Module> {
        Arc::new(self.module_of("fat binary", bytes))
    }

    /// A registered fat binary's bundle, which stays where it lies until
    /// [`Recorder::settle_code`], as a module: its blob (written by the
    /// events buffer's writer) and the kernel metadata of its device
    /// entries.
    pub fn load_bundle_kept(&self, bytes: Kept) -> Arc<Module> {
        let code = self.kept_code_of("fat binary", bytes);
        Arc::new(self.module_with("fat binary", bytes.bytes(), code))
    }

    /// A CUDA image as a module whose code is written and whose kernel
    /// metadata is not read: the driver gives CUDA's layouts
    /// (`cuda::registry`).
    pub fn load_code(&self, bytes: &[u8]) -> Arc<Module> {
        cuda_module(self.code_of("fat binary", bytes))
    }

    /// [`Recorder::load_code`] of an image that stays where it lies until
    /// [`Recorder::settle_code`]: its blob is written by the events buffer's
    /// writer.
    pub fn load_code_kept(&self, bytes: Kept) -> Arc<Module> {
        cuda_module(self.kept_code_of("fat binary", bytes))
    }

    /// A code object's blob, written (its id even where writing failed).
    fn code_of(&self, what: &str, image: &[u8]) -> BlobId {
        let id = self
            .put_blob(what, image)
            .unwrap_or_else(|| BlobId::of(image));
        if let Some(w) = &self.window {
            // A later window's archive needs it too.
            w.keep_code(id, image);
        }
        id
    }

    /// [`Recorder::code_of`] of bytes that stay where they lie.
    fn kept_code_of(&self, what: &str, image: Kept) -> BlobId {
        if let Some(w) = &self.window {
            // Copied: a later window's archive needs it too, and outside a
            // window nothing is written.
            let id = self.code_of(what, image.bytes());
            w.keep_code(id, image.bytes());
            return id;
        }
        self.put_kept(what, image)
            .unwrap_or_else(|| BlobId::of(image.bytes()))
    }

    /// Records a launch of `kernel` (`None`: a handle the recorder never saw
    /// registered; recorded with an unknown name and no arguments), keeping
    /// the appended line (after `seq` and `t`) in `slot` (see `launch_memo`).
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &self,
        api: &str,
        ret: i32,
        kernel: Option<&Kernel>,
        load: impl FnOnce(&FatBin) -> Result<Arc<Module>, CodeError>,
        func: u64,
        dims: &LaunchDims,
        values: &ArgValues<'_, '_>,
        slot: Option<Slot<'_>>,
    ) {
        if !self.recording() {
            return;
        }
        self.launch_head(api, kernel, load, func, dims, |k, layout| {
            let phase = crate::self_profile::phase;
            phase("phase launch: encode", || {
                with_scratch(|s| {
                    let b = &mut s.body;
                    event_line::encode_launch_scanned_cached(
                        b,
                        &mut s.heads,
                        sys::gettid(),
                        current_device::for_event(),
                        api,
                        i64::from(ret),
                        k,
                        values.args(layout),
                        &self.allocs,
                    );
                    self.out().sink.append(b);
                    if let Some(slot) = slot {
                        slot.keep(values, b);
                    }
                })
            })
        });
    }

    /// [`Recorder::launch`] of a CUDA launch with attributes
    /// (`cuLaunchKernelEx`; the memo's key holds their hash).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_with_attrs(
        &self,
        api: &str,
        ret: i32,
        kernel: Option<&Kernel>,
        load: impl FnOnce(&FatBin) -> Result<Arc<Module>, CodeError>,
        func: u64,
        dims: &LaunchDims,
        values: &ArgValues<'_, '_>,
        attrs: &[hrr_core::LaunchAttr],
        slot: Option<Slot<'_>>,
    ) {
        if !self.recording() {
            return;
        }
        self.launch_head(api, kernel, load, func, dims, |k, layout| {
            with_body(|b| {
                event_line::encode_launch_scanned_attrs(
                    b,
                    sys::gettid(),
                    current_device::for_event(),
                    api,
                    i64::from(ret),
                    k,
                    values.args(layout),
                    &self.allocs.view(),
                    attrs.iter().map(|a| (a.id, &a.hex.0[..])),
                );
                self.out().sink.append(b);
                if let Some(slot) = slot {
                    slot.keep(values, b);
                }
            })
        });
    }

    /// The launch's head fields (its kernel's name and code, or the empty
    /// code blob with a warning when it has none), handed to `encode` with
    /// the kernel's argument layout.
    #[inline(always)]
    fn launch_head<R>(
        &self,
        api: &str,
        kernel: Option<&Kernel>,
        load: impl FnOnce(&FatBin) -> Result<Arc<Module>, CodeError>,
        func: u64,
        dims: &LaunchDims,
        encode: impl FnOnce(&LaunchRef<'_>, Option<&ArgLayout>) -> R,
    ) -> R {
        let empty;
        let (name, code, layout) = match kernel.map(|k| (k, k.resolve(load))) {
            Some((k, Ok(r))) => (k.name.as_str(), r.code, r.layout),
            Some((k, Err(e))) => {
                self.warn(&format!(
                    "{api}: kernel {}: cannot read its code object: {}",
                    k.name,
                    chain(&e)
                ));
                empty = BlobHex::of(&self.empty_blob());
                (k.name.as_str(), &empty, None)
            }
            None => {
                self.warn(&format!("{api}: launch of unregistered function {func:#x}"));
                empty = BlobHex::of(&self.empty_blob());
                ("<unknown>", &empty, None)
            }
        };
        let k = LaunchRef {
            name,
            code,
            func: Some(func),
            grid: dims.grid,
            block: dims.block,
            shmem: dims.shmem,
            stream: dims.stream,
        };
        encode(&k, layout)
    }

    /// A launch as a graph's kernel node holds it: the `launch` op the
    /// same launch would record (name, code object written, arguments read
    /// with the kernel's layout, pointers marked), not appended.
    pub fn launch_op(
        &self,
        api: &str,
        kernel: Option<&Kernel>,
        load: impl FnOnce(&FatBin) -> Result<Arc<Module>, CodeError>,
        func: u64,
        dims: &LaunchDims,
        values: &ArgValues<'_, '_>,
    ) -> Option<Op> {
        let body = self.launch_head(api, kernel, load, func, dims, |k, layout| {
            let mut b = Vec::new();
            event_line::encode_launch_scanned_attrs(
                &mut b,
                0,
                0,
                api,
                0,
                k,
                values.args(layout),
                &self.allocs.view(),
                std::iter::empty(),
            );
            b
        });
        // Parsed back: the one encoding of launch arguments stays the only one.
        hrr_core::Event::parse(&encode::line(0, 0, &body))
            .ok()
            .map(|e| e.op)
    }

    /// Stores `bytes` as a blob (`what` names it in a warning if it cannot be).
    pub fn blob(&self, what: &str, bytes: &[u8]) -> Option<BlobId> {
        self.put_blob(what, bytes)
    }

    /// `cuMemAddressReserve`: the range is device memory for pointer
    /// scanning and copy directions (what is mapped into it is).
    pub fn va_reserve(&self, api: &str, ret: i32, ptr: u64, size: u64) {
        let ptr = if ret == 0 { ptr } else { 0 };
        if ret == 0 && ptr != 0 {
            self.allocs.insert(ptr, size, MemKind::Device);
        }
        self.op(
            api,
            ret,
            &Op::VaReserve {
                ptr: Addr(ptr),
                size,
            },
        );
    }

    /// `va_free`: a reservation given back.
    pub fn va_free(&self, api: &str, ret: i32, ptr: u64, size: u64) {
        if ret == 0 {
            self.allocs.remove(ptr);
        }
        self.op(
            api,
            ret,
            &Op::VaFree {
                ptr: Addr(ptr),
                size,
            },
        );
    }

    /// A module global (`cuModuleGetGlobal`): device memory from now on,
    /// and an event replay maps to its own copy of the variable.
    #[allow(clippy::too_many_arguments)]
    pub fn global(
        &self,
        api: &str,
        ret: i32,
        module: u64,
        name: &str,
        code: BlobId,
        ptr: u64,
        size: u64,
    ) {
        if ret == 0 && ptr != 0 && self.allocs.view().find(ptr).is_none() {
            self.allocs.insert(ptr, size, MemKind::Device);
        }
        self.op(
            api,
            ret,
            &Op::Global {
                module: Addr(module),
                name: name.to_string(),
                code,
                ptr: Addr(if ret == 0 { ptr } else { 0 }),
                size,
            },
        );
    }

    /// The code object blob of a loaded module (`None`: never seen).
    pub fn module_code(&self, module: u64) -> Option<BlobId> {
        self.code.module(module).map(|m| m.code)
    }

    /// Forgets device memory that was not an allocation (a module's
    /// globals, when it is unloaded).
    pub fn forget_memory(&self, ptr: u64) {
        self.allocs.remove(ptr);
    }

    /// The empty blob (written once), for an event whose code is unknown.
    pub fn empty_code(&self) -> BlobId {
        self.empty_blob()
    }

    /// `EventSink::id` of the archive's events (a `RepeatRun` belongs to it).
    #[inline(always)]
    pub fn sink_id(&self) -> usize {
        self.out().sink.id()
    }

    /// Appends a launch line kept by a `LaunchMemo` (everything after `seq`
    /// and `t`) as [`Recorder::launch`] appended it before: the line memo
    /// slot `slot` keeps under `serial`. The thread's next repeats of it go
    /// to `run` without the sink's lock (`sink::repeat_run`).
    #[inline]
    pub fn repeat_launch(
        &self,
        line: &[u8],
        slot: usize,
        serial: u64,
        run: &mut Option<std::sync::Arc<crate::sink::repeat_run::RepeatRun>>,
    ) {
        if !self.recording() {
            return;
        }
        self.out()
            .sink
            .append_repeat(line, slot, serial, crate::record::launch_memo::WAYS, run);
    }

    /// Writes buffered events from a fatal-signal handler
    /// (async-signal-safe; see `event_sink`).
    pub fn flush_from_signal(&self) -> bool {
        sys::getpid() == self.pid && self.out().sink.flush_from_signal()
    }

    /// The events writer's loop (run on its own thread until finish).
    pub fn run_writer(&self) {
        self.out().sink.run_writer();
    }

    /// Starts the thread that runs [`Recorder::run_writer`] (`hrr-writer`);
    /// without one, the recording threads write the events themselves.
    pub fn start_writer(&'static self) {
        let spawned = std::thread::Builder::new()
            .name("hrr-writer".into())
            .spawn(move || self.run_writer());
        if let Err(e) = spawned {
            self.warn(&format!(
                "no writer thread ({e}); events are written by the recording threads"
            ));
        }
    }

    /// Finishes the archive: the `eof` event (its `api` names the exit path),
    /// then the manifest with `complete:true`, the counts and what
    /// `closing` adds (asked once the events are written). Only the
    /// process that created the recorder finishes it (a `vfork` child shares
    /// its memory), and only once.
    pub fn finish(&self, api: &str, mode: LockMode, closing: impl FnOnce() -> Closing) {
        if sys::getpid() != self.pid {
            return;
        }
        match &self.window {
            None => self.finish_out(self.out(), api, mode, closing, None),
            Some(w) => {
                let info = w.at_exit();
                self.finish_out(self.out(), api, mode, w.inside(closing), Some(info))
            }
        }
    }

    /// Finishes archive `out` (see [`Recorder::finish`]); `window`: its
    /// manifest's `window` field.
    pub(crate) fn finish_out(
        &self,
        out: &Out,
        api: &str,
        mode: LockMode,
        closing: impl FnOnce() -> Closing,
        window: Option<WindowInfo>,
    ) {
        if out.finished.swap(true, Ordering::AcqRel) {
            return;
        }
        let zst = out.blobs.zst();
        if mode == LockMode::Try {
            // Perhaps in a signal handler: the compressor is only told to
            // stop (what it has not done stays raw; hrr-cap compresses it).
            zst.stop_now();
        }
        let Finish::Done { events } = out.sink.finish(api, sys::gettid_raw(), mode) else {
            return;
        };
        if mode == LockMode::Block {
            // Every blob file is written and offered now: the compressor
            // goes on with them, bounded, while the events are compressed.
            zst.finish(
                crate::sink::blob_zst::DRAIN_TIME,
                crate::sink::blob_zst::DRAIN_BYTES,
            );
        }
        // What the layers above add (region records made durable before the
        // manifest says the archive is complete, the calls they forwarded
        // unrecorded, the driver's arenas).
        let closing = closing();
        let mut m = out.manifest.lock().unwrap_or_else(PoisonError::into_inner);
        let mut lost = out.lost.load(Ordering::Relaxed);
        m.complete = true;
        m.events = events;
        if out.sink.failed() {
            // Writes to the events file failed (disk full, ...): say so once,
            // with what was lost, here and in the manifest. The application
            // is not told: its output and exit status stay its own.
            let path = out.dir.join(hrr_core::archive_writer::EVENTS_FILE);
            let on_disk = count_lines(&path).min(events);
            let errno = out.sink.write_error().unwrap_or(libc::EIO);
            let why = format!(
                "{}: {}",
                hrr_core::archive_writer::EVENTS_FILE,
                os_message(errno)
            );
            eprintln!(
                "hrr-intercept: capture incomplete: {why} ({} events lost)",
                events - on_disk
            );
            lost += events - on_disk;
            m.complete = false;
            m.events = on_disk;
            m.extra.insert(
                hrr_core::manifest::INCOMPLETE_FIELD.into(),
                Value::from(why),
            );
        }
        let (failed, first) = out.sink.blob_failures();
        if failed > 0 {
            // Blob files written after their events were buffered could not
            // be (disk full, ...), or were no longer what their names say
            // (a code object the program rewrote): events name blobs that
            // are not on disk. Said here, and in the manifest.
            for (id, f) in &first {
                eprintln!(
                    "hrr-intercept: capture incomplete: blob {id} not written: {}",
                    failure_text(f)
                );
            }
            let more = failed - first.len();
            if more > 0 {
                eprintln!("hrr-intercept: capture incomplete: {more} more blob files not written");
            }
            let why = match first.first() {
                Some((id, f)) if more == 0 && failed == 1 => {
                    format!("blobs: blob {id} not written: {}", failure_text(f))
                }
                Some((id, f)) => format!(
                    "blobs: {failed} blob files not written; blob {id}: {}",
                    failure_text(f)
                ),
                None => format!("blobs: {failed} blob files not written"),
            };
            m.complete = false;
            m.extra
                .entry(hrr_core::manifest::INCOMPLETE_FIELD)
                .or_insert(Value::from(why));
            m.extra
                .insert(BLOB_FAILURES_FIELD.into(), Value::from(failed as u64));
            out.blobs.unwritten(failed);
        }
        m.blobs = out.blobs.count();
        m.extra
            .insert("blob_bytes".into(), Value::from(out.blobs.bytes()));
        if lost > 0 {
            m.extra.insert("lost_events".into(), Value::from(lost));
        }
        for line in crate::self_profile::report() {
            eprintln!("hrr-intercept: profile: {line}");
        }
        m.unrecorded = closing.unrecorded;
        m.extra.extend(closing.fields);
        m.va_arenas = closing.va_arenas;
        m.devices = current_device::used();
        if let Some(w) = window {
            m.extra.insert(WINDOW_FIELD.into(), w.to_value());
        }
        // The events compressed (docs/FORMAT.md, *Compression*): the
        // compressed file durable before the manifest says complete, the
        // plain one removed only after. A capture whose events failed keeps
        // them plain, as repair reads them; a failure here keeps them plain
        // too (both forms are read).
        let compressed = !self.events_plain
            && !out.sink.failed()
            && match hrr_core::archive_writer::compress_events(&out.dir) {
                Ok(_) => true,
                Err(e) => {
                    eprintln!(
                        "hrr-intercept: events left uncompressed: {}: {e}",
                        out.dir
                            .join(hrr_core::archive_writer::EVENTS_ZST_FILE)
                            .display()
                    );
                    false
                }
            };
        if mode == LockMode::Block {
            // Bounded: the threads give up on the piece after the drain's
            // time; what they leave is raw, and read as such.
            zst.wait(crate::sink::blob_zst::DRAIN_TIME + std::time::Duration::from_secs(1));
        }
        // On a full disk the atomic replace (a new file) can fail where
        // rewriting the existing manifest's block does not.
        if let Err(e) = m.write_atomic(&out.dir)
            && let Err(e2) = m.write_in_place(&out.dir)
        {
            eprintln!(
                "hrr-intercept: cannot finish {}: {}; rewriting in place: {}",
                out.dir.display(),
                chain(&e),
                chain(&e2)
            );
            return;
        }
        if compressed && let Err(e) = hrr_core::archive_writer::remove_plain_events(&out.dir) {
            eprintln!(
                "hrr-intercept: {}: {e} (the compressed events are complete; both are read)",
                out.dir
                    .join(hrr_core::archive_writer::EVENTS_FILE)
                    .display()
            );
        }
    }

    /// Whether the archive was finished.
    pub fn is_finished(&self) -> bool {
        self.out().finished.load(Ordering::Acquire)
    }

    /// Events appended so far.
    pub fn events_appended(&self) -> u64 {
        self.out().sink.appended()
    }
}

/// Whole lines in an events file (what a failed capture did get to disk).
/// A CUDA module of code blob `code`, its kernel metadata left to the driver.
fn cuda_module(code: BlobId) -> Arc<Module> {
    Arc::new(Module::new(code, Err(MetadataError::LeftToDriver)))
}

fn count_lines(path: &Path) -> u64 {
    use std::io::Read;
    let Ok((mut f, _)) = hrr_core::safe_fs::open_regular(path, hrr_core::safe_fs::Follow::No)
    else {
        return 0;
    };
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        match f.read(&mut buf) {
            Ok(0) | Err(_) => return n,
            Ok(k) => n += buf[..k].iter().filter(|&&c| c == b'\n').count() as u64,
        }
    }
}

/// Why a blob file was not written, for stderr and the manifest.
fn failure_text(f: &BlobFailure) -> String {
    match f {
        BlobFailure::Io(errno) => os_message(*errno),
        BlobFailure::Changed { actual } => format!(
            "its bytes changed after they were hashed (to {actual}): the program rewrote or \
             freed memory it had registered as code"
        ),
    }
}

/// The OS's text for `errno`, without Rust's " (os error N)" suffix.
fn os_message(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::kernel_args::ArgValues;
    use hrr_core::manifest::Manifest;

    fn rec(t: &Path) -> Recorder {
        Recorder::create(t, Platform::Cpu, vec!["app".into()], Map::new()).unwrap()
    }

    /// Every event line, from `events.ndjson` or (finished) its
    /// compressed form.
    fn events(dir: &Path) -> Vec<hrr_core::Event> {
        hrr_core::archive::Archive::open(dir)
            .unwrap()
            .events(Default::default())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn a_device_reset_forgets_that_device_s_allocations() {
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        r.alloc("hipMalloc", 0, 0x7f00_0000_0000, 64, MemKind::Device);
        current_device::with(1, || {
            r.alloc("hipMalloc", 0, 0x7f00_0001_0000, 64, MemKind::Device)
        });
        r.device_reset("hipDeviceReset", 1, 0, false);
        assert_eq!(r.is_device(0x7f00_0000_0008), Some(true), "a failed reset");
        r.device_reset("hipDeviceReset", 0, 0, false);
        assert_eq!(r.is_device(0x7f00_0000_0008), None);
        assert_eq!(r.is_device(0x7f00_0001_0008), Some(true), "device 1's");
        r.finish("exit", LockMode::Block, Closing::default);
        let ev = events(t.path());
        assert_eq!(ev[3].op, Op::DeviceReset { device: 0 });
        assert_eq!(ev[3].api, "hipDeviceReset");
    }

    #[test]
    fn failed_calls_leave_the_maps_alone() {
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        r.alloc("hipMalloc", 2, 0x7f00_0000_0000, 64, MemKind::Device);
        assert!(r.allocs().is_empty());
        r.alloc("hipMalloc", 0, 0x7f00_0000_0000, 64, MemKind::Device);
        r.free("hipFree", 1, 0x7f00_0000_0000, None);
        assert_eq!(r.is_device(0x7f00_0000_0008), Some(true));
        r.free("hipFree", 0, 0x7f00_0000_0000, None);
        assert!(r.allocs().is_empty());
        r.finish("exit", LockMode::Block, Closing::default);
        let ev = events(t.path());
        assert_eq!(ev.len(), 5);
        assert_eq!(
            (ev[0].ret, &ev[0].op),
            (
                2,
                &Op::Alloc {
                    ptr: Addr(0),
                    size: 64,
                    mem: MemKind::Device
                }
            )
        );
        assert_eq!(
            ev[3].op,
            Op::Free {
                ptr: Addr(0x7f00_0000_0000),
                mem: Some(MemKind::Device)
            }
        );
        let m = Manifest::read(t.path()).unwrap();
        assert!(m.complete);
        assert_eq!(m.events, 4);
    }

    #[test]
    fn memcpy_blob_is_written_before_its_event_and_only_on_success() {
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        let c = Copy {
            dir: Dir::H2d,
            dst: 1,
            src: 2,
            size: 3,
            stream: None,
        };
        r.memcpy("hipMemcpy", 0, &c, Some(b"abc"));
        r.memcpy("hipMemcpy", 1, &c, Some(b"xyz"));
        r.finish("exit", LockMode::Block, Closing::default);
        let ev = events(t.path());
        let Op::Memcpy { blob: Some(id), .. } = ev[0].op else {
            panic!("{:?}", ev[0])
        };
        assert_eq!(id, BlobId::of(b"abc"));
        assert!(matches!(ev[1].op, Op::Memcpy { blob: None, .. }));
        assert_eq!(Manifest::read(t.path()).unwrap().blobs, 1);
    }

    #[test]
    fn a_synchronous_upload_hashed_while_it_runs_names_its_blob_only_on_success() {
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        // Large enough to be hashed in parallel on any machine.
        let src: Vec<u8> = (0..(9u32 << 20)).map(|i| (i / 7) as u8).collect();
        let at = src.as_ptr() as u64;
        assert!(!r.is_host_range(at, src.len()), "not the runtime's memory");
        r.alloc("hipHostMalloc", 0, at, src.len() as u64, MemKind::Pinned);
        assert!(r.is_host_range(at, src.len()));
        assert!(r.is_host_range(at + 8, src.len() - 8));
        assert!(!r.is_host_range(at + 8, src.len()), "past its end");
        let c = Copy {
            dir: Dir::H2d,
            dst: 0x7f00_0000_0000,
            src: at,
            size: src.len() as u64,
            stream: None,
        };
        // A failed copy: hashed all the same, but no blob is written and
        // its event names none.
        let (ret, pre) = r.forward_h2d(&src, || 1);
        assert!(pre.is_some());
        r.memcpy_hashed("hipMemcpy", ret, &c, None, pre);
        let (ret, pre) = r.forward_h2d(&src, || 0);
        r.memcpy_hashed("hipMemcpy", ret, &c, Some(&src), pre);
        r.finish("exit", LockMode::Block, Closing::default);
        let ev = events(t.path());
        let copies: Vec<_> = ev
            .iter()
            .filter_map(|e| match &e.op {
                Op::Memcpy { blob, .. } => Some((e.ret, *blob)),
                _ => None,
            })
            .collect();
        assert_eq!(copies, [(1, None), (0, Some(BlobId::of(&src)))]);
        let store = hrr_core::blob_store::BlobStore::of_archive(t.path());
        assert_eq!(&*store.get(&BlobId::of(&src)).unwrap(), &src[..]);
        assert_eq!(Manifest::read(t.path()).unwrap().blobs, 1);
    }

    #[test]
    fn a_blob_named_elsewhere_is_written_under_that_name_and_a_wrong_one_is_caught() {
        // A D2H named by the device hash: the recorder writes the bytes
        // under the name it is given without hashing them, so a wrong name
        // must be caught by the check hrr-cap runs after the capture.
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        let result: Vec<u8> = (0..(5u32 << 20)).map(|i| (i % 253) as u8).collect();
        let right = BlobId::of(&result);
        let mut wrong = right;
        wrong.0[0] ^= 1;
        let c = Copy {
            dir: Dir::D2h,
            dst: result.as_ptr() as u64,
            src: 0x7f00_0000_0000,
            size: result.len() as u64,
            stream: None,
        };
        let named = |id| Some(Prehashed::named(result.as_ptr() as usize, result.len(), id));
        r.memcpy_hashed("cudaMemcpy", 0, &c, Some(&result), named(right));
        r.finish("exit", LockMode::Block, Closing::default);
        let a = hrr_core::archive::Archive::open(t.path()).unwrap();
        let check = a.check_blobs(&mut |_, _| {}).unwrap();
        assert!(check.ok(), "{:?}", check.reason());

        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        r.memcpy_hashed("cudaMemcpy", 0, &c, Some(&result), named(wrong));
        r.finish("exit", LockMode::Block, Closing::default);
        let Op::Memcpy { blob, .. } = events(t.path())[0].op else {
            panic!()
        };
        assert_eq!(blob, Some(wrong), "the event names what it was given");
        let a = hrr_core::archive::Archive::open(t.path()).unwrap();
        let why = a
            .check_blobs(&mut |_, _| {})
            .unwrap()
            .reason()
            .expect("caught");
        assert!(
            why.contains(&format!("blob {wrong} does not match its name")),
            "{why}"
        );
    }

    #[test]
    fn blobs_of_every_writer_end_compressed_at_a_clean_finish() {
        // A large blob (written by the recording thread), a small one
        // (with the events buffer) and a kept code object (from where it
        // lies), all compressible; one incompressible, kept raw.
        static IMAGE: [u8; 200_000] = [0x17; 200_000];
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        let pattern = |n: usize| -> Vec<u8> { (0..n).map(|i| (i % 251) as u8 / 8).collect() };
        let (large, small) = (pattern(3 << 20), pattern(40_000));
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 56) as u8
            })
            .collect();
        let c = |size: usize| Copy {
            dir: Dir::H2d,
            dst: 1,
            src: 2,
            size: size as u64,
            stream: None,
        };
        for b in [&large, &small, &noise] {
            r.memcpy("hipMemcpy", 0, &c(b.len()), Some(b));
        }
        let m = r.load_code_kept(Kept::of_static(&IMAGE));
        r.finish("exit", LockMode::Block, Closing::default);
        let store = hrr_core::blob_store::BlobStore::of_archive(t.path());
        for b in [&large[..], &small[..], &IMAGE[..]] {
            let id = BlobId::of(b);
            assert!(
                store.zst_path(&id).exists() && !store.path(&id).exists(),
                "{id} compressed"
            );
            assert_eq!(&*store.get(&id).unwrap(), b);
        }
        assert_eq!(m.code, BlobId::of(&IMAGE));
        let id = BlobId::of(&noise);
        assert!(store.path(&id).exists() && !store.zst_path(&id).exists());
        assert_eq!(Manifest::read(t.path()).unwrap().blobs, 4);
    }

    #[test]
    fn a_kept_code_object_is_on_disk_once_the_recorder_is_settled() {
        static IMAGE: [u8; 100_000] = [0x42; 100_000];
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        let m = r.load_code_kept(Kept::of_static(&IMAGE));
        assert_eq!(m.code, BlobId::of(&IMAGE));
        let store = hrr_core::blob_store::BlobStore::of_archive(t.path());
        assert!(!store.contains(&m.code), "written with its events buffer");
        r.settle_code();
        assert_eq!(&*store.get(&m.code).unwrap(), &IMAGE[..]);
        // Seen once: the same image again queues nothing.
        assert_eq!(r.load_code_kept(Kept::of_static(&IMAGE)).code, m.code);
        r.finish("exit", LockMode::Block, Closing::default);
        assert_eq!(Manifest::read(t.path()).unwrap().blobs, 1);
    }

    #[test]
    // A `Kept` over memory the test owns (and changes or unmaps).
    #[allow(unsafe_code)]
    fn a_code_object_rewritten_before_its_write_leaves_the_archive_incomplete() {
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        let mut image = vec![0x42u8; 100_000];
        // SAFETY: `image` outlives the recorder's writes; it changes before
        // them, which is the test.
        let m = r.load_code_kept(unsafe { Kept::new(image.as_ptr(), image.len()) });
        image[50_000] = 0;
        r.settle_code();
        let store = hrr_core::blob_store::BlobStore::of_archive(t.path());
        assert!(
            !store.contains(&m.code),
            "not under a name it does not hash to"
        );
        r.finish("exit", LockMode::Block, Closing::default);
        let man = Manifest::read(t.path()).unwrap();
        assert!(!man.complete);
        let why = man.incomplete_reason().unwrap();
        assert!(
            why.starts_with(&format!(
                "blobs: blob {} not written: its bytes changed",
                m.code
            )),
            "{why}"
        );
        assert_eq!(man.extra[BLOB_FAILURES_FIELD], 1);
        assert_eq!(man.blobs, 0, "counts only blob files written");
    }

    #[test]
    fn host_memory_is_recorded_before_launches_and_after_syncs() {
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        let mut pinned = vec![0u8; 3 * host_memory::CHUNK];
        let base = pinned.as_ptr() as u64;
        let size = pinned.len() as u64;
        r.alloc("hipHostMalloc", 0, base, size, MemKind::Pinned);
        assert!(r.host_memory().any());
        pinned[host_memory::CHUNK + 1] = 7; // the host writes one chunk
        let arg = base.to_le_bytes();
        let values = ArgValues::Buffer(&arg);
        r.host_writes_before_launch("hipModuleLaunchKernel", 0, &values, None);
        pinned[0] = 9; // a kernel writes another
        r.op(
            "hipStreamSynchronize",
            0,
            &Op::StreamSync { stream: Addr(0) },
        );
        // Nothing changed since: a second sync and launch record nothing.
        r.op("hipDeviceSynchronize", 0, &Op::DeviceSync);
        r.host_writes_before_launch("hipModuleLaunchKernel", 0, &values, None);
        r.free("hipHostFree", 0, base, Some(MemKind::Pinned));
        assert!(!r.host_memory().any());
        r.finish("exit", LockMode::Block, Closing::default);
        let ev = events(t.path());
        let ops: Vec<_> = ev.iter().map(|e| e.op.name()).collect();
        assert_eq!(
            ops,
            [
                "alloc",
                "host_write",
                "stream_sync",
                "host_read",
                "device_sync",
                "free",
                "eof"
            ]
        );
        let chunk = host_memory::CHUNK as u64;
        let Op::HostWrite { ptr, size, blob } = ev[1].op else {
            panic!("{:?}", ev[1])
        };
        assert_eq!((ptr.0, size), (base + chunk, chunk));
        assert_eq!(ev[1].api, "hipModuleLaunchKernel");
        let mut want = vec![0u8; chunk as usize];
        want[1] = 7;
        assert_eq!(blob, BlobId::of(&want));
        let Op::HostRead { ptr, size, .. } = ev[3].op else {
            panic!("{:?}", ev[3])
        };
        assert_eq!(
            (ptr.0, size, ev[3].api.as_str()),
            (base, chunk, "hipStreamSynchronize")
        );
    }

    #[test]
    fn host_memory_a_graph_launch_reaches_is_recorded_before_it() {
        use crate::record::graph_execs::{ExecRecord, execs};
        use hrr_core::graph::{GraphNode, NodeOp};
        use hrr_core::{HexBytes, KernelArg};

        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        let mut read = vec![0u8; 256];
        let mut other = vec![0u8; 256];
        let (base, other_base) = (read.as_ptr() as u64, other.as_ptr() as u64);
        r.alloc("hipHostMalloc", 0, base, 256, MemKind::Pinned);
        r.alloc("hipHostMalloc", 0, other_base, 256, MemKind::Pinned);
        // A kernel node whose second argument points inside `read`.
        let arg = |hex: Vec<u8>| KernelArg {
            offset: None,
            size: hex.len() as u32,
            hex: HexBytes(hex),
            ptrs: vec![],
            objs: Vec::new(),
        };
        let kernel = NodeOp::Kernel {
            name: "k".into(),
            code: BlobId::of(b"code"),
            func: None,
            grid: [1; 3],
            block: [1; 3],
            shmem: 0,
            args: vec![arg(vec![1; 4]), arg((base + 16).to_le_bytes().to_vec())],
        };
        const EXEC: u64 = 0x6a_0001;
        execs().insert(
            EXEC,
            ExecRecord {
                nodes: vec![GraphNode {
                    op: kernel,
                    deps: vec![],
                }],
                ..Default::default()
            },
        );
        read[3] = 1; // the host writes both ranges
        other[3] = 1;
        r.host_writes_before_graph_launch("hipGraphLaunch", EXEC, 5);
        // Not recorded: reaches no pinned memory.
        r.host_writes_before_graph_launch("hipGraphLaunch", 0x6a_0002, 5);
        r.graph_launch("hipGraphLaunch", (0, true), EXEC, 5, |_, _| &[], || {});
        read[200] = 2; // the kernel writes
        let sync = |st| Op::StreamSync { stream: Addr(st) };
        r.op("hipStreamSynchronize", 0, &sync(6)); // another stream: nothing
        r.op("hipStreamSynchronize", 0, &sync(5));
        execs().remove(&EXEC);
        r.finish("exit", LockMode::Block, Closing::default);
        let ev = events(t.path());
        let ops: Vec<_> = ev.iter().map(|e| e.op.name()).collect();
        assert_eq!(
            ops,
            [
                "alloc",
                "alloc",
                "host_write",
                "graph_launch",
                "stream_sync",
                "stream_sync",
                "host_read",
                "eof"
            ]
        );
        let Op::HostWrite { ptr, size, blob } = ev[2].op else {
            panic!("{:?}", ev[2])
        };
        let mut want = vec![0u8; 256];
        want[3] = 1;
        assert_eq!((ptr.0, size, blob), (base, 256, BlobId::of(&want)));
        assert_eq!(ev[2].api, "hipGraphLaunch");
        let Op::HostRead { ptr, blob, .. } = ev[6].op else {
            panic!("{:?}", ev[6])
        };
        want[200] = 2;
        assert_eq!((ptr.0, blob), (base, BlobId::of(&want)));
    }

    #[test]
    fn unknown_launch_is_still_recorded() {
        let t = tempfile::tempdir().unwrap();
        let r = rec(t.path());
        let dims = LaunchDims {
            grid: [1, 1, 1],
            block: [64, 1, 1],
            shmem: 0,
            stream: 0,
        };
        r.launch(
            "hipModuleLaunchKernel",
            0,
            None,
            |_| unreachable!(),
            0x99,
            &dims,
            &ArgValues::None,
            None,
        );
        r.finish("exit", LockMode::Block, Closing::default);
        let ev = events(t.path());
        assert!(matches!(&ev[0].op, Op::Launch { name, .. } if name == "<unknown>"));
    }
}
