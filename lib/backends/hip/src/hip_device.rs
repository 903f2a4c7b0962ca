//! `HipDevice`: the replay engine's [`Device`] over a loaded HIP runtime.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::Arc;

use hrr_core::MemKind;
use hrr_replay::device::{
    ArrayCopy, ArrayDesc, Device, DeviceError, Handle, HostBuffer, Launch, PoolCall, unsupported,
};
use hrr_replay::engine::watchdog::Progress;
use hrr_replay::launch_thread::LaunchThread;

use crate::ffi::{self, HipError};
use crate::host_buffer::HipHostBuffer;
use crate::launcher::{self, HipLauncher};
use crate::placement::{Placer, access_desc};
use crate::runtime::HipRuntime;

/// `hipErrorPeerAccessAlreadyEnabled`.
const PEER_ACCESS_ALREADY_ENABLED: HipError = 704;

/// The replay engine's [`Device`] over a loaded HIP runtime.
pub struct HipDevice {
    pub(crate) rt: HipRuntime,
    target: String,
    /// Placement state, made on first use; `None` inside: cannot place.
    placer: Option<Option<Placer>>,
    /// Graphs built from the engine's specs.
    pub(crate) graphs: crate::graphs::Built,
    /// Launches made on a thread of their own (`Device::launch_thread`).
    launches: Option<LaunchThread>,
    /// The current device (`Device::select_device`).
    current: u32,
}

impl HipDevice {
    /// `target` picks code objects out of bundles (`cpu`, `gfx90a`); when
    /// empty, every entry is tried until the runtime accepts one.
    pub fn new(rt: HipRuntime, target: Option<String>) -> HipDevice {
        let target = target.unwrap_or_else(|| {
            if rt.is_cpu() {
                "cpu".into()
            } else {
                String::new()
            }
        });
        HipDevice {
            rt,
            target,
            placer: None,
            graphs: Default::default(),
            launches: None,
            current: 0,
        }
    }

    /// The placement state, made on first use (`None`: the runtime lacks
    /// virtual memory management, or it does not work).
    fn placer(&mut self) -> Option<&mut Placer> {
        let rt = &self.rt;
        self.placer
            .get_or_insert_with(|| rt.vmm.as_ref().and_then(Placer::new))
            .as_mut()
    }

    /// The loaded runtime.
    pub(crate) fn runtime(&self) -> &HipRuntime {
        &self.rt
    }

    pub(crate) fn check(&self, call: &'static str, code: HipError) -> Result<(), DeviceError> {
        launcher::check(self.rt.api.hipGetErrorString, call, code)
    }

    /// Every Device call but a launch starts here: launches queued on the
    /// launch thread are made (and a failure among them reported) first, so
    /// the runtime sees the calls in the recorded order.
    fn ready(&self) -> Result<(), DeviceError> {
        match &self.launches {
            Some(q) => q.wait(),
            None => Ok(()),
        }
    }
}

impl HipDevice {
    /// `hipMemcpy`, or `hipMemcpyAsync` on stream `s`, answering the call's
    /// code. An asynchronous copy from or to the host is waited for: the
    /// host side is borrowed only for the call.
    ///
    /// # Safety
    /// `dst` and `src` valid for `len` bytes, as `kind` says they are.
    unsafe fn memcpy(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        len: usize,
        kind: ffi::HipMemcpyKind,
        s: Option<Handle>,
    ) -> HipError {
        let api = &self.rt.api;
        // SAFETY: per this function's contract.
        unsafe {
            if s.is_none() {
                return (api.hipMemcpy)(dst, src, len, kind);
            }
            let c = (api.hipMemcpyAsync)(dst, src, len, kind, stream(s));
            if c == ffi::err::SUCCESS && kind != ffi::MEMCPY_DEVICE_TO_DEVICE {
                (api.hipStreamSynchronize)(stream(s))
            } else {
                c
            }
        }
    }

    /// The virtual memory entry points, or why replay cannot use them.
    fn vmm(&self, call: &'static str) -> Result<&ffi::VmmApi, DeviceError> {
        self.rt.vmm.as_ref().ok_or_else(|| unsupported(call))
    }
}

