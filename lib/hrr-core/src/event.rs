//! Typed archive events: an [`Event`] is the common header plus its [`Op`].
//!
//! Their NDJSON form (parse, the reference encoding, the fast encoder and
//! scanner) lives in [`crate::wire`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::graph::{GraphNode, NodeBlob};
use crate::hex::{Addr, BlobId, HexBytes};

/// Direction of a copy, resolved at capture time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Host to device.
    H2d,
    /// Device to host.
    D2h,
    /// Device to device.
    D2d,
    /// Host to host.
    H2h,
}

impl Dir {
    /// The direction of a copy from `src` to `dst`, each in device memory
    /// or not.
    pub fn between(src_on_device: bool, dst_on_device: bool) -> Dir {
        match (src_on_device, dst_on_device) {
            (false, false) => Dir::H2h,
            (false, true) => Dir::H2d,
            (true, false) => Dir::D2h,
            (true, true) => Dir::D2d,
        }
    }

    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::H2d => "h2d",
            Dir::D2h => "d2h",
            Dir::D2d => "d2d",
            Dir::H2h => "h2h",
        }
    }
}

/// What kind of memory an allocation event created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemKind {
    /// Device memory (`hipMalloc`, `cuMemAlloc`).
    Device,
    /// Host memory allocated through the runtime.
    Host,
    /// Managed (unified) memory.
    Managed,
    /// Pinned (page-locked) host memory.
    Pinned,
}

impl MemKind {
    /// Device-side memory: replay translates pointers into it.
    pub fn is_device(self) -> bool {
        matches!(self, MemKind::Device | MemKind::Managed)
    }
}

/// One kernel argument as passed by the application.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelArg {
    /// Byte offset in the packed kernarg buffer, when known from metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// The argument's size in bytes.
    pub size: u32,
    /// Its bytes as the application passed them.
    pub hex: HexBytes,
    /// Byte offsets inside `hex` of 8-byte device pointers.
    #[serde(default)]
    pub ptrs: Vec<u32>,
}

/// One CUDA launch attribute (`CUlaunchAttribute` of `cuLaunchKernelEx`):
/// its `CUlaunchAttributeID` and the bytes of its value union as the
/// application passed them (64 bytes in CUDA 12-13).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchAttr {
    /// The attribute's `CUlaunchAttributeID`.
    pub id: u32,
    /// The bytes of its value union.
    pub hex: HexBytes,
}

/// Kernarg offsets: recorded ones when metadata gave them, else natural
/// packing (each argument aligned to its size, capped at 8), which is how
/// both the AMDGPU and the CUDA ABI lay out plain parameter lists.
pub fn arg_offsets(args: &[KernelArg]) -> Vec<u32> {
    let mut next = 0u32;
    args.iter()
        .map(|a| {
            let off = a.offset.unwrap_or_else(|| {
                let align = a.size.clamp(1, 8).next_power_of_two();
                next.div_ceil(align) * align
            });
            next = off + a.size;
            off
        })
        .collect()
}

/// The blob of a `relocate` event: its offsets as little-endian u64s.
pub fn encode_relocations(offsets: &[u64]) -> Vec<u8> {
    offsets.iter().flat_map(|o| o.to_le_bytes()).collect()
}

/// The offsets of a `relocate` blob; `None` when its length is not a
/// multiple of 8.
pub fn decode_relocations(blob: &[u8]) -> Option<impl Iterator<Item = u64> + '_> {
    blob.len().is_multiple_of(8).then(|| {
        blob.chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
    })
}

/// Bytes a rectangular copy moves (`extent` multiplied out): the length of
/// its packed blob; `None` when the product overflows.
pub fn rect_len(extent: [u64; 3]) -> Option<u64> {
    extent[0].checked_mul(extent[1])?.checked_mul(extent[2])
}

