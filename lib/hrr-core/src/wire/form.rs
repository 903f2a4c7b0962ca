//! The flat serde form of an event line ([`Wire`]) and the reference
//! encoding and parse of [`Event`]s through it.
//!
//! Parsing goes through a flat struct with optional fields rather than a
//! serde internally-tagged enum: internal tagging buffers every line into an
//! intermediate tree, which halves reader throughput. The flat form is then
//! checked into an [`Event`], and a missing field is an error naming it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::event::{DevTime, Dir, Event, KernelArg, LaunchAttr, MemKind, Op};
use crate::graph::{GraphNode, NodeBlob};
use crate::hex::{Addr, BlobId};

/// Why a line could not become an [`Event`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EventError {
    #[error("invalid JSON: {0}")]
    /// The line is not JSON of the wire form (serde's message).
    Json(String),
    #[error("op `{op}` lacks required field `{field}`")]
    /// A required field of the op is absent.
    Missing {
        /// The op.
        op: String,
        /// The field.
        field: &'static str,
    },
    #[error("unknown op `{0}`")]
    /// An op this hrr does not know.
    UnknownOp(String),
}

/// Flat wire form of an event: every field any op may carry.
#[derive(Default, Serialize, Deserialize)]
pub struct Wire<'a> {
    /// The event's place in the global order.
    pub seq: u64,
    #[serde(default)]
    /// CLOCK_MONOTONIC nanoseconds.
    pub t: u64,
    #[serde(default)]
    /// The recording thread.
    pub tid: u64,
    #[serde(borrow)]
    /// The runtime entry point.
    pub api: Cow<'a, str>,
    #[serde(borrow)]
    /// The op's name.
    pub op: Cow<'a, str>,
    #[serde(default)]
    /// What the call returned.
    pub ret: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `alloc`, `free`, `host_register`, `host_unregister`: the address.
    pub ptr: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Bytes: allocated, copied, set, registered or relocated.
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `alloc`, `free`: the memory kind.
    pub mem: Option<MemKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memcpy`: the direction.
    pub dir: Option<Dir>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memcpy`, `memset`, `relocate`: the destination.
    pub dst: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memcpy`: the source.
    pub src: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memset`: the pattern value.
    pub value: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memset`: the pattern width, when not 1.
    pub width: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The stream, where the op has one.
    pub stream: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memcpy`: the bytes' blob; `relocate`: the offsets' blob.
    pub blob: Option<BlobId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The module handle.
    pub module: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `module_load`, `launch`: the code object's blob.
    pub code: Option<BlobId>,
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    /// `function`, `launch`: the kernel name.
    pub name: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `function`, `launch`: the function handle.
    pub func: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `launch`: grid dimensions.
    pub grid: Option<[u32; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `launch`: block dimensions.
    pub block: Option<[u32; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `launch`: dynamic shared memory bytes.
    pub shmem: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `launch`: the arguments.
    pub args: Option<Vec<KernelArg>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The event handle, where the op has one.
    pub event: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `set_device`: the ordinal.
    pub device: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `eof`: events before it.
    pub events: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// A timed replay's `dev_t`; see [`DevTime`].
    pub dev_t: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// A timed replay's `dev_ns`; see [`DevTime`].
    pub dev_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// CUDA context ops: the context.
    pub ctx: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// CUDA physical-memory ops: the allocation's handle.
    pub handle: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `mem_map`: offset into the allocation.
    pub offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `launch`: CUDA launch attributes (omitted when none).
    pub attrs: Option<Vec<LaunchAttr>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Graph ops: the executable graph.
    pub exec: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `graph_exec`: the graph it was made from.
    pub graph: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `graph_exec`: the nodes.
    pub nodes: Option<Vec<GraphNode>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `graph_launch`: the host copy nodes' blobs.
    pub blobs: Option<Vec<NodeBlob>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memcpy_rect`, `memset_rect`: row and slice pitch of the destination.
    pub dpitch: Option<[u64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memcpy_rect`: row and slice pitch of the source.
    pub spitch: Option<[u64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `memcpy_rect`, `memset_rect`: width in bytes, height, depth.
    pub extent: Option<[u64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Pool ops: the memory pool.
    pub pool: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `pool_attr`: the attribute's number.
    pub attr: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `pool_attr`: the attribute's value.
    pub attr_value: Option<u64>,
}

impl Wire<'_> {
    /// The device timing of a timed replay's event (both fields present).
    pub fn dev_time(&self) -> Option<DevTime> {
        Some(DevTime {
            t: self.dev_t?,
            ns: self.dev_ns?,
        })
    }
}

impl Event {
    /// Parses one NDJSON line.
    pub fn parse(line: &[u8]) -> Result<Event, EventError> {
        let w: Wire<'_> =
            serde_json::from_slice(line).map_err(|e| EventError::Json(e.to_string()))?;
        Event::from_wire(w)
    }

    /// Checks a wire record into a typed event.
    pub fn from_wire(mut w: Wire<'_>) -> Result<Event, EventError> {
        Event::from_wire_in(&mut w)
    }

    /// [`Event::from_wire`] taking the fields out of `w` where it lies: the
    /// reader's `Wire` is ~400 bytes, and it parses a million lines a second.
    pub(crate) fn from_wire_in(w: &mut Wire<'_>) -> Result<Event, EventError> {
        let op_name = w.op.as_ref();
        macro_rules! req {
            ($f:ident) => {
                // Moved out, not cloned: `args` would be a deep copy per launch.
                w.$f.take().ok_or_else(|| EventError::Missing {
                    op: op_name.to_string(),
                    field: stringify!($f),
                })?
            };
        }
        let op = match op_name {
            "alloc" => Op::Alloc {
                ptr: req!(ptr),
                size: req!(size),
                mem: req!(mem),
            },
            "free" => Op::Free {
                ptr: req!(ptr),
                mem: w.mem,
            },
            "memcpy" => Op::Memcpy {
                dir: req!(dir),
                dst: req!(dst),
                src: req!(src),
                size: req!(size),
                stream: w.stream,
                blob: w.blob,
            },
            "memset" => Op::Memset {
                dst: req!(dst),
                value: req!(value),
                size: req!(size),
                width: w.width.unwrap_or(1),
                stream: w.stream,
            },
            "module_load" => Op::ModuleLoad {
                module: req!(module),
                code: req!(code),
            },
            "module_unload" => Op::ModuleUnload {
                module: req!(module),
            },
            "function" => Op::Function {
                module: req!(module),
                name: req!(name).into_owned(),
                func: req!(func),
            },
            "launch" => Op::Launch {
                name: req!(name).into_owned(),
                code: req!(code),
                func: w.func,
                grid: req!(grid),
                block: req!(block),
                shmem: w.shmem.unwrap_or(0),
                stream: w.stream.unwrap_or(Addr(0)),
                args: req!(args),
                attrs: w.attrs.take().unwrap_or_default(),
            },
            "stream_create" => Op::StreamCreate {
                stream: req!(stream),
            },
            "stream_destroy" => Op::StreamDestroy {
                stream: req!(stream),
            },
            "stream_sync" => Op::StreamSync {
                stream: req!(stream),
            },
            "stream_wait_event" => Op::StreamWaitEvent {
                stream: req!(stream),
                event: req!(event),
            },
            "device_sync" => Op::DeviceSync,
            "event_create" => Op::EventCreate { event: req!(event) },
            "event_destroy" => Op::EventDestroy { event: req!(event) },
            "event_record" => Op::EventRecord {
                event: req!(event),
                stream: w.stream.unwrap_or(Addr(0)),
            },
            "event_sync" => Op::EventSync { event: req!(event) },
            "set_device" => Op::SetDevice {
                device: req!(device),
            },
            "host_register" => Op::HostRegister {
                ptr: req!(ptr),
                size: req!(size),
            },
            "host_unregister" => Op::HostUnregister { ptr: req!(ptr) },
            "ctx_create" => Op::CtxCreate {
                ctx: req!(ctx),
                device: req!(device),
            },
            "ctx_destroy" => Op::CtxDestroy { ctx: req!(ctx) },
            "ctx_set" => Op::CtxSet {
                ctx: req!(ctx),
                device: w.device,
            },
            "va_reserve" => Op::VaReserve {
                ptr: req!(ptr),
                size: req!(size),
            },
            "va_free" => Op::VaFree {
                ptr: req!(ptr),
                size: req!(size),
            },
            "mem_create" => Op::MemCreate {
                handle: req!(handle),
                size: req!(size),
                mem: w.mem.unwrap_or(MemKind::Device),
            },
            "mem_release" => Op::MemRelease {
                handle: req!(handle),
            },
            "mem_map" => Op::MemMap {
                ptr: req!(ptr),
                size: req!(size),
                offset: w.offset.unwrap_or(0),
                handle: req!(handle),
            },
            "mem_unmap" => Op::MemUnmap {
                ptr: req!(ptr),
                size: req!(size),
            },
            "mem_access" => Op::MemAccess {
                ptr: req!(ptr),
                size: req!(size),
            },
            "global" => Op::Global {
                module: req!(module),
                name: req!(name).into_owned(),
                code: req!(code),
                ptr: req!(ptr),
                size: req!(size),
            },
            "relocate" => Op::Relocate {
                dst: req!(dst),
                size: req!(size),
                blob: req!(blob),
            },
            "graph_exec" => Op::GraphExec {
                exec: req!(exec),
                graph: w.graph.unwrap_or(Addr(0)),
                nodes: req!(nodes),
            },
            "graph_launch" => Op::GraphLaunch {
                exec: req!(exec),
                stream: w.stream.unwrap_or(Addr(0)),
                blobs: w.blobs.take().unwrap_or_default(),
            },
            "graph_exec_destroy" => Op::GraphExecDestroy { exec: req!(exec) },
            "host_write" => Op::HostWrite {
                ptr: req!(ptr),
                size: req!(size),
                blob: req!(blob),
            },
            "host_read" => Op::HostRead {
                ptr: req!(ptr),
                size: req!(size),
                blob: req!(blob),
            },
            "memcpy_rect" => Op::MemcpyRect {
                dir: req!(dir),
                dst: req!(dst),
                dpitch: req!(dpitch),
                src: req!(src),
                spitch: req!(spitch),
                extent: req!(extent),
                stream: w.stream,
                blob: w.blob,
            },
            "memset_rect" => Op::MemsetRect {
                dst: req!(dst),
                pitch: req!(dpitch),
                extent: req!(extent),
                value: req!(value),
                width: w.width.unwrap_or(1),
                stream: w.stream,
            },
            "pool_create" => Op::PoolCreate { pool: req!(pool) },
            "pool_destroy" => Op::PoolDestroy { pool: req!(pool) },
            "pool_trim" => Op::PoolTrim {
                pool: req!(pool),
                size: req!(size),
            },
            "pool_attr" => Op::PoolAttr {
                pool: req!(pool),
                attr: req!(attr),
                value: req!(attr_value),
            },
            "device_pool" => Op::DevicePool {
                device: req!(device),
                pool: req!(pool),
            },
            "pool_alloc" => Op::PoolAlloc {
                ptr: req!(ptr),
                size: req!(size),
                pool: req!(pool),
                stream: w.stream.unwrap_or(Addr(0)),
            },
            "eof" => Op::Eof {
                events: req!(events),
            },
            other => return Err(EventError::UnknownOp(other.to_string())),
        };
        Ok(Event {
            seq: w.seq,
            t: w.t,
            tid: w.tid,
            api: std::mem::take(&mut w.api).into_owned(),
            ret: w.ret,
            op,
        })
    }

    /// The flat wire form of this event.
    pub fn to_wire(&self) -> Wire<'_> {
        let mut w = Wire {
            seq: self.seq,
            t: self.t,
            tid: self.tid,
            api: Cow::Borrowed(&self.api),
            op: Cow::Borrowed(self.op.name()),
            ret: self.ret,
            ..Wire::default()
        };
        match &self.op {
            Op::Alloc { ptr, size, mem } => {
                w.ptr = Some(*ptr);
                w.size = Some(*size);
                w.mem = Some(*mem);
            }
            Op::Free { ptr, mem } => {
                w.ptr = Some(*ptr);
                w.mem = *mem;
            }
            Op::Memcpy {
                dir,
                dst,
                src,
                size,
                stream,
                blob,
            } => {
                w.dir = Some(*dir);
                w.dst = Some(*dst);
                w.src = Some(*src);
                w.size = Some(*size);
                w.stream = *stream;
                w.blob = *blob;
            }
            Op::Memset {
                dst,
                value,
                size,
                width,
                stream,
            } => {
                w.dst = Some(*dst);
                w.value = Some(*value);
                w.width = (*width != 1).then_some(*width);
                w.size = Some(*size);
                w.stream = *stream;
            }
            Op::ModuleLoad { module, code } => {
                w.module = Some(*module);
                w.code = Some(*code);
            }
            Op::ModuleUnload { module } => w.module = Some(*module),
            Op::Function { module, name, func } => {
                w.module = Some(*module);
                w.name = Some(Cow::Borrowed(name));
                w.func = Some(*func);
            }
            Op::Launch {
                name,
                code,
                func,
                grid,
                block,
                shmem,
                stream,
                args,
                attrs,
            } => {
                w.name = Some(Cow::Borrowed(name));
                w.code = Some(*code);
                w.func = *func;
                w.grid = Some(*grid);
                w.block = Some(*block);
                w.shmem = Some(*shmem);
                w.stream = Some(*stream);
                w.args = Some(args.clone());
                w.attrs = (!attrs.is_empty()).then(|| attrs.clone());
            }
            Op::StreamCreate { stream }
            | Op::StreamDestroy { stream }
            | Op::StreamSync { stream } => w.stream = Some(*stream),
            Op::StreamWaitEvent { stream, event } | Op::EventRecord { event, stream } => {
                w.stream = Some(*stream);
                w.event = Some(*event);
            }
            Op::DeviceSync => {}
            Op::EventCreate { event } | Op::EventDestroy { event } | Op::EventSync { event } => {
                w.event = Some(*event)
            }
            Op::SetDevice { device } => w.device = Some(*device),
            Op::HostRegister { ptr, size } => {
                w.ptr = Some(*ptr);
                w.size = Some(*size);
            }
            Op::HostUnregister { ptr } => w.ptr = Some(*ptr),
            Op::CtxCreate { ctx, device } => {
                w.ctx = Some(*ctx);
                w.device = Some(*device);
            }
            Op::CtxDestroy { ctx } => w.ctx = Some(*ctx),
            Op::CtxSet { ctx, device } => {
                w.ctx = Some(*ctx);
                w.device = *device;
            }
            Op::VaReserve { ptr, size }
            | Op::VaFree { ptr, size }
            | Op::MemUnmap { ptr, size }
            | Op::MemAccess { ptr, size } => {
                w.ptr = Some(*ptr);
                w.size = Some(*size);
            }
            Op::MemCreate { handle, size, mem } => {
                w.handle = Some(*handle);
                w.size = Some(*size);
                w.mem = Some(*mem);
            }
            Op::MemRelease { handle } => w.handle = Some(*handle),
            Op::MemMap {
                ptr,
                size,
                offset,
                handle,
            } => {
                w.ptr = Some(*ptr);
                w.size = Some(*size);
                w.offset = Some(*offset);
                w.handle = Some(*handle);
            }
            Op::Global {
                module,
                name,
                code,
                ptr,
                size,
            } => {
                w.module = Some(*module);
                w.name = Some(Cow::Borrowed(name));
                w.code = Some(*code);
                w.ptr = Some(*ptr);
                w.size = Some(*size);
            }
            Op::Relocate { dst, size, blob } => {
                w.size = Some(*size);
                w.dst = Some(*dst);
                w.blob = Some(*blob);
            }
            Op::GraphExec { exec, graph, nodes } => {
                w.exec = Some(*exec);
                w.graph = Some(*graph);
                w.nodes = Some(nodes.clone());
            }
            Op::GraphLaunch {
                exec,
                stream,
                blobs,
            } => {
                w.stream = Some(*stream);
                w.exec = Some(*exec);
                w.blobs = (!blobs.is_empty()).then(|| blobs.clone());
            }
            Op::GraphExecDestroy { exec } => w.exec = Some(*exec),
            Op::HostWrite { ptr, size, blob } | Op::HostRead { ptr, size, blob } => {
                w.ptr = Some(*ptr);
                w.size = Some(*size);
                w.blob = Some(*blob);
            }
            Op::MemcpyRect {
                dir,
                dst,
                dpitch,
                src,
                spitch,
                extent,
                stream,
                blob,
            } => {
                w.dir = Some(*dir);
                w.dst = Some(*dst);
                w.src = Some(*src);
                w.stream = *stream;
                w.blob = *blob;
                w.dpitch = Some(*dpitch);
                w.spitch = Some(*spitch);
                w.extent = Some(*extent);
            }
            Op::MemsetRect {
                dst,
                pitch,
                extent,
                value,
                width,
                stream,
            } => {
                w.dst = Some(*dst);
                w.value = Some(*value);
                w.width = (*width != 1).then_some(*width);
                w.stream = *stream;
                w.dpitch = Some(*pitch);
                w.extent = Some(*extent);
            }
            Op::PoolCreate { pool } | Op::PoolDestroy { pool } => w.pool = Some(*pool),
            Op::PoolTrim { pool, size } => {
                w.size = Some(*size);
                w.pool = Some(*pool);
            }
            Op::PoolAttr { pool, attr, value } => {
                w.pool = Some(*pool);
                w.attr = Some(*attr);
                w.attr_value = Some(*value);
            }
            Op::DevicePool { device, pool } => {
                w.device = Some(*device);
                w.pool = Some(*pool);
            }
            Op::PoolAlloc {
                ptr,
                size,
                pool,
                stream,
            } => {
                w.ptr = Some(*ptr);
                w.size = Some(*size);
                w.stream = Some(*stream);
                w.pool = Some(*pool);
            }
            Op::Eof { events } => w.events = Some(*events),
        }
        w
    }

    /// Serialises this event as one NDJSON line (with the trailing newline).
    pub fn write_line(&self, out: &mut Vec<u8>) {
        self.write_line_timed(None, out);
    }

    /// [`Event::write_line`], with a timed replay's `dev_t` and `dev_ns` when given.
    pub fn write_line_timed(&self, dev: Option<DevTime>, out: &mut Vec<u8>) {
        let mut w = self.to_wire();
        w.dev_t = dev.map(|d| d.t);
        w.dev_ns = dev.map(|d| d.ns);
        // Serialising into a Vec cannot fail: every field is a plain value.
        serde_json::to_writer(&mut *out, &w).expect("event serialises");
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{decode_relocations, encode_relocations};
    use crate::hex::HexBytes;

    #[test]
    fn memcpy_round_trips() {
        let e = Event {
            seq: 4,
            t: 100,
            tid: 7,
            api: "hipMemcpy".into(),
            ret: 0,
            op: Op::Memcpy {
                dir: Dir::H2d,
                dst: Addr(0x7fbe_0140_0000),
                src: Addr(0x5555_0000),
                size: 16,
                stream: None,
                blob: Some(BlobId::of(b"x")),
            },
        };
        let mut line = Vec::new();
        e.write_line(&mut line);
        let text = std::str::from_utf8(&line).unwrap();
        assert!(text.contains(r#""dst":"0x7fbe01400000""#), "{text}");
        assert!(
            !text.contains("stream"),
            "absent stream means synchronous: {text}"
        );
        assert_eq!(Event::parse(&line).unwrap(), e);
    }

    #[test]
    fn device_timing_round_trips_through_the_wire_form() {
        let e = Event {
            seq: 9,
            t: 5,
            tid: 1,
            api: "hipDeviceSynchronize".into(),
            ret: 0,
            op: Op::DeviceSync,
        };
        let dev = DevTime { t: 700, ns: 42 };
        let mut line = Vec::new();
        e.write_line_timed(Some(dev), &mut line);
        let text = std::str::from_utf8(&line).unwrap();
        assert!(text.contains(r#""dev_t":700,"dev_ns":42"#), "{text}");
        let w: Wire<'_> = serde_json::from_slice(&line).unwrap();
        assert_eq!(w.dev_time(), Some(dev));
        assert_eq!(Event::from_wire(w).unwrap(), e, "typed events ignore it");
        line.clear();
        e.write_line(&mut line);
        assert!(!String::from_utf8(line).unwrap().contains("dev_"));
    }

    #[test]
    fn missing_field_is_named() {
        let err = Event::parse(br#"{"seq":1,"api":"hipFree","op":"free"}"#).unwrap_err();
        assert_eq!(
            err,
            EventError::Missing {
                op: "free".into(),
                field: "ptr"
            }
        );
    }

    #[test]
    fn unknown_op_is_distinct() {
        let err = Event::parse(br#"{"seq":1,"api":"x","op":"teleport"}"#).unwrap_err();
        assert_eq!(err, EventError::UnknownOp("teleport".into()));
    }

    fn round_trip(op: Op) -> String {
        let e = Event {
            seq: 9,
            t: 1,
            tid: 2,
            api: "cuX".into(),
            ret: 0,
            op,
        };
        let mut line = Vec::new();
        e.write_line(&mut line);
        assert_eq!(Event::parse(&line).unwrap(), e);
        String::from_utf8(line).unwrap()
    }

    #[test]
    fn driver_ops_round_trip() {
        let text = round_trip(Op::MemMap {
            ptr: Addr(0x7f00_0020_0000),
            size: 2 << 20,
            offset: 0,
            handle: Addr(0x55),
        });
        assert!(
            text.contains(r#""op":"mem_map""#) && text.contains(r#""handle":"0x55""#),
            "{text}"
        );
        round_trip(Op::VaReserve {
            ptr: Addr(0x7f00_0000_0000),
            size: 1 << 40,
        });
        round_trip(Op::VaFree {
            ptr: Addr(0x7f00_0000_0000),
            size: 1 << 40,
        });
        round_trip(Op::MemCreate {
            handle: Addr(0x55),
            size: 2 << 20,
            mem: MemKind::Device,
        });
        round_trip(Op::MemRelease { handle: Addr(0x55) });
        round_trip(Op::MemUnmap {
            ptr: Addr(1),
            size: 2,
        });
        round_trip(Op::MemAccess {
            ptr: Addr(1),
            size: 2,
        });
        round_trip(Op::CtxCreate {
            ctx: Addr(0x77),
            device: 0,
        });
        round_trip(Op::CtxDestroy { ctx: Addr(0x77) });
        let text = round_trip(Op::CtxSet {
            ctx: Addr(0x77),
            device: None,
        });
        assert!(!text.contains("device"), "{text}");
        round_trip(Op::Global {
            module: Addr(0x10),
            name: "table".into(),
            code: BlobId::of(b"c"),
            ptr: Addr(0x7f00_0000_1000),
            size: 64,
        });
    }

    #[test]
    fn relocate_round_trips_with_its_offsets() {
        let offsets = [0u64, 8, 4096];
        let blob = encode_relocations(&offsets);
        let text = round_trip(Op::Relocate {
            dst: Addr(0x7f00_0000_1000),
            size: 4104,
            blob: BlobId::of(&blob),
        });
        assert!(text.contains(r#""op":"relocate""#), "{text}");
        assert_eq!(
            decode_relocations(&blob).unwrap().collect::<Vec<_>>(),
            offsets
        );
        assert!(decode_relocations(&blob[1..]).is_none());
    }

    #[test]
    fn host_memory_ops_round_trip_and_require_their_fields() {
        let blob = BlobId::of(b"host bytes");
        let text = round_trip(Op::HostWrite {
            ptr: Addr(0x7f00_0000_1000),
            size: 10,
            blob,
        });
        assert!(
            text.contains(r#""op":"host_write","ret":0,"ptr":"0x7f0000001000","size":10,"blob":""#),
            "{text}"
        );
        let text = round_trip(Op::HostRead {
            ptr: Addr(0x7f00_0000_1000),
            size: 10,
            blob,
        });
        assert!(text.contains(r#""op":"host_read""#), "{text}");
        let err = Event::parse(br#"{"seq":1,"api":"x","op":"host_write","ptr":"0x1000","size":4}"#)
            .unwrap_err();
        assert_eq!(
            err,
            EventError::Missing {
                op: "host_write".into(),
                field: "blob"
            }
        );
        let err = Event::parse(br#"{"seq":1,"api":"x","op":"host_read","size":4}"#).unwrap_err();
        assert_eq!(
            err,
            EventError::Missing {
                op: "host_read".into(),
                field: "ptr"
            }
        );
    }

    #[test]
    fn rect_and_pool_ops_round_trip() {
        let text = round_trip(Op::MemcpyRect {
            dir: Dir::D2h,
            dst: Addr(0x5555_0000),
            dpitch: [40, 640],
            src: Addr(0x7f00_0000_0040),
            spitch: [64, 1024],
            extent: [40, 16, 3],
            stream: Some(Addr(0x77)),
            blob: Some(BlobId::of(b"packed")),
        });
        assert!(
            text.contains(r#""op":"memcpy_rect""#)
                && text.contains(r#""dpitch":[40,640],"spitch":[64,1024],"extent":[40,16,3]"#),
            "{text}"
        );
        let text = round_trip(Op::MemsetRect {
            dst: Addr(0x7f00_0000_0000),
            pitch: [64, 1024],
            extent: [40, 16, 1],
            value: 0xdead_beef,
            width: 4,
            stream: None,
        });
        assert!(text.contains(r#""width":4"#), "{text}");
        round_trip(Op::PoolCreate { pool: Addr(0x99) });
        round_trip(Op::PoolDestroy { pool: Addr(0x99) });
        round_trip(Op::PoolTrim {
            pool: Addr(0x99),
            size: 0,
        });
        let text = round_trip(Op::PoolAttr {
            pool: Addr(0x99),
            attr: 4,
            value: u64::MAX,
        });
        assert!(
            text.contains(r#""attr":4,"attr_value":18446744073709551615"#),
            "{text}"
        );
        round_trip(Op::DevicePool {
            device: 0,
            pool: Addr(0x99),
        });
        round_trip(Op::PoolAlloc {
            ptr: Addr(0x7f00_0000_0000),
            size: 4096,
            pool: Addr(0x99),
            stream: Addr(0),
        });
        // A rect copy without its extent names the missing field.
        let err = Event::parse(
            br#"{"seq":1,"api":"hipMemcpy2D","op":"memcpy_rect","dir":"h2d","dst":"0x1","src":"0x2","dpitch":[1,1],"spitch":[1,1]}"#,
        )
        .unwrap_err();
        assert_eq!(
            err,
            EventError::Missing {
                op: "memcpy_rect".into(),
                field: "extent"
            }
        );
    }

    #[test]
    fn rect_geometry() {
        use crate::event::{rect_len, rect_rows, rect_span};
        assert_eq!(rect_len([40, 16, 3]), Some(1920));
        assert_eq!(rect_len([u64::MAX, 2, 1]), None);
        assert_eq!(rect_span([64, 0], [40, 16, 1]), Some(15 * 64 + 40));
        assert_eq!(
            rect_span([64, 1024], [40, 16, 2]),
            Some(1024 + 15 * 64 + 40)
        );
        assert_eq!(
            rect_span([32, 0], [40, 1, 1]),
            None,
            "row wider than its pitch"
        );
        assert_eq!(rect_span([64, 512], [40, 16, 2]), None, "slices overlap");
        assert_eq!(rect_span([64, 0], [0, 16, 1]), None, "empty");
        assert_eq!(
            rect_rows([64, 1024], [40, 2, 2]).collect::<Vec<_>>(),
            [0, 64, 1024, 1088]
        );
    }

    #[test]
    fn launch_attrs_are_omitted_when_empty() {
        let launch = |attrs| Op::Launch {
            name: "k".into(),
            code: BlobId::of(b"c"),
            func: None,
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shmem: 0,
            stream: Addr(0),
            args: vec![],
            attrs,
        };
        assert!(!round_trip(launch(vec![])).contains("attrs"));
        let text = round_trip(launch(vec![LaunchAttr {
            id: 4,
            hex: HexBytes(vec![2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]),
        }]));
        assert!(
            text.contains(r#""attrs":[{"id":4,"hex":"020000000100000001000000"}]"#),
            "{text}"
        );
        // A reader older than attrs would ignore the field; ours requires neither.
        let e = Event::parse(
            br#"{"seq":1,"api":"cuLaunchKernelEx","op":"launch","name":"k","code":"af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","grid":[1,1,1],"block":[1,1,1],"args":[]}"#,
        )
        .unwrap();
        assert!(matches!(e.op, Op::Launch { ref attrs, .. } if attrs.is_empty()));
    }
}