impl HipDevice {
    /// `len` bytes from `hipHostMalloc`, zero-filled, freed on drop. What
    /// [`Device::host_buffer`] gives on a GPU runtime; public so that it is
    /// tested on the CPU runtime too, where the engine is given none.
    pub fn pinned_buffer(&mut self, len: usize) -> Result<HipHostBuffer, DeviceError> {
        let p = self.alloc(len as u64, MemKind::Pinned)?;
        // SAFETY: a fresh hipHostMalloc allocation of at least `len` bytes
        // (alloc asks for max(len, 1)), handed over whole.
        Ok(unsafe { HipHostBuffer::from_raw(p as *mut u8, len, self.rt.api.hipHostFree) })
    }
}

/// A runtime's "invalid argument" does not say which: name what was passed
/// (after the runtime's own message; an error that is not the runtime's is
/// left as it is).
fn with_operands(mut e: DeviceError, operands: String) -> DeviceError {
    if let DeviceError::Call { message, .. } = &mut e {
        *message = format!("{message}; called with {operands}");
    }
    e
}

/// A runtime handle or device address as the pointer the C API takes.
pub(crate) fn ptr(v: u64) -> *mut c_void {
    v as usize as *mut c_void
}

fn stream(s: Option<Handle>) -> ffi::HipStream {
    ptr(s.unwrap_or(0))
}

impl Device for HipDevice {
    fn collectives_library(&mut self) -> Option<std::path::PathBuf> {
        if !self.rt.is_cpu() {
            // RCCL's soname; it links the same libamdhip64 this backend loaded.
            return Some("librccl.so.1".into());
        }
        // The CPU runtime's stand-in finds the runtime in the global scope,
        // as in an application that links both.
        if let Err(e) = self.rt.make_global() {
            eprintln!("hrr-play: {e}");
        }
        Some(crate::runtime::cpu_collectives_path(self.rt.path()))
    }

    fn quiesce(&mut self) -> Result<(), DeviceError> {
        self.ready()
    }

    fn name(&self) -> String {
        let mut buf = [0 as c_char; 256];
        // SAFETY: `buf` holds 256 bytes, the length passed.
        let code = unsafe { (self.rt.api.hipDeviceGetName)(buf.as_mut_ptr(), 256, 0) };
        let name = if code == 0 {
            // SAFETY: the runtime NUL-terminated what it wrote; the last byte is still 0.
            unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        } else {
            "unknown device".into()
        };
        format!("{name} ({})", self.rt.path())
    }

    fn target(&self) -> String {
        self.target.clone()
    }

    fn alloc(&mut self, size: u64, mem: MemKind) -> Result<u64, DeviceError> {
        self.ready()?;
        let mut p: *mut c_void = std::ptr::null_mut();
        let n = size.max(1) as usize;
        let api = &self.rt.api;
        // SAFETY: `p` is a valid out-pointer for each allocator.
        let (call, code) = unsafe {
            match mem {
                MemKind::Device => ("hipMalloc", (api.hipMalloc)(&mut p, n)),
                MemKind::Managed => (
                    "hipMallocManaged",
                    (api.hipMallocManaged)(&mut p, n, ffi::MEM_ATTACH_GLOBAL),
                ),
                MemKind::Host | MemKind::Pinned => (
                    "hipHostMalloc",
                    (api.hipHostMalloc)(&mut p, n, ffi::HOST_MALLOC_DEFAULT),
                ),
            }
        };
        self.check(call, code)?;
        // Replay promises zero-filled memory; runtimes do not, except hrr's
        // CPU runtime, whose fresh allocations are untouched zero pages:
        // filling them would commit every page of a large allocation.
        if self.rt.is_cpu() {
            return Ok(p as u64);
        }
        match mem {
            MemKind::Device | MemKind::Managed => {
                // SAFETY: `p` is a fresh device allocation of `n` bytes.
                let code = unsafe { (api.hipMemset)(p, 0, n) };
                self.check("hipMemset", code)?;
            }
            // SAFETY: host allocations are CPU-addressable `n` bytes.
            MemKind::Host | MemKind::Pinned => unsafe {
                std::ptr::write_bytes(p.cast::<u8>(), 0, n)
            },
        }
        Ok(p as u64)
    }

