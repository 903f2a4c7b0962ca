//! `CudaDevice`: the replay engine's [`Device`] over the CUDA driver API.
//!
//! One device, its primary context (the one the CUDA runtime uses, so a
//! replay shares nothing odd with what the application saw). Handles given
//! to the engine are the driver's own pointers (`CUstream`, `CUevent`,
//! `CUmodule`, `CUfunction`) as integers; 0 is the legacy default stream.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Arc;

use cuda_api::{
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST, CUmemAccessDesc, CUmemAllocationProp,
    CUmemLocation, DEFAULT_MAX_DYNAMIC_SHARED, launch_attr,
};
use hrr_core::MemKind;
use hrr_replay::device::{
    ArrayCopy, ArrayDesc, Device, DeviceError, Handle, HostBuffer, Launch, PoolCall,
};
use hrr_replay::engine::watchdog::Progress;
use hrr_replay::launch_thread::LaunchThread;

use crate::driver::{CudaDriver, c_name};
use crate::error::CudaError;
use crate::ffi::{
    self, CUDA_ERROR_NO_DEVICE, CUcontext, CUdevice, CUdeviceptr, CUevent, CUfunction, CUmodule,
    CUstream,
};
use crate::launcher::{self, CudaLauncher};
use crate::pinned::{PinnedBuffer, PinnedRanges};
use crate::placement::Placer;
use crate::staging::{Staging, StagingConfig};

thread_local! {
    /// The context this thread last made current through a `CudaDevice`.
    static BOUND: Cell<usize> = const { Cell::new(0) };
}

/// A CUDA device's primary context, replaying through the driver API.
pub struct CudaDevice {
    drv: &'static CudaDriver,
    dev: CUdevice,
    ctx: CUcontext,
    name: String,
    cc: (i32, i32),
    version: i32,
    staging: Staging,
    pinned: Arc<PinnedRanges>,
    /// Functions opted in to more than 48 KiB of dynamic shared memory, and
    /// how much.
    shmem_opt_in: HashMap<Handle, u32>,
    /// Physical handles already zero-filled at a first mapping.
    zeroed: HashSet<Handle>,
    /// Placement state, made on first use; `None` inside: cannot place.
    placer: Option<Option<Placer>>,
    /// Graphs built for the engine (`graphs`).
    pub(crate) graphs: crate::graphs::Built,
    /// Launches made on a thread of their own (`Device::launch_thread`).
    launches: Option<LaunchThread>,
    /// Devices the driver has.
    count: c_int,
    /// The current device's ordinal (`Device::select_device`: local device
    /// `L` is CUDA ordinal `L`).
    current_ordinal: c_int,
    /// Every device's primary context retained so far, by ordinal (the
    /// opened one included): `(device, context)`; shared with the launch
    /// thread, which makes the same context current.
    contexts: Arc<std::sync::Mutex<HashMap<c_int, (CUdevice, usize)>>>,
}

/// `sm_XY` for compute capability X.Y (`sm_90`, `sm_100`, `sm_120`).
pub fn sm_target(major: i32, minor: i32) -> String {
    format!("sm_{major}{minor}")
}

