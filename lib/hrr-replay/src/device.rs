//! The `Device` trait: what the replay engine needs from a runtime backend.
//!
//! Backends (HIP through libloading, CUDA's driver API) implement it; the engine
//! never sees runtime handles of the capture, only those its backend returned.

use std::borrow::Cow;
use std::sync::Arc;

use hrr_core::event::{LaunchAttr, MemKind, rect_rows};

use crate::engine::watchdog::Progress;
use crate::graph::GraphSpec;

/// A failed runtime call.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The runtime returned an error: its own code and message.
    #[error("{call} failed: {message} (code {code})")]
    Call {
        /// The runtime entry point, e.g. `hipMalloc`.
        call: &'static str,
        /// What it returned (-1 where the backend refused before calling).
        code: i64,
        /// The runtime's description of `code`, or the backend's reason.
        message: String,
    },
    /// The backend could not make the call at all (an entry point this
    /// runtime lacks, a driver that did not load); its own error is the source.
    #[error("{call} unavailable")]
    Backend {
        /// The entry point that was wanted.
        call: &'static str,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A launch made on the backend's launch thread failed; reported by the
    /// next call ([`crate::launch_thread`]).
    #[error("the launch of event {event} failed")]
    Deferred {
        /// The launch's event (`seq`).
        event: u64,
        /// Why it failed.
        #[source]
        source: Box<DeviceError>,
    },
}

impl DeviceError {
    /// The runtime entry point that failed.
    pub fn call(&self) -> &'static str {
        match self {
            DeviceError::Call { call, .. } | DeviceError::Backend { call, .. } => call,
            DeviceError::Deferred { source, .. } => source.call(),
        }
    }

    /// The runtime's error code, where the runtime was called.
    pub fn code(&self) -> Option<i64> {
        match self {
            DeviceError::Call { code, .. } => Some(*code),
            DeviceError::Backend { .. } => None,
            DeviceError::Deferred { source, .. } => source.code(),
        }
    }
}

/// A live handle returned by a backend (stream, event, module, function).
pub type Handle = u64;

/// One kernel argument ready to launch: its bytes (pointers already
/// translated) and where it goes in the packed kernarg buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchArg<'a> {
    /// Byte offset in the packed kernarg buffer.
    pub offset: u32,
    /// The argument's bytes, pointers already translated.
    pub bytes: &'a [u8],
}

/// A launch as the engine hands it to the backend.
#[derive(Debug)]
pub struct Launch<'a> {
    /// The event it replays (`seq`), for an error reported after the call
    /// returned ([`DeviceError::Deferred`]).
    pub event: u64,
    /// The live function handle.
    pub func: Handle,
    /// Grid dimensions, in blocks.
    pub grid: [u32; 3],
    /// Block dimensions, in threads.
    pub block: [u32; 3],
    /// Dynamic shared memory, in bytes.
    pub shmem: u32,
    /// 0 = the default stream.
    pub stream: Handle,
    /// The arguments.
    pub args: &'a [LaunchArg<'a>],
    /// CUDA launch attributes as recorded (`cuLaunchKernelEx`); a backend
    /// that cannot honour one says so ([`Device::launch`] fails or warns).
    pub attrs: &'a [LaunchAttr],
}

impl<'a> Launch<'a> {
    /// The packed kernarg buffer both HIP and CUDA take through `extra`:
    /// every argument at its offset, zero between them, ending exactly at the
    /// last argument's end. No tail padding: CUDA's driver refuses a buffer
    /// longer than the kernel's parameter space (`(int*, int*, int*, int)`
    /// is 28 bytes, and 32 fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, as
    /// measured on the H200). Later arguments win where two overlap.
    pub fn packed_args(&self) -> Cow<'a, [u8]> {
        packed(self.args)
    }
}

/// [`pack_args`], without a copy when `args` is one buffer at offset 0
/// (what the replay engine hands a backend: it packs them itself).
pub fn packed<'a>(args: &[LaunchArg<'a>]) -> Cow<'a, [u8]> {
    match args {
        [one] if one.offset == 0 => Cow::Borrowed(one.bytes),
        _ => Cow::Owned(pack_args(args)),
    }
}