    fn placement_granularity(&mut self) -> Option<u64> {
        self.placer().map(|p| p.granularity())
    }

    fn reserve_at(&mut self, base: u64, size: u64) -> Result<bool, DeviceError> {
        self.ready()?;
        let Some(api) = self.rt.vmm.as_ref() else {
            return Ok(false);
        };
        let Some(Some(placer)) = self.placer.as_mut() else {
            return Ok(false);
        };
        Ok(placer.reserve_at(api, base, size))
    }

    fn alloc_at(&mut self, addr: u64, size: u64, mem: MemKind) -> Result<Option<u64>, DeviceError> {
        self.ready()?;
        let (Some(api), Some(Some(placer))) = (self.rt.vmm.as_ref(), self.placer.as_mut()) else {
            return Ok(None);
        };
        if mem != MemKind::Device {
            return Ok(None);
        }
        let Some(plan) = placer.alloc_at(api, addr, size)? else {
            return Ok(None);
        };
        // Replay promises zero-filled memory. Memory mapped for it is zero on
        // the CPU runtime (a fresh memfd: filling it would commit every page);
        // a GPU's need not be, and a shared granule holds what a freed
        // neighbour left.
        let mut ranges = plan.reused;
        if !self.rt.is_cpu() {
            ranges.extend(plan.fresh);
        }
        let mut zeroed = Ok(());
        for (b, e) in ranges {
            // SAFETY: `[b, e)` lies in read-write mappings just made or shared.
            let code = unsafe { (self.rt.api.hipMemset)(ptr(b), 0, (e - b) as usize) };
            zeroed = self.check("hipMemset", code);
            if zeroed.is_err() {
                break;
            }
        }
        if zeroed.is_err()
            && let (Some(api), Some(Some(placer))) = (self.rt.vmm.as_ref(), self.placer.as_mut())
        {
            let _ = placer.free(api, addr);
        }
        zeroed.map(|()| Some(addr))
    }

    fn free(&mut self, p: u64, mem: MemKind) -> Result<(), DeviceError> {
        self.ready()?;
        if let (Some(api), Some(Some(placer))) = (self.rt.vmm.as_ref(), self.placer.as_mut())
            && placer.is_placed(p)
        {
            // As hipFree does: work still using the memory finishes first.
            // SAFETY: a plain HIP call.
            let code = unsafe { (self.rt.api.hipDeviceSynchronize)() };
            if code != ffi::err::SUCCESS {
                return self.check("hipDeviceSynchronize", code);
            }
            return placer.free(api, p).unwrap_or(Ok(()));
        }
        // SAFETY: `p` was returned by the matching allocator in `alloc`.
        let (call, code) = unsafe {
            match mem {
                MemKind::Device | MemKind::Managed => ("hipFree", (self.rt.api.hipFree)(ptr(p))),
                MemKind::Host | MemKind::Pinned => {
                    ("hipHostFree", (self.rt.api.hipHostFree)(ptr(p)))
                }
            }
        };
        self.check(call, code)
    }

    /// On the CPU runtime pinned memory is ordinary memory: none, so that
    /// replay's memory stays bounded as docs/PERFORMANCE.md says.
    fn host_buffer(&mut self, len: usize) -> Result<Option<HostBuffer>, DeviceError> {
        self.ready()?;
        if self.rt.is_cpu() {
            return Ok(None);
        }
        Ok(Some(Box::new(self.pinned_buffer(len)?)))
    }