/// `13000` → `13.0`, `12040` → `12.4`.
pub fn version_string(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// A runtime handle or device address as the pointer the C API takes.
pub(crate) fn ptr(v: u64) -> *mut c_void {
    v as usize as *mut c_void
}

fn stream(s: Option<Handle>) -> CUstream {
    ptr(s.unwrap_or(0))
}

impl CudaDevice {
    /// Device `ordinal` of the process-wide driver ([`CudaDriver::get`]).
    pub fn open(ordinal: i32) -> Result<CudaDevice, CudaError> {
        CudaDevice::with_driver(CudaDriver::get()?, ordinal)
    }

    /// `cuInit`, device `ordinal`, its primary context made current.
    pub fn with_driver(drv: &'static CudaDriver, ordinal: i32) -> Result<CudaDevice, CudaError> {
        let api = drv.api();
        // SAFETY: cuInit takes flags (must be 0).
        let code = unsafe { (api.cuInit)(0) };
        if code == CUDA_ERROR_NO_DEVICE {
            return Err(CudaError::NoDevice { ordinal, count: 0 });
        }
        drv.check("cuInit", code)?;
        let version = drv.version()?;
        let mut count: c_int = 0;
        // SAFETY: valid out-pointer.
        drv.check("cuDeviceGetCount", unsafe {
            (api.cuDeviceGetCount)(&mut count)
        })?;
        if ordinal < 0 || ordinal >= count {
            return Err(CudaError::NoDevice { ordinal, count });
        }
        let mut dev: CUdevice = 0;
        // SAFETY: valid out-pointer; ordinal < count.
        drv.check("cuDeviceGet", unsafe {
            (api.cuDeviceGet)(&mut dev, ordinal)
        })?;

        let mut buf = [0 as c_char; 256];
        // SAFETY: `buf` holds 255 bytes plus the terminator we keep; the
        // driver writes at most `len` bytes, NUL-terminated.
        drv.check("cuDeviceGetName", unsafe {
            (api.cuDeviceGetName)(buf.as_mut_ptr(), 255, dev)
        })?;
        // SAFETY: NUL-terminated by the driver, and buf[255] is still 0.
        let name = unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();

        let attr = |a: c_int, what: &'static str| -> Result<i32, CudaError> {
            let mut v: c_int = 0;
            // SAFETY: valid out-pointer, valid device and attribute.
            drv.check(what, unsafe { (api.cuDeviceGetAttribute)(&mut v, a, dev) })?;
            Ok(v)
        };
        let major = attr(
            ffi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)",
        )?;
        let minor = attr(
            ffi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)",
        )?;

        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer and device.
        drv.check("cuDevicePrimaryCtxRetain", unsafe {
            (api.cuDevicePrimaryCtxRetain)(&mut ctx, dev)
        })?;
        let staging = Staging::new(StagingConfig::from_env());
        let d = CudaDevice {
            drv,
            dev,
            ctx,
            name,
            cc: (major, minor),
            version,
            staging,
            pinned: Arc::default(),
            shmem_opt_in: HashMap::new(),
            zeroed: HashSet::new(),
            placer: None,
            graphs: Default::default(),
            launches: None,
            count,
            current_ordinal: ordinal,
            contexts: Arc::new(std::sync::Mutex::new(HashMap::from([(
                ordinal,
                (dev, ctx as usize),
            )]))),
        };
        d.bind()?; // from here on Drop releases the context
        Ok(d)
    }

    /// The primary context of ordinal 0, the launch thread's device 0.
    fn contexts_home(&self) -> Option<CUcontext> {
        self.contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&0)
            .map(|&(_, c)| c as CUcontext)
    }

    /// The current device's primary context.
    pub(crate) fn context(&self) -> CUcontext {
        self.ctx
    }

    /// Makes the primary context current on the calling thread (once per thread).
    fn bind(&self) -> Result<(), CudaError> {
        if BOUND.with(Cell::get) == self.ctx as usize {
            return Ok(());
        }
        // SAFETY: `ctx` is the retained primary context of `dev`.
        self.drv.check("cuCtxSetCurrent", unsafe {
            (self.drv.api().cuCtxSetCurrent)(self.ctx)
        })?;
        BOUND.with(|b| b.set(self.ctx as usize));
        Ok(())
    }

    /// Every driver call of the device passes here first. Launches queued on
    /// the launch thread are made (and a failure among them reported)
    /// before any other call, so the driver sees the calls in the recorded
    /// order; then the context is made current on this thread.
    pub(crate) fn ready(&self) -> Result<(), DeviceError> {
        if let Some(q) = &self.launches {
            q.wait()?;
        }
        Ok(self.bind()?)
    }

    /// [`CudaDevice::ready`], then runs one driver call and maps its result.
    pub(crate) fn call(
        &self,
        name: &'static str,
        f: impl FnOnce(&ffi::CudaApi) -> ffi::CUresult,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        let code = f(self.drv.api());
        Ok(self.drv.check(name, code)?)
    }

    /// The loaded driver.
    pub fn driver(&self) -> &'static CudaDriver {
        self.drv
    }

    /// The compute capability, `(major, minor)`.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.cc
    }

    /// `cuDriverGetVersion`, e.g. 13000.
    pub fn driver_version(&self) -> i32 {
        self.version
    }

    /// The device's name, as the driver gives it.
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// How large pageable copies are staged (see [`crate::staging`]).
    pub fn staging(&self) -> StagingConfig {
        self.staging.config()
    }

    /// Whether a copy from or into `host` goes through [`crate::staging`]:
    /// large, and not inside one of this device's [`Device::host_buffer`]s.
    pub fn stages(&self, host: &[u8]) -> bool {
        self.staging.config().stages(host.len()) && !self.pinned.contains(host.as_ptr(), host.len())
    }

    /// Replaces the staging set-up (frees the old buffers).
    pub fn set_staging(&mut self, cfg: StagingConfig) -> Result<(), CudaError> {
        self.bind()?;
        self.staging.release(self.drv);
        self.staging = Staging::new(cfg);
        Ok(())
    }

    /// This device's ordinal.
    pub(crate) fn ordinal(&self) -> CUdevice {
        self.dev
    }

    /// An optional entry point, or the error naming it.
    pub(crate) fn optional<F>(&self, f: Option<F>, symbol: &'static str) -> Result<F, DeviceError> {
        f.ok_or_else(|| {
            DeviceError::from(CudaError::Unsupported {
                symbol,
                needs: "12.0",
            })
        })
    }

    /// Lets `func` use `shmem` bytes of dynamic shared memory. Past 48 KiB
    /// a kernel must be opted in (`cuFuncSetAttribute`), which the
    /// application did and the archive does not record: the launch's own
    /// size is what it asked for.
    pub(crate) fn opt_in_shared(&mut self, func: Handle, shmem: u32) -> Result<(), DeviceError> {
        if shmem <= DEFAULT_MAX_DYNAMIC_SHARED
            || self.shmem_opt_in.get(&func).is_some_and(|&s| s >= shmem)
        {
            return Ok(());
        }
        let f = self.optional(self.drv.api().cuFuncSetAttribute, "cuFuncSetAttribute")?;
        // SAFETY: a live function of this context; a documented attribute.
        self.call("cuFuncSetAttribute", |_| unsafe {
            f(
                ptr(func),
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shmem as c_int,
            )
        })?;
        self.shmem_opt_in.insert(func, shmem);
        Ok(())
    }

    /// `(offset, size)` of each parameter of a function this device returned.
    pub fn param_layout(&mut self, func: Handle) -> Result<Vec<(usize, usize)>, CudaError> {
        self.bind()?;
        // SAFETY: functions handed out by `Device::function` stay live until
        // their module is unloaded; the engine passes back only those.
        unsafe { self.drv.param_layout(ptr(func) as CUfunction) }
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        // The launch thread ends before the context it uses is released.
        if let Some(q) = self.launches.take() {
            let _ = q.stop();
        }
        let _ = self.bind();
        self.release_graphs();
        self.staging.release(self.drv);
        if let Some(Some(p)) = self.placer.as_mut() {
            p.release_all(self.drv);
        }
        // SAFETY: matched with the retain in `with_driver` (and in
        // `select_device`, one per device); queued work is drained first so
        // that release never races a running kernel.
        unsafe {
            (self.drv.api().cuCtxSynchronize)();
            let contexts =
                std::mem::take(&mut *self.contexts.lock().unwrap_or_else(|e| e.into_inner()));
            for (_, (dev, ctx)) in contexts {
                if (self.drv.api().cuCtxSetCurrent)(ctx as CUcontext) == cuda_api::CUDA_SUCCESS {
                    (self.drv.api().cuCtxSynchronize)();
                }
                (self.drv.api().cuDevicePrimaryCtxRelease)(dev);
            }
        }
        BOUND.with(|b| {
            if b.get() == self.ctx as usize {
                b.set(0);
            }
        });
    }
}

