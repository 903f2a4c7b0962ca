//! `EventLine`: the NDJSON encoding of an event, written straight into a
//! byte buffer.
//!
//! hrr-core's [`Event::write_line`](hrr_core::Event::write_line) is the
//! reference encoding. The recorder cannot afford it on its hot path: it
//! needs an owned `Event` (a `String` per api, a `Vec` per kernel argument)
//! and serde's writer. This module writes the identical bytes from borrowed
//! values, in the field order of hrr-core's `Wire` struct; the tests compare
//! both encoders byte for byte for every op, so a change in hrr-core's wire
//! form fails here rather than in a reader.
//!
//! A line is produced in two parts. The *body* (everything after `seq` and
//! `t`, starting with `,"tid":`) is encoded outside any lock by the recording
//! thread; the *head* `{"seq":N,"t":T` is written by the sink under its lock,
//! where `seq` and `t` are assigned (see `event_sink`).

use hrr_core::{BlobId, MemKind, Op};

/// One kernel argument, borrowed from the application's memory.
#[derive(Clone, Copy, Debug)]
pub struct ArgRef<'a> {
    pub offset: Option<u32>,
    pub bytes: &'a [u8],
    /// Byte offsets inside `bytes` of device pointers.
    pub ptrs: &'a [u32],
}

/// The fixed fields of a `launch` event.
#[derive(Clone, Copy, Debug)]
pub struct LaunchRef<'a> {
    pub name: &'a str,
    pub code: &'a BlobId,
    pub func: Option<u64>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shmem: u32,
    pub stream: u64,
}

/// A body being written into a buffer.
pub struct EventLine<'a> {
    buf: &'a mut Vec<u8>,
}

impl<'a> EventLine<'a> {
    /// Starts a body: `,"tid":…,"api":…,"op":…,"ret":…`.
    pub fn begin(buf: &'a mut Vec<u8>, tid: u64, api: &str, op: &str, ret: i64) -> EventLine<'a> {
        buf.extend_from_slice(b",\"tid\":");
        push_u64(buf, tid);
        buf.extend_from_slice(b",\"api\":");
        push_str(buf, api);
        buf.extend_from_slice(b",\"op\":\"");
        buf.extend_from_slice(op.as_bytes());
        buf.extend_from_slice(b"\",\"ret\":");
        push_i64(buf, ret);
        EventLine { buf }
    }

    fn key(&mut self, key: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    pub fn addr(&mut self, key: &str, v: u64) -> &mut Self {
        self.key(key);
        push_addr(self.buf, v);
        self
    }

    pub fn num(&mut self, key: &str, v: u64) -> &mut Self {
        self.key(key);
        push_u64(self.buf, v);
        self
    }

    pub fn int(&mut self, key: &str, v: i64) -> &mut Self {
        self.key(key);
        push_i64(self.buf, v);
        self
    }

    pub fn string(&mut self, key: &str, s: &str) -> &mut Self {
        self.key(key);
        push_str(self.buf, s);
        self
    }

    pub fn word(&mut self, key: &str, w: &str) -> &mut Self {
        self.key(key);
        self.buf.push(b'"');
        self.buf.extend_from_slice(w.as_bytes());
        self.buf.push(b'"');
        self
    }

    pub fn blob(&mut self, key: &str, id: &BlobId) -> &mut Self {
        self.key(key);
        self.buf.push(b'"');
        push_hex(self.buf, &id.0);
        self.buf.push(b'"');
        self
    }

    pub fn dims(&mut self, key: &str, d: [u32; 3]) -> &mut Self {
        self.key(key);
        self.buf.push(b'[');
        for (i, v) in d.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            push_u64(self.buf, u64::from(*v));
        }
        self.buf.push(b']');
        self
    }

    pub fn args<'b>(&mut self, args: impl IntoIterator<Item = ArgRef<'b>>) -> &mut Self {
        self.key("args");
        self.buf.push(b'[');
        for (i, a) in args.into_iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.buf.push(b'{');
            if let Some(o) = a.offset {
                self.buf.extend_from_slice(b"\"offset\":");
                push_u64(self.buf, u64::from(o));
                self.buf.push(b',');
            }
            self.buf.extend_from_slice(b"\"size\":");
            push_u64(self.buf, a.bytes.len() as u64);
            self.buf.extend_from_slice(b",\"hex\":\"");
            push_hex(self.buf, a.bytes);
            self.buf.extend_from_slice(b"\",\"ptrs\":[");
            for (j, p) in a.ptrs.iter().enumerate() {
                if j > 0 {
                    self.buf.push(b',');
                }
                push_u64(self.buf, u64::from(*p));
            }
            self.buf.extend_from_slice(b"]}");
        }
        self.buf.push(b']');
        self
    }

    /// Closes the object and the line.
    pub fn end(self) {
        self.buf.extend_from_slice(b"}\n");
    }
}

