//! Capture windows (`HRR_WINDOW`): recording only part of a run.
//!
//! Outside a window the recorder keeps its bookkeeping (live allocations,
//! host memory, code objects, graphs) and, here, the [`Ledger`]: the
//! creating event of every live handle. No event line is encoded and no
//! blob written: [`Recorder::recording`] is one atomic load on each path.
//! Code objects are kept in memory as they are read (`keep_code`), so a
//! window's archive can hold the code of a kernel loaded long before it.
//!
//! Opening a window (its trigger: profiler start, the A-th launch, a
//! signal) makes its archive (the first window's is `HRR_OUT`, the K-th
//! `NAME-wK.hrr`), synchronises the device, and writes the *state
//! preamble*: the ledger's events in their order (allocations, pools,
//! virtual memory, modules and functions, streams, events, executable
//! graphs), the code objects kept, and one upload per live device
//! allocation (`memcpy` h2d whose blob is the allocation's bytes, read
//! through the family's [`DeviceAccess`]), then one upload per live array
//! (`memcpy_array` host→array over its whole extent, its contents read the
//! same way): plain arrays, each mipmapped array's levels and each NV12
//! array's planes through the handles the program looked them up by
//! ([`array_shapes`]), then the communicators' creating events
//! ([`communicators`](crate::record::communicators): by family, the same
//! in every rank's preamble). Host memory kernels reach is marked unseen, so the window's
//! first launch that reaches it records it whole (`host_write`). What
//! cannot be rebuilt (an exported or imported shareable handle, an array
//! whose contents the family cannot read) is named on stderr and in the
//! manifest. Closing the window finishes its archive with the manifest's
//! `window` field; a run that ends inside a window finishes it at exit.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hrr_core::manifest::Platform;
use hrr_core::window::{WindowInfo, WindowSpec, window_archive};
use hrr_core::{Addr, BlobId, Dir, MemKind, Op};
use serde_json::{Map, Value};

use crate::record::arrays::{ArrayCopyRec, ArrayShape, ArraySide};
use crate::record::communicators::{Communicators, Step};
use crate::record::current_device;
use crate::record::out::Out;
use crate::record::recorder::{Closing, Recorder};
use crate::sink::archive_claim::ArchiveClaim;
use crate::sink::event_sink::LockMode;

/// `ncclInProgress`.
const NCCL_IN_PROGRESS: i32 = 7;

/// The `api` of the preamble's uploads.
pub const STATE_API: &str = "hrr-window-state";

/// How the recorder reaches the device at a window's start (one per
/// runtime family, forwarding to the runtime unrecorded).
pub trait DeviceAccess {
    /// Waits until all work of the process is complete.
    fn synchronize(&self) -> Result<(), i32>;
    /// Copies `buf.len()` bytes of device memory at `ptr` into `buf`.
    fn read(&self, ptr: u64, buf: &mut [u8]) -> Result<(), i32>;
    /// Copies the whole of array `array` into `buf`, packed: `element`
    /// bytes per element, `extent` its width in elements, rows and slices
    /// (each at least 1; `buf` holds their product times `element`).
    /// `None`: this family cannot read arrays (the default).
    fn read_array(
        &self,
        array: u64,
        element: u64,
        extent: [u64; 3],
        buf: &mut [u8],
    ) -> Option<Result<(), i32>> {
        let _ = (array, element, extent, buf);
        None
    }
}

/// A window trigger reported by a family's entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// `hipProfilerStart`, `cudaProfilerStart`, `cuProfilerStart`.
    ProfilerStart,
    /// Their stops.
    ProfilerStop,
}

/// What a live handle's creating event is kept under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Mem(u64),
    /// A block of a live pool, freed: its bytes are what the pool hands
    /// out again.
    PoolFreed(u64),
    Va(u64),
    Phys(u64),
    Released(u64),
    Map(u64),
    Access(u64),
    Exported(u64),
    Imported(u64),
    Stream(u64),
    Event(u64),
    Pool(u64),
    PoolAttr(u64, u32),
    DevicePool(i32),
    Exec(u64),
    Module(u64),
    Func(u64),
    Global(u64),
    Ctx(u64),
    CurrentCtx,
    CurrentDevice,
    Peer(i32),
    Array(u64),
    Mipmap(u64),
    Object(u64),
}

/// The creating events of the live handles, in the order they were made.
#[derive(Default)]
struct Ledger {
    next: u64,
    order: BTreeMap<u64, (Key, String, Op)>,
    at: HashMap<Key, u64>,
    /// The device each creating event ran on, by its place in `order`
    /// (the preamble writes it on that device again).
    devs: HashMap<u64, u32>,
    /// The communicators' creating events, by family.
    comms: Communicators,
}

impl Ledger {
    fn put(&mut self, key: Key, api: &str, op: &Op) {
        self.remove(key);
        let n = self.next;
        self.next += 1;
        self.order.insert(n, (key, api.to_string(), op.clone()));
        self.at.insert(key, n);
        self.devs.insert(n, current_device::current());
    }

    fn remove(&mut self, key: Key) -> Option<Op> {
        self.remove_entry(key).map(|(_, op)| op)
    }

    fn remove_entry(&mut self, key: Key) -> Option<(String, Op)> {
        let n = self.at.remove(&key)?;
        self.devs.remove(&n);
        self.order.remove(&n).map(|(_, api, op)| (api, op))
    }

    /// A physical handle released for good: it and what was shared of it.
    fn forget_handle(&mut self, handle: u64) {
        self.remove(Key::Phys(handle));
        self.remove(Key::Exported(handle));
        self.remove(Key::Imported(handle));
    }

    fn has(&self, key: Key) -> bool {
        self.at.contains_key(&key)
    }