impl Device for CudaDevice {
    fn collectives_library(&mut self) -> Option<std::path::PathBuf> {
        // NCCL's soname; it loads the same libcuda.so.1 this backend did.
        Some("libnccl.so.2".into())
    }

    fn quiesce(&mut self) -> Result<(), DeviceError> {
        self.ready()
    }

    fn name(&self) -> String {
        format!(
            "{} ({}, CUDA driver {})",
            self.name,
            self.target(),
            version_string(self.version)
        )
    }

    fn target(&self) -> String {
        sm_target(self.cc.0, self.cc.1)
    }

    fn alloc(&mut self, size: u64, mem: MemKind) -> Result<u64, DeviceError> {
        // Zero bytes is CUDA_ERROR_INVALID_VALUE; the capture saw a pointer.
        let n = size.max(1) as usize;
        match mem {
            MemKind::Device | MemKind::Managed => {
                let mut d: CUdeviceptr = 0;
                if mem == MemKind::Device {
                    // SAFETY: valid out-pointer.
                    self.call("cuMemAlloc_v2", |a| unsafe { (a.cuMemAlloc)(&mut d, n) })?;
                } else {
                    // SAFETY: valid out-pointer; documented flag.
                    self.call("cuMemAllocManaged", |a| unsafe {
                        (a.cuMemAllocManaged)(&mut d, n, ffi::CU_MEM_ATTACH_GLOBAL)
                    })?;
                }
                // Replay promises zero-filled memory; the driver does not.
                // SAFETY: `d` is a fresh allocation of `n` bytes.
                if let Err(e) = self.call("cuMemsetD8_v2", |a| unsafe { (a.cuMemsetD8)(d, 0, n) }) {
                    // SAFETY: `d` was allocated just above and is not handed out.
                    let _ = self.call("cuMemFree_v2", |a| unsafe { (a.cuMemFree)(d) });
                    return Err(e);
                }
                Ok(d)
            }
            MemKind::Host | MemKind::Pinned => {
                let mut p: *mut c_void = std::ptr::null_mut();
                // SAFETY: valid out-pointer.
                self.call("cuMemAllocHost_v2", |a| unsafe {
                    (a.cuMemAllocHost)(&mut p, n)
                })?;
                // SAFETY: page-locked host memory of `n` bytes, CPU-addressable.
                unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, n) };
                Ok(p as u64)
            }
        }
    }

    fn placement_granularity(&mut self) -> Option<u64> {
        if self.placer.is_none() {
            let placer = self
                .ready()
                .ok()
                .and_then(|()| Placer::new(self.drv, self.dev));
            self.placer = Some(placer);
        }
        self.placer
            .as_ref()
            .and_then(|p| p.as_ref())
            .map(Placer::granularity)
    }

    fn reservation_alignment(&mut self) -> u64 {
        crate::placement::RESERVATION_ALIGNMENT
    }

    fn reserve_at(&mut self, base: u64, size: u64) -> Result<bool, DeviceError> {
        self.ready()?;
        let drv = self.drv;
        Ok(match self.placer.as_mut() {
            Some(Some(p)) => p.reserve_at(drv, base, size)?,
            _ => false,
        })
    }

    fn alloc_at(&mut self, addr: u64, size: u64, mem: MemKind) -> Result<Option<u64>, DeviceError> {
        if mem != MemKind::Device {
            return Ok(None);
        }
        self.ready()?;
        let (drv, dev) = (self.drv, self.dev);
        let Some(Some(placer)) = self.placer.as_mut() else {
            return Ok(None);
        };
        let Some(plan) = placer.alloc_at(drv, dev, addr, size)? else {
            return Ok(None);
        };
        // Replay promises zero-filled memory: fresh granules and the bytes
        // a freed neighbour left in shared ones.
        let mut zeroed = Ok(());
        for (b, e) in plan.reused.iter().chain(&plan.fresh) {
            // SAFETY: `[b, e)` lies in read-write mappings of this context.
            let code = unsafe { (drv.api().cuMemsetD8)(*b, 0, (e - b) as usize) };
            zeroed = drv.check("cuMemsetD8_v2", code).map_err(DeviceError::from);
            if zeroed.is_err() {
                let _ = placer.free(drv, addr);
                break;
            }
        }
        zeroed.map(|()| Some(addr))
    }

    fn free(&mut self, p: u64, mem: MemKind) -> Result<(), DeviceError> {
        if let Some(Some(placer)) = self.placer.as_ref()
            && placer.is_placed(p)
        {
            // As cuMemFree does: work still using the memory finishes first.
            self.ready()?;
            // SAFETY: the context is current.
            let code = unsafe { (self.drv.api().cuCtxSynchronize)() };
            self.drv.check("cuCtxSynchronize", code)?;
            let drv = self.drv;
            if let Some(Some(placer)) = self.placer.as_mut() {
                return placer.free(drv, p).unwrap_or(Ok(()));
            }
        }
        match mem {
            MemKind::Device | MemKind::Managed => {
                // SAFETY: `p` came from cuMemAlloc/cuMemAllocManaged in `alloc`.
                self.call("cuMemFree_v2", |a| unsafe { (a.cuMemFree)(p) })
            }
            MemKind::Host | MemKind::Pinned => {
                // SAFETY: `p` came from cuMemAllocHost in `alloc`.
                self.call("cuMemFreeHost", |a| unsafe { (a.cuMemFreeHost)(ptr(p)) })
            }
        }
    }

    fn copy_h2d(&mut self, dst: u64, src: &[u8], s: Option<Handle>) -> Result<(), DeviceError> {
        if src.is_empty() {
            return Ok(());
        }
        if self.stages(src) {
            self.ready()?;
            return Ok(self.staging.h2d(self.drv, self.ctx, dst, src, stream(s))?);
        }
        match s {
            // SAFETY: `src` is live for its length; the driver validates `dst`.
            None => self.call("cuMemcpyHtoD_v2", |a| unsafe {
                (a.cuMemcpyHtoD)(dst, src.as_ptr().cast(), src.len())
            }),
            Some(h) => {
                // SAFETY: as above; the stream is synchronised before `src`'s
                // borrow ends, so the driver never reads it afterwards.
                self.call("cuMemcpyHtoDAsync_v2", |a| unsafe {
                    (a.cuMemcpyHtoDAsync)(dst, src.as_ptr().cast(), src.len(), stream(Some(h)))
                })?;
                // SAFETY: a live stream handle (or the default stream).
                self.call("cuStreamSynchronize", |a| unsafe {
                    (a.cuStreamSynchronize)(stream(Some(h)))
                })
            }
        }
    }

    fn copy_d2h(&mut self, dst: &mut [u8], src: u64, s: Option<Handle>) -> Result<(), DeviceError> {
        if dst.is_empty() {
            return Ok(());
        }
        if self.stages(dst) {
            self.ready()?;
            return Ok(self.staging.d2h(self.drv, self.ctx, dst, src, stream(s))?);
        }
        match s {
            // SAFETY: `dst` is live and writable for its length.
            None => self.call("cuMemcpyDtoH_v2", |a| unsafe {
                (a.cuMemcpyDtoH)(dst.as_mut_ptr().cast(), src, dst.len())
            }),
            Some(h) => {
                // SAFETY: as above; completed by the synchronisation below
                // before `dst`'s borrow ends (the trait's contract).
                self.call("cuMemcpyDtoHAsync_v2", |a| unsafe {
                    (a.cuMemcpyDtoHAsync)(dst.as_mut_ptr().cast(), src, dst.len(), stream(Some(h)))
                })?;
                // SAFETY: a live stream handle (or the default stream).
                self.call("cuStreamSynchronize", |a| unsafe {
                    (a.cuStreamSynchronize)(stream(Some(h)))
                })
            }
        }
    }

    fn host_buffer(&mut self, len: usize) -> Result<Option<HostBuffer>, DeviceError> {
        self.ready()?;
        let b = PinnedBuffer::new(self.drv, self.pinned.clone(), len)?;
        Ok(Some(Box::new(b)))
    }

    fn copy_d2d(
        &mut self,
        dst: u64,
        src: u64,
        size: u64,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        if size == 0 {
            return Ok(());
        }
        let n = size as usize;
        match s {
            // SAFETY: device addresses the driver validates.
            None => self.call("cuMemcpyDtoD_v2", |a| unsafe {
                (a.cuMemcpyDtoD)(dst, src, n)
            }),
            // SAFETY: as above; no host memory involved, so no wait is needed.
            Some(h) => self.call("cuMemcpyDtoDAsync_v2", |a| unsafe {
                (a.cuMemcpyDtoDAsync)(dst, src, n, stream(Some(h)))
            }),
        }
    }

    fn memset(
        &mut self,
        dst: u64,
        value: u8,
        size: u64,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        if size == 0 {
            return Ok(());
        }
        let n = size as usize;
        match s {
            // SAFETY: a device address the driver validates.
            None => self.call("cuMemsetD8_v2", |a| unsafe {
                (a.cuMemsetD8)(dst, value, n)
            }),
            // SAFETY: as above.
            Some(h) => self.call("cuMemsetD8Async", |a| unsafe {
                (a.cuMemsetD8Async)(dst, value, n, stream(Some(h)))
            }),
        }
    }

    fn stream_create(&mut self) -> Result<Handle, DeviceError> {
        let mut s: CUstream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; CU_STREAM_DEFAULT is what cudaStreamCreate uses.
        self.call("cuStreamCreate", |a| unsafe {
            (a.cuStreamCreate)(&mut s, ffi::CU_STREAM_DEFAULT)
        })?;
        Ok(s as u64)
    }

    fn stream_destroy(&mut self, s: Handle) -> Result<(), DeviceError> {
        // SAFETY: `s` came from cuStreamCreate.
        self.call("cuStreamDestroy_v2", |a| unsafe {
            (a.cuStreamDestroy)(ptr(s))
        })
    }

    fn stream_sync(&mut self, s: Handle) -> Result<(), DeviceError> {
        // SAFETY: a live stream or 0 (the default stream).
        self.call("cuStreamSynchronize", |a| unsafe {
            (a.cuStreamSynchronize)(ptr(s))
        })
    }

    fn stream_wait_event(&mut self, s: Handle, e: Handle) -> Result<(), DeviceError> {
        // SAFETY: live handles; flags must be 0 (CU_EVENT_WAIT_DEFAULT).
        self.call("cuStreamWaitEvent", |a| unsafe {
            (a.cuStreamWaitEvent)(ptr(s), ptr(e) as CUevent, 0)
        })
    }

    fn device_sync(&mut self) -> Result<(), DeviceError> {
        // SAFETY: no arguments; the bound context is synchronised.
        self.call("cuCtxSynchronize", |a| unsafe { (a.cuCtxSynchronize)() })
    }

    fn event_create(&mut self) -> Result<Handle, DeviceError> {
        let mut e: CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; default flags keep timing enabled.
        self.call("cuEventCreate", |a| unsafe {
            (a.cuEventCreate)(&mut e, ffi::CU_EVENT_DEFAULT)
        })?;
        Ok(e as u64)
    }

    fn event_destroy(&mut self, e: Handle) -> Result<(), DeviceError> {
        // SAFETY: `e` came from cuEventCreate.
        self.call("cuEventDestroy_v2", |a| unsafe {
            (a.cuEventDestroy)(ptr(e))
        })
    }

    fn event_record(&mut self, e: Handle, s: Handle) -> Result<(), DeviceError> {
        // SAFETY: live event; live stream or 0.
        self.call("cuEventRecord", |a| unsafe {
            (a.cuEventRecord)(ptr(e), ptr(s))
        })
    }

    fn event_sync(&mut self, e: Handle) -> Result<(), DeviceError> {
        // SAFETY: a live event.
        self.call("cuEventSynchronize", |a| unsafe {
            (a.cuEventSynchronize)(ptr(e))
        })
    }

    fn event_elapsed_ms(&mut self, start: Handle, end: Handle) -> Result<f32, DeviceError> {
        let mut ms = 0f32;
        let api = *self.drv.api();
        match api.cuEventElapsedTime_v2 {
            // SAFETY: valid out-pointer; live events.
            Some(f) => self.call("cuEventElapsedTime_v2", |_| unsafe {
                f(&mut ms, ptr(start), ptr(end))
            })?,
            // SAFETY: as above.
            None => self.call("cuEventElapsedTime", |a| unsafe {
                (a.cuEventElapsedTime)(&mut ms, ptr(start), ptr(end))
            })?,
        }
        Ok(ms)
    }

    fn module_load(&mut self, image: &[u8]) -> Result<Handle, DeviceError> {
        if image.is_empty() {
            return Err(DeviceError::Call {
                call: "cuModuleLoadData",
                code: -1,
                message: "empty code object".into(),
            });
        }
        // PTX is text the driver reads up to its NUL; make sure there is one.
        let owned;
        let img: &[u8] = if looks_like_text(image) && image.last() != Some(&0) {
            owned = [image, &[0]].concat();
            &owned
        } else {
            image
        };
        let mut m: CUmodule = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `img` stays alive for the call, and the
        // driver copies what it keeps (fatbin, cubin or NUL-terminated PTX).
        self.call("cuModuleLoadData", |a| unsafe {
            (a.cuModuleLoadData)(&mut m, img.as_ptr().cast())
        })?;
        Ok(m as u64)
    }

    fn module_unload(&mut self, m: Handle) -> Result<(), DeviceError> {
        // SAFETY: `m` came from cuModuleLoadData.
        self.call("cuModuleUnload", |a| unsafe { (a.cuModuleUnload)(ptr(m)) })
    }

    fn function(&mut self, m: Handle, name: &str) -> Result<Handle, DeviceError> {
        let cname = c_name("cuModuleGetFunction", name)?;
        let mut f: CUfunction = std::ptr::null_mut();
        // SAFETY: valid out-pointer, live module, NUL-terminated name.
        self.call("cuModuleGetFunction", |a| unsafe {
            (a.cuModuleGetFunction)(&mut f, ptr(m), cname.as_ptr())
        })?;
        Ok(f as u64)
    }

    fn launch_attr_supported(&self, id: u32) -> bool {
        launch_attr::is_plain_value(id) && self.drv.api().cuLaunchKernelEx.is_some()
    }

    fn va_reserve(&mut self, size: u64) -> Result<u64, DeviceError> {
        let f = self.optional(self.drv.api().cuMemAddressReserve, "cuMemAddressReserve")?;
        let mut p: CUdeviceptr = 0;
        // SAFETY: valid out-pointer; alignment 0 and no fixed address
        // (the driver picks); the size is the capture's, accepted there.
        self.call("cuMemAddressReserve", |_| unsafe {
            f(&mut p, size as usize, 0, 0, 0)
        })?;
        Ok(p)
    }

    fn va_free(&mut self, p: u64, size: u64) -> Result<(), DeviceError> {
        let f = self.optional(self.drv.api().cuMemAddressFree, "cuMemAddressFree")?;
        // SAFETY: a reservation `va_reserve` made, with its size.
        self.call("cuMemAddressFree", |_| unsafe { f(p, size as usize) })
    }

    fn mem_create(&mut self, size: u64, mem: MemKind) -> Result<Handle, DeviceError> {
        let f = self.optional(self.drv.api().cuMemCreate, "cuMemCreate")?;
        let mut prop = CUmemAllocationProp::device(self.dev);
        if !mem.is_device() {
            prop.location = CUmemLocation {
                kind: CU_MEM_LOCATION_TYPE_HOST,
                id: 0,
            };
        }
        let mut h = 0;
        // SAFETY: valid out-pointer; `prop` is a complete CUmemAllocationProp.
        self.call("cuMemCreate", |_| unsafe {
            f(&mut h, size as usize, &prop, 0)
        })?;
        Ok(h)
    }

    fn mem_release(&mut self, h: Handle) -> Result<(), DeviceError> {
        let f = self.optional(self.drv.api().cuMemRelease, "cuMemRelease")?;
        self.zeroed.remove(&h);
        // SAFETY: a handle `mem_create` returned.
        self.call("cuMemRelease", |_| unsafe { f(h) })
    }

    fn mem_map(&mut self, p: u64, size: u64, offset: u64, h: Handle) -> Result<(), DeviceError> {
        let api = *self.drv.api();
        let map = self.optional(api.cuMemMap, "cuMemMap")?;
        let access = self.optional(api.cuMemSetAccess, "cuMemSetAccess")?;
        // SAFETY: `p` lies in a reservation of ours, `h` is a live handle;
        // flags must be 0.
        self.call("cuMemMap", |_| unsafe {
            map(p, size as usize, offset as usize, h, 0)
        })?;
        let desc = CUmemAccessDesc {
            location: CUmemLocation {
                kind: CU_MEM_LOCATION_TYPE_DEVICE,
                id: self.dev,
            },
            flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: the range was just mapped; one descriptor.
        self.call("cuMemSetAccess", |_| unsafe {
            access(p, size as usize, &desc, 1)
        })?;
        // Replay promises zero-filled memory, as `alloc` gives.
        if self.zeroed.insert(h) {
            // SAFETY: the mapped, accessible range.
            self.call("cuMemsetD8_v2", |a| unsafe {
                (a.cuMemsetD8)(p, 0, size as usize)
            })?;
        }
        Ok(())
    }

    fn mem_unmap(&mut self, p: u64, size: u64) -> Result<(), DeviceError> {
        let f = self.optional(self.drv.api().cuMemUnmap, "cuMemUnmap")?;
        // SAFETY: a range `mem_map` mapped.
        self.call("cuMemUnmap", |_| unsafe { f(p, size as usize) })
    }

    fn copy_h2d_rect(
        &mut self,
        dst: u64,
        dpitch: [u64; 2],
        src: &[u8],
        extent: [u64; 3],
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let host = (
            src.as_ptr() as u64,
            [extent[0], extent[0] * extent[1]],
            true,
        );
        self.rect_copy(((dst, dpitch, false), host), extent, s)
    }

    fn copy_d2h_rect(
        &mut self,
        dst: &mut [u8],
        src: u64,
        spitch: [u64; 2],
        extent: [u64; 3],
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let host = (
            dst.as_mut_ptr() as u64,
            [extent[0], extent[0] * extent[1]],
            true,
        );
        self.rect_copy((host, (src, spitch, false)), extent, s)
    }

    fn copy_d2d_rect(
        &mut self,
        dst: (u64, [u64; 2]),
        src: (u64, [u64; 2]),
        extent: [u64; 3],
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.rect_copy(((dst.0, dst.1, false), (src.0, src.1, false)), extent, s)
    }

    fn memset_rect(
        &mut self,
        dst: u64,
        pitch: [u64; 2],
        extent: [u64; 3],
        value: u8,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.rect_memset((dst, pitch), extent, value, s)
    }

    fn pool_create(&mut self) -> Result<Option<Handle>, DeviceError> {
        self.cu_pool_create()
    }

    fn pool_call(&mut self, call: PoolCall) -> Result<(), DeviceError> {
        self.cu_pool_call(call)
    }

    fn pool_alloc(&mut self, pool: Handle, size: u64, s: Handle) -> Result<u64, DeviceError> {
        self.cu_pool_alloc(pool, size, s)
    }

    fn array_create(&mut self, desc: &ArrayDesc) -> Result<Handle, DeviceError> {
        self.cu_array_create(desc)
    }

    fn array_destroy(&mut self, array: Handle) -> Result<(), DeviceError> {
        self.cu_array_destroy(array)
    }

    fn array_plane(&mut self, array: Handle, plane: u32) -> Result<Handle, DeviceError> {
        self.cu_array_plane(array, plane)
    }

    fn mipmap_create(&mut self, desc: &ArrayDesc, levels: u32) -> Result<Handle, DeviceError> {
        self.cu_mipmap_create(desc, levels)
    }

    fn mipmap_level(&mut self, mipmap: Handle, level: u32) -> Result<Handle, DeviceError> {
        self.cu_mipmap_level(mipmap, level)
    }

    fn mipmap_destroy(&mut self, mipmap: Handle) -> Result<(), DeviceError> {
        self.cu_mipmap_destroy(mipmap)
    }

    fn copy_array(&mut self, copy: ArrayCopy<'_>) -> Result<(), DeviceError> {
        self.cu_copy_array(copy)
    }

    fn tex_create(
        &mut self,
        res: &[u8],
        tex: &[u8],
        view: Option<&[u8]>,
    ) -> Result<Handle, DeviceError> {
        self.cu_tex_create(res, tex, view)
    }

    fn surf_create(&mut self, res: &[u8]) -> Result<Handle, DeviceError> {
        self.cu_surf_create(res)
    }

    fn object_destroy(&mut self, obj: Handle, surface: bool) -> Result<(), DeviceError> {
        self.cu_object_destroy(obj, surface)
    }

    fn global(&mut self, m: Handle, name: &str) -> Result<(u64, u64), DeviceError> {
        let f = self.optional(self.drv.api().cuModuleGetGlobal, "cuModuleGetGlobal_v2")?;
        let cname = c_name("cuModuleGetGlobal_v2", name)?;
        let (mut p, mut size): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: valid out-pointers, a live module, a NUL-terminated name.
        self.call("cuModuleGetGlobal_v2", |_| unsafe {
            f(&mut p, &mut size, ptr(m), cname.as_ptr())
        })?;
        Ok((p, size as u64))
    }

    fn graph_launch(
        &mut self,
        g: &hrr_replay::graph::GraphSpec<'_>,
        stream: Handle,
    ) -> Result<(), DeviceError> {
        self.launch_graph(g, stream)
    }

    fn graph_release(&mut self, id: u64) -> Result<(), DeviceError> {
        self.release_graph(id)
    }

    fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
        self.opt_in_shared(l.func, l.shmem)?;
        match &mut self.launches {
            Some(q) => q.push(l),
            None => {
                self.ready()?;
                launcher::launch(self.drv, l)
            }
        }
    }

    fn launch_thread(
        &mut self,
        on: bool,
        progress: Option<&Arc<Progress>>,
    ) -> Result<bool, DeviceError> {
        let (drv, ctx, contexts) = (self.drv, self.ctx, self.contexts.clone());
        // The launcher starts in the opened device's context, where the
        // launch thread's device 0 is.
        let home = self.contexts_home();
        let launcher = || CudaLauncher::new(drv, home.unwrap_or(ctx), contexts);
        let on =
            LaunchThread::switch(&mut self.launches, on, "cuLaunchKernel", launcher, progress)?;
        if let Some(q) = &mut self.launches {
            q.select(self.current_ordinal as u32);
        }
        Ok(on)
    }

    fn device_count(&mut self) -> u32 {
        self.count.max(1) as u32
    }

    fn can_access_peer(&mut self, peer: u32) -> Result<Option<bool>, DeviceError> {
        self.ready()?;
        let Some(f) = self.drv.api().cuDeviceCanAccessPeer else {
            return Ok(None);
        };
        let (peer_dev, _) = self.context_of(self.ordinal_of(peer)?)?;
        let mut can: c_int = 0;
        // SAFETY: our own out-parameter and two devices of this machine.
        let code = unsafe { f(&mut can, self.dev, peer_dev) };
        self.drv.check("cuDeviceCanAccessPeer", code)?;
        Ok(Some(can != 0))
    }

    fn peer_access(&mut self, peer: u32) -> Result<(), DeviceError> {
        self.ready()?;
        let Some(f) = self.drv.api().cuCtxEnablePeerAccess else {
            return Err(CudaError::Unsupported {
                symbol: "cuCtxEnablePeerAccess",
                needs: "4.0",
            }
            .into());
        };
        let (_, peer_ctx) = self.context_of(self.ordinal_of(peer)?)?;
        // From the current device's context, bound on this thread.
        self.bind()?;
        // SAFETY: the peer device's retained primary context.
        let code = unsafe { f(peer_ctx as CUcontext, 0) };
        // Enabled already (an earlier `peer_access` event, or `--loop`) is
        // what was wanted.
        if code == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            return Ok(());
        }
        Ok(self.drv.check("cuCtxEnablePeerAccess", code)?)
    }

    fn select_device(&mut self, device: u32) -> Result<(), DeviceError> {
        self.ready()?;
        let ordinal = c_int::try_from(device).unwrap_or(c_int::MAX);
        if ordinal >= self.count {
            return Err(CudaError::NoDevice {
                ordinal,
                count: self.count,
            }
            .into());
        }
        let (dev, ctx) = self.context_of(ordinal)?;
        self.dev = dev;
        self.ctx = ctx as CUcontext;
        self.current_ordinal = ordinal;
        self.bind()?;
        if let Some(q) = &mut self.launches {
            q.select(device);
        }
        Ok(())
    }
}