/// Encodes the body of any event but `launch` (use [`encode_launch`]).
/// Fields come in hrr-core's `Wire` order: ptr, size, mem, dir, dst, src,
/// value, width, stream, blob, module, code, name, func, grid, block, shmem,
/// args, event, device, events.
pub fn encode_op(buf: &mut Vec<u8>, tid: u64, api: &str, ret: i64, op: &Op) {
    if let Op::Launch { name, code, func, grid, block, shmem, stream, args } = op {
        // Not the recorder's path (that is encode_launch straight from the
        // application's memory); kept so every op has one encoder.
        let refs: Vec<ArgRef<'_>> =
            args.iter().map(|a| ArgRef { offset: a.offset, bytes: &a.hex.0, ptrs: &a.ptrs }).collect();
        let launch = LaunchRef {
            name,
            code,
            func: func.map(|f| f.0),
            grid: *grid,
            block: *block,
            shmem: *shmem,
            stream: stream.0,
        };
        encode_launch(buf, tid, api, ret, &launch, &refs);
        return;
    }
    let mut l = EventLine::begin(buf, tid, api, op.name(), ret);
    match op {
        Op::Alloc { ptr, size, mem } => {
            l.addr("ptr", ptr.0).num("size", *size).word("mem", mem_str(*mem));
        }
        Op::Free { ptr, mem } => {
            l.addr("ptr", ptr.0);
            if let Some(m) = mem {
                l.word("mem", mem_str(*m));
            }
        }
        Op::Memcpy { dir, dst, src, size, stream, blob } => {
            l.num("size", *size).word("dir", dir.as_str()).addr("dst", dst.0).addr("src", src.0);
            if let Some(s) = stream {
                l.addr("stream", s.0);
            }
            if let Some(b) = blob {
                l.blob("blob", b);
            }
        }
        Op::Memset { dst, value, size, width, stream } => {
            l.num("size", *size).addr("dst", dst.0).num("value", u64::from(*value));
            if *width != 1 {
                l.num("width", u64::from(*width));
            }
            if let Some(s) = stream {
                l.addr("stream", s.0);
            }
        }
        Op::ModuleLoad { module, code } => {
            l.addr("module", module.0).blob("code", code);
        }
        Op::ModuleUnload { module } => {
            l.addr("module", module.0);
        }
        Op::Function { module, name, func } => {
            l.addr("module", module.0).string("name", name).addr("func", func.0);
        }
        Op::Launch { .. } => unreachable!("handled above"),
        Op::StreamCreate { stream } | Op::StreamDestroy { stream } | Op::StreamSync { stream } => {
            l.addr("stream", stream.0);
        }
        Op::StreamWaitEvent { stream, event } | Op::EventRecord { event, stream } => {
            l.addr("stream", stream.0).addr("event", event.0);
        }
        Op::DeviceSync => {}
        Op::EventCreate { event } | Op::EventDestroy { event } | Op::EventSync { event } => {
            l.addr("event", event.0);
        }
        Op::SetDevice { device } => {
            l.int("device", i64::from(*device));
        }
        Op::HostRegister { ptr, size } => {
            l.addr("ptr", ptr.0).num("size", *size);
        }
        Op::HostUnregister { ptr } => {
            l.addr("ptr", ptr.0);
        }
        Op::Eof { events } => {
            l.num("events", *events);
        }
    }
    l.end();
}

/// Encodes the body of a `launch` event from borrowed arguments.
pub fn encode_launch(buf: &mut Vec<u8>, tid: u64, api: &str, ret: i64, k: &LaunchRef<'_>, args: &[ArgRef<'_>]) {
    let mut l = EventLine::begin(buf, tid, api, "launch", ret);
    l.addr("stream", k.stream).blob("code", k.code).string("name", k.name);
    if let Some(f) = k.func {
        l.addr("func", f);
    }
    l.dims("grid", k.grid).dims("block", k.block).num("shmem", u64::from(k.shmem));
    l.args(args.iter().copied());
    l.end();
}

/// Writes the head of a line, `{"seq":N,"t":T`, which the body continues.
pub fn push_head(buf: &mut Vec<u8>, seq: u64, t: u64) {
    buf.extend_from_slice(b"{\"seq\":");
    push_u64(buf, seq);
    buf.extend_from_slice(b",\"t\":");
    push_u64(buf, t);
}

fn mem_str(m: MemKind) -> &'static str {
    match m {
        MemKind::Device => "device",
        MemKind::Host => "host",
        MemKind::Managed => "managed",
        MemKind::Pinned => "pinned",
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_hex(buf: &mut Vec<u8>, bytes: &[u8]) {
    buf.reserve(bytes.len() * 2);
    for b in bytes {
        buf.push(HEX[(b >> 4) as usize]);
        buf.push(HEX[(b & 15) as usize]);
    }
}

fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

fn push_addr(buf: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 18];
    buf.push(b'"');
    buf.extend_from_slice(hrr_core::hex::format_addr(v, &mut tmp).as_bytes());
    buf.push(b'"');
}

