//! Typed archive events (DESIGN.md §4) and their NDJSON wire form.
//!
//! Parsing goes through a flat [`Wire`] struct with optional fields rather than a
//! serde internally-tagged enum: internal tagging buffers every line into an
//! intermediate tree, which halves reader throughput. The flat form is then
//! checked into an [`Event`], and a missing field is an error naming it.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::hex::{Addr, BlobId, HexBytes};

/// Direction of a copy, resolved at capture time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    H2d,
    D2h,
    D2d,
    H2h,
}

impl Dir {
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
    Device,
    Host,
    Managed,
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
    pub size: u32,
    pub hex: HexBytes,
    /// Byte offsets inside `hex` of 8-byte device pointers.
    #[serde(default)]
    pub ptrs: Vec<u32>,
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

/// The operation an event records, with its required fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Alloc {
        ptr: Addr,
        size: u64,
        mem: MemKind,
    },
    Free {
        ptr: Addr,
        mem: Option<MemKind>,
    },
    Memcpy {
        dir: Dir,
        dst: Addr,
        src: Addr,
        size: u64,
        stream: Option<Addr>,
        blob: Option<BlobId>,
    },
    /// `size` is in bytes; `width` is the element width of the pattern
    /// (1 for hipMemset, 2 for D16, 4 for D32).
    Memset {
        dst: Addr,
        value: u32,
        size: u64,
        width: u8,
        stream: Option<Addr>,
    },
    ModuleLoad {
        module: Addr,
        code: BlobId,
    },
    ModuleUnload {
        module: Addr,
    },
    Function {
        module: Addr,
        name: String,
        func: Addr,
    },
    Launch {
        name: String,
        code: BlobId,
        func: Option<Addr>,
        grid: [u32; 3],
        block: [u32; 3],
        shmem: u32,
        stream: Addr,
        args: Vec<KernelArg>,
    },
    StreamCreate {
        stream: Addr,
    },
    StreamDestroy {
        stream: Addr,
    },
    StreamSync {
        stream: Addr,
    },
    StreamWaitEvent {
        stream: Addr,
        event: Addr,
    },
    DeviceSync,
    EventCreate {
        event: Addr,
    },
    EventDestroy {
        event: Addr,
    },
    EventRecord {
        event: Addr,
        stream: Addr,
    },
    EventSync {
        event: Addr,
    },
    SetDevice {
        device: i32,
    },
    /// Host memory registered with the runtime (hipHostRegister / cudaHostRegister).
    HostRegister {
        ptr: Addr,
        size: u64,
    },
    HostUnregister {
        ptr: Addr,
    },
    /// Device memory `[dst, dst + size)` holds recorded device addresses at
    /// the byte offsets listed in `blob` (little-endian u64s); replay
    /// replaces each non-zero one by its translation. Captures never write
    /// it: `hrr-extract` does, for pointers an earlier kernel stored in
    /// device memory.
    Relocate {
        dst: Addr,
        size: u64,
        blob: BlobId,
    },
    Eof {
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
            Op::Relocate { .. } => "relocate",
            Op::Eof { .. } => "eof",
        }
    }
}

/// One archive event: the common header plus its operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub seq: u64,
    /// CLOCK_MONOTONIC nanoseconds.
    pub t: u64,
    pub tid: u64,
    /// The exact runtime entry point, e.g. `hipMemcpyAsync`.
    pub api: String,
    /// What the call returned (0 = success).
    pub ret: i64,
    pub op: Op,
}

/// Why a line could not become an [`Event`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EventError {
    #[error("invalid JSON: {0}")]
    Json(String),
    #[error("op `{op}` lacks required field `{field}`")]
    Missing { op: String, field: &'static str },
    #[error("unknown op `{0}`")]
    UnknownOp(String),
}

/// Flat wire form of an event: every field any op may carry.
#[derive(Default, Serialize, Deserialize)]
pub struct Wire<'a> {
    pub seq: u64,
    #[serde(default)]
    pub t: u64,
    #[serde(default)]
    pub tid: u64,
    #[serde(borrow)]
    pub api: Cow<'a, str>,
    #[serde(borrow)]
    pub op: Cow<'a, str>,
    #[serde(default)]
    pub ret: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ptr: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem: Option<MemKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<Dir>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<BlobId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<BlobId>,
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub name: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub func: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<[u32; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<[u32; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shmem: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<KernelArg>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<Addr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
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
            "relocate" => Op::Relocate {
                dst: req!(dst),
                size: req!(size),
                blob: req!(blob),
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
            api: w.api.into_owned(),
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
            } => {
                w.name = Some(Cow::Borrowed(name));
                w.code = Some(*code);
                w.func = *func;
                w.grid = Some(*grid);
                w.block = Some(*block);
                w.shmem = Some(*shmem);
                w.stream = Some(*stream);
                w.args = Some(args.clone());
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
            Op::Relocate { dst, size, blob } => {
                w.size = Some(*size);
                w.dst = Some(*dst);
                w.blob = Some(*blob);
            }
            Op::Eof { events } => w.events = Some(*events),
        }
        w
    }

    /// Serialises this event as one NDJSON line (with the trailing newline).
    pub fn write_line(&self, out: &mut Vec<u8>) {
        // Serialising into a Vec cannot fail: every field is a plain value.
        serde_json::to_writer(&mut *out, &self.to_wire()).expect("event serialises");
        out.push(b'\n');
    }
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
            other => write!(f, "{}", other.name()),
        }?;
        if self.ret != 0 {
            write!(f, " ret={}", self.ret)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn relocate_round_trips_with_its_offsets() {
        let offsets = [0u64, 8, 4096];
        let blob = encode_relocations(&offsets);
        let e = Event {
            seq: 9,
            t: 1,
            tid: 0,
            api: "hrr-extract".into(),
            ret: 0,
            op: Op::Relocate {
                dst: Addr(0x7f00_0000_1000),
                size: 4104,
                blob: BlobId::of(&blob),
            },
        };
        let mut line = Vec::new();
        e.write_line(&mut line);
        assert_eq!(Event::parse(&line).unwrap(), e);
        assert_eq!(
            decode_relocations(&blob).unwrap().collect::<Vec<_>>(),
            offsets
        );
        assert!(decode_relocations(&blob[1..]).is_none());
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
}