/// Host memory a backend reaches by DMA without staging it first
/// (page-locked on CUDA). See [`Device::host_buffer`].
pub trait HostMemory: std::ops::DerefMut<Target = [u8]> {}

/// An owned [`HostMemory`] allocation; dropping it frees it.
pub type HostBuffer = Box<dyn HostMemory>;

/// See [`Launch::packed_args`].
pub fn pack_args(args: &[LaunchArg<'_>]) -> Vec<u8> {
    let end = args
        .iter()
        .map(|a| a.offset as usize + a.bytes.len())
        .max()
        .unwrap_or(0);
    let mut buf = vec![0u8; end];
    for a in args {
        let o = a.offset as usize;
        buf[o..o + a.bytes.len()].copy_from_slice(a.bytes);
    }
    buf
}

/// A GPU runtime the engine replays onto. Every method is one runtime call.
pub trait Device {
    /// Human name, e.g. `cpu (libhrr_hip_cpu.so)` or `NVIDIA H200`.
    fn name(&self) -> String;
    /// Code-object target used to pick an entry out of a bundle
    /// (`cpu`, `gfx90a`, `sm_90`).
    fn target(&self) -> String;

    /// A zero-filled allocation of `size` bytes of memory kind `mem`.
    fn alloc(&mut self, size: u64, mem: MemKind) -> Result<u64, DeviceError>;
    /// Frees an allocation [`Device::alloc`] made with the same `mem`.
    fn free(&mut self, ptr: u64, mem: MemKind) -> Result<(), DeviceError>;

    /// Copies `src` to device memory at `dst`; on `stream` when given.
    fn copy_h2d(&mut self, dst: u64, src: &[u8], stream: Option<Handle>)
    -> Result<(), DeviceError>;
    /// Copies device memory into `dst`; completes before returning even when `stream` is given.
    fn copy_d2h(
        &mut self,
        dst: &mut [u8],
        src: u64,
        stream: Option<Handle>,
    ) -> Result<(), DeviceError>;
    /// Copies `size` bytes between device addresses; on `stream` when given.
    fn copy_d2d(
        &mut self,
        dst: u64,
        src: u64,
        size: u64,
        stream: Option<Handle>,
    ) -> Result<(), DeviceError>;
    /// Fills `size` bytes at `dst` with `value`; on `stream` when given.
    fn memset(
        &mut self,
        dst: u64,
        value: u8,
        size: u64,
        stream: Option<Handle>,
    ) -> Result<(), DeviceError>;

    /// A new stream.
    fn stream_create(&mut self) -> Result<Handle, DeviceError>;
    /// Destroys a stream from [`Device::stream_create`].
    fn stream_destroy(&mut self, stream: Handle) -> Result<(), DeviceError>;
    /// Waits until `stream`'s work is done.
    fn stream_sync(&mut self, stream: Handle) -> Result<(), DeviceError>;
    /// Makes `stream` wait for `event`.
    fn stream_wait_event(&mut self, stream: Handle, event: Handle) -> Result<(), DeviceError>;
    /// Waits until all the device's work is done.
    fn device_sync(&mut self) -> Result<(), DeviceError>;
    /// Enqueues a host function that does nothing on `stream`, where the
    /// application enqueued its own (`host_func`): later work of the
    /// stream waits for it as it waited for the application's. The default
    /// enqueues nothing (a device whose streams run in order anyway).
    fn host_func(&mut self, stream: Handle) -> Result<(), DeviceError> {
        let _ = stream;
        Ok(())
    }

    /// The NCCL-API library whose collectives run on this backend's
    /// streams and memory (a soname or a path), loaded by the replay at
    /// its first collective event; `None`: this backend replays none.
    fn collectives_library(&mut self) -> Option<std::path::PathBuf> {
        None
    }

    /// Waits until every call the backend handed to a thread of its own
    /// (its launch thread) has been made: before the replay calls another
    /// library on the device's streams.
    fn quiesce(&mut self) -> Result<(), DeviceError> {
        Ok(())
    }

    // Devices. Every call after `select_device(d)` runs on local device
    // `d` (the HIP and CUDA meaning of the current device); the replay
    // starts on device 0.

    /// How many devices this backend can replay onto.
    fn device_count(&mut self) -> u32 {
        1
    }
    /// Makes local device `device` current for the calls that follow,
    /// launches on the launch thread included. The default has one device.
    fn select_device(&mut self, device: u32) -> Result<(), DeviceError> {
        if device == 0 {
            Ok(())
        } else {
            Err(DeviceError::Call {
                call: "select_device",
                code: -1,
                message: format!("this backend has one device; device {device} was asked for"),
            })
        }
    }
    /// Copies `size` bytes from device `src_device`'s memory at `src` to
    /// device `dst_device`'s at `dst` (two different local devices); on
    /// `stream` when given. The default is a device-to-device copy, which
    /// is right where one address space spans the devices.
    fn copy_peer(
        &mut self,
        dst: u64,
        dst_device: u32,
        src: u64,
        src_device: u32,
        size: u64,
        stream: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let _ = (dst_device, src_device);
        self.copy_d2d(dst, src, size, stream)
    }
    /// Lets the current device reach local device `peer`'s memory (another
    /// device). The default does nothing: a backend whose devices need no
    /// enabling.
    fn peer_access(&mut self, peer: u32) -> Result<(), DeviceError> {
        let _ = peer;
        Ok(())
    }
    /// Whether the current device can access local device `peer`'s memory
    /// at all on this machine (`None`: the backend cannot say; the default).
    fn can_access_peer(&mut self, peer: u32) -> Result<Option<bool>, DeviceError> {
        let _ = peer;
        Ok(None)
    }

    /// A new event.
    fn event_create(&mut self) -> Result<Handle, DeviceError>;
    /// Destroys an event from [`Device::event_create`].
    fn event_destroy(&mut self, event: Handle) -> Result<(), DeviceError>;
    /// Records `event` on `stream`.
    fn event_record(&mut self, event: Handle, stream: Handle) -> Result<(), DeviceError>;
    /// Waits until `event` has happened.
    fn event_sync(&mut self, event: Handle) -> Result<(), DeviceError>;
    /// Milliseconds between two recorded events.
    fn event_elapsed_ms(&mut self, start: Handle, end: Handle) -> Result<f32, DeviceError>;

    /// Loads a code object already selected for [`Device::target`].
    fn module_load(&mut self, image: &[u8]) -> Result<Handle, DeviceError>;
    /// Unloads a module from [`Device::module_load`].
    fn module_unload(&mut self, module: Handle) -> Result<(), DeviceError>;
    /// The kernel `name` in `module`.
    fn function(&mut self, module: Handle, name: &str) -> Result<Handle, DeviceError>;
    /// Launches a kernel.
    fn launch(&mut self, launch: &Launch<'_>) -> Result<(), DeviceError>;
    /// From now on (`on`), [`Device::launch`] may queue launches for a
    /// thread of the backend's own and return ([`crate::launch_thread`]);
    /// every other call waits for them first, and a launch that failed is
    /// reported by the next call. Off waits for the queued launches. Returns
    /// whether launches are queued. The launch thread marks the launch it is
    /// making in `progress`, for the watchdog.
    fn launch_thread(
        &mut self,
        on: bool,
        progress: Option<&Arc<Progress>>,
    ) -> Result<bool, DeviceError> {
        let _ = (on, progress);
        Ok(false)
    }
    /// Whether [`Device::launch`] honours CUDA launch attribute `id`; the
    /// engine leaves out (and warns about) the others.
    fn launch_attr_supported(&self, id: u32) -> bool {
        let _ = id;
        false
    }

    /// `len` bytes of host memory this device copies to and from at full
    /// speed, or `None` where no host memory is faster than any other (the
    /// CPU runtime): the engine then copies from blobs where they lie.
    /// Buffers are dropped before the device.
    fn host_buffer(&mut self, len: usize) -> Result<Option<HostBuffer>, DeviceError> {
        let _ = len;
        Ok(None)
    }

    // Virtual memory management (CUDA's cuMemAddressReserve / cuMemCreate /
    // cuMemMap family). A reservation holds no memory; physical allocations
    // are mapped into it. Backends without it refuse (the default).

    /// Reserves `size` bytes of device virtual address space.
    fn va_reserve(&mut self, size: u64) -> Result<u64, DeviceError> {
        let _ = size;
        Err(unsupported("va_reserve"))
    }
    /// Frees a reservation made by [`Device::va_reserve`].
    fn va_free(&mut self, ptr: u64, size: u64) -> Result<(), DeviceError> {
        let _ = (ptr, size);
        Err(unsupported("va_free"))
    }
    /// A physical allocation of `size` bytes (`mem`: device, or pinned host).
    fn mem_create(&mut self, size: u64, mem: MemKind) -> Result<Handle, DeviceError> {
        let _ = (size, mem);
        Err(unsupported("mem_create"))
    }
    /// Releases a physical allocation made by [`Device::mem_create`].
    fn mem_release(&mut self, handle: Handle) -> Result<(), DeviceError> {
        let _ = handle;
        Err(unsupported("mem_release"))
    }
    /// Maps `size` bytes of `handle` from `offset` at `ptr` (inside a
    /// reservation) and makes them readable and writable by this device.
    fn mem_map(
        &mut self,
        ptr: u64,
        size: u64,
        offset: u64,
        handle: Handle,
    ) -> Result<(), DeviceError> {
        let _ = (ptr, size, offset, handle);
        Err(unsupported("mem_map"))
    }
    /// Unmaps what [`Device::mem_map`] mapped at `ptr`.
    fn mem_unmap(&mut self, ptr: u64, size: u64) -> Result<(), DeviceError> {
        let _ = (ptr, size);
        Err(unsupported("mem_unmap"))
    }
    // Placement: allocations at their recorded addresses, so that pointers
    // stored inside device memory (tables a kernel reads) stay valid. The
    // engine reserves every recorded range once, before replaying, and then
    // asks for each allocation at its address; whatever a backend cannot
    // place is translated as before. Backends without it place nothing (the
    // defaults).

    /// The granularity placement works in (reservations and mappings are
    /// whole granules), or `None` when this backend cannot place at all.
    fn placement_granularity(&mut self) -> Option<u64> {
        None
    }
    /// What a reservation's start and end must be aligned to for
    /// [`Device::reserve_at`] to honour the address (a power of two, at
    /// least the granularity; the CUDA driver honours only 32 MiB-aligned
    /// addresses).
    fn reservation_alignment(&mut self) -> u64 {
        self.placement_granularity().unwrap_or(1)
    }
    /// Reserves `[base, base + size)` (granule-aligned) for later
    /// [`Device::alloc_at`], so that nothing else is put there; `false` when
    /// the range is not available. Reservations last as long as the device.
    fn reserve_at(&mut self, base: u64, size: u64) -> Result<bool, DeviceError> {
        let _ = (base, size);
        Ok(false)
    }
    /// A zero-filled allocation of `size` bytes at exactly `addr`, inside a
    /// range [`Device::reserve_at`] reserved; `None` when it cannot be made
    /// there (a granule it needs is in use). [`Device::free`] frees it.
    fn alloc_at(&mut self, addr: u64, size: u64, mem: MemKind) -> Result<Option<u64>, DeviceError> {
        let _ = (addr, size, mem);
        Ok(None)
    }

    // Graphs (`crate::graph`). The default runs the nodes one by one in
    // dependency order on the stream; backends with a graph API build the
    // graph once per `id` and launch it.

    /// Launches graph `g` on `stream`; its `D2h` nodes' host ranges hold
    /// their bytes once `stream` has been synchronised.
    fn graph_launch(&mut self, g: &GraphSpec<'_>, stream: Handle) -> Result<(), DeviceError> {
        crate::graph::run_in_order(self, g, stream)
    }
    /// Forgets graph `id`: it will not be launched again.
    fn graph_release(&mut self, id: u64) -> Result<(), DeviceError> {
        let _ = id;
        Ok(())
    }

    // Rectangular (2D/3D) copies and memsets: `extent` is width in bytes,
    // height in rows, depth in slices; a pitch is [row, slice] in bytes;
    // the host side is packed (rows back to back). The defaults decompose
    // into one 1D call per row, which every backend has; backends with the
    // runtime's own 2D calls use them. The engine checks the geometry
    // (`hrr_core::event::rect_span`) before calling.

    /// Copies packed `src` into the rows at device address `dst`.
    fn copy_h2d_rect(
        &mut self,
        dst: u64,
        dpitch: [u64; 2],
        src: &[u8],
        extent: [u64; 3],
        stream: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let w = extent[0] as usize;
        for (i, off) in rect_rows(dpitch, extent).enumerate() {
            self.copy_h2d(dst + off, &src[i * w..(i + 1) * w], stream)?;
        }
        Ok(())
    }
    /// Copies the rows at device address `src` into packed `dst`; complete
    /// on return, as [`Device::copy_d2h`].
    fn copy_d2h_rect(
        &mut self,
        dst: &mut [u8],
        src: u64,
        spitch: [u64; 2],
        extent: [u64; 3],
        stream: Option<Handle>,
    ) -> Result<(), DeviceError> {
        let w = extent[0] as usize;
        for (i, off) in rect_rows(spitch, extent).enumerate() {
            self.copy_d2h(&mut dst[i * w..(i + 1) * w], src + off, stream)?;
        }
        Ok(())
    }
    /// Copies rows between device addresses.
    fn copy_d2d_rect(
        &mut self,
        (dst, dpitch): (u64, [u64; 2]),
        (src, spitch): (u64, [u64; 2]),
        extent: [u64; 3],
        stream: Option<Handle>,
    ) -> Result<(), DeviceError> {
        for (d, s) in rect_rows(dpitch, extent).zip(rect_rows(spitch, extent)) {
            self.copy_d2d(dst + d, src + s, extent[0], stream)?;
        }
        Ok(())
    }
    /// Fills the rows at `dst` with byte `value`.
    fn memset_rect(
        &mut self,
        dst: u64,
        pitch: [u64; 2],
        extent: [u64; 3],
        value: u8,
        stream: Option<Handle>,
    ) -> Result<(), DeviceError> {
        for off in rect_rows(pitch, extent) {
            self.memset(dst + off, value, extent[0], stream)?;
        }
        Ok(())
    }

    // Memory pools (stream-ordered allocation). The defaults have no pools:
    // `pool_create` answers `None` and allocations from a pool are plain
    // allocations, so every backend replays them; backends with the
    // runtime's pool API create real pools.

    /// A new pool of device memory, or `None` where the backend has none.
    fn pool_create(&mut self) -> Result<Option<Handle>, DeviceError> {
        Ok(None)
    }
    /// A pool call that answers nothing; the default, with no pools, makes
    /// [`PoolCall::Free`] a plain free and does nothing for the others.
    fn pool_call(&mut self, call: PoolCall) -> Result<(), DeviceError> {
        match call {
            PoolCall::Free(ptr, _) => self.free(ptr, MemKind::Device),
            _ => Ok(()),
        }
    }
    /// `size` bytes from `pool`, ordered on `stream`; what they hold is the
    /// runtime's business (a reused block keeps its last user's bytes, as at
    /// capture), except in the default, a plain zero-filled allocation.
    fn pool_alloc(&mut self, pool: Handle, size: u64, stream: Handle) -> Result<u64, DeviceError> {
        let _ = (pool, stream);
        self.alloc(size, MemKind::Device)
    }
    /// Address and size of global variable `name` of a loaded module.
    fn global(&mut self, module: Handle, name: &str) -> Result<(u64, u64), DeviceError> {
        let _ = (module, name);
        Err(unsupported("global"))
    }

    // Arrays, textures and surfaces. The defaults have none: a backend
    // without them stops the replay at the first such event.

    /// A new array of the recorded descriptor.
    fn array_create(&mut self, desc: &ArrayDesc) -> Result<Handle, DeviceError> {
        let _ = desc;
        Err(unsupported("array_create"))
    }
    /// Plane `plane` of a multi-planar array from [`Device::array_create`]
    /// (CUDA's `cuArrayGetPlane`): an array handle owned by it.
    fn array_plane(&mut self, array: Handle, plane: u32) -> Result<Handle, DeviceError> {
        let _ = (array, plane);
        Err(unsupported("array_plane"))
    }
    /// A new mipmapped array of `levels` levels, level 0 of the recorded
    /// descriptor.
    fn mipmap_create(&mut self, desc: &ArrayDesc, levels: u32) -> Result<Handle, DeviceError> {
        let _ = (desc, levels);
        Err(unsupported("mipmap_create"))
    }
    /// Level `level` of a mipmapped array from [`Device::mipmap_create`]: an
    /// array handle owned by it.
    fn mipmap_level(&mut self, mipmap: Handle, level: u32) -> Result<Handle, DeviceError> {
        let _ = (mipmap, level);
        Err(unsupported("mipmap_level"))
    }
    /// Destroys a mipmapped array from [`Device::mipmap_create`].
    fn mipmap_destroy(&mut self, mipmap: Handle) -> Result<(), DeviceError> {
        let _ = mipmap;
        Err(unsupported("mipmap_destroy"))
    }
    /// Destroys an array from [`Device::array_create`].
    fn array_destroy(&mut self, array: Handle) -> Result<(), DeviceError> {
        let _ = array;
        Err(unsupported("array_destroy"))
    }
    /// A 2D/3D copy with an array on at least one side; complete on return
    /// when its host side is [`HostSide::Dst`], as [`Device::copy_d2h`].
    fn copy_array(&mut self, copy: ArrayCopy<'_>) -> Result<(), DeviceError> {
        let _ = copy;
        Err(unsupported("copy_array"))
    }
    /// A texture object over the resource `res` (already translated: the
    /// live array or pointer at byte 8), from the family's structs' bytes.
    fn tex_create(
        &mut self,
        res: &[u8],
        tex: &[u8],
        view: Option<&[u8]>,
    ) -> Result<Handle, DeviceError> {
        let _ = (res, tex, view);
        Err(unsupported("tex_create"))
    }
    /// A surface object over the resource `res` (translated as for
    /// [`Device::tex_create`]).
    fn surf_create(&mut self, res: &[u8]) -> Result<Handle, DeviceError> {
        let _ = res;
        Err(unsupported("surf_create"))
    }
    /// Destroys a texture (`surface` false) or surface object.
    fn object_destroy(&mut self, obj: Handle, surface: bool) -> Result<(), DeviceError> {
        let _ = (obj, surface);
        Err(unsupported("object_destroy"))
    }
}

/// An array's descriptor, as `array_create` recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayDesc {
    /// The element format (`CUarray_format`/`hipArray_Format` numbering).
    pub format: u32,
    /// Channels per element.
    pub channels: u32,
    /// Width, height and depth in elements (0 where the array lacks one).
    pub extent: [u64; 3],
    /// The descriptor's flags.
    pub flags: u32,
}

impl ArrayDesc {
    /// CUDA's `CU_AD_FORMAT_NV12`: two planes (8-bit luma, then 8-bit
    /// chroma pairs at half width and height), reached through
    /// [`Device::array_plane`].
    pub const NV12: u32 = 0xb0;

    /// Level `level` of a mipmapped array whose level 0 this is: each
    /// dimension the array has halved per level (rounded down), at least 1.
    pub fn level(&self, level: u32) -> ArrayDesc {
        let extent = self.extent.map(|n| match n {
            0 => 0,
            n => n.checked_shr(level).unwrap_or(0).max(1),
        });
        ArrayDesc { extent, ..*self }
    }

    /// Bytes per element, `None` for a format neither family defines.
    pub fn element_bytes(&self) -> Option<u64> {
        let channel = match self.format {
            0x01 | 0x08 => 1,        // 8-bit integers
            0x02 | 0x09 | 0x10 => 2, // 16-bit integers, half
            0x03 | 0x0a | 0x20 => 4, // 32-bit integers, float
            _ => return None,
        };
        matches!(self.channels, 1 | 2 | 4).then(|| channel * u64::from(self.channels))
    }
}

/// One side of an [`ArrayCopy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArraySide {
    /// An array from [`Device::array_create`]: the copy starts at `pos`
    /// (x in bytes, row, slice); `element` is its bytes per element.
    Array {
        /// The live array.
        array: Handle,
        /// Where the copy starts.
        pos: [u64; 3],
        /// Bytes per element.
        element: u64,
    },
    /// Linear device memory at `ptr` with its row and slice pitches.
    Device {
        /// The first byte.
        ptr: u64,
        /// Row and slice pitch.
        pitch: [u64; 2],
    },
    /// The copy's packed host buffer ([`ArrayCopy::host`]).
    Host,
}

