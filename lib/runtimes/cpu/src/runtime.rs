//! The process-wide runtime state behind the exported functions: memory, streams,
//! events, modules, registered fat binaries, and the block thread pool.
//!
//! Null-stream semantics are those of legacy HIP/CUDA: work on the null stream
//! (handle 0) first waits for every blocking stream, then runs on the calling
//! thread, so later work on any stream is trivially ordered after it.
//! `hipStreamPerThread` also runs inline, without waiting for other streams.

use crate::exec::{KernArgs, Pool};
use crate::ffi::{self, Dim3, HipError, HipFatbinWrapper, err};
use crate::memory::{self, Class, Memory};
use crate::module::{self, Function, Module};
use crate::stream::{Event, LaunchOp, Op, Stream};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

/// Locks `m`, taking the data of a poisoned lock as it is (a panicking
/// kernel must not wedge the runtime).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Most threads a block may have, and most dynamic shared memory per block.
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
/// Most dynamic shared memory per block, in bytes.
pub const MAX_SHARED_PER_BLOCK: usize = 64 * 1024;

/// Largest grid dimension (what `hipDeviceProp_t::maxGridSize` advertises).
pub const MAX_GRID_DIM: u32 = i32::MAX as u32;

/// HIP's launch limits, which bound how long a launch loops: every grid
/// dimension at most [`MAX_GRID_DIM`], and in each dimension at most 2^32 - 1
/// threads (grid × block), as on AMD GPUs.
pub fn grid_within_limits(grid: Dim3, block: Dim3) -> bool {
    [(grid.x, block.x), (grid.y, block.y), (grid.z, block.z)]
        .iter()
        .all(|&(g, b)| g <= MAX_GRID_DIM && u64::from(g) * u64::from(b) <= u64::from(u32::MAX))
}

/// Where an operation runs.
pub enum Target {
    /// The legacy null stream.
    Legacy,
    /// `hipStreamPerThread`.
    PerThread,
    /// A stream created by `hipStreamCreate`.
    Stream(Arc<Stream>),
}

/// A fat binary handed to `__hipRegisterFatBinary`; loaded at its first launch.
#[repr(C)]
pub struct FatBin {
    /// The HIPF wrapper (first field, so that `*handle` reads as a pointer).
    wrapper: usize,
    module: OnceLock<Result<Arc<Module>, HipError>>,
}

/// A host-side kernel stub registered with `__hipRegisterFunction`.
pub struct HostFn {
    fatbin: Arc<FatBin>,
    name: String,
    func: OnceLock<Result<Arc<Function>, HipError>>,
}

/// The process's runtime: memory, streams, events, code objects.
pub struct Runtime {
    /// Device and host memory.
    pub mem: Mutex<Memory>,
    /// Threads that run kernel blocks.
    pub pool: Arc<Pool>,
    streams: Mutex<HashMap<usize, Arc<Stream>>>,
    events: Mutex<HashMap<usize, Arc<Event>>>,
    modules: Mutex<HashMap<usize, Arc<Module>>>,
    functions: Mutex<HashMap<usize, Arc<Function>>>,
    fatbins: Mutex<HashMap<usize, Arc<FatBin>>>,
    host_fns: RwLock<HashMap<usize, Arc<HostFn>>>,
    /// The devices (`HRR_CPU_DEVICES`).
    pub devices: crate::devices::Devices,
    /// `hsa_init` calls not yet shut down.
    pub hsa_refs: Mutex<u32>,
    /// Graphs, nodes, executable graphs and stream captures (`graph.rs`).
    pub(crate) graphs: crate::graph::Registry,
}

static RUNTIME: OnceLock<Result<Runtime, HipError>> = OnceLock::new();

/// The runtime, created on first use.
pub fn rt() -> Result<&'static Runtime, HipError> {
    RUNTIME.get_or_init(Runtime::new).as_ref().map_err(|e| *e)
}

impl Runtime {
    fn new() -> Result<Runtime, HipError> {
        let size = std::env::var("HRR_CPU_DEVICE_MEMORY")
            .ok()
            .and_then(|s| memory::parse_size(&s))
            .unwrap_or(memory::DEFAULT_RESERVATION);
        let devices = crate::devices::Devices::from_env()?;
        let mem = Memory::new(size)?;
        let (base, len) = mem.reservation();
        crate::log!("device memory reserved at {base:#x}, {len} bytes");
        Ok(Runtime {
            mem: Mutex::new(mem),
            pool: Arc::new(Pool::new()),
            streams: Mutex::new(HashMap::new()),
            events: Mutex::new(HashMap::new()),
            modules: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
            fatbins: Mutex::new(HashMap::new()),
            host_fns: RwLock::new(HashMap::new()),
            devices,
            hsa_refs: Mutex::new(0),
            graphs: Default::default(),
        })
    }