/// Bytes from the first byte of a pitched operand to one past its last:
/// what must lie in one allocation. `None` for an empty extent, or when a
/// row is wider than its pitch, a slice taller than its slice pitch, or the
/// span overflows: the rows would overlap, which no pitched layout does.
pub fn rect_span(pitch: [u64; 2], extent: [u64; 3]) -> Option<u64> {
    let [w, h, d] = extent;
    if w == 0 || h == 0 || d == 0 {
        return None;
    }
    if w > pitch[0] {
        return None;
    }
    let rows = (h - 1).checked_mul(pitch[0])?.checked_add(w)?;
    if d == 1 {
        return Some(rows);
    }
    if rows > pitch[1] {
        return None;
    }
    (d - 1).checked_mul(pitch[1])?.checked_add(rows)
}

/// The rows of a pitched operand, in packed order: each row's byte offset
/// from the operand's first byte. Callers check [`rect_span`] first.
pub fn rect_rows(pitch: [u64; 2], extent: [u64; 3]) -> impl Iterator<Item = u64> {
    let [_, h, d] = extent;
    (0..d).flat_map(move |z| (0..h).map(move |y| z * pitch[1] + y * pitch[0]))
}

/// The operation an event records, with its required fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// An allocation.
    Alloc {
        /// Its recorded base.
        ptr: Addr,
        /// Its size in bytes.
        size: u64,
        /// Its kind.
        mem: MemKind,
    },
    /// A free.
    Free {
        /// The address freed (0: a no-op).
        ptr: Addr,
        /// The kind freed, when the entry point says.
        mem: Option<MemKind>,
    },
    /// A copy.
    Memcpy {
        /// Its direction.
        dir: Dir,
        /// Destination address.
        dst: Addr,
        /// Source address.
        src: Addr,
        /// Bytes copied.
        size: u64,
        /// The stream, for an asynchronous copy (absent: synchronous).
        stream: Option<Addr>,
        /// The bytes copied to the device (H2D) or read back (D2H).
        blob: Option<BlobId>,
    },
    /// `size` is in bytes; `width` is the element width of the pattern
    /// (1 for hipMemset, 2 for D16, 4 for D32).
    Memset {
        /// Destination address.
        dst: Addr,
        /// The pattern value.
        value: u32,
        /// Bytes set.
        size: u64,
        /// Pattern element width in bytes.
        width: u8,
        /// The stream, for an asynchronous memset.
        stream: Option<Addr>,
    },
    /// A code object loaded.
    ModuleLoad {
        /// The module handle the runtime returned.
        module: Addr,
        /// The code object's blob.
        code: BlobId,
    },
    /// A module unloaded.
    ModuleUnload {
        /// Its handle.
        module: Addr,
    },
    /// A kernel looked up in a module.
    Function {
        /// The module.
        module: Addr,
        /// The kernel's name.
        name: String,
        /// The function handle returned.
        func: Addr,
    },
    /// A kernel launch.
    Launch {
        /// The kernel's name.
        name: String,
        /// Its code object's blob.
        code: BlobId,
        /// The function handle launched, when the API took one.
        func: Option<Addr>,
        /// Grid dimensions, in blocks.
        grid: [u32; 3],
        /// Block dimensions, in threads.
        block: [u32; 3],
        /// Dynamic shared memory, in bytes.
        shmem: u32,
        /// The stream (0: the default stream).
        stream: Addr,
        /// The arguments, in order.
        args: Vec<KernelArg>,
        /// CUDA launch attributes (`cuLaunchKernelEx`; cooperative launches
        /// carry attribute 2); empty for most launches.
        attrs: Vec<LaunchAttr>,
    },
    /// A stream created.
    StreamCreate {
        /// Its handle.
        stream: Addr,
    },
    /// A stream destroyed.
    StreamDestroy {
        /// Its handle.
        stream: Addr,
    },
    /// A stream synchronised.
    StreamSync {
        /// Its handle.
        stream: Addr,
    },
    /// A stream made to wait for an event.
    StreamWaitEvent {
        /// The waiting stream.
        stream: Addr,
        /// The event waited for.
        event: Addr,
    },
    /// The device synchronised.
    DeviceSync,
    /// An event created.
    EventCreate {
        /// Its handle.
        event: Addr,
    },
    /// An event destroyed.
    EventDestroy {
        /// Its handle.
        event: Addr,
    },
    /// An event recorded on a stream.
    EventRecord {
        /// The event.
        event: Addr,
        /// The stream (0: the default stream).
        stream: Addr,
    },
    /// An event synchronised.
    EventSync {
        /// Its handle.
        event: Addr,
    },
    /// The current device selected.
    SetDevice {
        /// The device ordinal.
        device: i32,
    },
    /// Host memory registered with the runtime (hipHostRegister / cudaHostRegister).
    HostRegister {
        /// The host address registered.
        ptr: Addr,
        /// Bytes registered.
        size: u64,
    },
    /// Host memory unregistered.
    HostUnregister {
        /// Its address.
        ptr: Addr,
    },
    /// A CUDA context made or retained (`cuCtxCreate`, `cuDevicePrimaryCtxRetain`).
    CtxCreate {
        /// The context's handle at capture.
        ctx: Addr,
        /// The device it belongs to.
        device: i32,
    },
    /// A CUDA context destroyed or released.
    CtxDestroy {
        /// Its handle.
        ctx: Addr,
    },
    /// The calling thread's current CUDA context changed (`cuCtxSetCurrent`,
    /// `cuCtxPushCurrent`, `cuCtxPopCurrent`): `ctx` is current afterwards.
    CtxSet {
        /// The context now current (0: none).
        ctx: Addr,
        /// Its device, when known.
        device: Option<i32>,
    },
    /// A virtual address range reserved (`cuMemAddressReserve`): the unit of
    /// address translation for the memory mapped into it.
    VaReserve {
        /// The range's start.
        ptr: Addr,
        /// Its length in bytes.
        size: u64,
    },
    /// A reserved range given back (`cuMemAddressFree`).
    VaFree {
        /// The range's start.
        ptr: Addr,
        /// Its length in bytes.
        size: u64,
    },
    /// A physical allocation (`cuMemCreate`); `mem` is `device`, or `pinned`
    /// for host-located memory.
    MemCreate {
        /// The allocation's handle at capture.
        handle: Addr,
        /// Its size in bytes.
        size: u64,
        /// Where it is located.
        mem: MemKind,
    },
    /// A physical allocation released (`cuMemRelease`).
    MemRelease {
        /// Its handle.
        handle: Addr,
    },
    /// `size` bytes of `handle`, from `offset`, mapped at `ptr` (`cuMemMap`).
    MemMap {
        /// Where the bytes are mapped.
        ptr: Addr,
        /// How many.
        size: u64,
        /// From where in the allocation.
        offset: u64,
        /// The physical allocation.
        handle: Addr,
    },
    /// A mapping removed (`cuMemUnmap`).
    MemUnmap {
        /// The mapping's start.
        ptr: Addr,
        /// Its length in bytes.
        size: u64,
    },
    /// Access granted to a mapped range (`cuMemSetAccess`).
    MemAccess {
        /// The range's start.
        ptr: Addr,
        /// Its length in bytes.
        size: u64,
    },
    /// A module's global variable (`cuModuleGetGlobal`): `size` bytes at
    /// `ptr`, named `name` in the code object `code` loaded as `module`.
    Global {
        /// The module's handle at capture.
        module: Addr,
        /// The variable's name.
        name: String,
        /// The code object that defines it.
        code: BlobId,
        /// Its device address at capture.
        ptr: Addr,
        /// Its size in bytes.
        size: u64,
    },
    /// Device memory `[dst, dst + size)` holds recorded device addresses at
    /// the byte offsets listed in `blob` (little-endian u64s); replay
    /// replaces each non-zero one by its translation. Captures never write
    /// it: `hrr-extract` does, for pointers an earlier kernel stored in
    /// device memory.
    Relocate {
        /// Start of the device memory holding the pointers.
        dst: Addr,
        /// Bytes from `dst` the offsets lie in.
        size: u64,
        /// The offsets, as [`encode_relocations`] writes them.
        blob: BlobId,
    },
    // ------------------------------------------------------------ graphs
    // (their node types: `crate::graph`)
    /// A graph instantiated (`hipGraphInstantiate`), or an executable
    /// graph's parameters changed (`hipGraphExecUpdate`,
    /// `hipGraphExec*NodeSetParams`): the executable graph's whole
    /// topology as it now stands.
    GraphExec {
        /// The executable graph's handle.
        exec: Addr,
        /// The graph it was made or updated from (0 when a node setter changed it).
        graph: Addr,
        /// Its nodes, dependencies first.
        nodes: Vec<GraphNode>,
    },
    /// An executable graph launched on a stream, with the bytes its `h2d`
    /// nodes read from host memory at this launch and the bytes its `d2h`
    /// nodes wrote to host memory (the expected results).
    GraphLaunch {
        /// The executable graph.
        exec: Addr,
        /// The stream (0: the default stream).
        stream: Addr,
        /// One blob per host copy node, by node index.
        blobs: Vec<NodeBlob>,
    },
    /// An executable graph destroyed.
    GraphExecDestroy {
        /// Its handle.
        exec: Addr,
    },
    // Host memory the device reads and writes (pinned, registered, managed).
    /// Host memory `[ptr, ptr + size)` holds the bytes of `blob` from here
    /// on: what the application's host code wrote into memory a kernel may
    /// read, captured just before the launch that may read it. Replay writes
    /// the bytes into its own memory for that range.
    HostWrite {
        /// Start of the range (inside a pinned, registered or managed allocation).
        ptr: Addr,
        /// Its length in bytes.
        size: u64,
        /// The bytes.
        blob: BlobId,
    },
    /// Host memory `[ptr, ptr + size)` held the bytes of `blob` at this
    /// synchronisation, after kernels that may have written it: a device
    /// result the application reads without a copy. Replay reads its own
    /// memory for the range and compares, as for a D2H copy.
    HostRead {
        /// Start of the range.
        ptr: Addr,
        /// Its length in bytes.
        size: u64,
        /// The bytes (the capture's, or in a replay archive the replay's).
        blob: BlobId,
    },
    // ------------------------------------------------------------------
    // Rectangular (2D/3D) copies and memsets, memory pools.
    /// A 2D or 3D copy (`hipMemcpy2D`, `hipMemcpy3D`, `cuMemcpy2D_v2`, …):
    /// `extent[2]` slices of `extent[1]` rows of `extent[0]` bytes. `dst` and
    /// `src` are the first byte of the copy (offsets of the call already
    /// added); a row starts `pitch[0]` bytes after the previous one, a slice
    /// `pitch[1]` bytes after the previous one. The blob holds the bytes
    /// packed, row after row ([`rect_len`] bytes).
    MemcpyRect {
        /// Its direction.
        dir: Dir,
        /// First byte written.
        dst: Addr,
        /// Row and slice pitch at the destination, in bytes.
        dpitch: [u64; 2],
        /// First byte read.
        src: Addr,
        /// Row and slice pitch at the source, in bytes.
        spitch: [u64; 2],
        /// Width in bytes, height in rows, depth in slices.
        extent: [u64; 3],
        /// The stream, for an asynchronous copy (absent: synchronous).
        stream: Option<Addr>,
        /// The packed bytes copied to the device (H2D) or read back (D2H).
        blob: Option<BlobId>,
    },
    /// A 2D or 3D memset (`hipMemset2D`, `hipMemset3D`, `cuMemsetD2D32`, …):
    /// the rows of [`Op::MemcpyRect`]'s shape at `dst` filled with `value`
    /// (a pattern of `width` bytes: 1, 2 or 4).
    MemsetRect {
        /// First byte set.
        dst: Addr,
        /// Row and slice pitch, in bytes.
        pitch: [u64; 2],
        /// Width in bytes, height in rows, depth in slices.
        extent: [u64; 3],
        /// The pattern value.
        value: u32,
        /// Pattern element width in bytes.
        width: u8,
        /// The stream, for an asynchronous memset.
        stream: Option<Addr>,
    },
    /// A memory pool created (`hipMemPoolCreate`, `cuMemPoolCreate`).
    PoolCreate {
        /// Its handle at capture.
        pool: Addr,
    },
    /// A memory pool destroyed.
    PoolDestroy {
        /// Its handle.
        pool: Addr,
    },
    /// A pool's unused memory released down to `size` bytes (`hipMemPoolTrimTo`).
    PoolTrim {
        /// The pool.
        pool: Addr,
        /// Bytes the pool may keep.
        size: u64,
    },
    /// A pool attribute set (`hipMemPoolSetAttribute`): the attribute's
    /// number and its value (every settable one is an int or a u64).
    PoolAttr {
        /// The pool.
        pool: Addr,
        /// The `hipMemPoolAttr` / `CUmemPool_attribute`.
        attr: u32,
        /// Its value.
        value: u64,
    },
    /// The pool a device's stream-ordered allocations come from
    /// (`hipDeviceSetMemPool`, `cuDeviceSetMemPool`).
    DevicePool {
        /// The device ordinal.
        device: i32,
        /// The pool.
        pool: Addr,
    },
    /// A stream-ordered allocation from a pool (`hipMallocFromPoolAsync`,
    /// `cuMemAllocFromPoolAsync`); freed by a `free`.
    PoolAlloc {
        /// Its recorded base.
        ptr: Addr,
        /// Its size in bytes.
        size: u64,
        /// The pool.
        pool: Addr,
        /// The stream it was ordered on.
        stream: Addr,
    },
    // ------------------------------------------------------------------
    /// The end of a complete capture.
    Eof {
        /// Events recorded before it.
        events: u64,
    },
}