/// The host buffer of an [`ArrayCopy`], packed (rows back to back).
#[derive(Debug)]
pub enum HostSide<'a> {
    /// No side is host memory.
    None,
    /// The bytes an upload reads.
    Src(&'a [u8]),
    /// Where a download writes.
    Dst(&'a mut [u8]),
}

/// A 2D/3D copy with an array on at least one side.
#[derive(Debug)]
pub struct ArrayCopy<'a> {
    /// Where it writes.
    pub dst: ArraySide,
    /// What it reads.
    pub src: ArraySide,
    /// Width in bytes, rows, slices.
    pub extent: [u64; 3],
    /// `None`: synchronous.
    pub stream: Option<Handle>,
    /// The host side's buffer.
    pub host: HostSide<'a>,
}

/// A pool call that answers nothing ([`Device::pool_call`]); one method for
/// these rather than one each, as every backend makes them the same way (look
/// the runtime's function up, call it, check the code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolCall {
    /// Destroys a pool from [`Device::pool_create`].
    Destroy(Handle),
    /// Releases a pool's unused memory down to the given bytes.
    Trim(Handle, u64),
    /// Sets a pool attribute (its `hipMemPoolAttr` number) to a value.
    SetAttr(Handle, u32, u64),
    /// Makes the pool the one the device's stream-ordered allocations come
    /// from.
    SetDevice(Handle),
    /// Gives an allocation of [`Device::pool_alloc`] back to its pool,
    /// ordered on the stream.
    Free(u64, Handle),
}