    /// Keeps what `op` (a successful call) creates, forgets what it
    /// destroys.
    fn note(&mut self, api: &str, op: &Op) {
        self.comms.note(api, op, current_device::current());
        match *op {
            Op::Alloc { ptr, .. } | Op::HostRegister { ptr, .. } => {
                self.put(Key::Mem(ptr.0), api, op)
            }
            Op::PoolAlloc { ptr, .. } => {
                self.remove(Key::PoolFreed(ptr.0));
                self.put(Key::Mem(ptr.0), api, op)
            }
            Op::Free { ptr, .. } | Op::HostUnregister { ptr } => {
                if let Some((api, alloc @ Op::PoolAlloc { pool, .. })) =
                    self.remove_entry(Key::Mem(ptr.0))
                    && self.has(Key::Pool(pool.0))
                {
                    self.put(Key::PoolFreed(ptr.0), &api, &alloc);
                }
            }
            Op::VaReserve { ptr, .. } => self.put(Key::Va(ptr.0), api, op),
            Op::VaFree { ptr, .. } => {
                self.remove(Key::Va(ptr.0));
            }
            Op::MemCreate { handle, .. } => self.put(Key::Phys(handle.0), api, op),
            Op::MemImport { handle, .. } => self.put(Key::Imported(handle.0), api, op),
            Op::MemExport { handle, .. } => self.put(Key::Exported(handle.0), api, op),
            Op::MemRelease { handle } => {
                // Its memory lives on while mapped: rebuilt as made, mapped,
                // then released, as the program did.
                let mapped = self
                    .order
                    .values()
                    .any(|(_, _, o)| matches!(o, Op::MemMap { handle: h, .. } if *h == handle));
                if mapped {
                    self.put(Key::Released(handle.0), api, op);
                } else {
                    self.forget_handle(handle.0);
                }
            }
            Op::MemMap { ptr, .. } => self.put(Key::Map(ptr.0), api, op),
            Op::MemAccess { ptr, .. } => self.put(Key::Access(ptr.0), api, op),
            Op::MemUnmap { ptr, .. } => {
                self.remove(Key::Access(ptr.0));
                if let Some(Op::MemMap { handle, .. }) = self.remove(Key::Map(ptr.0)) {
                    let still = self
                        .order
                        .values()
                        .any(|(_, _, o)| matches!(o, Op::MemMap { handle: h, .. } if *h == handle));
                    if !still && self.remove(Key::Released(handle.0)).is_some() {
                        self.forget_handle(handle.0);
                    }
                }
            }
            Op::StreamCreate { stream } => self.put(Key::Stream(stream.0), api, op),
            Op::StreamDestroy { stream } => {
                self.remove(Key::Stream(stream.0));
            }
            Op::EventCreate { event } => self.put(Key::Event(event.0), api, op),
            Op::EventDestroy { event } => {
                self.remove(Key::Event(event.0));
            }
            Op::PoolCreate { pool } => self.put(Key::Pool(pool.0), api, op),
            Op::PoolDestroy { pool } => {
                self.remove(Key::Pool(pool.0));
                let freed: Vec<Key> = self
                    .order
                    .values()
                    .filter_map(|(k, _, o)| match o {
                        Op::PoolAlloc { pool: p, .. }
                            if *p == pool && matches!(k, Key::PoolFreed(_)) =>
                        {
                            Some(*k)
                        }
                        _ => None,
                    })
                    .collect();
                for k in freed {
                    self.remove(k);
                }
            }
            Op::PoolAttr { pool, attr, .. } => self.put(Key::PoolAttr(pool.0, attr), api, op),
            Op::DevicePool { device, .. } => self.put(Key::DevicePool(device), api, op),
            Op::GraphExec { exec, .. } => self.put(Key::Exec(exec.0), api, op),
            Op::GraphExecDestroy { exec } => {
                self.remove(Key::Exec(exec.0));
            }
            Op::ModuleLoad { module, .. } => self.put(Key::Module(module.0), api, op),
            Op::ModuleUnload { module } => {
                self.remove(Key::Module(module.0));
            }
            Op::Function { func, .. } => self.put(Key::Func(func.0), api, op),
            Op::Global { ptr, .. } => self.put(Key::Global(ptr.0), api, op),
            Op::CtxCreate { ctx, .. } => self.put(Key::Ctx(ctx.0), api, op),
            Op::CtxDestroy { ctx } => {
                self.remove(Key::Ctx(ctx.0));
            }
            Op::CtxSet { .. } => self.put(Key::CurrentCtx, api, op),
            Op::SetDevice { .. } => self.put(Key::CurrentDevice, api, op),
            Op::PeerAccess { peer } => self.put(Key::Peer(peer), api, op),
            Op::ArrayCreate { array, .. } => self.put(Key::Array(array.0), api, op),
            Op::ArrayPlane { array, .. } | Op::MipmapLevel { array, .. } => {
                self.put(Key::Array(array.0), api, op)
            }
            Op::MipmapCreate { mipmap, .. } => self.put(Key::Mipmap(mipmap.0), api, op),
            Op::MipmapDestroy { mipmap } => {
                self.remove(Key::Mipmap(mipmap.0));
                // Its levels go with it.
                let levels: Vec<Key> = self
                    .order
                    .values()
                    .filter_map(|(k, _, o)| match o {
                        Op::MipmapLevel { mipmap: m, .. } if *m == mipmap => Some(*k),
                        _ => None,
                    })
                    .collect();
                for k in levels {
                    self.remove(k);
                }
            }
            Op::ArrayDestroy { array } => {
                self.remove(Key::Array(array.0));
                // Its planes go with it.
                let planes: Vec<Key> = self
                    .order
                    .values()
                    .filter_map(|(k, _, o)| match o {
                        Op::ArrayPlane { parent, .. } if *parent == array => Some(*k),
                        _ => None,
                    })
                    .collect();
                for k in planes {
                    self.remove(k);
                }
            }
            Op::TexCreate { obj, .. } | Op::SurfCreate { obj, .. } => {
                self.put(Key::Object(obj.0), api, op)
            }
            Op::TexDestroy { obj } | Op::SurfDestroy { obj } => {
                self.remove(Key::Object(obj.0));
            }
            // `Window::note` resets the ledger, knowing the family.
            _ => {}
        }
    }