impl Op {
    /// The `op` string of this operation on the wire.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Alloc { .. } => "alloc",
            Op::Free { .. } => "free",
            Op::Memcpy { .. } => "memcpy",
            Op::Memset { .. } => "memset",
            Op::ModuleLoad { .. } => "module_load",
            Op::ModuleUnload { .. } => "module_unload",
            Op::Function { .. } => "function",
            Op::Launch { .. } => "launch",
            Op::StreamCreate { .. } => "stream_create",
            Op::StreamDestroy { .. } => "stream_destroy",
            Op::StreamSync { .. } => "stream_sync",
            Op::StreamWaitEvent { .. } => "stream_wait_event",
            Op::DeviceSync => "device_sync",
            Op::EventCreate { .. } => "event_create",
            Op::EventDestroy { .. } => "event_destroy",
            Op::EventRecord { .. } => "event_record",
            Op::EventSync { .. } => "event_sync",
            Op::SetDevice { .. } => "set_device",
            Op::HostRegister { .. } => "host_register",
            Op::HostUnregister { .. } => "host_unregister",
            Op::CtxCreate { .. } => "ctx_create",
            Op::CtxDestroy { .. } => "ctx_destroy",
            Op::CtxSet { .. } => "ctx_set",
            Op::VaReserve { .. } => "va_reserve",
            Op::VaFree { .. } => "va_free",
            Op::MemCreate { .. } => "mem_create",
            Op::MemRelease { .. } => "mem_release",
            Op::MemMap { .. } => "mem_map",
            Op::MemUnmap { .. } => "mem_unmap",
            Op::MemAccess { .. } => "mem_access",
            Op::Global { .. } => "global",
            Op::Relocate { .. } => "relocate",
            Op::GraphExec { .. } => "graph_exec",
            Op::GraphLaunch { .. } => "graph_launch",
            Op::GraphExecDestroy { .. } => "graph_exec_destroy",
            Op::HostWrite { .. } => "host_write",
            Op::HostRead { .. } => "host_read",
            Op::MemcpyRect { .. } => "memcpy_rect",
            Op::MemsetRect { .. } => "memset_rect",
            Op::PoolCreate { .. } => "pool_create",
            Op::PoolDestroy { .. } => "pool_destroy",
            Op::PoolTrim { .. } => "pool_trim",
            Op::PoolAttr { .. } => "pool_attr",
            Op::DevicePool { .. } => "device_pool",
            Op::PoolAlloc { .. } => "pool_alloc",
            Op::Eof { .. } => "eof",
        }
    }
}

