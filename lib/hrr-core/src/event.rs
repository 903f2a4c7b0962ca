//! Typed archive events: an [`Event`] is the common header plus its [`Op`].
//!
//! Their NDJSON form (parse, the reference encoding, the fast encoder and
//! scanner) lives in [`crate::wire`].

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
            other => write!(f, "{}", other.name()),
        }?;
        if self.ret != 0 {
            write!(f, " ret={}", self.ret)?;
        }
        Ok(())
    }
}