    /// A device reset: what was made on `device` and replay frees is gone
    /// (allocations, host memory only `with_host`, pools, streams,
    /// events). The rest stays as replay keeps it: code (modules, their
    /// functions and globals, which a program's registered kernels use
    /// again), virtual memory, graphs, arrays, contexts; a window restoring
    /// one the program can no longer use costs its preamble a few events.
    fn reset(&mut self, device: i32, with_host: bool) {
        let Ok(device) = u32::try_from(device) else {
            return;
        };
        let gone: Vec<Key> = self
            .order
            .iter()
            .filter(|(n, (k, _, op))| {
                let host = matches!(
                    op,
                    Op::HostRegister { .. }
                        | Op::Alloc {
                            mem: MemKind::Host | MemKind::Pinned,
                            ..
                        }
                );
                self.devs.get(n) == Some(&device)
                    && match k {
                        Key::Mem(_) => with_host || !host,
                        Key::PoolFreed(_)
                        | Key::Pool(_)
                        | Key::PoolAttr(..)
                        | Key::DevicePool(_)
                        | Key::Stream(_)
                        | Key::Event(_) => true,
                        _ => false,
                    }
            })
            .map(|(_, (k, ..))| *k)
            .collect();
        for k in gone {
            self.remove(k);
        }
    }
}

/// One run's windows: the setting, whether one is open, and what opening
/// the next needs.
pub struct Window {
    spec: WindowSpec,
    /// The first window's archive (`HRR_OUT`).
    base: PathBuf,
    platform: Platform,
    argv: Vec<String>,
    extra: Map<String, Value>,
    open: AtomicBool,
    /// Windows opened so far.
    opened: AtomicU32,
    /// Kernel launches of the process so far (`launches:A..B`).
    launches: AtomicU64,
    /// Signals received and not yet acted on (`signal`).
    signals: AtomicU32,
    ledger: Mutex<Ledger>,
    /// Every code object read, by blob id.
    code: Mutex<HashMap<BlobId, Arc<[u8]>>>,
    /// The open (or last) window's manifest field.
    info: Mutex<WindowInfo>,
    /// Serialises opening and closing.
    turn: Mutex<()>,
    /// The unrecorded calls counted when the open window opened.
    unrecorded_before: Mutex<BTreeMap<String, u64>>,
}

/// Signals received by [`on_signal`], for the one window of the process.
static SIGNALS: AtomicU32 = AtomicU32::new(0);

/// The window signal's handler: async-signal-safe, one atomic add; acted
/// on at the next kernel launch.
pub extern "C" fn on_signal(_signo: i32) {
    SIGNALS.fetch_add(1, Ordering::Relaxed);
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Window {
    /// The windows `spec` picks in a run recording into `base` first.
    pub fn new(
        spec: WindowSpec,
        base: &Path,
        platform: Platform,
        argv: Vec<String>,
        extra: Map<String, Value>,
    ) -> Window {
        let info = WindowInfo {
            trigger: spec.trigger().into(),
            spec: spec.to_string(),
            index: 1,
            opened: false,
            ..WindowInfo::default()
        };
        Window {
            spec,
            base: base.to_path_buf(),
            platform,
            argv,
            extra,
            open: AtomicBool::new(false),
            opened: AtomicU32::new(0),
            launches: AtomicU64::new(0),
            signals: AtomicU32::new(0),
            ledger: Mutex::new(Ledger::default()),
            code: Mutex::new(HashMap::new()),
            info: Mutex::new(info),
            turn: Mutex::new(()),
            unrecorded_before: Mutex::new(BTreeMap::new()),
        }
    }

    /// The setting.
    pub fn spec(&self) -> &WindowSpec {
        &self.spec
    }

    /// Whether a window is open (calls are recorded).
    #[inline(always)]
    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }

    /// Notes a recorded call's effect on the live handles.
    pub(crate) fn note(&self, api: &str, ret: i32, op: &Op) {
        // A non-blocking communicator is made when its call answers
        // ncclInProgress.
        let made = ret == 0
            || (ret == NCCL_IN_PROGRESS
                && matches!(op, Op::NcclCommInit { .. } | Op::NcclCommSplit { .. }));
        if !made || !is_lifecycle(op) {
            return;
        }
        if let Op::DeviceReset { device } = *op {
            // CUDA's host memory is the context's (`Recorder::device_reset`).
            let with_host = self.platform == Platform::Nvidia;
            return lock(&self.ledger).reset(device, with_host);
        }
        lock(&self.ledger).note(api, op);
    }

    /// Keeps code object `id` (its bytes `image`) for later windows.
    pub(crate) fn keep_code(&self, id: BlobId, image: &[u8]) {
        let mut code = lock(&self.code);
        code.entry(id).or_insert_with(|| Arc::from(image));
    }

    /// `closing` with the unrecorded calls counted since the window opened.
    pub(crate) fn inside(&self, closing: impl FnOnce() -> Closing) -> impl FnOnce() -> Closing {
        let before = lock(&self.unrecorded_before).clone();
        move || {
            let mut c = closing();
            for (name, n) in &before {
                if let Some(now) = c.unrecorded.get_mut(name) {
                    *now = now.saturating_sub(*n);
                }
            }
            c.unrecorded.retain(|_, n| *n > 0);
            c
        }
    }

    /// The manifest field of the archive being written when the run ends.
    pub(crate) fn at_exit(&self) -> WindowInfo {
        let mut info = lock(&self.info).clone();
        if self.is_open() {
            info.closed_at_exit = true;
        }
        info
    }
}

/// Ops that create or destroy what later events name.
fn is_lifecycle(op: &Op) -> bool {
    !matches!(
        op,
        Op::Memcpy { .. }
            | Op::Memset { .. }
            | Op::Launch { .. }
            | Op::StreamSync { .. }
            | Op::StreamWaitEvent { .. }
            | Op::DeviceSync
            | Op::EventRecord { .. }
            | Op::EventSync { .. }
            | Op::GraphLaunch { .. }
            | Op::HostWrite { .. }
            | Op::HostRead { .. }
            | Op::MemcpyRect { .. }
            | Op::MemcpyArray { .. }
            | Op::MemsetRect { .. }
            | Op::HostFunc { .. }
            | Op::MemcpyPeer { .. }
    )
}

