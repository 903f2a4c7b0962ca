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

use crate::record::kernel_args::ArgIn;
use crate::record::live_allocs::{AllocView, LiveAllocs};

/// One kernel argument, borrowed from the application's memory, with its
/// pointer offsets already known.
#[derive(Clone, Copy, Debug)]
pub struct ArgRef<'a> {
    pub offset: Option<u32>,
    pub bytes: &'a [u8],
    /// Byte offsets inside `bytes` of device pointers.
    pub ptrs: &'a [u32],
}

/// A blob id as its 64 lowercase hex digits, computed once per code object
/// (every launch event carries its kernel's code id).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BlobHex(pub [u8; 64]);

impl BlobHex {
    pub fn of(id: &BlobId) -> BlobHex {
        let mut out = [0u8; 64];
        for (i, b) in id.0.iter().enumerate() {
            out[2 * i] = HEX[(b >> 4) as usize];
            out[2 * i + 1] = HEX[(b & 15) as usize];
        }
        BlobHex(out)
    }
}

impl Default for BlobHex {
    /// The all-zero id's digits (arrays this long have no derived default).
    fn default() -> BlobHex {
        BlobHex([b'0'; 64])
    }
}

impl std::fmt::Debug for BlobHex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlobHex({})", String::from_utf8_lossy(&self.0[..12]))
    }
}

/// The fixed fields of a `launch` event.
#[derive(Clone, Copy, Debug)]
pub struct LaunchRef<'a> {
    pub name: &'a str,
    pub code: &'a BlobHex,
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
        if is_identifier(api) {
            // Entry-point names (the recorder's only apis) need no escaping.
            buf.push(b'"');
            buf.extend_from_slice(api.as_bytes());
            buf.push(b'"');
        } else {
            push_str(buf, api);
        }
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
        self.blob_hex(key, &BlobHex::of(id))
    }

    pub fn blob_hex(&mut self, key: &str, hex: &BlobHex) -> &mut Self {
        self.key(key);
        self.buf.push(b'"');
        self.buf.extend_from_slice(&hex.0);
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

    /// `"args":[…]` from arguments whose pointer offsets are known.
    pub fn args<'b>(&mut self, args: impl IntoIterator<Item = ArgRef<'b>>) -> &mut Self {
        self.key("args");
        self.buf.push(b'[');
        for (i, a) in args.into_iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.arg_head(a.offset, a.bytes);
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

    /// `"args":[…]` from arguments as they come from the application: a
    /// `global_buffer` is a pointer at offset 0, anything else is scanned
    /// against the live allocations while it is written (no intermediate
    /// storage on this hot path).
    pub fn args_scanned<'b>(
        &mut self,
        args: impl IntoIterator<Item = ArgIn<'b>>,
        allocs: &AllocView<'_>,
    ) -> &mut Self {
        self.args_scanned_each(args, allocs, |_| {})
    }

    /// [`EventLine::args_scanned`], showing each argument to `each` as it
    /// goes (the launch cache keeps them without a second pass).
    fn args_scanned_each<'b>(
        &mut self,
        args: impl IntoIterator<Item = ArgIn<'b>>,
        allocs: &AllocView<'_>,
        mut each: impl FnMut(&ArgIn<'b>),
    ) -> &mut Self {
        self.key("args");
        self.buf.push(b'[');
        for (i, a) in args.into_iter().enumerate() {
            each(&a);
            // Each argument is written into room made for its longest form,
            // through a local cursor, then cut to length: no length update
            // and capacity check in memory per piece.
            let start = self.buf.len();
            let max = Out::arg_max(a.bytes.len());
            if max <= 128 {
                // Fixed size: inlined stores, no memset call.
                self.buf.extend_from_slice(&[0u8; 128]);
            } else {
                self.buf.resize(start + max, 0);
            }
            let mut o = Out {
                s: &mut self.buf[start..],
                n: 0,
            };
            if i > 0 {
                o.byte(b',');
            }
            o.arg_head(a.offset, a.bytes);
            if a.pointer {
                if a.bytes.len() >= 8 {
                    o.byte(b'0');
                }
            } else {
                let mut first = true;
                allocs.scan_each(a.bytes, |off| {
                    if !first {
                        o.byte(b',');
                    }
                    first = false;
                    o.u64(u64::from(off));
                });
            }
            o.put(b"]}");
            let n = o.n;
            self.buf.truncate(start + n);
        }
        self.buf.push(b']');
        self
    }

    /// `{"offset":…,"size":…,"hex":"…","ptrs":[` of one argument.
    fn arg_head(&mut self, offset: Option<u32>, bytes: &[u8]) {
        self.buf.push(b'{');
        if let Some(o) = offset {
            self.buf.extend_from_slice(b"\"offset\":");
            push_u64(self.buf, u64::from(o));
            self.buf.push(b',');
        }
        self.buf.extend_from_slice(b"\"size\":");
        push_u64(self.buf, bytes.len() as u64);
        self.buf.extend_from_slice(b",\"hex\":\"");
        push_hex(self.buf, bytes);
        self.buf.extend_from_slice(b"\",\"ptrs\":[");
    }

    /// Closes the object and the line.
    pub fn end(self) {
        self.buf.extend_from_slice(b"}\n");
    }
}