/// `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`.
const CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: i32 = 704;

impl CudaDevice {
    /// Local device `device` as a driver ordinal of this machine.
    fn ordinal_of(&self, device: u32) -> Result<c_int, DeviceError> {
        let ordinal = c_int::try_from(device).unwrap_or(c_int::MAX);
        if ordinal >= self.count {
            return Err(CudaError::NoDevice {
                ordinal,
                count: self.count,
            }
            .into());
        }
        Ok(ordinal)
    }

    /// Device `ordinal` and its primary context, retained once (released
    /// in `Drop`).
    fn context_of(&self, ordinal: c_int) -> Result<(CUdevice, usize), DeviceError> {
        let known = self
            .contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&ordinal)
            .copied();
        if let Some(c) = known {
            return Ok(c);
        }
        let api = self.drv.api();
        let mut dev: CUdevice = 0;
        // SAFETY: valid out-pointer; ordinal < count.
        let code = unsafe { (api.cuDeviceGet)(&mut dev, ordinal) };
        self.drv.check("cuDeviceGet", code)?;
        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer and device; released in Drop.
        self.drv.check("cuDevicePrimaryCtxRetain", unsafe {
            (api.cuDevicePrimaryCtxRetain)(&mut ctx, dev)
        })?;
        self.contexts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(ordinal, (dev, ctx as usize));
        Ok((dev, ctx as usize))
    }
}