/// A JSON string, escaped exactly as serde_json escapes it.
fn push_str(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => {
                buf.extend_from_slice(&bytes[start..i]);
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[(b >> 4) as usize]);
                buf.push(HEX[(b & 15) as usize]);
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        buf.extend_from_slice(&bytes[start..i]);
        buf.extend_from_slice(esc);
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// Whole line for tests and tools: head + body.
pub fn line(seq: u64, t: u64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 32);
    push_head(&mut out, seq, t);
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::{Addr, Dir, Event, HexBytes, KernelArg};
    use proptest::prelude::*;

    fn reference(seq: u64, t: u64, tid: u64, api: &str, ret: i64, op: &Op) -> Vec<u8> {
        let e = Event { seq, t, tid, api: api.to_string(), ret, op: op.clone() };
        let mut v = Vec::new();
        e.write_line(&mut v);
        v
    }

    fn ours(seq: u64, t: u64, tid: u64, api: &str, ret: i64, op: &Op) -> Vec<u8> {
        let mut body = Vec::new();
        encode_op(&mut body, tid, api, ret, op);
        line(seq, t, &body)
    }

    fn all_ops() -> Vec<Op> {
        let a = Addr(0x7f00_dead_0000);
        let s = Addr(0x55aa);
        let b = BlobId::of(b"blob");
        vec![
            Op::Alloc { ptr: a, size: 4096, mem: MemKind::Device },
            Op::Alloc { ptr: a, size: 1, mem: MemKind::Pinned },
            Op::Free { ptr: a, mem: None },
            Op::Free { ptr: Addr(0), mem: Some(MemKind::Managed) },
            Op::Memcpy { dir: Dir::H2d, dst: a, src: s, size: 16, stream: None, blob: Some(b) },
            Op::Memcpy { dir: Dir::D2d, dst: a, src: s, size: 0, stream: Some(Addr(0)), blob: None },
            Op::Memset { dst: a, value: 0xff, size: 64, width: 1, stream: None },
            Op::Memset { dst: a, value: 0xdead_beef, size: 64, width: 4, stream: Some(s) },
            Op::ModuleLoad { module: s, code: b },
            Op::ModuleUnload { module: s },
            Op::Function { module: s, name: "saxpy\"\\\n\u{1}é".into(), func: a },
            Op::Launch {
                name: "_Z4vaddPKfS0_Pfi".into(),
                code: b,
                func: Some(a),
                grid: [12, 1, 1],
                block: [256, 1, 1],
                shmem: 0,
                stream: Addr(0),
                args: vec![
                    KernelArg { offset: Some(0), size: 8, hex: HexBytes(vec![0, 0, 0xde, 0xad, 0, 0x7f, 0, 0]), ptrs: vec![0] },
                    KernelArg { offset: None, size: 4, hex: HexBytes(vec![1, 2, 3, 4]), ptrs: vec![] },
                ],
            },
            Op::Launch {
                name: "k".into(),
                code: b,
                func: None,
                grid: [1, 2, 3],
                block: [4, 5, 6],
                shmem: 7,
                stream: s,
                args: vec![],
            },
            Op::StreamCreate { stream: s },
            Op::StreamDestroy { stream: s },
            Op::StreamSync { stream: Addr(0) },
            Op::StreamWaitEvent { stream: s, event: a },
            Op::DeviceSync,
            Op::EventCreate { event: a },
            Op::EventDestroy { event: a },
            Op::EventRecord { event: a, stream: s },
            Op::EventSync { event: a },
            Op::SetDevice { device: -1 },
            Op::HostRegister { ptr: a, size: 9 },
            Op::HostUnregister { ptr: a },
            Op::Eof { events: 42 },
        ]
    }

    #[test]
    fn every_op_matches_hrr_core_byte_for_byte() {
        for op in all_ops() {
            for ret in [0, 1, -3, i64::MAX] {
                let r = reference(u64::MAX, 123, 9, "hipX", ret, &op);
                let o = ours(u64::MAX, 123, 9, "hipX", ret, &op);
                assert_eq!(String::from_utf8_lossy(&o), String::from_utf8_lossy(&r), "{op:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn strings_escape_like_serde(name in any::<String>(), bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let op = Op::Function { module: Addr(1), name: name.clone(), func: Addr(2) };
            prop_assert_eq!(ours(0, 0, 0, &name, 0, &op), reference(0, 0, 0, &name, 0, &op));
            let op = Op::Launch {
                name, code: BlobId::of(&bytes), func: None, grid: [1; 3], block: [1; 3], shmem: 0,
                stream: Addr(0),
                args: vec![KernelArg { offset: Some(8), size: bytes.len() as u32, hex: HexBytes(bytes), ptrs: vec![0, 3] }],
            };
            prop_assert_eq!(ours(1, 2, 3, "a", 0, &op), reference(1, 2, 3, "a", 0, &op));
        }
    }
}