/// A cursor over room already made in a buffer (see `args_scanned`).
struct Out<'a> {
    s: &'a mut [u8],
    n: usize,
}

impl Out<'_> {
    /// The longest encoding of an argument of `len` bytes: a comma,
    /// `{"offset":` u32 `,"size":` u64 `,"hex":"` hex `","ptrs":[` and at
    /// most one pointer per byte offset (never closer than 8 bytes apart),
    /// each a u32 and a comma, then `]}`.
    fn arg_max(len: usize) -> usize {
        1 + 10 + 10 + 8 + 20 + 8 + 2 * len + 10 + 11 * (len / 8 + 1) + 2
    }

    #[inline(always)]
    fn put(&mut self, b: &[u8]) {
        self.s[self.n..self.n + b.len()].copy_from_slice(b);
        self.n += b.len();
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.s[self.n] = b;
        self.n += 1;
    }

    #[inline(always)]
    fn u64(&mut self, mut v: u64) {
        if v < 10 {
            self.byte(b'0' + v as u8);
            return;
        }
        let nd = digits(v);
        let d = &mut self.s[self.n..self.n + nd];
        let mut i = nd;
        while v >= 100 {
            let p = (v % 100) as usize * 2;
            v /= 100;
            i -= 2;
            d[i..i + 2].copy_from_slice(&DIGIT_PAIRS[p..p + 2]);
        }
        if v >= 10 {
            let p = v as usize * 2;
            d[..2].copy_from_slice(&DIGIT_PAIRS[p..p + 2]);
        } else {
            d[0] = b'0' + v as u8;
        }
        self.n += nd;
    }

    /// `{"offset":…,"size":…,"hex":"…","ptrs":[`, as `EventLine::arg_head`.
    #[inline(always)]
    fn arg_head(&mut self, offset: Option<u32>, bytes: &[u8]) {
        self.byte(b'{');
        if let Some(o) = offset {
            self.put(b"\"offset\":");
            self.u64(u64::from(o));
            self.byte(b',');
        }
        self.put(b"\"size\":");
        self.u64(bytes.len() as u64);
        self.put(b",\"hex\":\"");
        let d = &mut self.s[self.n..self.n + 2 * bytes.len()];
        for (pair, b) in d.chunks_exact_mut(2).zip(bytes) {
            pair.copy_from_slice(&HEX_PAIRS[*b as usize]);
        }
        self.n += 2 * bytes.len();
        self.put(b"\",\"ptrs\":[");
    }
}