/// A recorded description (a texture or resource struct's bytes) copied
/// into a buffer aligned for the struct, checked to hold `need` bytes: what
/// a backend hands its runtime's object calls.
pub fn description_words(
    call: &'static str,
    bytes: &[u8],
    need: usize,
) -> Result<Vec<u64>, DeviceError> {
    if bytes.len() < need {
        return Err(DeviceError::Call {
            call,
            code: -1,
            message: format!(
                "a recorded description of {} bytes, {need} needed",
                bytes.len()
            ),
        });
    }
    let mut words = vec![0u64; need.div_ceil(8)];
    for (w, c) in words.iter_mut().zip(bytes[..need].chunks(8)) {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        *w = u64::from_le_bytes(b);
    }
    Ok(words)
}

/// What a [`Device`] method answers when its backend lacks the feature.
pub fn unsupported(call: &'static str) -> DeviceError {
    DeviceError::Call {
        call,
        code: -1,
        message: "not supported by this backend".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_args_place_each_argument_at_its_offset() {
        let a = [1u8, 2, 3, 4];
        let b = [9u8; 8];
        let c = [7u8; 4];
        let args = [
            LaunchArg {
                offset: 0,
                bytes: &a,
            },
            LaunchArg {
                offset: 8,
                bytes: &b,
            },
            LaunchArg {
                offset: 16,
                bytes: &c,
            },
        ];
        let l = Launch {
            event: 0,
            func: 0,
            grid: [1; 3],
            block: [1; 3],
            shmem: 0,
            stream: 0,
            args: &args,
            attrs: &[],
        };
        let packed = l.packed_args();
        assert_eq!(packed.len(), 20, "no tail padding past the last argument");
        assert_eq!(&packed[..8], &[1, 2, 3, 4, 0, 0, 0, 0]);
        assert_eq!(&packed[8..16], &[9; 8]);
        assert_eq!(&packed[16..], &[7; 4]);
        let none = Launch { args: &[], ..l };
        assert!(none.packed_args().is_empty());
    }
}