impl Recorder {
    /// Installs what the window setting needs at the recorder's start: the
    /// signal handler of `signal[:NAME]`.
    pub fn start_window(&self) {
        if let Some(WindowSpec::Signal { signo, .. }) = self.window().map(Window::spec) {
            crate::sys::catch_signal(*signo, on_signal);
        }
    }

    /// A profiler start or stop: opens or closes the window of a
    /// `profiler` setting (nothing for the others).
    pub fn window_trigger(
        &'static self,
        trigger: Trigger,
        dev: &dyn DeviceAccess,
        closing: impl FnOnce() -> Closing,
    ) {
        let Some(w) = self.window() else { return };
        if w.spec != WindowSpec::Profiler {
            return;
        }
        match trigger {
            Trigger::ProfilerStart if !w.is_open() => self.open_window(dev, closing),
            Trigger::ProfilerStop if w.is_open() => self.close_window(closing),
            _ => {}
        }
    }

    /// Before a kernel launch is forwarded: counts it (`launches:A..B`) and
    /// acts on signals received (`signal`), opening or closing the window.
    #[inline]
    pub fn window_before_launch(
        &'static self,
        dev: &dyn DeviceAccess,
        closing: impl FnOnce() -> Closing,
    ) {
        let Some(w) = self.window() else { return };
        match w.spec {
            WindowSpec::Launches { first, last } => {
                let n = w.launches.fetch_add(1, Ordering::Relaxed);
                if n == first && !w.is_open() {
                    self.open_window(dev, closing);
                } else if n == last + 1 && w.is_open() {
                    self.close_window(closing);
                }
            }
            WindowSpec::Signal { .. } => {
                let got = SIGNALS.load(Ordering::Relaxed);
                let seen = w.signals.load(Ordering::Relaxed);
                if got != seen {
                    self.signals_received(w, got, dev, closing);
                }
            }
            WindowSpec::Profiler => {}
        }
    }

    #[cold]
    fn signals_received(
        &'static self,
        w: &Window,
        got: u32,
        dev: &dyn DeviceAccess,
        closing: impl FnOnce() -> Closing,
    ) {
        let seen = w.signals.swap(got, Ordering::Relaxed);
        // Each signal toggles: an even count leaves the state as it was.
        if got.wrapping_sub(seen) % 2 == 1 {
            if w.is_open() {
                self.close_window(closing);
            } else {
                self.open_window(dev, closing);
            }
        }
    }

    /// Opens the next window: its archive, the device synchronised, the
    /// state preamble, then recording on.
    #[cold]
    fn open_window(&'static self, dev: &dyn DeviceAccess, closing: impl FnOnce() -> Closing) {
        let Some(w) = self.window() else { return };
        let _turn = lock(&w.turn);
        if w.is_open() {
            return;
        }
        let index = w.opened.load(Ordering::Relaxed) + 1;
        if index > 1 && !self.new_window_archive(w, index) {
            return;
        }
        w.opened.store(index, Ordering::Relaxed);
        // The manifest counts the calls left unrecorded inside the window.
        *lock(&w.unrecorded_before) = closing().unrecorded;
        if let Err(e) = dev.synchronize() {
            self.warn(&format!(
                "window {index}: the device synchronisation before its state snapshot failed ({e}); the snapshot may miss pending work"
            ));
        }
        // The preamble is written with recording on for this thread only in
        // effect: other threads' calls until it is done are not recorded.
        w.open.store(true, Ordering::Release);
        let (bytes, allocs, not_restored) = self.write_preamble(w, dev);
        for what in &not_restored {
            eprintln!("hrr-intercept: window {index}: not restored: {what}");
        }
        *lock(&w.info) = WindowInfo {
            trigger: w.spec.trigger().into(),
            spec: w.spec.to_string(),
            index,
            state_bytes: bytes,
            state_allocs: allocs,
            opened: true,
            closed_at_exit: false,
            not_restored,
        };
        // Kept launch lines name code and pointers of another archive.
        crate::record::launch_memo::invalidate("a window opened");
    }

    /// Window `index`'s archive, made current (`false`: not made; said).
    fn new_window_archive(&'static self, w: &Window, index: u32) -> bool {
        let dir = window_archive(&w.base, index);
        let made = ArchiveClaim::claim(&dir, crate::sys::getpid())
            .map_err(|e| hrr_core::error_chain::chain(&e).to_string())
            .and_then(|claim| {
                Out::create(&claim.dir, w.platform, w.argv.clone(), w.extra.clone())
                    .map_err(|e| hrr_core::error_chain::chain(&e).to_string())
            });
        match made.map(|out| self.set_out(index as usize, out)) {
            Ok(true) => {
                self.start_writer();
                true
            }
            Ok(false) => {
                self.warn(&format!(
                    "window {index}: not recorded: at most {} windows per run",
                    crate::record::recorder::MAX_WINDOWS
                ));
                false
            }
            Err(e) => {
                self.warn(&format!(
                    "window {index}: not recorded: {}: {e}",
                    dir.display()
                ));
                false
            }
        }
    }

    /// Closes the open window: recording off, its archive finished.
    #[cold]
    fn close_window(&'static self, closing: impl FnOnce() -> Closing) {
        let Some(w) = self.window() else { return };
        let _turn = lock(&w.turn);
        if !w.open.swap(false, Ordering::AcqRel) {
            return;
        }
        let info = lock(&w.info).clone();
        self.finish_out(
            self.out(),
            "hrr-window-end",
            LockMode::Block,
            w.inside(closing),
            Some(info),
        );
    }