/// Encodes the body of any event but `launch` (use [`encode_launch`]).
/// Fields come in hrr-core's `Wire` order: ptr, size, mem, dir, dst, src,
/// value, width, stream, blob, module, code, name, func, grid, block, shmem,
/// args, event, device, events.
pub fn encode_op(buf: &mut Vec<u8>, tid: u64, api: &str, ret: i64, op: &Op) {
    if let Op::Launch {
        name,
        code,
        func,
        grid,
        block,
        shmem,
        stream,
        args,
    } = op
    {
        // Not the recorder's path (that is encode_launch straight from the
        // application's memory); kept so every op has one encoder.
        let refs: Vec<ArgRef<'_>> = args
            .iter()
            .map(|a| ArgRef {
                offset: a.offset,
                bytes: &a.hex.0,
                ptrs: &a.ptrs,
            })
            .collect();
        let code = BlobHex::of(code);
        let launch = LaunchRef {
            name,
            code: &code,
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
            l.addr("ptr", ptr.0)
                .num("size", *size)
                .word("mem", mem_str(*mem));
        }
        Op::Free { ptr, mem } => {
            l.addr("ptr", ptr.0);
            if let Some(m) = mem {
                l.word("mem", mem_str(*m));
            }
        }
        Op::Memcpy {
            dir,
            dst,
            src,
            size,
            stream,
            blob,
        } => {
            l.num("size", *size)
                .word("dir", dir.as_str())
                .addr("dst", dst.0)
                .addr("src", src.0);
            if let Some(s) = stream {
                l.addr("stream", s.0);
            }
            if let Some(b) = blob {
                l.blob("blob", b);
            }
        }
        Op::Memset {
            dst,
            value,
            size,
            width,
            stream,
        } => {
            l.num("size", *size)
                .addr("dst", dst.0)
                .num("value", u64::from(*value));
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
            l.addr("module", module.0)
                .string("name", name)
                .addr("func", func.0);
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
        Op::Relocate { dst, size, blob } => {
            l.num("size", *size).addr("dst", dst.0).blob("blob", blob);
        }
        Op::Eof { events } => {
            l.num("events", *events);
        }
    }
    l.end();
}

/// Encodes the body of a `launch` event whose pointer offsets are known.
pub fn encode_launch(
    buf: &mut Vec<u8>,
    tid: u64,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
    args: &[ArgRef<'_>],
) {
    let mut l = launch_head(buf, tid, api, ret, k);
    l.args(args.iter().copied());
    l.end();
}

/// Encodes the body of a `launch` event straight from the application's
/// argument values, finding embedded pointers as it goes.
pub fn encode_launch_scanned<'b>(
    buf: &mut Vec<u8>,
    tid: u64,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
    args: impl IntoIterator<Item = ArgIn<'b>>,
    allocs: &AllocView<'_>,
) {
    let mut l = launch_head(buf, tid, api, ret, k);
    l.args_scanned(args, allocs);
    l.end();
}

/// Launch heads per thread: how many different ones are kept.
const HEAD_CACHE_ENTRIES: usize = 4;

/// The heads (everything before `,"args":`) of a thread's recent launch
/// events, with the values each was encoded from. A launch of the same
/// kernel with the same configuration copies the bytes instead of encoding
/// them again; the key holds every input of [`launch_head`], so the bytes
/// are those the encoder would write. Each head also keeps the rest of its
/// last line (`,"args":[…]}` and the newline) with the argument values and
/// the [`LiveAllocs::generation`] it was encoded under: a loop launching
/// the same kernel on the same buffers (the common case) copies the whole
/// line, without scanning.
#[derive(Default)]
pub struct HeadCache {
    entries: Vec<HeadEntry>,
    /// The entry the next miss replaces once all are in use.
    next: usize,
}

#[derive(Default)]
struct HeadEntry {
    tid: u64,
    ret: i64,
    stream: u64,
    func: Option<u64>,
    grid: [u32; 3],
    block: [u32; 3],
    shmem: u32,
    code: BlobHex,
    api: String,
    name: String,
    bytes: Vec<u8>,
    /// The rest of the last line under this head; empty: none yet.
    tail: Vec<u8>,
    /// The arguments `tail` was encoded from: each one's shape, and all
    /// their bytes end to end.
    tail_args: Vec<ArgKey>,
    tail_bytes: Vec<u8>,
    tail_generation: u64,
    /// Launches since the tail last matched: past a few, a kernel whose
    /// arguments change every time keeps no tail (its cost would be all
    /// loss) but for one launch in [`TAIL_RETRY`].
    tail_misses: u32,
}

/// See `HeadEntry::tail_misses`.
const TAIL_RETRY: u32 = 64;

/// What identifies one argument as an encoder input, besides its bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
struct ArgKey {
    offset: Option<u32>,
    pointer: bool,
    len: usize,
}

impl ArgKey {
    fn of(a: &ArgIn<'_>) -> ArgKey {
        ArgKey {
            offset: a.offset,
            pointer: a.pointer,
            len: a.bytes.len(),
        }
    }
}

/// `a == b` for equal-length slices, without a `bcmp` call for the common
/// argument sizes (this runs on every recorded launch).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    match (a.len(), <[u8; 8]>::try_from(a), <[u8; 8]>::try_from(b)) {
        (8, Ok(x), Ok(y)) => u64::from_ne_bytes(x) == u64::from_ne_bytes(y),
        _ => a == b,
    }
}

