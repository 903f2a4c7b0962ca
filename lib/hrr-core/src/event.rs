//! Typed archive events: an [`Event`] is the common header plus its [`Op`].
//!
//! Their NDJSON form (parse, the reference encoding, the fast encoder and
//! scanner) lives in [`crate::wire`].
//!
//! # The op table
//!
//! The op vocabulary is declared once, in the op table (`op_table!`,
//! below): each op's variant, its `op` string and its fields, with their
//! docs. The table is a callback macro in the manner of the C signature
//! tables (`api-table`): `op_table!(cb)` hands the whole table to `cb!`,
//! and each consumer is a callback that generates its part by shape:
//!
//! | callback | where | generates |
//! |---|---|---|
//! | `define_op` | here | [`Op`], [`Op::name`], [`Op::NAMES`] |
//! | `wire_ops` | `wire::form` | an op out of a [`Wire`](crate::wire::Wire) (the parse's check, a missing field named) and into one (the reference encoding) |
//! | `encode_ops` | `wire::encode` | [`encode_op`](crate::wire::encode::encode_op), the fast encoder |
//! | `op_strategies` | `wire`'s tests | a property-test strategy per op, so every op is round-tripped |
//!
//! An entry is `Variant "op_name" { FIELD, … }`, or `Variant "op_name"` for
//! an op without fields. A field is its docs, at most one `#[wire(…)]`, then
//! `name: Type`. Its key on the line is its name. The key table
//! (`wire::form`) gives a key's place in a line and its codec (how its value
//! is read and written); the field's type must be the key's (a `String`
//! field goes in a string key), or an `Option` of it: an optional key,
//! absent for `None`. `#[wire(…)]` says the rest, in this order:
//!
//! * `key = K`: the field goes in key `K` (`MemsetRect::pitch` is `dpitch`);
//! * `default = D`: an absent key reads as `D` (older lines, hand-written
//!   ones); the field is still always written;
//! * `default = D, omit_default`: and `D` itself is not written (`width`
//!   of 1, empty `attrs`).
//!
//! A field without a default, not an `Option`, is required: a line without
//! it is an [`EventError::Missing`](crate::wire::EventError::Missing)
//! naming the first one absent, in the table's order. Fields may be listed
//! in any order; a line holds them in the key table's order, which the
//! encoders follow.

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
    /// Byte offsets inside `hex` of 8-byte texture or surface object
    /// handles (`tex_create`, `surf_create`), which replay maps to its own
    /// objects. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objs: Vec<u32>,
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