    fn copy_h2d(&mut self, dst: u64, src: &[u8], s: Option<Handle>) -> Result<(), DeviceError> {
        self.ready()?;
        let kind = ffi::MEMCPY_HOST_TO_DEVICE;
        // SAFETY: `src` is a live slice of the length passed; `dst` is a
        // translated device address the runtime validates.
        let code = unsafe { self.memcpy(ptr(dst), src.as_ptr().cast(), src.len(), kind, s) };
        self.check("hipMemcpy(HtoD)", code)
            .map_err(|e| with_operands(e, format!("dst {dst:#x}, {} bytes", src.len())))
    }

    fn copy_d2h(&mut self, dst: &mut [u8], src: u64, s: Option<Handle>) -> Result<(), DeviceError> {
        self.ready()?;
        let kind = ffi::MEMCPY_DEVICE_TO_HOST;
        // SAFETY: `dst` is a live mutable slice of the length passed.
        let code = unsafe { self.memcpy(dst.as_mut_ptr().cast(), ptr(src), dst.len(), kind, s) };
        self.check("hipMemcpy(DtoH)", code)
            .map_err(|e| with_operands(e, format!("src {src:#x}, {} bytes", dst.len())))
    }

    fn copy_d2d(
        &mut self,
        dst: u64,
        src: u64,
        size: u64,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        let kind = ffi::MEMCPY_DEVICE_TO_DEVICE;
        // SAFETY: both are translated device addresses the runtime validates.
        let code = unsafe { self.memcpy(ptr(dst), ptr(src), size as usize, kind, s) };
        self.check("hipMemcpy(DtoD)", code)
            .map_err(|e| with_operands(e, format!("dst {dst:#x}, src {src:#x}, {size} bytes")))
    }

    fn memset(
        &mut self,
        dst: u64,
        value: u8,
        size: u64,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        let api = &self.rt.api;
        // SAFETY: a translated device address the runtime validates.
        let code = unsafe {
            match s {
                None => (api.hipMemset)(ptr(dst), i32::from(value), size as usize),
                Some(_) => {
                    (api.hipMemsetAsync)(ptr(dst), i32::from(value), size as usize, stream(s))
                }
            }
        };
        self.check("hipMemset", code)
            .map_err(|e| with_operands(e, format!("dst {dst:#x}, {size} bytes")))
    }

    fn copy_h2d_rect(
        &mut self,
        dst: u64,
        dpitch: [u64; 2],
        src: &[u8],
        extent: [u64; 3],
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        let host = (src.as_ptr() as u64, [extent[0], extent[0] * extent[1]]);
        self.rect_copy(
            "hipMemcpy2D(HtoD)",
            ffi::MEMCPY_HOST_TO_DEVICE,
            ((dst, dpitch), host),
            extent,
            (s, true),
        )
    }

    fn copy_d2h_rect(
        &mut self,
        dst: &mut [u8],
        src: u64,
        spitch: [u64; 2],
        extent: [u64; 3],
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        let host = (dst.as_mut_ptr() as u64, [extent[0], extent[0] * extent[1]]);
        self.rect_copy(
            "hipMemcpy2D(DtoH)",
            ffi::MEMCPY_DEVICE_TO_HOST,
            (host, (src, spitch)),
            extent,
            (s, true),
        )
    }

    fn copy_d2d_rect(
        &mut self,
        dst: (u64, [u64; 2]),
        src: (u64, [u64; 2]),
        extent: [u64; 3],
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        self.rect_copy(
            "hipMemcpy2D(DtoD)",
            ffi::MEMCPY_DEVICE_TO_DEVICE,
            (dst, src),
            extent,
            (s, false),
        )
    }

    fn memset_rect(
        &mut self,
        dst: u64,
        pitch: [u64; 2],
        extent: [u64; 3],
        value: u8,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        self.rect_memset((dst, pitch), extent, value, s)
    }

    fn pool_create(&mut self) -> Result<Option<Handle>, DeviceError> {
        self.ready()?;
        self.hip_pool_create()
    }

    fn pool_call(&mut self, call: PoolCall) -> Result<(), DeviceError> {
        self.ready()?;
        self.hip_pool_call(call)
    }