impl HeadEntry {
    fn matches(&self, tid: u64, api: &str, ret: i64, k: &LaunchRef<'_>) -> bool {
        self.func == k.func
            && self.tid == tid
            && self.ret == ret
            && self.stream == k.stream
            && self.grid == k.grid
            && self.block == k.block
            && self.shmem == k.shmem
            && self.name == k.name
            && self.api == api
            && self.code == *k.code
    }

    fn set(&mut self, tid: u64, api: &str, ret: i64, k: &LaunchRef<'_>) {
        self.tid = tid;
        self.ret = ret;
        self.stream = k.stream;
        self.func = k.func;
        self.grid = k.grid;
        self.block = k.block;
        self.shmem = k.shmem;
        self.code = *k.code;
        self.api.clear();
        self.api.push_str(api);
        self.name.clear();
        self.name.push_str(k.name);
        self.bytes.clear();
        launch_head(&mut self.bytes, tid, api, ret, k);
        self.tail.clear();
        self.tail_misses = 0;
    }

    /// Whether `args` under `generation` are those `tail` was encoded from.
    fn tail_matches<'b>(&self, args: impl Iterator<Item = ArgIn<'b>>, generation: u64) -> bool {
        if self.tail.is_empty() || self.tail_generation != generation {
            return false;
        }
        let (mut n, mut at) = (0, 0);
        for a in args {
            let Some(k) = self.tail_args.get(n) else {
                return false;
            };
            if *k != ArgKey::of(&a) || !same_bytes(&self.tail_bytes[at..at + k.len], a.bytes) {
                return false;
            }
            n += 1;
            at += k.len;
        }
        n == self.tail_args.len()
    }
}

impl HeadCache {
    pub const fn new() -> HeadCache {
        HeadCache {
            entries: Vec::new(),
            next: 0,
        }
    }

    /// The entry for this head, made (and its head encoded) on a miss.
    fn entry(&mut self, tid: u64, api: &str, ret: i64, k: &LaunchRef<'_>) -> &mut HeadEntry {
        if let Some(i) = self
            .entries
            .iter()
            .position(|e| e.matches(tid, api, ret, k))
        {
            return &mut self.entries[i];
        }
        let i = if self.entries.len() < HEAD_CACHE_ENTRIES {
            self.entries.push(HeadEntry::default());
            self.entries.len() - 1
        } else {
            let i = self.next;
            self.next = (self.next + 1) % HEAD_CACHE_ENTRIES;
            i
        };
        let e = &mut self.entries[i];
        e.set(tid, api, ret, k);
        e
    }
}

/// [`encode_launch_scanned`] through `cache`: the head, or the whole line
/// when the arguments and `allocs` are as they were at this head's last
/// launch; otherwise the arguments are scanned under a view of `allocs`.
#[allow(clippy::too_many_arguments)]
pub fn encode_launch_scanned_cached<'b, I>(
    buf: &mut Vec<u8>,
    cache: &mut HeadCache,
    tid: u64,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
    args: I,
    allocs: &LiveAllocs,
) where
    I: IntoIterator<Item = ArgIn<'b>>,
    I::IntoIter: Clone,
{
    let args = args.into_iter();
    let e = cache.entry(tid, api, ret, k);
    buf.extend_from_slice(&e.bytes);
    // Read before the view: a change after it only makes the next launch miss.
    let generation = allocs.generation();
    if e.tail_matches(args.clone(), generation) {
        e.tail_misses = 0;
        buf.extend_from_slice(&e.tail);
        return;
    }
    e.tail_misses = e.tail_misses.saturating_add(1);
    let mut l = EventLine { buf };
    if e.tail_misses > 2 && !e.tail_misses.is_multiple_of(TAIL_RETRY) {
        e.tail.clear();
        l.args_scanned(args, &allocs.view());
        l.end();
        return;
    }
    let start = l.buf.len();
    e.tail_args.clear();
    e.tail_bytes.clear();
    l.args_scanned_each(args, &allocs.view(), |a| {
        e.tail_args.push(ArgKey::of(a));
        e.tail_bytes.extend_from_slice(a.bytes);
    });
    l.end();
    e.tail.clear();
    e.tail.extend_from_slice(&buf[start..]);
    e.tail_generation = generation;
}