    /// The memory, locked.
    pub fn mem(&self) -> MutexGuard<'_, Memory> {
        lock(&self.mem)
    }

    // ------------------------------------------------------------ streams

    /// Where work on stream handle `handle` runs.
    pub fn target(&self, handle: usize) -> Result<Target, HipError> {
        match handle {
            0 => Ok(Target::Legacy),
            ffi::STREAM_PER_THREAD => Ok(Target::PerThread),
            h => lock(&self.streams)
                .get(&h)
                .cloned()
                .map(Target::Stream)
                .ok_or(err::INVALID_HANDLE),
        }
    }

    /// Waits for the streams (only blocking ones if `blocking_only`); returns the
    /// first deferred error.
    pub fn sync_streams(&self, blocking_only: bool) -> HipError {
        self.sync_streams_of(blocking_only, None)
    }

    /// [`Runtime::sync_streams`] of `device`'s streams only (`None`: all).
    fn sync_streams_of(&self, blocking_only: bool, device: Option<u32>) -> HipError {
        let busy: Vec<Arc<Stream>> = lock(&self.streams)
            .values()
            .filter(|s| device.is_none_or(|d| s.device == d))
            .filter(|s| (!blocking_only || s.blocking()) && !s.idle())
            .cloned()
            .collect();
        let mut first = err::SUCCESS;
        for s in busy {
            let e = s.synchronize();
            if first == err::SUCCESS {
                first = e;
            }
        }
        first
    }

    /// Runs `op` on `target`: at once on the null streams (the legacy one
    /// waits for blocking streams first), else queued.
    pub fn submit(&self, target: &Target, op: Op) -> Result<(), HipError> {
        // Stream capture: work issued to a capturing stream becomes a node
        // of its graph instead of running (one atomic load when none is).
        let op = match self.capture_op(target, op)? {
            Some(op) => op,
            None => return Ok(()),
        };
        match target {
            Target::Legacy => {
                let e = self.sync_streams(true);
                let r = op.run(&self.pool);
                if e != err::SUCCESS { Err(e) } else { r }
            }
            Target::PerThread => op.run(&self.pool),
            Target::Stream(s) => {
                s.enqueue(op);
                Ok(())
            }
        }
    }

    /// `hipStreamCreateWithFlags`.
    pub fn create_stream(&self, flags: u32) -> Result<usize, HipError> {
        let s = Stream::new(flags, self.pool.clone())?;
        let h = Arc::as_ptr(&s) as usize;
        lock(&self.streams).insert(h, s);
        Ok(h)
    }

    /// `hipStreamDestroy`.
    pub fn destroy_stream(&self, h: usize) -> Result<(), HipError> {
        let s = lock(&self.streams).remove(&h).ok_or(err::INVALID_HANDLE)?;
        s.shutdown();
        Ok(())
    }

    /// `hipStreamSynchronize`.
    pub fn stream_synchronize(&self, h: usize) -> Result<(), HipError> {
        if self.is_capturing(h) {
            return Err(err::STREAM_CAPTURE_UNSUPPORTED);
        }
        let e = match self.target(h)? {
            Target::Legacy => self.sync_streams(true),
            Target::PerThread => err::SUCCESS,
            Target::Stream(s) => s.synchronize(),
        };
        if e == err::SUCCESS { Ok(()) } else { Err(e) }
    }

    /// `hipStreamQuery`.
    pub fn stream_query(&self, h: usize) -> Result<(), HipError> {
        let idle = match self.target(h)? {
            Target::Legacy => lock(&self.streams)
                .values()
                .filter(|s| s.blocking())
                .all(|s| s.idle()),
            Target::PerThread => true,
            Target::Stream(s) => s.idle(),
        };
        if idle { Ok(()) } else { Err(err::NOT_READY) }
    }

    /// Waits for every stream of every device.
    pub fn device_synchronize(&self) -> Result<(), HipError> {
        let e = self.sync_streams(false);
        if e == err::SUCCESS { Ok(()) } else { Err(e) }
    }

    /// `hipDeviceSynchronize`: waits for the current device's streams.
    /// (The runtime's own waits — before a free, say — wait for every
    /// device's: memory may be in use from any of them.)
    pub fn current_device_synchronize(&self) -> Result<(), HipError> {
        let e = self.sync_streams_of(false, Some(crate::devices::current()));
        if e == err::SUCCESS { Ok(()) } else { Err(e) }
    }

    // ------------------------------------------------------------- events

    /// `hipEventCreateWithFlags`.
    pub fn create_event(&self, flags: u32) -> usize {
        let e = Arc::new(Event::new(flags));
        let h = Arc::as_ptr(&e) as usize;
        lock(&self.events).insert(h, e);
        h
    }

    /// The event of a handle.
    pub fn event(&self, h: usize) -> Result<Arc<Event>, HipError> {
        lock(&self.events)
            .get(&h)
            .cloned()
            .ok_or(err::INVALID_HANDLE)
    }

    /// `hipEventDestroy`.
    pub fn destroy_event(&self, h: usize) -> Result<(), HipError> {
        lock(&self.events)
            .remove(&h)
            .map(|_| ())
            .ok_or(err::INVALID_HANDLE)
    }

    /// `hipEventRecord`.
    pub fn record_event(&self, ev: usize, stream: usize) -> Result<(), HipError> {
        let event = self.event(ev)?;
        let target = self.target(stream)?;
        if self.capture_event(stream, crate::graph::NodeKind::EventRecord(ev))? {
            return Ok(());
        }
        let generation = event.begin_record();
        self.submit(&target, Op::record(event, generation))
    }

    /// `hipStreamWaitEvent`.
    pub fn stream_wait_event(&self, stream: usize, ev: usize) -> Result<(), HipError> {
        let event = self.event(ev)?;
        let target = self.target(stream)?;
        if self.capture_event(stream, crate::graph::NodeKind::EventWait(ev))? {
            return Ok(());
        }
        let generation = event.latest();
        if generation == 0 {
            return Ok(());
        }
        match target {
            Target::Legacy | Target::PerThread => {
                event.wait_for(generation);
                Ok(())
            }
            Target::Stream(s) => {
                s.enqueue(Op::wait(event, generation));
                Ok(())
            }
        }
    }

    /// `hipEventElapsedTime`.
    pub fn elapsed_ms(&self, start: usize, stop: usize) -> Result<f32, HipError> {
        let (a, b) = (self.event(start)?, self.event(stop)?);
        if (a.flags | b.flags) & ffi::EVENT_DISABLE_TIMING != 0 {
            return Err(err::INVALID_HANDLE);
        }
        let (t0, t1) = (a.time()?, b.time()?);
        let ms = if t1 >= t0 {
            (t1 - t0).as_secs_f64() * 1e3
        } else {
            -((t0 - t1).as_secs_f64() * 1e3)
        };
        Ok(ms as f32)
    }

    // ------------------------------------------------------------- memory

    /// Validates a copy; operands inside the device reservation must lie in one
    /// live allocation, device operands must be device-accessible.
    pub fn check_copy(
        &self,
        dst: usize,
        src: usize,
        len: usize,
        kind: ffi::HipMemcpyKind,
    ) -> Result<(), HipError> {
        if len == 0 {
            return Ok(());
        }
        if dst == 0 || src == 0 {
            return Err(err::INVALID_VALUE);
        }
        let mem = self.mem();
        let is_dev = |a: usize| matches!(mem.classify(a), Class::Device { .. } | Class::Stale);
        let (d_dev, s_dev) = match kind {
            ffi::MEMCPY_HOST_TO_HOST => (false, false),
            ffi::MEMCPY_HOST_TO_DEVICE => (true, false),
            ffi::MEMCPY_DEVICE_TO_HOST => (false, true),
            ffi::MEMCPY_DEVICE_TO_DEVICE => (true, true),
            ffi::MEMCPY_DEFAULT => (is_dev(dst), is_dev(src)),
            _ => return Err(err::INVALID_MEMCPY_DIRECTION),
        };
        let ok = |a: usize, dev: bool| {
            if dev {
                mem.device_accessible(a, len)
            } else {
                mem.host_operand_ok(a, len)
            }
        };
        if !ok(dst, d_dev) || !ok(src, s_dev) {
            crate::log!(
                "memcpy kind {kind}: dst {dst:#x} src {src:#x} size {len}: operand not in a live allocation"
            );
            return Err(err::INVALID_VALUE);
        }
        Ok(())
    }

    /// A memset's destination must be device-accessible memory.
    pub fn check_fill(&self, dst: usize, bytes: usize) -> Result<(), HipError> {
        if bytes == 0 {
            return Ok(());
        }
        if dst == 0 || !self.mem().device_accessible(dst, bytes) {
            crate::log!("memset dst {dst:#x} size {bytes}: not in a live allocation");
            return Err(err::INVALID_VALUE);
        }
        Ok(())
    }

    // ------------------------------------------------------------ modules

    fn add_module(&self, m: Module) -> usize {
        let m = Arc::new(m);
        let h = Arc::as_ptr(&m) as usize;
        let mut f = lock(&self.functions);
        for func in m.functions.values() {
            f.insert(Arc::as_ptr(func) as usize, func.clone());
        }
        drop(f);
        lock(&self.modules).insert(h, m);
        h
    }

    /// `hipModuleLoadData`.
    pub fn load_module(&self, image: &[u8]) -> Result<usize, HipError> {
        Ok(self.add_module(module::load_image(image)?))
    }

    /// `hipModuleUnload`.
    pub fn unload_module(&self, h: usize) -> Result<(), HipError> {
        let m = lock(&self.modules).remove(&h).ok_or(err::INVALID_HANDLE)?;
        let _ = self.device_synchronize();
        let mut f = lock(&self.functions);
        for func in m.functions.values() {
            f.remove(&(Arc::as_ptr(func) as usize));
        }
        drop(f);
        // Its globals stop being device memory with it (only those looked up
        // were registered; forgetting the others changes nothing).
        let mut mem = self.mem();
        for name in m.globals.keys() {
            if let Ok((p, _)) = m.global(name) {
                mem.unregister_global(p);
            }
        }
        Ok(())
    }

    /// `hipModuleGetGlobal`: the variable's address and size; from now on
    /// it is device memory for copies and memsets.
    pub fn get_global(&self, module: usize, name: &str) -> Result<(usize, usize), HipError> {
        let m = lock(&self.modules)
            .get(&module)
            .cloned()
            .ok_or(err::INVALID_HANDLE)?;
        let (p, size) = m.global(name)?;
        self.mem().register_global(p, size)?;
        Ok((p, size))
    }

    /// `hipModuleGetFunction`.
    pub fn get_function(&self, module: usize, name: &str) -> Result<usize, HipError> {
        let m = lock(&self.modules)
            .get(&module)
            .cloned()
            .ok_or(err::INVALID_HANDLE)?;
        let f = m.functions.get(name).ok_or(err::NOT_FOUND)?;
        Ok(Arc::as_ptr(f) as usize)
    }

    /// The function of a handle.
    pub fn function(&self, h: usize) -> Result<Arc<Function>, HipError> {
        lock(&self.functions)
            .get(&h)
            .cloned()
            .ok_or(err::INVALID_HANDLE)
    }

    /// Validates a launch configuration and runs or enqueues it.
    ///
    /// # Safety
    /// `args` must be the kernel's argument segment laid out per its metadata; what
    /// the kernel does with the pointers in it is the application's contract.
    pub unsafe fn launch(
        &self,
        func: Arc<Function>,
        grid: Dim3,
        block: Dim3,
        shmem: usize,
        args: KernArgs,
        (handle, stream): (usize, usize),
    ) -> Result<(), HipError> {
        let target = self.target(stream)?;
        // A kernel runs on the current device: a stream of another device
        // is refused, as a GPU runtime refuses it.
        if let Target::Stream(s) = &target
            && s.device != crate::devices::current()
        {
            crate::log!(
                "launch: stream {stream:#x} belongs to device {}, the current device is {}",
                s.device,
                crate::devices::current()
            );
            return Err(err::INVALID_HANDLE);
        }
        let sane = |d: Dim3, max: u64| d.volume().is_some_and(|n| n > 0 && n <= max);
        if !sane(grid, u64::MAX) || !sane(block, MAX_THREADS_PER_BLOCK) {
            return Err(err::INVALID_VALUE);
        }
        if !grid_within_limits(grid, block) {
            crate::log!(
                "launch: grid {:?} x block {:?} exceeds the device's limits",
                grid,
                block
            );
            return Err(err::INVALID_CONFIGURATION);
        }
        if shmem > MAX_SHARED_PER_BLOCK {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: forwarded contract of this function.
        let op = unsafe {
            Op::launch(LaunchOp {
                func,
                handle,
                grid,
                block,
                shmem,
                args,
            })
        };
        self.submit(&target, op)
    }

    // ----------------------------------------------------- fat binaries

    /// `__hipRegisterFatBinary`: the handle of a HIPF wrapper, loaded at first launch.
    pub fn register_fatbin(&self, wrapper: usize) -> usize {
        let fb = Arc::new(FatBin {
            wrapper,
            module: OnceLock::new(),
        });
        let h = Arc::as_ptr(&fb) as usize;
        lock(&self.fatbins).insert(h, fb);
        h
    }

    /// `__hipUnregisterFatBinary`.
    pub fn unregister_fatbin(&self, h: usize) -> Result<(), HipError> {
        let fb = lock(&self.fatbins).remove(&h).ok_or(err::INVALID_HANDLE)?;
        let _ = self.device_synchronize();
        self.host_fns
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, f| !Arc::ptr_eq(&f.fatbin, &fb));
        // Globals its symbols registered stop being device memory with it.
        if let Some(Ok(m)) = fb.module.get() {
            let mut mem = self.mem();
            for name in m.globals.keys() {
                if let Ok((p, _)) = m.global(name) {
                    mem.unregister_global(p);
                }
            }
        }
        Ok(())
    }

    /// `__hipRegisterFunction`: a host stub of a registered fat binary.
    pub fn register_function(
        &self,
        fatbin: usize,
        host_fn: usize,
        name: &str,
    ) -> Result<(), HipError> {
        let fb = lock(&self.fatbins)
            .get(&fatbin)
            .cloned()
            .ok_or(err::INVALID_HANDLE)?;
        let entry = Arc::new(HostFn {
            fatbin: fb,
            name: name.to_owned(),
            func: OnceLock::new(),
        });
        self.host_fns
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(host_fn, entry);
        Ok(())
    }

    /// The module of a registered fat binary, loaded on first use
    /// (`__hipRegisterVar`'s symbols).
    pub fn fatbin_module(&self, fatbin: usize) -> Result<Arc<Module>, HipError> {
        let fb = lock(&self.fatbins)
            .get(&fatbin)
            .cloned()
            .ok_or(err::INVALID_HANDLE)?;
        fb.module
            .get_or_init(|| load_fatbin(fb.wrapper).map(Arc::new))
            .clone()
    }

    /// The kernel behind a registered host stub, loading its fat binary on first use.
    pub fn host_function(&self, host_fn: usize) -> Result<Arc<Function>, HipError> {
        let hf = self
            .host_fns
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&host_fn)
            .cloned()
            .ok_or(err::INVALID_DEVICE_FUNCTION)?;
        hf.func
            .get_or_init(|| {
                let m = hf
                    .fatbin
                    .module
                    .get_or_init(|| load_fatbin(hf.fatbin.wrapper).map(Arc::new))
                    .clone()?;
                m.functions.get(&hf.name).cloned().ok_or_else(|| {
                    crate::log!("kernel {} not in its fat binary", hf.name);
                    err::INVALID_DEVICE_FUNCTION
                })
            })
            .clone()
    }

    // ---------------------------------------------------------------- reset

    /// `hipDeviceReset` of `device` (and `hipDevicePrimaryCtxReset`): waits
    /// for its streams, then destroys them and its events (their handles
    /// answer `hipErrorInvalidHandle` from then on) and frees its device and
    /// managed memory, so the next allocations may get the same addresses
    /// back. Host memory (pinned, registered) belongs to no device and
    /// stays. Code stays loaded: HIP loads code objects again lazily after
    /// a reset, so modules, their functions and globals, and the kernels
    /// of registered fat binaries keep working. Other devices are
    /// untouched.
    pub fn reset(&self, device: u32) -> Result<(), HipError> {
        let _ = self.sync_streams_of(false, Some(device));
        let streams: Vec<Arc<Stream>> = {
            let mut all = lock(&self.streams);
            let mine: Vec<usize> = all
                .iter()
                .filter(|(_, s)| s.device == device)
                .map(|(&h, _)| h)
                .collect();
            mine.into_iter().filter_map(|h| all.remove(&h)).collect()
        };
        for s in streams {
            s.shutdown();
        }
        lock(&self.events).retain(|_, e| e.device != device);
        self.mem().reset(device);
        Ok(())
    }
}

fn load_fatbin(wrapper: usize) -> Result<Module, HipError> {
    if wrapper == 0 {
        return Err(err::INVALID_IMAGE);
    }
    // SAFETY: `wrapper` was handed to __hipRegisterFatBinary, whose contract is a
    // HIPF wrapper that stays valid until __hipUnregisterFatBinary.
    let w: HipFatbinWrapper =
        unsafe { std::ptr::read_unaligned(wrapper as *const HipFatbinWrapper) };
    if w.magic != ffi::HIPF_MAGIC {
        crate::log!("fat binary wrapper {wrapper:#x}: bad magic {:#x}", w.magic);
        return Err(err::INVALID_IMAGE);
    }
    // SAFETY: a HIPF wrapper's `binary` points at a complete offload bundle (or
    // ELF) living as long as the wrapper.
    let image = unsafe { module::image_from_ptr(w.binary.cast()) }?;
    module::load_image(image)
}