    /// The state preamble (see the module docs): bytes and allocations
    /// restored, and what is not.
    fn write_preamble(
        &'static self,
        w: &Window,
        dev: &dyn DeviceAccess,
    ) -> (u64, u64, Vec<String>) {
        let ledger = lock(&w.ledger);
        // Code first: the ledger's modules and globals name it.
        let code: Vec<(BlobId, Arc<[u8]>)> = lock(&w.code)
            .iter()
            .map(|(id, b)| (*id, b.clone()))
            .collect();
        for (_, bytes) in &code {
            self.put_blob("code object", bytes);
        }
        // Copied out: recording them notes them in the ledger again.
        let live: Vec<(Key, String, Op, u32)> = ledger
            .order
            .iter()
            .map(|(n, (k, api, op))| {
                let dev = ledger.devs.get(n).copied().unwrap_or(0);
                (*k, api.clone(), op.clone(), dev)
            })
            .collect();
        // Restored once written: writing them notes them again.
        let comms = ledger.comms.clone();
        drop(ledger);
        let mut state = State::default();
        let mut buf = Vec::new();
        for (key, api, op, on) in &live {
            // Each handle made again on the device it was made on.
            current_device::with(*on, || {
                match op {
                    Op::MemExport { handle, shareable } => {
                        state.not_restored.push(format!(
                            "{api}: shareable handle {shareable:#x} exported from {:#x} (IPC)",
                            handle.0
                        ));
                        return;
                    }
                    Op::MemImport { handle, shareable } => {
                        state.not_restored.push(format!(
                        "{api}: handle {:#x} imported from shareable handle {shareable:#x} (IPC): its memory is not rebuilt",
                        handle.0
                    ));
                        return;
                    }
                    _ => {}
                }
                self.op(api, 0, op);
                match *op {
                    Op::Alloc { ptr, size, mem } => {
                        if mem.is_device() {
                            self.upload(dev, ptr.0, size, &mut buf, &mut state);
                        }
                        // Host and managed memory kernels reach: recorded whole
                        // at the window's first launch that reaches it (nothing
                        // left pending from an earlier window).
                        self.host_memory().untrack(ptr.0);
                        self.host_memory().track(ptr.0, size, mem, false);
                    }
                    Op::HostRegister { ptr, size } => {
                        self.host_memory().untrack(ptr.0);
                        self.host_memory()
                            .track(ptr.0, size, MemKind::Pinned, false)
                    }
                    Op::PoolAlloc { ptr, size, .. } => {
                        self.upload(dev, ptr.0, size, &mut buf, &mut state);
                        if let Key::PoolFreed(_) = key {
                            // Back to its pool, bytes and all, as the program
                            // left it.
                            let free = Op::Free {
                                ptr,
                                mem: Some(MemKind::Device),
                            };
                            self.op(STATE_API, 0, &free);
                        }
                    }
                    Op::Global { ptr, size, .. } | Op::MemAccess { ptr, size } => {
                        self.upload(dev, ptr.0, size, &mut buf, &mut state)
                    }
                    _ => {}
                }
            });
        }
        // Arrays after the allocations: their bytes into the arrays the
        // ledger's events made again, each through the handle the program
        // had for it (an array, a mipmapped array's level, a plane).
        for (shape, (api, array)) in array_shapes(&live, &mut state.not_restored) {
            self.upload_array(dev, &api, array, shape, &mut buf, &mut state);
        }
        // Communicators last: made by all their ranks at once, each rank's
        // preamble replays the same creations (`communicators`).
        for step in comms.preamble() {
            match step {
                Step::Create { api, op, dev } => {
                    current_device::with(dev, || self.op(&api, 0, &op))
                }
                Step::Destroy { comm, dev } => current_device::with(dev, || {
                    self.op(STATE_API, 0, &Op::NcclCommDestroy { comm })
                }),
                Step::NotRestored(what) => state.not_restored.push(what),
            }
        }
        lock(&w.ledger).comms = comms;
        (state.bytes, state.allocs, state.not_restored)
    }

    /// The bytes of device memory `ptr`+`size`, read now, as a `memcpy`
    /// h2d of the preamble.
    fn upload(
        &self,
        dev: &dyn DeviceAccess,
        ptr: u64,
        size: u64,
        buf: &mut Vec<u8>,
        state: &mut State,
    ) {
        state.allocs += 1;
        if size == 0 {
            return;
        }
        buf.clear();
        buf.resize(size as usize, 0);
        if let Err(e) = dev.read(ptr, buf) {
            state.not_restored.push(format!(
                "the bytes of {ptr:#x}+{size}: the device refused to read them ({e})"
            ));
            return;
        }
        let Some(blob) = self.put_blob("window state", buf) else {
            return;
        };
        state.bytes += size;
        let op = Op::Memcpy {
            dir: Dir::H2d,
            dst: Addr(ptr),
            src: Addr(0),
            size,
            stream: None,
            blob: Some(blob),
        };
        self.op(STATE_API, 0, &op);
    }

    /// The contents of array `array` (made by `api` with `shape`), read
    /// now, as a `memcpy_array` host→array over its whole extent.
    fn upload_array(
        &self,
        dev: &dyn DeviceAccess,
        api: &str,
        array: u64,
        shape: ArrayShape,
        buf: &mut Vec<u8>,
        state: &mut State,
    ) {
        let what = |why: &str| format!("{api}: the contents of array {array:#x}: {why}");
        let Some(element) = shape.element_bytes() else {
            state
                .not_restored
                .push(what("its element format is not one both families define"));
            return;
        };
        // A 1D array has no rows, a 2D one no slices: one of each.
        let [w, h, d] = shape.extent.map(|n| n.max(1));
        let Some(len) = w
            .checked_mul(element)
            .and_then(|row| row.checked_mul(h))
            .and_then(|n| n.checked_mul(d))
            .filter(|&n| usize::try_from(n).is_ok())
        else {
            state.not_restored.push(what("its extent overflows"));
            return;
        };
        buf.clear();
        buf.resize(len as usize, 0);
        match dev.read_array(array, element, [w, h, d], buf) {
            None => {
                state
                    .not_restored
                    .push(what("this runtime family cannot read arrays"));
                return;
            }
            Some(Err(e)) => {
                state
                    .not_restored
                    .push(what(&format!("the device refused to read them ({e})")));
                return;
            }
            Some(Ok(())) => {}
        }
        state.allocs += 1;
        let row = w * element;
        let c = ArrayCopyRec {
            dir: Dir::H2d,
            dst: ArraySide::Array { array, pos: [0; 3] },
            src: ArraySide::Linear {
                ptr: 0,
                pitch: [row, row * h],
            },
            extent: [row, h, d],
            stream: None,
        };
        let Some(blob) = self.put_blob("window state", buf) else {
            return;
        };
        state.bytes += len;
        self.memcpy_array_op(STATE_API, 0, &c, Some(blob));
    }
}