    fn pool_alloc(&mut self, pool: Handle, size: u64, s: Handle) -> Result<u64, DeviceError> {
        self.ready()?;
        self.hip_pool_alloc(pool, size, s)
    }

    fn stream_create(&mut self) -> Result<Handle, DeviceError> {
        self.ready()?;
        let mut s: ffi::HipStream = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let code = unsafe { (self.rt.api.hipStreamCreate)(&mut s) };
        self.check("hipStreamCreate", code)?;
        Ok(s as u64)
    }

    fn stream_destroy(&mut self, s: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: `s` came from hipStreamCreate.
        let code = unsafe { (self.rt.api.hipStreamDestroy)(ptr(s)) };
        self.check("hipStreamDestroy", code)
    }

    fn stream_sync(&mut self, s: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: `s` came from hipStreamCreate or is the null stream.
        let code = unsafe { (self.rt.api.hipStreamSynchronize)(ptr(s)) };
        self.check("hipStreamSynchronize", code)
    }

    fn stream_wait_event(&mut self, s: Handle, e: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: live handles from this runtime.
        let code = unsafe { (self.rt.api.hipStreamWaitEvent)(ptr(s), ptr(e), 0) };
        self.check("hipStreamWaitEvent", code)
    }

    fn device_sync(&mut self) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: no arguments.
        let code = unsafe { (self.rt.api.hipDeviceSynchronize)() };
        self.check("hipDeviceSynchronize", code)
    }

    fn device_count(&mut self) -> u32 {
        self.rt.device_count()
    }

    fn select_device(&mut self, device: u32) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: a plain HIP call; an ordinal the runtime lacks is its error.
        let code = unsafe { (self.rt.api.hipSetDevice)(device as c_int) };
        self.check("hipSetDevice", code)?;
        self.current = device;
        if let Some(q) = &mut self.launches {
            q.select(device);
        }
        Ok(())
    }

    fn copy_peer(
        &mut self,
        dst: u64,
        dst_device: u32,
        src: u64,
        src_device: u32,
        size: u64,
        s: Option<Handle>,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        let (dd, sd) = (dst_device as c_int, src_device as c_int);
        let n = size as usize;
        let (call, code) = match s {
            // SAFETY: live device ranges of `size` bytes on those devices,
            // translated by the engine.
            None => ("hipMemcpyPeer", unsafe {
                (self.rt.api.hipMemcpyPeer)(ptr(dst), dd, ptr(src), sd, n)
            }),
            // SAFETY: as above, on a live stream.
            Some(st) => ("hipMemcpyPeerAsync", unsafe {
                (self.rt.api.hipMemcpyPeerAsync)(ptr(dst), dd, ptr(src), sd, n, ptr(st))
            }),
        };
        self.check(call, code)
    }

    fn can_access_peer(&mut self, peer: u32) -> Result<Option<bool>, DeviceError> {
        self.ready()?;
        let mut can: c_int = 0;
        // SAFETY: a plain HIP call with our own out-parameter.
        let code = unsafe {
            (self.rt.api.hipDeviceCanAccessPeer)(&mut can, self.current as c_int, peer as c_int)
        };
        self.check("hipDeviceCanAccessPeer", code)?;
        Ok(Some(can != 0))
    }

    fn peer_access(&mut self, peer: u32) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: a plain HIP call.
        let code = unsafe { (self.rt.api.hipDeviceEnablePeerAccess)(peer as c_int, 0) };
        // Enabled already (by an earlier run of `--loop`, or a recorded
        // device folded onto this one) is what was wanted.
        if code == PEER_ACCESS_ALREADY_ENABLED {
            return Ok(());
        }
        self.check("hipDeviceEnablePeerAccess", code)
    }

    fn event_create(&mut self) -> Result<Handle, DeviceError> {
        self.ready()?;
        let mut e: ffi::HipEvent = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let code = unsafe { (self.rt.api.hipEventCreate)(&mut e) };
        self.check("hipEventCreate", code)?;
        Ok(e as u64)
    }

    fn event_destroy(&mut self, e: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: `e` came from hipEventCreate.
        let code = unsafe { (self.rt.api.hipEventDestroy)(ptr(e)) };
        self.check("hipEventDestroy", code)
    }

    fn event_record(&mut self, e: Handle, s: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: live handles from this runtime.
        let code = unsafe { (self.rt.api.hipEventRecord)(ptr(e), ptr(s)) };
        self.check("hipEventRecord", code)
    }

    fn event_sync(&mut self, e: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: `e` came from hipEventCreate.
        let code = unsafe { (self.rt.api.hipEventSynchronize)(ptr(e)) };
        self.check("hipEventSynchronize", code)
    }

    fn event_elapsed_ms(&mut self, a: Handle, b: Handle) -> Result<f32, DeviceError> {
        self.ready()?;
        let mut ms = 0f32;
        // SAFETY: valid out-pointer and live event handles.
        let code = unsafe { (self.rt.api.hipEventElapsedTime)(&mut ms, ptr(a), ptr(b)) };
        self.check("hipEventElapsedTime", code)?;
        Ok(ms)
    }

    fn module_load(&mut self, image: &[u8]) -> Result<Handle, DeviceError> {
        self.ready()?;
        // hipModuleLoadData takes a bare pointer and reads as far as the
        // image's headers say: an image that is empty, or whose headers
        // describe more than `image` holds, would be read past its end.
        match hrr_codeobj::read_image_extent(|n| image.get(..n)) {
            Ok(len) if len <= image.len() => {}
            Ok(len) => {
                return Err(DeviceError::Call {
                    call: "hipModuleLoadData",
                    code: -1,
                    message: format!(
                        "code object headers describe {len} bytes, the image holds {}",
                        image.len()
                    ),
                });
            }
            Err(e) => {
                return Err(DeviceError::Call {
                    call: "hipModuleLoadData",
                    code: -1,
                    message: format!(
                        "refusing a code object of {} bytes that the runtime would read past its end: {e}",
                        image.len()
                    ),
                });
            }
        }
        let mut m: ffi::HipModule = std::ptr::null_mut();
        // SAFETY: `image` stays alive for the call; the runtime copies what it keeps.
        let code = unsafe { (self.rt.api.hipModuleLoadData)(&mut m, image.as_ptr().cast()) };
        self.check("hipModuleLoadData", code)?;
        Ok(m as u64)
    }

    fn module_unload(&mut self, m: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        // SAFETY: `m` came from hipModuleLoadData.
        let code = unsafe { (self.rt.api.hipModuleUnload)(ptr(m)) };
        self.check("hipModuleUnload", code)
    }

    fn function(&mut self, m: Handle, name: &str) -> Result<Handle, DeviceError> {
        self.ready()?;
        let cname = CString::new(name).map_err(|_| DeviceError::Call {
            call: "hipModuleGetFunction",
            code: -1,
            message: format!("kernel name {name:?} contains NUL"),
        })?;
        let mut f: ffi::HipFunction = std::ptr::null_mut();
        // SAFETY: valid out-pointer, live module, NUL-terminated name.
        let code = unsafe { (self.rt.api.hipModuleGetFunction)(&mut f, ptr(m), cname.as_ptr()) };
        self.check("hipModuleGetFunction", code)?;
        Ok(f as u64)
    }

    fn va_reserve(&mut self, size: u64) -> Result<u64, DeviceError> {
        self.ready()?;
        let api = self.vmm("hipMemAddressReserve")?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer; no address asked for.
        let code = unsafe {
            (api.hipMemAddressReserve)(&mut p, size as usize, 0, std::ptr::null_mut(), 0)
        };
        self.check("hipMemAddressReserve", code)?;
        Ok(p as u64)
    }

    fn va_free(&mut self, p: u64, size: u64) -> Result<(), DeviceError> {
        self.ready()?;
        let api = self.vmm("hipMemAddressFree")?;
        // SAFETY: a reservation va_reserve made, of this size.
        let code = unsafe { (api.hipMemAddressFree)(ptr(p), size as usize) };
        self.check("hipMemAddressFree", code)
    }

    fn mem_create(&mut self, size: u64, mem: MemKind) -> Result<Handle, DeviceError> {
        self.ready()?;
        if mem != MemKind::Device {
            return Err(DeviceError::Call {
                call: "hipMemCreate",
                code: -1,
                message: format!("{mem:?} physical memory is not supported by this backend"),
            });
        }
        let prop = *self
            .placer()
            .ok_or_else(|| unsupported("hipMemCreate"))?
            .prop();
        let api = self.vmm("hipMemCreate")?;
        let mut h: hip_api::types::hipMemGenericAllocationHandle_t = std::ptr::null_mut();
        // SAFETY: valid out-pointer; `prop` is a hipMemAllocationProp's bytes.
        let code = unsafe { (api.hipMemCreate)(&mut h, size as usize, prop.as_ptr().cast(), 0) };
        self.check("hipMemCreate", code)?;
        Ok(h as u64)
    }

    fn mem_release(&mut self, h: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        let api = self.vmm("hipMemRelease")?;
        // SAFETY: a handle mem_create made.
        let code = unsafe { (api.hipMemRelease)(ptr(h)) };
        self.check("hipMemRelease", code)
    }

    fn mem_map(&mut self, p: u64, size: u64, offset: u64, h: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        let api = self.vmm("hipMemMap")?;
        // SAFETY: `p` lies in a reservation va_reserve made (the engine
        // checks), `h` is a handle mem_create made.
        let code = unsafe { (api.hipMemMap)(ptr(p), size as usize, offset as usize, ptr(h), 0) };
        self.check("hipMemMap", code)?;
        let desc = access_desc();
        // SAFETY: the mapping just made; `desc` is one hipMemAccessDesc.
        let code = unsafe { (api.hipMemSetAccess)(ptr(p), size as usize, desc.as_ptr().cast(), 1) };
        self.check("hipMemSetAccess", code)
    }

    fn mem_unmap(&mut self, p: u64, size: u64) -> Result<(), DeviceError> {
        self.ready()?;
        let api = self.vmm("hipMemUnmap")?;
        // SAFETY: a mapping mem_map made, of this size.
        let code = unsafe { (api.hipMemUnmap)(ptr(p), size as usize) };
        self.check("hipMemUnmap", code)
    }

    fn array_create(&mut self, desc: &ArrayDesc) -> Result<Handle, DeviceError> {
        self.ready()?;
        self.hip_array_create(desc)
    }

    fn array_destroy(&mut self, array: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        self.hip_array_destroy(array)
    }

    fn mipmap_create(&mut self, desc: &ArrayDesc, levels: u32) -> Result<Handle, DeviceError> {
        self.ready()?;
        self.hip_mipmap_create(desc, levels)
    }

    fn mipmap_level(&mut self, mipmap: Handle, level: u32) -> Result<Handle, DeviceError> {
        self.ready()?;
        self.hip_mipmap_level(mipmap, level)
    }

    fn mipmap_destroy(&mut self, mipmap: Handle) -> Result<(), DeviceError> {
        self.ready()?;
        self.hip_mipmap_destroy(mipmap)
    }

    fn copy_array(&mut self, copy: ArrayCopy<'_>) -> Result<(), DeviceError> {
        self.ready()?;
        self.hip_copy_array(copy)
    }

    fn tex_create(
        &mut self,
        res: &[u8],
        tex: &[u8],
        view: Option<&[u8]>,
    ) -> Result<Handle, DeviceError> {
        self.ready()?;
        self.hip_tex_create(res, tex, view)
    }

    fn surf_create(&mut self, res: &[u8]) -> Result<Handle, DeviceError> {
        self.ready()?;
        self.hip_surf_create(res)
    }

    fn object_destroy(&mut self, obj: Handle, surface: bool) -> Result<(), DeviceError> {
        self.ready()?;
        self.hip_object_destroy(obj, surface)
    }

    fn global(&mut self, m: Handle, name: &str) -> Result<(u64, u64), DeviceError> {
        self.ready()?;
        let f = self
            .rt
            .get_global
            .ok_or_else(|| unsupported("hipModuleGetGlobal"))?;
        let cname = CString::new(name).map_err(|_| DeviceError::Call {
            call: "hipModuleGetGlobal",
            code: -1,
            message: format!("global name {name:?} contains NUL"),
        })?;
        let (mut p, mut size): (hip_api::types::hipDeviceptr_t, usize) = (std::ptr::null_mut(), 0);
        // SAFETY: valid out-pointers, a live module, a NUL-terminated name.
        let code = unsafe { f(&mut p, &mut size, ptr(m), cname.as_ptr()) };
        self.check("hipModuleGetGlobal", code)?;
        Ok((p as u64, size as u64))
    }

    fn graph_launch(
        &mut self,
        g: &hrr_replay::graph::GraphSpec<'_>,
        stream: Handle,
    ) -> Result<(), DeviceError> {
        self.ready()?;
        self.launch_graph(g, stream)
    }

    fn graph_release(&mut self, id: u64) -> Result<(), DeviceError> {
        self.ready()?;
        self.release_graph(id)
    }

    fn launch(&mut self, l: &Launch<'_>) -> Result<(), DeviceError> {
        match &mut self.launches {
            Some(q) => q.push(l),
            None => launcher::launch(
                self.rt.api.hipModuleLaunchKernel,
                self.rt.api.hipGetErrorString,
                l,
            ),
        }
    }

    fn launch_thread(
        &mut self,
        on: bool,
        progress: Option<&Arc<Progress>>,
    ) -> Result<bool, DeviceError> {
        let launcher = || HipLauncher {
            launch: self.rt.api.hipModuleLaunchKernel,
            error_string: self.rt.api.hipGetErrorString,
            set_device: self.rt.api.hipSetDevice,
        };
        let on = LaunchThread::switch(
            &mut self.launches,
            on,
            "hipModuleLaunchKernel",
            launcher,
            progress,
        )?;
        // A launch thread started on another device than 0 follows it.
        if let Some(q) = &mut self.launches {
            q.select(self.current);
        }
        Ok(on)
    }
}