fn launch_head<'a>(
    buf: &'a mut Vec<u8>,
    tid: u64,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
) -> EventLine<'a> {
    let mut l = EventLine::begin(buf, tid, api, "launch", ret);
    l.addr("stream", k.stream)
        .blob_hex("code", k.code)
        .string("name", k.name);
    if let Some(f) = k.func {
        l.addr("func", f);
    }
    l.dims("grid", k.grid)
        .dims("block", k.block)
        .num("shmem", u64::from(k.shmem));
    l
}

/// Writes the head of a line, `{"seq":N,"t":T`, which the body continues.
pub fn push_head(buf: &mut Vec<u8>, seq: u64, t: u64) {
    // Under the sink's lock: through a cursor, like an argument.
    let start = buf.len();
    buf.resize(start + 7 + 20 + 5 + 20, 0);
    let mut o = Out {
        s: &mut buf[start..],
        n: 0,
    };
    o.put(b"{\"seq\":");
    o.u64(seq);
    o.put(b",\"t\":");
    o.u64(t);
    let n = o.n;
    buf.truncate(start + n);
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

fn is_identifier(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// "00" "01" … "99": two digits per division.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Two lowercase hex digits per byte value.
const HEX_PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [HEX[i >> 4], HEX[i & 15]];
        i += 1;
    }
    t
};

/// Appends the first `n` bytes of `tmp`: a fixed-size copy (inlined moves)
/// then a cut, instead of a `memcpy` call for a variable length.
#[inline(always)]
fn push_prefix<const N: usize>(buf: &mut Vec<u8>, tmp: &[u8; N], n: usize) {
    let len = buf.len();
    buf.extend_from_slice(tmp);
    buf.truncate(len + n);
}

fn push_hex(buf: &mut Vec<u8>, bytes: &[u8]) {
    // Through a stack chunk: one fixed-size copy per 16 bytes instead of two
    // `push`es per byte.
    let mut chunk = [0u8; 32];
    for part in bytes.chunks(16) {
        for (i, b) in part.iter().enumerate() {
            chunk[2 * i..2 * i + 2].copy_from_slice(&HEX_PAIRS[*b as usize]);
        }
        push_prefix(buf, &chunk, 2 * part.len());
    }
}

/// Decimal digits of `v` (1 for 0).
#[inline(always)]
fn digits(v: u64) -> usize {
    // log10 from log2 (1233/4096 ≈ log10 2), corrected by one comparison.
    const POW10: [u64; 20] = {
        let mut t = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            t[i] = t[i - 1] * 10;
            i += 1;
        }
        t
    };
    let l2 = 63 - (v | 1).leading_zeros() as usize;
    let t = ((l2 + 1) * 1233) >> 12;
    (t + usize::from(v >= POW10[t])).max(1)
}

fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    if v < 10 {
        buf.push(b'0' + v as u8);
        return;
    }
    if v < 100 {
        let d = v as usize * 2;
        buf.extend_from_slice(&[DIGIT_PAIRS[d], DIGIT_PAIRS[d + 1]]);
        return;
    }
    let n = digits(v);
    let mut tmp = [0u8; 20];
    let mut i = n;
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    } else {
        i -= 1;
        tmp[i] = b'0' + v as u8;
    }
    push_prefix(buf, &tmp, n);
}

fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// `"0x…"`, lowercase, no leading zeros (`"0x0"` for 0), as hrr-core writes it.
fn push_addr(buf: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 20];
    let n = if v == 0 {
        1
    } else {
        (64 - v.leading_zeros() as usize).div_ceil(4)
    };
    tmp[0] = b'"';
    tmp[1] = b'0';
    tmp[2] = b'x';
    for i in 0..n {
        tmp[3 + n - 1 - i] = HEX[((v >> (4 * i)) & 0xf) as usize];
    }
    tmp[3 + n] = b'"';
    push_prefix(buf, &tmp, 4 + n);
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
        let e = Event {
            seq,
            t,
            tid,
            api: api.to_string(),
            ret,
            op: op.clone(),
        };
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
            Op::Alloc {
                ptr: a,
                size: 4096,
                mem: MemKind::Device,
            },
            Op::Alloc {
                ptr: a,
                size: 1,
                mem: MemKind::Pinned,
            },
            Op::Free { ptr: a, mem: None },
            Op::Free {
                ptr: Addr(0),
                mem: Some(MemKind::Managed),
            },
            Op::Memcpy {
                dir: Dir::H2d,
                dst: a,
                src: s,
                size: 16,
                stream: None,
                blob: Some(b),
            },
            Op::Memcpy {
                dir: Dir::D2d,
                dst: a,
                src: s,
                size: 0,
                stream: Some(Addr(0)),
                blob: None,
            },
            Op::Memset {
                dst: a,
                value: 0xff,
                size: 64,
                width: 1,
                stream: None,
            },
            Op::Memset {
                dst: a,
                value: 0xdead_beef,
                size: 64,
                width: 4,
                stream: Some(s),
            },
            Op::ModuleLoad { module: s, code: b },
            Op::ModuleUnload { module: s },
            Op::Function {
                module: s,
                name: "saxpy\"\\\n\u{1}é".into(),
                func: a,
            },
            Op::Launch {
                name: "_Z4vaddPKfS0_Pfi".into(),
                code: b,
                func: Some(a),
                grid: [12, 1, 1],
                block: [256, 1, 1],
                shmem: 0,
                stream: Addr(0),
                args: vec![
                    KernelArg {
                        offset: Some(0),
                        size: 8,
                        hex: HexBytes(vec![0, 0, 0xde, 0xad, 0, 0x7f, 0, 0]),
                        ptrs: vec![0],
                    },
                    KernelArg {
                        offset: None,
                        size: 4,
                        hex: HexBytes(vec![1, 2, 3, 4]),
                        ptrs: vec![],
                    },
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
            Op::StreamWaitEvent {
                stream: s,
                event: a,
            },
            Op::DeviceSync,
            Op::EventCreate { event: a },
            Op::EventDestroy { event: a },
            Op::EventRecord {
                event: a,
                stream: s,
            },
            Op::EventSync { event: a },
            Op::SetDevice { device: -1 },
            Op::HostRegister { ptr: a, size: 9 },
            Op::HostUnregister { ptr: a },
            Op::Relocate {
                dst: a,
                size: 24,
                blob: BlobId::of(b"offsets"),
            },
            Op::Eof { events: 42 },
        ]
    }

    #[test]
    fn every_op_matches_hrr_core_byte_for_byte() {
        for op in all_ops() {
            for ret in [0, 1, -3, i64::MAX] {
                let r = reference(u64::MAX, 123, 9, "hipX", ret, &op);
                let o = ours(u64::MAX, 123, 9, "hipX", ret, &op);
                assert_eq!(
                    String::from_utf8_lossy(&o),
                    String::from_utf8_lossy(&r),
                    "{op:?}"
                );
            }
        }
    }

    #[test]
    fn scanned_launch_matches_hrr_core() {
        use crate::record::kernel_args::ArgIn;
        let allocs = crate::record::live_allocs::LiveAllocs::new();
        allocs.insert(0x7f12_3456_0000, 0x1000, MemKind::Device);
        let p = 0x7f12_3456_0010u64.to_le_bytes();
        let mut s = vec![1u8];
        s.extend_from_slice(&p);
        s.extend_from_slice(&[0; 3]);
        let short = [1u8, 2, 3, 4];
        let args = [
            ArgIn {
                offset: Some(0),
                bytes: &p,
                pointer: true,
            },
            ArgIn {
                offset: Some(8),
                bytes: &s,
                pointer: false,
            },
            ArgIn {
                offset: Some(20),
                bytes: &short,
                pointer: true,
            },
        ];
        let code = BlobId::of(b"c");
        let k = LaunchRef {
            name: "k",
            code: &BlobHex::of(&code),
            func: Some(0x42),
            grid: [2, 1, 1],
            block: [64, 1, 1],
            shmem: 16,
            stream: 0x99,
        };
        let mut body = Vec::new();
        encode_launch_scanned(
            &mut body,
            5,
            "hipModuleLaunchKernel",
            0,
            &k,
            args,
            &allocs.view(),
        );
        let arg = |offset, hex: &[u8], ptrs: Vec<u32>| KernelArg {
            offset: Some(offset),
            size: hex.len() as u32,
            hex: HexBytes(hex.to_vec()),
            ptrs,
        };
        let op = Op::Launch {
            name: "k".into(),
            code,
            func: Some(Addr(0x42)),
            grid: [2, 1, 1],
            block: [64, 1, 1],
            shmem: 16,
            stream: Addr(0x99),
            args: vec![
                arg(0, &p, vec![0]),
                arg(8, &s, vec![1]),
                arg(20, &short, vec![]),
            ],
        };
        assert_eq!(
            line(3, 4, &body),
            reference(3, 4, 5, "hipModuleLaunchKernel", 0, &op)
        );
    }

    proptest! {
        /// Arguments encoded while scanned (pointers at random offsets,
        /// several arguments, pointer and scanned ones) match hrr-core.
        #[test]
        fn scanned_args_match_hrr_core(
            parts in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..20), 0u8..3, any::<bool>(), 0u32..100_000),
                0..5,
            ),
        ) {
            use crate::record::kernel_args::ArgIn;
            let allocs = crate::record::live_allocs::LiveAllocs::new();
            allocs.insert(0x7f12_3456_0000, 0x1000, MemKind::Device);
            let datas: Vec<Vec<u8>> = parts
                .iter()
                .map(|(pre, n, _, _)| {
                    let mut d = pre.clone();
                    for i in 0..*n {
                        d.extend_from_slice(&(0x7f12_3456_0010u64 + u64::from(i)).to_le_bytes());
                        d.extend_from_slice(pre);
                    }
                    d
                })
                .collect();
            let args: Vec<ArgIn<'_>> = parts
                .iter()
                .zip(&datas)
                .map(|((_, _, ptr, off), d)| ArgIn { offset: (*off != 7).then_some(*off), bytes: d, pointer: *ptr })
                .collect();
            let code = BlobId::of(b"c");
            let k = LaunchRef {
                name: "k",
                code: &BlobHex::of(&code),
                func: None,
                grid: [2, 1, 1],
                block: [64, 1, 1],
                shmem: 0,
                stream: 0,
            };
            let mut body = Vec::new();
            encode_launch_scanned(&mut body, 5, "hipLaunchKernel", 0, &k, args.iter().copied(), &allocs.view());
            let kargs = args
                .iter()
                .map(|a| {
                    let mut ptrs = Vec::new();
                    if a.pointer {
                        if a.bytes.len() >= 8 {
                            ptrs.push(0);
                        }
                    } else {
                        allocs.view().scan(a.bytes, &mut ptrs);
                    }
                    KernelArg { offset: a.offset, size: a.bytes.len() as u32, hex: HexBytes(a.bytes.to_vec()), ptrs }
                })
                .collect();
            let op = Op::Launch {
                name: "k".into(),
                code,
                func: None,
                grid: [2, 1, 1],
                block: [64, 1, 1],
                shmem: 0,
                stream: Addr(0),
                args: kargs,
            };
            prop_assert_eq!(line(3, 4, &body), reference(3, 4, 5, "hipLaunchKernel", 0, &op));
        }

        /// A launch line from the cache is the bytes the encoder writes,
        /// whichever launches came before (keys drawn from small pools, so
        /// hits, misses and evictions all happen), and whatever allocations
        /// came and went in between (an argument word that points into an
        /// allocation made or freed since the last launch must be rescanned).
        #[test]
        fn cached_launch_lines_match_the_encoder(
            seq in proptest::collection::vec((0u8..3, 0u8..2, 0u8..3, 0u8..2, 0u8..6, 0u8..2, 0u8..3, 0u8..3), 1..40),
            arg in proptest::collection::vec(any::<u8>(), 0..24),
        ) {
            use crate::record::kernel_args::ArgIn;
            let allocs = crate::record::live_allocs::LiveAllocs::new();
            allocs.insert(0x7f12_3456_0000, 0x1000, MemKind::Device);
            let late = 0x7f99_0001_0000u64;
            let mut words = late.to_le_bytes().to_vec();
            words.extend_from_slice(&0x7f12_3456_0010u64.to_le_bytes());
            let pool: [&[u8]; 3] = [&arg, &words, &words[..8]];
            let codes = [BlobHex::of(&BlobId::of(b"a")), BlobHex::of(&BlobId::of(b"b"))];
            let names = ["k", "k2", "we\"ird"];
            let apis = ["hipModuleLaunchKernel", "cudaLaunchKernel"];
            let mut cache = HeadCache::new();
            for (name, code, tid, api, cfg, ret, which, change) in seq {
                match change {
                    1 => allocs.insert(late, 0x100, MemKind::Device),
                    2 => { allocs.remove(late); }
                    _ => {}
                }
                let c = u32::from(cfg);
                let k = LaunchRef {
                    name: names[name as usize],
                    code: &codes[code as usize],
                    func: (cfg != 5).then_some(0x42 + u64::from(cfg % 2)),
                    grid: [1 + c % 2, 1, 1],
                    block: [64, 1 + c % 3, 1],
                    shmem: c / 3,
                    stream: u64::from(cfg % 2) * 0x99,
                };
                let args = [ArgIn { offset: Some(0), bytes: pool[which as usize], pointer: false }];
                let (tid, ret) = (u64::from(tid) + 7, -i64::from(ret));
                let api = apis[api as usize];
                let mut want = Vec::new();
                encode_launch_scanned(&mut want, tid, api, ret, &k, args, &allocs.view());
                let mut got = b"x".to_vec();
                encode_launch_scanned_cached(&mut got, &mut cache, tid, api, ret, &k, args, &allocs);
                prop_assert_eq!(&got[1..], &want[..]);
            }
        }
    }

    proptest! {
        /// The whole-line cache under one or two heads (so that lines are
        /// reused, dropped after misses and retried): equal to the encoder
        /// whatever the argument values and the allocations made or freed
        /// between launches.
        #[test]
        fn cached_launch_tails_follow_arguments_and_allocations(
            seq in proptest::collection::vec((0u8..2, 0u8..4, 0u8..4), 1..300),
        ) {
            use crate::record::kernel_args::ArgIn;
            let allocs = crate::record::live_allocs::LiveAllocs::new();
            allocs.insert(0x7f12_3456_0000, 0x1000, MemKind::Device);
            let late = 0x7f99_0001_0000u64;
            let code = BlobHex::of(&BlobId::of(b"a"));
            let mut cache = HeadCache::new();
            for (head, which, change) in seq {
                match change {
                    1 => allocs.insert(late, 0x100, MemKind::Device),
                    2 => { allocs.remove(late); }
                    _ => {}
                }
                let k = LaunchRef { name: "k", code: &code, func: Some(1 + u64::from(head)), grid: [1; 3], block: [1; 3], shmem: 0, stream: 0 };
                let (a, b) = ([late, 0x7f12_3456_0010, 7, 0][which as usize].to_le_bytes(), 5u32.to_le_bytes());
                let args = [
                    ArgIn { offset: Some(0), bytes: &a, pointer: false },
                    ArgIn { offset: Some(8), bytes: &b, pointer: false },
                ];
                let mut want = Vec::new();
                encode_launch_scanned(&mut want, 9, "cudaLaunchKernel", 0, &k, args, &allocs.view());
                let mut got = Vec::new();
                encode_launch_scanned_cached(&mut got, &mut cache, 9, "cudaLaunchKernel", 0, &k, args, &allocs);
                prop_assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
            }
        }
    }

    proptest! {
        #[test]
        fn numbers_print_like_serde(v: u64, i: i64) {
            let mut b = Vec::new();
            push_u64(&mut b, v);
            prop_assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
            let mut b = Vec::new();
            push_i64(&mut b, i);
            prop_assert_eq!(String::from_utf8(b).unwrap(), i.to_string());
        }

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