/// `CU_AD_FORMAT_NV12`: a two-plane array (8-bit luma, then 8-bit
/// chroma pairs at half width and height), whose contents are its planes'.
const NV12: u32 = 0xb0;

/// Every live array whose contents a window's preamble reads back, with its
/// shape: plain arrays; each level of a mipmapped array the program looked
/// up (`mipmap_level`: the only way a level is written), its extent halved
/// per level; each plane of an NV12 array the program looked up
/// (`array_plane`), in its plane's geometry. An NV12 array with a plane the
/// program never looked up is named in `not_restored` (its planes are read
/// through their handles only).
fn array_shapes(
    live: &[(Key, String, Op, u32)],
    not_restored: &mut Vec<String>,
) -> Vec<(ArrayShape, (String, u64))> {
    let mut shapes: HashMap<u64, ArrayShape> = HashMap::new();
    let mut mipmaps: HashMap<u64, (ArrayShape, u32)> = HashMap::new();
    let mut planes: HashMap<u64, Vec<u32>> = HashMap::new();
    let mut out = Vec::new();
    for (_, api, op, _) in live {
        match *op {
            Op::ArrayCreate {
                array,
                format,
                channels,
                extent,
                flags,
            } => {
                let shape = ArrayShape {
                    format,
                    channels,
                    extent,
                    flags,
                };
                shapes.insert(array.0, shape);
                if format != NV12 {
                    out.push((shape, (api.clone(), array.0)));
                }
            }
            Op::MipmapCreate {
                mipmap,
                format,
                channels,
                extent,
                flags,
                levels,
            } => {
                let shape = ArrayShape {
                    format,
                    channels,
                    extent,
                    flags,
                };
                mipmaps.insert(mipmap.0, (shape, levels));
            }
            Op::MipmapLevel {
                array,
                mipmap,
                level,
            } => {
                let Some((shape, _)) = mipmaps.get(&mipmap.0).copied() else {
                    continue;
                };
                // A dimension the array lacks (0) stays 0; the others halve,
                // down to 1.
                let extent = shape.extent.map(|n| {
                    if n == 0 {
                        0
                    } else {
                        (n >> level.min(63)).max(1)
                    }
                });
                out.push((ArrayShape { extent, ..shape }, (api.clone(), array.0)));
            }
            Op::ArrayPlane {
                array,
                parent,
                plane,
            } => {
                let Some(p) = shapes.get(&parent.0).copied() else {
                    continue;
                };
                if p.format != NV12 || plane > 1 {
                    not_restored.push(format!(
                        "{api}: the contents of plane {plane} of array {:#x}: not a plane of an NV12 array",
                        parent.0
                    ));
                    continue;
                }
                planes.entry(parent.0).or_default().push(plane);
                let halve = |n: u64| if plane == 0 { n } else { n / 2 };
                let shape = ArrayShape {
                    format: 0x01,
                    channels: if plane == 0 { 1 } else { 2 },
                    extent: [halve(p.extent[0]), halve(p.extent[1]), p.extent[2]],
                    flags: 0,
                };
                out.push((shape, (api.clone(), array.0)));
            }
            _ => {}
        }
    }
    for (_, api, op, _) in live {
        if let Op::ArrayCreate {
            array,
            format: NV12,
            ..
        } = *op
        {
            let seen = planes.get(&array.0).map(Vec::as_slice).unwrap_or_default();
            let missing: Vec<String> = (0..2u32)
                .filter(|p| !seen.contains(p))
                .map(|p| p.to_string())
                .collect();
            if !missing.is_empty() {
                not_restored.push(format!(
                    "{api}: the contents of NV12 array {:#x}: plane {} never looked up (cuArrayGetPlane), not read back",
                    array.0,
                    missing.join(" and ")
                ));
            }
        }
    }
    out
}

/// What a preamble restored so far.
#[derive(Default)]
struct State {
    bytes: u64,
    allocs: u64,
    not_restored: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::recorder::Copy;

    /// A device whose memory reads as its address's low byte.
    struct Fake;

    impl DeviceAccess for Fake {
        fn synchronize(&self) -> Result<(), i32> {
            Ok(())
        }
        fn read(&self, ptr: u64, buf: &mut [u8]) -> Result<(), i32> {
            buf.fill(ptr as u8);
            Ok(())
        }
        fn read_array(
            &self,
            array: u64,
            element: u64,
            extent: [u64; 3],
            buf: &mut [u8],
        ) -> Option<Result<(), i32>> {
            assert_eq!(buf.len() as u64, element * extent.iter().product::<u64>());
            buf.fill(array as u8);
            Some(Ok(()))
        }
    }

    /// A device that cannot read arrays (the trait's default).
    struct NoArrays;

    impl DeviceAccess for NoArrays {
        fn synchronize(&self) -> Result<(), i32> {
            Ok(())
        }
        fn read(&self, ptr: u64, buf: &mut [u8]) -> Result<(), i32> {
            buf.fill(ptr as u8);
            Ok(())
        }
    }