/// The op vocabulary: every [`Op`], its name on the wire and its fields,
/// declared once. `op_table!(cb)` expands to `cb! { TABLE }`; each consumer
/// of the vocabulary is a callback that generates its part by shape (see
/// the module docs for the grammar and for who generates what).
macro_rules! op_table {
    ($cb:ident) => {
        $cb! {
            /// An allocation.
            Alloc "alloc" {
                /// Its recorded base.
                ptr: Addr,
                /// Its size in bytes.
                size: u64,
                /// Its kind.
                mem: MemKind,
            },
            /// A free.
            Free "free" {
                /// The address freed (0: a no-op).
                ptr: Addr,
                /// The kind freed, when the entry point says.
                mem: Option<MemKind>,
            },
            /// A copy.
            Memcpy "memcpy" {
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
            Memset "memset" {
                /// Destination address.
                dst: Addr,
                /// The pattern value.
                value: u32,
                /// Bytes set.
                size: u64,
                /// Pattern element width in bytes.
                #[wire(default = 1, omit_default)]
                width: u8,
                /// The stream, for an asynchronous memset.
                stream: Option<Addr>,
            },
            /// A code object loaded.
            ModuleLoad "module_load" {
                /// The module handle the runtime returned.
                module: Addr,
                /// The code object's blob.
                code: BlobId,
            },
            /// A module unloaded.
            ModuleUnload "module_unload" {
                /// Its handle.
                module: Addr,
            },
            /// A kernel looked up in a module.
            Function "function" {
                /// The module.
                module: Addr,
                /// The kernel's name.
                name: String,
                /// The function handle returned.
                func: Addr,
            },
            /// A kernel launch.
            Launch "launch" {
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
                #[wire(default = 0)]
                shmem: u32,
                /// The stream (0: the default stream).
                #[wire(default = Addr(0))]
                stream: Addr,
                /// The arguments, in order.
                args: Vec<KernelArg>,
                /// CUDA launch attributes (`cuLaunchKernelEx`; cooperative launches
                /// carry attribute 2); empty for most launches.
                #[wire(default = Vec::new(), omit_default)]
                attrs: Vec<LaunchAttr>,
            },
            /// A stream created.
            StreamCreate "stream_create" {
                /// Its handle.
                stream: Addr,
            },
            /// A stream destroyed.
            StreamDestroy "stream_destroy" {
                /// Its handle.
                stream: Addr,
            },
            /// A stream synchronised.
            StreamSync "stream_sync" {
                /// Its handle.
                stream: Addr,
            },
            /// A stream made to wait for an event.
            StreamWaitEvent "stream_wait_event" {
                /// The waiting stream.
                stream: Addr,
                /// The event waited for.
                event: Addr,
            },
            /// The device synchronised.
            DeviceSync "device_sync",
            /// A device reset (`hipDeviceReset`, `hipDevicePrimaryCtxReset`,
            /// `cuDevicePrimaryCtxReset`, which `cudaDeviceReset` calls): every
            /// allocation, pool, stream, event, graph and mapping the process
            /// had on `device` is gone.
            DeviceReset "device_reset" {
                /// The device ordinal reset.
                device: i32,
            },
            /// An event created.
            EventCreate "event_create" {
                /// Its handle.
                event: Addr,
            },
            /// An event destroyed.
            EventDestroy "event_destroy" {
                /// Its handle.
                event: Addr,
            },
            /// An event recorded on a stream.
            EventRecord "event_record" {
                /// The event.
                event: Addr,
                /// The stream (0: the default stream).
                #[wire(default = Addr(0))]
                stream: Addr,
            },
            /// An event synchronised.
            EventSync "event_sync" {
                /// Its handle.
                event: Addr,
            },
            /// The current device selected.
            SetDevice "set_device" {
                /// The device ordinal.
                device: i32,
            },
            /// Host memory registered with the runtime (hipHostRegister / cudaHostRegister).
            HostRegister "host_register" {
                /// The host address registered.
                ptr: Addr,
                /// Bytes registered.
                size: u64,
            },
            /// Host memory unregistered.
            HostUnregister "host_unregister" {
                /// Its address.
                ptr: Addr,
            },
            /// A CUDA context made or retained (`cuCtxCreate`, `cuDevicePrimaryCtxRetain`).
            CtxCreate "ctx_create" {
                /// The context's handle at capture.
                ctx: Addr,
                /// The device it belongs to.
                device: i32,
            },
            /// A CUDA context destroyed or released.
            CtxDestroy "ctx_destroy" {
                /// Its handle.
                ctx: Addr,
            },
            /// The calling thread's current CUDA context changed (`cuCtxSetCurrent`,
            /// `cuCtxPushCurrent`, `cuCtxPopCurrent`): `ctx` is current afterwards.
            CtxSet "ctx_set" {
                /// The context now current (0: none).
                ctx: Addr,
                /// Its device, when known.
                device: Option<i32>,
            },
            /// A virtual address range reserved (`cuMemAddressReserve`): the unit of
            /// address translation for the memory mapped into it.
            VaReserve "va_reserve" {
                /// The range's start.
                ptr: Addr,
                /// Its length in bytes.
                size: u64,
            },
            /// A reserved range given back (`cuMemAddressFree`).
            VaFree "va_free" {
                /// The range's start.
                ptr: Addr,
                /// Its length in bytes.
                size: u64,
            },
            /// A physical allocation (`cuMemCreate`); `mem` is `device`, or `pinned`
            /// for host-located memory.
            MemCreate "mem_create" {
                /// The allocation's handle at capture.
                handle: Addr,
                /// Its size in bytes.
                size: u64,
                /// Where it is located.
                #[wire(default = MemKind::Device)]
                mem: MemKind,
            },
            /// A physical allocation released (`cuMemRelease`).
            MemRelease "mem_release" {
                /// Its handle.
                handle: Addr,
            },
            /// `size` bytes of `handle`, from `offset`, mapped at `ptr` (`cuMemMap`).
            MemMap "mem_map" {
                /// Where the bytes are mapped.
                ptr: Addr,
                /// How many.
                size: u64,
                /// From where in the allocation.
                #[wire(default = 0)]
                offset: u64,
                /// The physical allocation.
                handle: Addr,
            },
            /// A mapping removed (`cuMemUnmap`).
            MemUnmap "mem_unmap" {
                /// The mapping's start.
                ptr: Addr,
                /// Its length in bytes.
                size: u64,
            },
            /// The handle of the physical allocation mapped at `ptr`, retained
            /// (`cuMemRetainAllocationHandle`, `hipMemRetainAllocationHandle`):
            /// one more reference to that allocation, dropped by a `mem_release`
            /// of `handle`.
            MemRetain "mem_retain" {
                /// An address inside the mapping.
                ptr: Addr,
                /// The handle the call returned.
                handle: Addr,
            },
            /// A physical allocation exported as a shareable handle
            /// (`cuMemExportToShareableHandle`, `hipMemExportToShareableHandle`).
            MemExport "mem_export" {
                /// The allocation's handle.
                handle: Addr,
                /// The shareable handle: a file descriptor's number, or a hash of
                /// the bytes of a handle that is a struct (fabric handles).
                shareable: u64,
            },
            /// A physical allocation imported from a shareable handle exported in
            /// this process (`cuMemImportFromShareableHandle`,
            /// `hipMemImportFromShareableHandle`): `handle` is one more reference
            /// to the allocation last exported as `shareable`.
            MemImport "mem_import" {
                /// The handle the call returned.
                handle: Addr,
                /// The shareable handle imported, as `mem_export` wrote it.
                shareable: u64,
            },
            /// Access granted to a mapped range (`cuMemSetAccess`).
            MemAccess "mem_access" {
                /// The range's start.
                ptr: Addr,
                /// Its length in bytes.
                size: u64,
            },
            /// A module's global variable (`cuModuleGetGlobal`): `size` bytes at
            /// `ptr`, named `name` in the code object `code` loaded as `module`.
            Global "global" {
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
            Relocate "relocate" {
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
            GraphExec "graph_exec" {
                /// The executable graph's handle.
                exec: Addr,
                /// The graph it was made or updated from (0 when a node setter changed it).
                #[wire(default = Addr(0))]
                graph: Addr,
                /// Its nodes, dependencies first.
                nodes: Vec<GraphNode>,
            },
            /// An executable graph launched on a stream, with the bytes its `h2d`
            /// nodes read from host memory at this launch and the bytes its `d2h`
            /// nodes wrote to host memory (the expected results).
            GraphLaunch "graph_launch" {
                /// The executable graph.
                exec: Addr,
                /// The stream (0: the default stream).
                #[wire(default = Addr(0))]
                stream: Addr,
                /// One blob per host copy node, by node index.
                #[wire(default = Vec::new(), omit_default)]
                blobs: Vec<NodeBlob>,
            },
            /// An executable graph destroyed.
            GraphExecDestroy "graph_exec_destroy" {
                /// Its handle.
                exec: Addr,
            },
            // Host memory the device reads and writes (pinned, registered, managed).
            /// Host memory `[ptr, ptr + size)` holds the bytes of `blob` from here
            /// on: what the application's host code wrote into memory a kernel may
            /// read, captured just before the launch that may read it. Replay writes
            /// the bytes into its own memory for that range.
            HostWrite "host_write" {
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
            HostRead "host_read" {
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
            MemcpyRect "memcpy_rect" {
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
            MemsetRect "memset_rect" {
                /// First byte set.
                dst: Addr,
                /// Row and slice pitch, in bytes.
                #[wire(key = dpitch)]
                pitch: [u64; 2],
                /// Width in bytes, height in rows, depth in slices.
                extent: [u64; 3],
                /// The pattern value.
                value: u32,
                /// Pattern element width in bytes.
                #[wire(default = 1, omit_default)]
                width: u8,
                /// The stream, for an asynchronous memset.
                stream: Option<Addr>,
            },
            /// A memory pool created (`hipMemPoolCreate`, `cuMemPoolCreate`).
            PoolCreate "pool_create" {
                /// Its handle at capture.
                pool: Addr,
            },
            /// A memory pool destroyed.
            PoolDestroy "pool_destroy" {
                /// Its handle.
                pool: Addr,
            },
            /// A pool's unused memory released down to `size` bytes (`hipMemPoolTrimTo`).
            PoolTrim "pool_trim" {
                /// The pool.
                pool: Addr,
                /// Bytes the pool may keep.
                size: u64,
            },
            /// A pool attribute set (`hipMemPoolSetAttribute`): the attribute's
            /// number and its value (every settable one is an int or a u64).
            PoolAttr "pool_attr" {
                /// The pool.
                pool: Addr,
                /// The `hipMemPoolAttr` / `CUmemPool_attribute`.
                attr: u32,
                /// Its value.
                #[wire(key = attr_value)]
                value: u64,
            },
            /// The pool a device's stream-ordered allocations come from
            /// (`hipDeviceSetMemPool`, `cuDeviceSetMemPool`).
            DevicePool "device_pool" {
                /// The device ordinal.
                device: i32,
                /// The pool.
                pool: Addr,
            },
            /// A stream-ordered allocation from a pool (`hipMallocFromPoolAsync`,
            /// `cuMemAllocFromPoolAsync`); freed by a `free`.
            PoolAlloc "pool_alloc" {
                /// Its recorded base.
                ptr: Addr,
                /// Its size in bytes.
                size: u64,
                /// The pool.
                pool: Addr,
                /// The stream it was ordered on.
                #[wire(default = Addr(0))]
                stream: Addr,
            },
            // ------------------------------------------------------------------
            // Host functions and peers.
            /// A host function enqueued on a stream (`cuLaunchHostFunc`,
            /// `cuStreamAddCallback`, `hipStreamAddCallback`, …): an ordering
            /// point. Its code is the application's and is not replayed; what it
            /// hands the device travels through recorded calls (and `host_write`).
            HostFunc "host_func" {
                /// The stream (0: the default stream).
                #[wire(default = Addr(0))]
                stream: Addr,
            },
            /// A copy between the memory of two devices (`cuMemcpyPeer`,
            /// `hipMemcpyPeer`, …): device to device, `dst` on `dst_device` and
            /// `src` on `src_device`.
            MemcpyPeer "memcpy_peer" {
                /// Destination address.
                dst: Addr,
                /// Source address.
                src: Addr,
                /// Bytes copied.
                size: u64,
                /// The stream, for an asynchronous copy (absent: synchronous).
                stream: Option<Addr>,
                /// The destination's device ordinal, when known.
                dst_device: Option<i32>,
                /// The source's device ordinal, when known.
                src_device: Option<i32>,
            },
            /// Access to `peer`'s memory enabled for the current device
            /// (`cuCtxEnablePeerAccess`, `hipDeviceEnablePeerAccess`).
            PeerAccess "peer_access" {
                /// The peer device's ordinal (-1: a context whose device is unknown).
                peer: i32,
            },
            // ------------------------------------------------------------------
            // Arrays, textures and surfaces.
            /// An array created (`hipMallocArray`, `hipArray3DCreate`,
            /// `cuArray3DCreate_v2`, …): opaque device memory laid out by the
            /// runtime, reached through copies and texture or surface objects.
            ArrayCreate "array_create" {
                /// Its handle at capture.
                array: Addr,
                /// The element format (`CUarray_format`/`hipArray_Format`
                /// numbering, the same in both families).
                format: u32,
                /// Channels per element (1, 2 or 4).
                channels: u32,
                /// Width, height and depth in elements, as the descriptor gave
                /// them (0 for a dimension the array lacks).
                extent: [u64; 3],
                /// The descriptor's flags (`CUDA_ARRAY3D_*`, `hipArray*`).
                #[wire(default = 0, omit_default)]
                flags: u32,
            },
            /// One plane of a multi-planar array (`cuArrayGetPlane`: plane 0
            /// of an NV12 array is its luma, plane 1 its chroma): `array`
            /// is an array handle usable in copies and resources, owned by
            /// `parent` (no `array_destroy` of its own).
            ArrayPlane "array_plane" {
                /// The plane's handle at capture.
                array: Addr,
                /// The multi-planar array.
                parent: Addr,
                /// The plane's index.
                plane: u32,
            },
            /// A mipmapped array (`hipMallocMipmappedArray`,
            /// `hipMipmappedArrayCreate`, `cuMipmappedArrayCreate`): `levels`
            /// arrays, level 0 of `extent`, each next one of half the last's
            /// (rounded down, at least 1, where the array has the dimension).
            MipmapCreate "mipmap_create" {
                /// Its handle at capture.
                mipmap: Addr,
                /// The element format, as `array_create`'s.
                format: u32,
                /// Channels per element.
                channels: u32,
                /// Level 0's width, height and depth in elements (0 for a
                /// dimension the array lacks).
                extent: [u64; 3],
                /// The descriptor's flags.
                #[wire(default = 0, omit_default)]
                flags: u32,
                /// How many levels.
                levels: u32,
            },
            /// One level of a mipmapped array (`hipGetMipmappedArrayLevel`,
            /// `hipMipmappedArrayGetLevel`, `cuMipmappedArrayGetLevel`):
            /// `array` is an array handle usable in copies and resources,
            /// owned by `mipmap` (no `array_destroy` of its own).
            MipmapLevel "mipmap_level" {
                /// The level's handle at capture.
                array: Addr,
                /// The mipmapped array.
                mipmap: Addr,
                /// The level, from 0.
                level: u32,
            },
            /// A mipmapped array destroyed, its levels with it.
            MipmapDestroy "mipmap_destroy" {
                /// Its handle at capture.
                mipmap: Addr,
            },
            /// An array destroyed (`hipFreeArray`, `cuArrayDestroy`, …).
            ArrayDestroy "array_destroy" {
                /// Its handle.
                array: Addr,
            },
            /// A 2D or 3D copy with an array on at least one side. A side with
            /// a position (`dpos`, `spos`) is an array: `dst`/`src` is its
            /// handle and the position the copy's first element, [x in bytes,
            /// row, slice]; a side without is linear memory at `dst`/`src`
            /// (offsets added) with its pitches, as in [`Op::MemcpyRect`]. An
            /// array is device memory for `dir`. The host side is the packed
            /// blob.
            MemcpyArray "memcpy_array" {
                /// Its direction.
                dir: Dir,
                /// First byte written, or the destination array.
                dst: Addr,
                /// Row and slice pitch of a linear destination, in bytes.
                dpitch: Option<[u64; 2]>,
                /// Position in a destination array: x in bytes, row, slice.
                dpos: Option<[u64; 3]>,
                /// First byte read, or the source array.
                src: Addr,
                /// Row and slice pitch of a linear source, in bytes.
                spitch: Option<[u64; 2]>,
                /// Position in a source array: x in bytes, row, slice.
                spos: Option<[u64; 3]>,
                /// Width in bytes, height in rows, depth in slices.
                extent: [u64; 3],
                /// The stream, for an asynchronous copy (absent: synchronous).
                stream: Option<Addr>,
                /// The packed bytes copied to the device (H2D) or read back (D2H).
                blob: Option<BlobId>,
            },
            /// A texture object created (`hipCreateTextureObject`,
            /// `cuTexObjectCreate`): the resource it views, its sampling and its
            /// view, as the bytes of the family's structs. The resource's type
            /// is its first 4 bytes and the array handle or device pointer it
            /// views the 8 bytes at offset 8, in both families.
            TexCreate "tex_create" {
                /// Its handle at capture.
                obj: Addr,
                /// The resource description (`hipResourceDesc`, `CUDA_RESOURCE_DESC`).
                res: HexBytes,
                /// The texture description (`hipTextureDesc`, `CUDA_TEXTURE_DESC`).
                tex_desc: HexBytes,
                /// The resource view (`hipResourceViewDesc`,
                /// `CUDA_RESOURCE_VIEW_DESC`), when given.
                view: Option<HexBytes>,
            },
            /// A texture object destroyed.
            TexDestroy "tex_destroy" {
                /// Its handle.
                obj: Addr,
            },
            /// A surface object created (`hipCreateSurfaceObject`,
            /// `cuSurfObjectCreate`) over the resource `res` describes.
            SurfCreate "surf_create" {
                /// Its handle at capture.
                obj: Addr,
                /// The resource description, as for [`Op::TexCreate`].
                res: HexBytes,
            },
            /// A surface object destroyed.
            SurfDestroy "surf_destroy" {
                /// Its handle.
                obj: Addr,
            },
            // ------------------------------------------------------------------
            // Collectives (NCCL and RCCL, recorded at their own API).
            /// A communicator created (`ncclCommInitRank`,
            /// `ncclCommInitRankConfig`): rank `rank` of `nranks`, on the
            /// event's device. `uid` names the unique id it was made from (a
            /// hash of its bytes): the same in the archive of every rank of
            /// the communicator, so replay knows which ranks meet.
            NcclCommInit "nccl_comm_init" {
                /// Its handle at capture.
                comm: Addr,
                /// The unique id's name.
                uid: String,
                /// Ranks in all.
                nranks: u32,
                /// This rank.
                rank: u32,
            },
            /// A communicator split from another (`ncclCommSplit`): every rank
            /// of `parent` calls it; the ranks of one `color` make a new
            /// communicator, ordered by `key`, then by their rank in `parent`.
            /// `comm` is absent where this rank passed `NCCL_SPLIT_NOCOLOR`
            /// (it takes part and gets none).
            NcclCommSplit "nccl_comm_split" {
                /// The communicator split.
                parent: Addr,
                /// This rank's color (`-1`: `NCCL_SPLIT_NOCOLOR`).
                color: i32,
                /// This rank's key.
                key: i32,
                /// The new communicator's handle at capture (absent: none).
                comm: Option<Addr>,
            },
            /// Communicators of one process, one per device (`ncclCommInitAll`):
            /// `comms[i]` is rank `i`, on device `devices[i]`.
            NcclCommInitAll "nccl_comm_init_all" {
                /// Their handles at capture, in rank order.
                comms: Vec<Addr>,
                /// Each rank's device.
                devices: Vec<i32>,
            },
            /// A communicator finalized (`ncclCommFinalize`).
            NcclCommFinalize "nccl_comm_finalize" {
                /// Its handle at capture.
                comm: Addr,
            },
            /// A communicator destroyed (`ncclCommDestroy`, `ncclCommAbort`).
            NcclCommDestroy "nccl_comm_destroy" {
                /// Its handle at capture.
                comm: Addr,
            },
            /// A collective or point-to-point operation issued on a stream:
            /// `coll` is `all_reduce`, `broadcast` (`ncclBcast` too, with
            /// `src` = `dst`), `reduce`, `all_gather`, `reduce_scatter`,
            /// `send` or `recv`. Its buffers are device memory of the
            /// application's, translated at replay like any device operand.
            NcclColl "nccl_coll" {
                /// Which operation.
                coll: String,
                /// The send buffer (absent for `recv`).
                src: Option<Addr>,
                /// The receive buffer (absent for `send`).
                dst: Option<Addr>,
                /// Elements: per rank for `all_gather` (its send count) and
                /// `reduce_scatter` (its receive count).
                count: u64,
                /// The `ncclDataType_t`.
                dtype: u32,
                /// The `ncclRedOp_t` of a reduction.
                redop: Option<u32>,
                /// The root rank of `broadcast` and `reduce`.
                root: Option<i32>,
                /// The peer rank of `send` and `recv`.
                peer: Option<i32>,
                /// The communicator.
                comm: Addr,
                /// The stream (0: the default stream).
                #[wire(default = Addr(0))]
                stream: Addr,
            },
            /// `ncclGroupStart`: operations up to the matching end are issued
            /// together.
            NcclGroupStart "nccl_group_start",
            /// `ncclGroupEnd`.
            NcclGroupEnd "nccl_group_end",
            /// The end of a complete capture.
            Eof "eof" {
                /// Events recorded before it.
                events: u64,
            },
        }
    };
}
pub(crate) use op_table;

/// A field's `#[wire(…)]` attributes in canonical form, for the table's
/// callbacks: `op_field!(cb [CTX…] FIELD TYPE; [ATTRS…])` expands to
/// `cb! { [CTX…] FIELD TYPE; KEY; (DEFAULT?) (omit?) }`, where `KEY` is the
/// field's key in [`Wire`](crate::wire::Wire) (its name unless `key = …`
/// says otherwise), `DEFAULT` the value an absent key reads as (none: the
/// key is required, unless the field is an `Option`) and `omit` says that
/// the default is not written.
macro_rules! op_field {
    ($cb:ident [$($x:tt)*] $f:ident $t:ty; []) => {
        $cb! { [$($x)*] $f $t; $f; () () }
    };
    ($cb:ident [$($x:tt)*] $f:ident $t:ty; [key = $k:ident]) => {
        $cb! { [$($x)*] $f $t; $k; () () }
    };
    ($cb:ident [$($x:tt)*] $f:ident $t:ty; [default = $d:expr]) => {
        $cb! { [$($x)*] $f $t; $f; ($d) () }
    };
    ($cb:ident [$($x:tt)*] $f:ident $t:ty; [default = $d:expr, omit_default]) => {
        $cb! { [$($x)*] $f $t; $f; ($d) (omit) }
    };
    ($cb:ident [$($x:tt)*] $f:ident $t:ty; [key = $k:ident, default = $d:expr]) => {
        $cb! { [$($x)*] $f $t; $k; ($d) () }
    };
    ($cb:ident [$($x:tt)*] $f:ident $t:ty; [key = $k:ident, default = $d:expr, omit_default]) => {
        $cb! { [$($x)*] $f $t; $k; ($d) (omit) }
    };
    ($cb:ident [$($x:tt)*] $f:ident $t:ty; [$($other:tt)*]) => {
        compile_error!(concat!(
            "field `", stringify!($f), "`: unknown #[wire(", stringify!($($other)*), ")]; ",
            "expected `key = K`, `default = D` or `default = D, omit_default`, in that order"
        ))
    };
}
pub(crate) use op_field;

/// Callback of [`op_table!`]: the [`Op`] enum and its names.
macro_rules! define_op {
    ($(
        $(#[$vm:meta])*
        $V:ident $name:literal $({
            $(
                $(#[doc = $fd:literal])*
                $(#[wire($($wa:tt)*)])?
                $f:ident : $t:ty
            ),* $(,)?
        })?
    ),* $(,)?) => {
        /// The operation an event records, with its required fields.
        ///
        /// Declared in the op table (this module's docs).
        #[derive(Clone, Debug, PartialEq)]
        pub enum Op {
            $(
                $(#[$vm])*
                #[doc = ""]
                #[doc = concat!("On the wire: `\"op\":\"", $name, "\"`.")]
                $V $({ $( $(#[doc = $fd])* $f: $t, )* })?,
            )*
        }

        impl Op {
            /// Every op's `op` string, in the table's order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The `op` string of this operation on the wire.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Op::$V { .. } => $name, )*
                }
            }
        }
    };
}

op_table!(define_op);

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
    /// The device the call ran on: the calling thread's current device
    /// (`dev`, absent on the line for 0).
    pub dev: u32,
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
            Op::MemcpyArray {
                dir,
                dst,
                src,
                extent,
                ..
            } => write!(
                f,
                "memcpy_array {} dst={dst} src={src} extent={extent:?}",
                dir.as_str()
            ),
            Op::ArrayCreate { array, extent, .. } => {
                write!(f, "array_create {array} extent={extent:?}")
            }
            other => write!(f, "{}", other.name()),
        }?;
        if self.ret != 0 {
            write!(f, " ret={}", self.ret)?;
        }
        Ok(())
    }
}