/// PTX images are ASCII text (`//` comments or `.version` first); fat
/// binaries and cubins start with binary magics.
pub fn looks_like_text(image: &[u8]) -> bool {
    let head = &image[..image.len().min(256)];
    !head.is_empty()
        && head
            .iter()
            .all(|&b| b == b'\n' || b == b'\r' || b == b'\t' || (0x20..0x7f).contains(&b) || b == 0)
        && head[0] != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_from_compute_capability() {
        assert_eq!(sm_target(9, 0), "sm_90");
        assert_eq!(sm_target(8, 6), "sm_86");
        assert_eq!(sm_target(10, 0), "sm_100");
        assert_eq!(sm_target(12, 0), "sm_120");
    }

    #[test]
    fn driver_versions() {
        assert_eq!(version_string(13000), "13.0");
        assert_eq!(version_string(12040), "12.4");
        assert_eq!(version_string(12080), "12.8");
    }

    #[test]
    fn text_and_binary_images() {
        assert!(looks_like_text(
            b"//\n// Generated by NVIDIA NVVM Compiler\n.version 8.0\n"
        ));
        assert!(looks_like_text(b".version 7.0\n.target sm_75\n\0"));
        assert!(
            !looks_like_text(&[0x50, 0xED, 0x55, 0xBA, 1, 0, 0x10, 0]),
            "fatbin magic"
        );
        assert!(!looks_like_text(b"\x7fELF\x02\x01\x01"), "cubin");
        assert!(!looks_like_text(b""));
        assert!(!looks_like_text(b"\0\0\0"));
    }

    #[test]
    fn open_without_a_driver_fails_cleanly() {
        // Only meaningful where libcuda is absent (CI); on a GPU machine it opens.
        if CudaDriver::open(crate::LIBCUDA).is_ok() {
            return;
        }
        let e = CudaDevice::open(0).err().expect("no driver here");
        assert!(
            e.to_string().starts_with("cannot load libcuda.so.1: "),
            "{e}"
        );
        let d: DeviceError = e.into();
        let source = std::error::Error::source(&d).expect("the CUDA error");
        assert!(source.to_string().contains("cannot load libcuda.so.1"));
    }
}