    /// A recorder with a `profiler` window, recording into `dir`.
    fn windowed(dir: &Path) -> &'static Recorder {
        std::fs::create_dir(dir).unwrap();
        Box::leak(Box::new(
            Recorder::with_window(
                dir,
                Platform::Cpu,
                vec![],
                Map::new(),
                Some(WindowSpec::Profiler),
            )
            .unwrap(),
        ))
    }

    /// A 2D float array (4 × 3) and a 1D byte array (64) made before the
    /// window, opened with `dev`; the archive's events.
    fn arrays_at_the_start(dir: &Path, dev: &dyn DeviceAccess) -> Vec<hrr_core::Event> {
        let r = windowed(dir);
        let shape = |format, extent| ArrayShape {
            format,
            channels: 1,
            extent,
            flags: 0,
        };
        r.array_create("hipMallocArray", 0, 0xa0, shape(0x20, [4, 3, 0]));
        r.array_create("hipArrayCreate", 0, 0xb0, shape(0x01, [64, 0, 0]));
        r.array_create("hipArrayCreate", 0, 0xc0, shape(0x01, [8, 0, 0]));
        r.array_destroy("hipArrayDestroy", 0, 0xc0);
        r.window_trigger(Trigger::ProfilerStart, dev, Closing::default);
        r.window_trigger(Trigger::ProfilerStop, dev, Closing::default);
        hrr_core::archive::Archive::open(dir)
            .unwrap()
            .events(hrr_core::event_reader::ReadOptions::default())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn a_window_uploads_each_live_array_whole() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("run.hrr");
        let ev = arrays_at_the_start(&dir, &Fake);
        let ops: Vec<_> = ev.iter().map(|e| (e.api.as_str(), e.op.name())).collect();
        assert_eq!(
            ops,
            [
                ("hipMallocArray", "array_create"),
                ("hipArrayCreate", "array_create"),
                (STATE_API, "memcpy_array"),
                (STATE_API, "memcpy_array"),
                ("hrr-window-end", "eof")
            ]
        );
        let upload = |e: &hrr_core::Event| match e.op {
            Op::MemcpyArray {
                dir,
                dst,
                dpos,
                spitch,
                extent,
                blob,
                ..
            } => (dir, dst.0, dpos, spitch, extent, blob),
            ref op => panic!("{op:?}"),
        };
        assert_eq!(
            upload(&ev[2]),
            (
                Dir::H2d,
                0xa0,
                Some([0; 3]),
                Some([16, 48]),
                [16, 3, 1],
                Some(BlobId::of(&[0xa0; 48]))
            )
        );
        assert_eq!(
            upload(&ev[3]),
            (
                Dir::H2d,
                0xb0,
                Some([0; 3]),
                Some([64, 64]),
                [64, 1, 1],
                Some(BlobId::of(&[0xb0; 64]))
            )
        );
        let w = WindowInfo::of(&hrr_core::manifest::Manifest::read(&dir).unwrap()).unwrap();
        assert_eq!((w.state_bytes, w.state_allocs), (48 + 64, 2));
        assert!(w.not_restored.is_empty(), "{:?}", w.not_restored);
    }

    /// The uploads of a preamble: (array, extent in bytes, rows, slices).
    fn uploads(ev: &[hrr_core::Event]) -> Vec<(u64, [u64; 3])> {
        ev.iter()
            .filter_map(|e| match e.op {
                Op::MemcpyArray { dst, extent, .. } if e.api == STATE_API => Some((dst.0, extent)),
                _ => None,
            })
            .collect()
    }

    /// A mipmapped array of 16 × 8 floats in 3 levels (levels 0 and 2 looked
    /// up), an NV12 array of 8 × 4 with both planes looked up and one with
    /// plane 0 only, all made before the window.
    fn levels_and_planes_at_the_start(dir: &Path) -> (Vec<hrr_core::Event>, WindowInfo) {
        let r = windowed(dir);
        let shape = |format, channels, extent| ArrayShape {
            format,
            channels,
            extent,
            flags: 0,
        };
        r.mipmap_create(
            "hipMallocMipmappedArray",
            0,
            0x100,
            shape(0x20, 1, [16, 8, 0]),
            3,
        );
        r.mipmap_level("hipGetMipmappedArrayLevel", 0, 0x110, 0x100, 0);
        r.mipmap_level("hipGetMipmappedArrayLevel", 0, 0x112, 0x100, 2);
        r.array_create("cuArray3DCreate_v2", 0, 0x200, shape(NV12, 3, [8, 4, 0]));
        r.array_plane("cuArrayGetPlane", 0, 0x210, 0x200, 0);
        r.array_plane("cuArrayGetPlane", 0, 0x211, 0x200, 1);
        r.array_create("cuArray3DCreate_v2", 0, 0x300, shape(NV12, 3, [8, 4, 0]));
        r.array_plane("cuArrayGetPlane", 0, 0x310, 0x300, 0);
        r.window_trigger(Trigger::ProfilerStart, &Fake, Closing::default);
        r.window_trigger(Trigger::ProfilerStop, &Fake, Closing::default);
        let ev = hrr_core::archive::Archive::open(dir)
            .unwrap()
            .events(hrr_core::event_reader::ReadOptions::default())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let w = WindowInfo::of(&hrr_core::manifest::Manifest::read(dir).unwrap()).unwrap();
        (ev, w)
    }

    #[test]
    fn a_window_uploads_mipmap_levels_and_planes_through_their_handles() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("run.hrr");
        let (ev, w) = levels_and_planes_at_the_start(&dir);
        assert_eq!(
            uploads(&ev),
            [
                // Level 0: 16 floats a row, 8 rows; level 2: 4 × 2.
                (0x110, [64, 8, 1]),
                (0x112, [16, 2, 1]),
                // Luma: 8 bytes × 4 rows; chroma: 4 byte pairs × 2 rows.
                (0x210, [8, 4, 1]),
                (0x211, [8, 2, 1]),
                (0x310, [8, 4, 1]),
            ]
        );
        // Plane 1 of the second NV12 array was never looked up: named.
        assert_eq!(w.not_restored.len(), 1, "{:?}", w.not_restored);
        assert!(
            w.not_restored[0].contains("NV12 array 0x300") && w.not_restored[0].contains("plane 1"),
            "{:?}",
            w.not_restored
        );
    }

    #[test]
    fn arrays_a_family_cannot_read_are_named() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("run.hrr");
        let ev = arrays_at_the_start(&dir, &NoArrays);
        assert!(!ev.iter().any(|e| e.op.name() == "memcpy_array"));
        assert_eq!(
            ev.iter().filter(|e| e.op.name() == "array_create").count(),
            2,
            "still made"
        );
        let w = WindowInfo::of(&hrr_core::manifest::Manifest::read(&dir).unwrap()).unwrap();
        assert_eq!(w.not_restored.len(), 2, "{:?}", w.not_restored);
        assert!(
            w.not_restored[0].contains("array 0xa0"),
            "{:?}",
            w.not_restored
        );
        assert!(
            w.not_restored[1].contains("array 0xb0"),
            "{:?}",
            w.not_restored
        );
        assert_eq!(w.state_bytes, 0);
    }

    #[test]
    fn outside_a_window_nothing_is_written_and_its_start_restores_the_state() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("run.hrr");
        std::fs::create_dir(&dir).unwrap();
        let r: &'static Recorder = Box::leak(Box::new(
            Recorder::with_window(
                &dir,
                Platform::Cpu,
                vec![],
                Map::new(),
                Some(WindowSpec::Profiler),
            )
            .unwrap(),
        ));
        let h2d = |dst| Copy {
            dir: Dir::H2d,
            dst,
            src: 0x1000,
            size: 4,
            stream: None,
        };
        r.alloc("hipMalloc", 0, 0x7f00_0000_0010, 4, MemKind::Device);
        r.memcpy("hipMemcpy", 0, &h2d(0x7f00_0000_0010), Some(b"abcd"));
        assert_eq!(r.events_appended(), 0, "outside: no event");
        // Calls left unrecorded: 3 before the window, 5 at its end.
        let unrecorded = |n: u64| {
            move || Closing {
                unrecorded: [("hipMemAdvise".to_string(), n)].into(),
                ..Closing::default()
            }
        };
        r.window_trigger(Trigger::ProfilerStart, &Fake, unrecorded(3));
        r.memcpy("hipMemcpy", 0, &h2d(0x7f00_0000_0010), Some(b"wxyz"));
        r.window_trigger(Trigger::ProfilerStop, &Fake, unrecorded(5));
        r.memcpy("hipMemcpy", 0, &h2d(0x7f00_0000_0010), Some(b"late"));
        let ev: Vec<_> = hrr_core::archive::Archive::open(&dir)
            .unwrap()
            .events(hrr_core::event_reader::ReadOptions::default())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let ops: Vec<_> = ev.iter().map(|e| (e.api.as_str(), e.op.name())).collect();
        assert_eq!(
            ops,
            [
                ("hipMalloc", "alloc"),
                (STATE_API, "memcpy"),
                ("hipMemcpy", "memcpy"),
                ("hrr-window-end", "eof")
            ]
        );
        let Op::Memcpy { blob: Some(b), .. } = ev[1].op else {
            panic!("{:?}", ev[1])
        };
        assert_eq!(b, BlobId::of(&[0x10; 4]), "the device's bytes at the start");
        let store = hrr_core::blob_store::BlobStore::of_archive(&dir);
        assert!(!store.contains(&BlobId::of(b"abcd")), "no blob outside");
        assert!(!store.contains(&BlobId::of(b"late")));
        let m = hrr_core::manifest::Manifest::read(&dir).unwrap();
        let w = WindowInfo::of(&m).unwrap();
        assert_eq!((w.index, w.state_bytes, w.opened), (1, 4, true));
        assert_eq!(m.unrecorded["hipMemAdvise"], 2, "counted inside the window");
    }

    #[test]
    fn the_ledger_keeps_what_is_live_in_order() {
        let mut l = Ledger::default();
        let alloc = |p| Op::Alloc {
            ptr: Addr(p),
            size: 8,
            mem: MemKind::Device,
        };
        l.note("a", &alloc(1));
        l.note("a", &Op::StreamCreate { stream: Addr(9) });
        l.note("a", &alloc(2));
        l.note(
            "f",
            &Op::Free {
                ptr: Addr(1),
                mem: None,
            },
        );
        let ops: Vec<_> = l.order.values().map(|(_, _, o)| o.clone()).collect();
        assert_eq!(ops, vec![Op::StreamCreate { stream: Addr(9) }, alloc(2)]);
        l.note("d", &Op::StreamDestroy { stream: Addr(9) });
        assert_eq!(l.order.len(), 1);
    }

    #[test]
    fn a_device_reset_forgets_that_device_s_handles_but_code() {
        let mut l = Ledger::default();
        let alloc = |p| Op::Alloc {
            ptr: Addr(p),
            size: 8,
            mem: MemKind::Device,
        };
        let module = Op::ModuleLoad {
            module: Addr(5),
            code: BlobId::of(b"code"),
        };
        l.note("a", &alloc(1));
        l.note("m", &module);
        l.note("s", &Op::StreamCreate { stream: Addr(9) });
        l.note("e", &Op::EventCreate { event: Addr(10) });
        current_device::with(1, || l.note("a", &alloc(2)));
        l.reset(0, false);
        let ops: Vec<_> = l.order.values().map(|(_, _, o)| o.clone()).collect();
        assert_eq!(ops, vec![module, alloc(2)], "device 1's allocation stays");
    }

    #[test]
    fn an_array_s_planes_go_with_it() {
        let mut l = Ledger::default();
        let create = |a| Op::ArrayCreate {
            array: Addr(a),
            format: 0xb0,
            channels: 3,
            extent: [8, 4, 0],
            flags: 0,
        };
        let plane = |a, parent, plane| Op::ArrayPlane {
            array: Addr(a),
            parent: Addr(parent),
            plane,
        };
        l.note("c", &create(1));
        l.note("c", &create(2));
        l.note("p", &plane(0x11, 1, 1));
        l.note("p", &plane(0x21, 2, 1));
        l.note("d", &Op::ArrayDestroy { array: Addr(1) });
        let ops: Vec<_> = l.order.values().map(|(_, _, o)| o.clone()).collect();
        assert_eq!(ops, vec![create(2), plane(0x21, 2, 1)]);
    }

    #[test]
    fn released_physical_memory_stays_while_mapped() {
        let mut l = Ledger::default();
        let h = Addr(0x77);
        l.note(
            "c",
            &Op::MemCreate {
                handle: h,
                size: 64,
                mem: MemKind::Device,
            },
        );
        l.note(
            "m",
            &Op::MemMap {
                ptr: Addr(0x1000),
                size: 64,
                offset: 0,
                handle: h,
            },
        );
        l.note("r", &Op::MemRelease { handle: h });
        assert_eq!(l.order.len(), 3, "create, map, release");
        l.note(
            "u",
            &Op::MemUnmap {
                ptr: Addr(0x1000),
                size: 64,
            },
        );
        assert!(l.order.is_empty());
    }
}