impl Drop for HipDevice {
    /// The launch thread ends, and placed memory and reservations go back,
    /// before the runtime is unloaded.
    fn drop(&mut self) {
        if let Some(q) = self.launches.take() {
            let _ = q.stop();
        }
        if let (Some(api), Some(Some(placer))) = (self.rt.vmm.as_ref(), self.placer.as_mut()) {
            placer.release_all(api);
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every `Device` method that calls the runtime waits for the launch
    /// thread first (`ready`); nothing else keeps the runtime's calls in the
    /// recorded order, so a method added without it is caught here.
    #[test]
    fn every_runtime_call_waits_for_the_queued_launches() {
        // Calls nothing (`name` asks a property of device 0, which launches
        // do not change; `device_count` was asked when the runtime loaded),
        // or is the launch path itself; `collectives_library` names a
        // library (and widens the runtime's symbol scope), calling nothing;
        // `quiesce` is `ready` itself.
        const EXEMPT: [&str; 9] = [
            "name",
            "collectives_library",
            "quiesce",
            "device_count",
            "target",
            "placement_granularity",
            "launch_attr_supported",
            "launch",
            "launch_thread",
        ];
        let src = include_str!("hip_device.rs");
        let start = src.find("impl Device for HipDevice {").expect("the impl");
        let body = &src[start..];
        let body = &body[..body.find("\n}\n").expect("its end")];
        let mut checked = 0;
        for method in body.split("\n    fn ").skip(1) {
            let name = &method[..method.find('(').expect("a signature")];
            if EXEMPT.contains(&name) {
                continue;
            }
            let after = &method[method.find(" {\n").expect("a body") + 3..];
            assert!(
                after.trim_start().starts_with("self.ready()?;"),
                "Device::{name} does not start with `self.ready()?;`"
            );
            checked += 1;
        }
        assert!(
            checked > 30,
            "only {checked} methods found: the parse is off"
        );
    }
}