/// One archive event: the common header plus its operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The event's place in the capture's global order.
    pub seq: u64,
    /// CLOCK_MONOTONIC nanoseconds.
    pub t: u64,
    /// The recording thread.
    pub tid: u64,
    /// The exact runtime entry point, e.g. `hipMemcpyAsync`.
    pub api: String,
    /// What the call returned (0 = success).
    pub ret: i64,
    /// What the call did.
    pub op: Op,
}

/// Device timing a timed replay (`hrr-play --timing -o`) adds to the events
/// it writes into the replay archive, as the optional fields `dev_t` and
/// `dev_ns`. Typed [`Event`]s do not carry it;
/// [`Wire::dev_time`](crate::wire::Wire::dev_time) and
/// [`EventReader::dev_time`](crate::event_reader::EventReader::dev_time) read
/// it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevTime {
    /// `dev_t`: CLOCK_MONOTONIC ns on the replaying host when the operation
    /// was issued (the clock of `t`, but of the replay run).
    pub t: u64,
    /// `dev_ns`: device time of the operation, measured with two device
    /// events recorded around it on its stream.
    pub ns: u64,
}

impl fmt::Display for Event {
    /// One short human line, as `hrr-play --events` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>8} {:<24} ", self.seq, self.api)?;
        match &self.op {
            Op::Alloc { ptr, size, mem } => write!(f, "alloc {mem:?} {ptr} size={size}"),
            Op::Free { ptr, .. } => write!(f, "free {ptr}"),
            Op::Memcpy {
                dir,
                dst,
                src,
                size,
                ..
            } => {
                write!(f, "memcpy {} dst={dst} src={src} size={size}", dir.as_str())
            }
            Op::Memset {
                dst, value, size, ..
            } => {
                write!(f, "memset dst={dst} value={value:#x} size={size}")
            }
            Op::Launch {
                name,
                grid,
                block,
                shmem,
                stream,
                ..
            } => write!(
                f,
                "launch {name} grid={grid:?} block={block:?} shmem={shmem} stream={stream}"
            ),
            Op::Relocate { dst, size, .. } => write!(f, "relocate dst={dst} size={size}"),
            Op::GraphExec { exec, nodes, .. } => {
                write!(f, "graph_exec {exec} nodes={}", nodes.len())
            }
            Op::GraphLaunch { exec, stream, .. } => {
                write!(f, "graph_launch {exec} stream={stream}")
            }
            Op::HostWrite { ptr, size, .. } => write!(f, "host_write ptr={ptr} size={size}"),
            Op::HostRead { ptr, size, .. } => write!(f, "host_read ptr={ptr} size={size}"),
            Op::MemcpyRect {
                dir,
                dst,
                src,
                extent,
                ..
            } => write!(
                f,
                "memcpy_rect {} dst={dst} src={src} extent={extent:?}",
                dir.as_str()
            ),
            Op::PoolAlloc {
                ptr, size, pool, ..
            } => write!(f, "pool_alloc {ptr} size={size} pool={pool}"),
            other => write!(f, "{}", other.name()),
        }?;
        if self.ret != 0 {
            write!(f, " ret={}", self.ret)?;
        }
        Ok(())
    }
}
