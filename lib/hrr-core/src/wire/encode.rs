//! The fast encoder: an event's NDJSON line written straight into a byte
//! buffer from borrowed values.
//!
//! [`Event::write_line`](crate::Event::write_line) is the reference
//! encoding. A recorder cannot afford it on its hot path: it needs an owned
//! `Event` (a `String` per api, a `Vec` per kernel argument) and serde's
//! writer. This module writes the identical bytes from borrowed values, in
//! the field order of [`Wire`](crate::wire::Wire); the tests compare both
//! encoders byte for byte for every op, so a change in the wire form fails
//! here rather than in a reader.
//!
//! [`encode_op`] is generated from the op table (`op_table!` in
//! [`crate::event`]): each field is written under its key by the key's
//! codec (`write_value!`, below), in key order whatever the field's place
//! in the table. Launches have their own entry points ([`launch_head`],
//! [`EventLine::arg_with`]): a recorder writes them from the application's
//! memory, with pointer offsets found while the arguments are written.
//!
//! A line is produced in two parts. The *body* (everything after `seq` and
//! `t`, starting with `,"tid":`) is encoded outside any lock by the
//! recording thread; the *head* `{"seq":N,"t":T` ([`push_head`]) is written
//! by the capture's sink under its lock, where `seq` and `t` are assigned.
//!
//! Arguments whose pointers are only found while they are written (the
//! capture scans them against its live allocations) go through
//! [`EventLine::arg_with`]; what finds the pointers stays with the caller.
//!
//! Everything here is on the capture's per-call path and called from
//! another crate: small functions are `#[inline]` so that they can be
//! inlined there.

use crate::event::{Dir, KernelArg, LaunchAttr, MemKind, Op, op_field, op_table};
use crate::graph::{GraphNode, NodeBlob};
use crate::hex::{Addr, BlobId, HexBytes};
use crate::wire::form::{Field, Key, wire_keys};

/// One kernel argument, borrowed from the application's memory, with its
/// pointer offsets already known.
#[derive(Clone, Copy, Debug)]
pub struct ArgRef<'a> {
    /// Byte offset in the packed kernarg buffer, when known.
    pub offset: Option<u32>,
    /// The argument's bytes.
    pub bytes: &'a [u8],
    /// Byte offsets inside `bytes` of device pointers.
    pub ptrs: &'a [u32],
    /// Byte offsets inside `bytes` of texture or surface objects.
    pub objs: &'a [u32],
}

/// A blob id as its 64 lowercase hex digits, computed once per code object
/// (every launch event carries its kernel's code id).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BlobHex(pub [u8; 64]);

impl BlobHex {
    /// The digits of `id`.
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
    /// The kernel's name.
    pub name: &'a str,
    /// Its code object's id.
    pub code: &'a BlobHex,
    /// The function handle the application launched, when it used one.
    pub func: Option<u64>,
    /// Grid dimensions, in blocks.
    pub grid: [u32; 3],
    /// Block dimensions, in threads.
    pub block: [u32; 3],
    /// Dynamic shared memory, in bytes.
    pub shmem: u32,
    /// The stream handle (0: the default stream).
    pub stream: u64,
}

/// A body being written into a buffer.
pub struct EventLine<'a> {
    buf: &'a mut Vec<u8>,
}

impl<'a> EventLine<'a> {
    /// Starts a body: `,"tid":…,"api":…,"op":…,"ret":…` and `,"dev":…`
    /// when `dev` is not 0.
    #[inline]
    pub fn begin(
        buf: &'a mut Vec<u8>,
        tid: u64,
        dev: u32,
        api: &str,
        op: &str,
        ret: i64,
    ) -> EventLine<'a> {
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
        if dev != 0 {
            buf.extend_from_slice(b",\"dev\":");
            push_u64(buf, u64::from(dev));
        }
        EventLine { buf }
    }

    /// Continues a body already begun in `buf` (a launch head kept from an
    /// earlier line, say).
    #[inline]
    pub fn resume(buf: &'a mut Vec<u8>) -> EventLine<'a> {
        EventLine { buf }
    }

    #[inline]
    fn key(&mut self, key: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// `"key":"0x…"`, an address or handle.
    #[inline]
    pub fn addr(&mut self, key: &str, v: u64) -> &mut Self {
        self.key(key);
        push_addr(self.buf, v);
        self
    }

    /// `"key":N`.
    #[inline]
    pub fn num(&mut self, key: &str, v: u64) -> &mut Self {
        self.key(key);
        push_u64(self.buf, v);
        self
    }

    /// `"key":N`, signed.
    #[inline]
    pub fn int(&mut self, key: &str, v: i64) -> &mut Self {
        self.key(key);
        push_i64(self.buf, v);
        self
    }

    /// `"key":"…"`, escaped as serde_json escapes it.
    #[inline]
    pub fn string(&mut self, key: &str, s: &str) -> &mut Self {
        self.key(key);
        push_str(self.buf, s);
        self
    }

    /// `"key":"w"` for a word that needs no escaping (an enum's name).
    #[inline]
    pub fn word(&mut self, key: &str, w: &str) -> &mut Self {
        self.key(key);
        self.buf.push(b'"');
        self.buf.extend_from_slice(w.as_bytes());
        self.buf.push(b'"');
        self
    }

    /// `"key":"…"`, a blob id's 64 hex digits.
    #[inline]
    pub fn blob(&mut self, key: &str, id: &BlobId) -> &mut Self {
        self.blob_hex(key, &BlobHex::of(id))
    }

    /// `"key":"…"`, from digits already computed.
    #[inline]
    pub fn blob_hex(&mut self, key: &str, hex: &BlobHex) -> &mut Self {
        self.key(key);
        self.buf.push(b'"');
        self.buf.extend_from_slice(&hex.0);
        self.buf.push(b'"');
        self
    }

    /// `"key":[x,y,z]`.
    #[inline]
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

    /// `"key":"…"`, bytes as lowercase hex digits.
    #[inline]
    pub fn hex(&mut self, key: &str, bytes: &[u8]) -> &mut Self {
        self.key(key);
        self.buf.push(b'"');
        push_hex(self.buf, bytes);
        self.buf.push(b'"');
        self
    }

    /// `"key":[a,b,…]`, numbers.
    #[inline]
    pub fn nums(&mut self, key: &str, v: &[u64]) -> &mut Self {
        self.key(key);
        self.buf.push(b'[');
        for (i, n) in v.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            push_u64(self.buf, *n);
        }
        self.buf.push(b']');
        self
    }

    /// `"attrs":[{"id":…,"hex":"…"},…]` of a CUDA launch (omitted when empty).
    pub fn attrs<'b>(&mut self, attrs: impl IntoIterator<Item = (u32, &'b [u8])>) -> &mut Self {
        let mut first = true;
        for (id, hex) in attrs {
            if first {
                self.key("attrs");
                self.buf.push(b'[');
                first = false;
            } else {
                self.buf.push(b',');
            }
            self.buf.extend_from_slice(b"{\"id\":");
            push_u64(self.buf, u64::from(id));
            self.buf.extend_from_slice(b",\"hex\":\"");
            push_hex(self.buf, hex);
            self.buf.extend_from_slice(b"\"}");
        }
        if !first {
            self.buf.push(b']');
        }
        self
    }

    /// `"args":[…]` from arguments whose pointer offsets are known.
    #[inline]
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
            self.buf.push(b']');
            if !a.objs.is_empty() {
                self.buf.extend_from_slice(b",\"objs\":[");
                for (j, p) in a.objs.iter().enumerate() {
                    if j > 0 {
                        self.buf.push(b',');
                    }
                    push_u64(self.buf, u64::from(*p));
                }
                self.buf.push(b']');
            }
            self.buf.push(b'}');
        }
        self.buf.push(b']');
        self
    }

    /// Opens `"args":[`, for arguments written one by one with
    /// [`EventLine::arg_with`]; [`EventLine::close_args`] ends the list.
    #[inline]
    pub fn open_args(&mut self) {
        self.key("args");
        self.buf.push(b'[');
    }

    /// Writes argument number `index` (from 0) of the list: its offset,
    /// size and bytes, then the pointer offsets `ptrs` pushes while it runs
    /// (ascending, at most one per 8 bytes of the argument, as a scan that
    /// skips a found pointer's word gives them), then `objs`, the offsets
    /// of texture and surface objects (omitted when empty).
    ///
    /// The argument is written into room made for its longest form, through
    /// a local cursor, then cut to length: no length update and capacity
    /// check in memory per piece.
    #[inline]
    pub fn arg_with(
        &mut self,
        index: usize,
        offset: Option<u32>,
        bytes: &[u8],
        ptrs: impl FnOnce(&mut PtrList<'_, '_>),
        objs: &[u32],
    ) {
        let start = self.buf.len();
        let max = Out::arg_max(bytes.len()) + Out::objs_max(objs.len());
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
        if index > 0 {
            o.byte(b',');
        }
        o.arg_head(offset, bytes);
        let mut list = PtrList {
            out: &mut o,
            first: true,
        };
        ptrs(&mut list);
        o.byte(b']');
        if !objs.is_empty() {
            o.put(b",\"objs\":[");
            for (j, &p) in objs.iter().enumerate() {
                if j > 0 {
                    o.byte(b',');
                }
                o.u64(u64::from(p));
            }
            o.byte(b']');
        }
        o.byte(b'}');
        let n = o.n;
        self.buf.truncate(start + n);
    }

    /// Closes the list [`EventLine::open_args`] opened.
    #[inline]
    pub fn close_args(&mut self) {
        self.buf.push(b']');
    }

    /// `{"offset":…,"size":…,"hex":"…","ptrs":[` of one argument.
    #[inline]
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

    /// `"nodes":[…]` of a `graph_exec` event. Topologies are written once
    /// per instantiation, off any hot path: through serde, which is the
    /// reference form by construction.
    pub fn nodes(&mut self, nodes: &[crate::graph::GraphNode]) -> &mut Self {
        self.key("nodes");
        // Serialising plain values into a Vec cannot fail.
        serde_json::to_writer(&mut *self.buf, nodes).expect("graph nodes serialise");
        self
    }

    /// `"key":…`, a rare value in serde's JSON form.
    pub fn json<T: serde::Serialize + ?Sized>(&mut self, key: &str, v: &T) -> &mut Self {
        self.key(key);
        // Serialising plain values into a Vec cannot fail.
        serde_json::to_writer(&mut *self.buf, v).expect("plain values serialise");
        self
    }

    /// `"blobs":[{"node":N,"blob":"…"},…]` of a `graph_launch` event.
    pub fn node_blobs(&mut self, blobs: &[crate::graph::NodeBlob]) -> &mut Self {
        self.key("blobs");
        self.buf.push(b'[');
        for (i, b) in blobs.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.buf.extend_from_slice(b"{\"node\":");
            push_u64(self.buf, u64::from(b.node));
            self.buf.extend_from_slice(b",\"blob\":\"");
            self.buf.extend_from_slice(&BlobHex::of(&b.blob).0);
            self.buf.extend_from_slice(b"\"}");
        }
        self.buf.push(b']');
        self
    }

    /// Closes the object and the line.
    #[inline]
    pub fn end(self) {
        self.buf.extend_from_slice(b"}\n");
    }
}

/// The pointer offsets of one argument being written by
/// [`EventLine::arg_with`].
pub struct PtrList<'c, 'b> {
    out: &'c mut Out<'b>,
    first: bool,
}

impl PtrList<'_, '_> {
    /// Appends the byte offset of a pointer inside the argument.
    #[inline(always)]
    pub fn push(&mut self, offset: u32) {
        let first = std::mem::replace(&mut self.first, false);
        let i = offset as usize / 8;
        if offset.is_multiple_of(8) && i < OFFSET_TEXT.len() {
            // One fixed-size copy (`Out::arg_max` leaves 11 bytes per
            // pointer, so the padding lands in room of its own).
            let e = &OFFSET_TEXT[i];
            let len = usize::from(e[7]);
            let o = &mut *self.out;
            if first {
                o.s[o.n..o.n + 7].copy_from_slice(&e[1..]);
                o.n += len - 1;
            } else {
                o.s[o.n..o.n + 8].copy_from_slice(e);
                o.n += len;
            }
            return;
        }
        if !first {
            self.out.byte(b',');
        }
        self.out.u64(u64::from(offset));
    }
}

/// `,` and the decimal digits of each 8-byte-aligned offset below 8 KiB,
/// padded to 8 bytes, the length (comma included) in the last byte. A
/// framework's by-value list of tensor addresses marks hundreds of such
/// offsets per launch; formatting them one by one was most of encoding it.
static OFFSET_TEXT: [[u8; 8]; 1024] = {
    let mut t = [[0u8; 8]; 1024];
    let mut i = 0;
    while i < t.len() {
        let mut v = i * 8;
        let mut d = [0u8; 4];
        let mut n = 0;
        loop {
            d[n] = b'0' + (v % 10) as u8;
            n += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        t[i][0] = b',';
        let mut k = 0;
        while k < n {
            t[i][1 + k] = d[n - 1 - k];
            k += 1;
        }
        t[i][7] = (n + 1) as u8;
        i += 1;
    }
    t
};

/// A cursor over room already made in a buffer (see [`EventLine::arg_with`]).
struct Out<'a> {
    s: &'a mut [u8],
    n: usize,
}

impl Out<'_> {
    /// The longest encoding of an argument of `len` bytes: a comma,
    /// `{"offset":` u32 `,"size":` u64 `,"hex":"` hex `","ptrs":[` and at
    /// most one pointer per byte offset (never closer than 8 bytes apart),
    /// each a u32 and a comma, then `]}`.
    #[inline(always)]
    fn arg_max(len: usize) -> usize {
        1 + 10 + 10 + 8 + 20 + 8 + 2 * len + 10 + 11 * (len / 8 + 1) + 2
    }

    /// The longest encoding of `n` object offsets: `,"objs":[`, each a u32
    /// and a comma, `]`.
    #[inline(always)]
    fn objs_max(n: usize) -> usize {
        if n == 0 { 0 } else { 9 + 11 * n + 1 }
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
    fn u64(&mut self, v: u64) {
        if v < 10 {
            self.byte(b'0' + v as u8);
            return;
        }
        let nd = digits(v);
        put_digits(v, &mut self.s[self.n..self.n + nd]);
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
        hex_into(&mut self.s[self.n..self.n + 2 * bytes.len()], bytes);
        self.n += 2 * bytes.len();
        self.put(b"\",\"ptrs\":[");
    }
}

/// `"key":value` for a value `$v` (a reference) written by its key's codec
/// (the key table's `=> codec`), as one writes it by hand.
macro_rules! write_value {
    (addr, $l:ident, $k:expr, $v:expr) => {
        $l.addr($k, $v.0)
    };
    (uint, $l:ident, $k:expr, $v:expr) => {
        $l.num($k, *$v)
    };
    (u32, $l:ident, $k:expr, $v:expr) => {
        $l.num($k, u64::from(*$v))
    };
    (u8, $l:ident, $k:expr, $v:expr) => {
        $l.num($k, u64::from(*$v))
    };
    (i32, $l:ident, $k:expr, $v:expr) => {
        $l.int($k, i64::from(*$v))
    };
    (mem, $l:ident, $k:expr, $v:expr) => {
        $l.word($k, mem_str(*$v))
    };
    (dir, $l:ident, $k:expr, $v:expr) => {
        $l.word($k, $v.as_str())
    };
    (blob, $l:ident, $k:expr, $v:expr) => {
        $l.blob($k, $v)
    };
    (str, $l:ident, $k:expr, $v:expr) => {
        $l.string($k, $v)
    };
    (dims, $l:ident, $k:expr, $v:expr) => {
        $l.dims($k, *$v)
    };
    (nums, $l:ident, $k:expr, $v:expr) => {
        $l.nums($k, $v)
    };
    (hex, $l:ident, $k:expr, $v:expr) => {
        $l.hex($k, &$v.0)
    };
    // The lists with a form of their own spell their keys themselves.
    (args, $l:ident, $k:expr, $v:expr) => {
        $l.args($v.iter().map(|a| ArgRef {
            offset: a.offset,
            bytes: &a.hex.0,
            ptrs: &a.ptrs,
            objs: &a.objs,
        }))
    };
    (attrs, $l:ident, $k:expr, $v:expr) => {
        $l.attrs($v.iter().map(|a| (a.id, &a.hex.0[..])))
    };
    (nodes, $l:ident, $k:expr, $v:expr) => {
        $l.nodes($v)
    };
    (node_blobs, $l:ident, $k:expr, $v:expr) => {
        $l.node_blobs($v)
    };
    (addrs, $l:ident, $k:expr, $v:expr) => {
        $l.json($k, $v)
    };
    (ints, $l:ident, $k:expr, $v:expr) => {
        $l.json($k, $v)
    };
}

/// What a codec's writer takes (a reference to it).
macro_rules! write_type {
    (addr) => {
        Addr
    };
    (uint) => {
        u64
    };
    (u32) => {
        u32
    };
    (u8) => {
        u8
    };
    (i32) => {
        i32
    };
    (mem) => {
        MemKind
    };
    (dir) => {
        Dir
    };
    (blob) => {
        BlobId
    };
    (str) => {
        str
    };
    (dims) => {
        [u32; 3]
    };
    (nums) => {
        [u64]
    };
    (hex) => {
        HexBytes
    };
    (args) => {
        [KernelArg]
    };
    (attrs) => {
        [LaunchAttr]
    };
    (nodes) => {
        [GraphNode]
    };
    (node_blobs) => {
        [NodeBlob]
    };
    (addrs) => {
        [Addr]
    };
    (ints) => {
        [i32]
    };
}

/// Callback of `wire_keys!`: `put::KEY(l, v)` writes `"KEY":v` by the
/// key's codec, the key a constant in it (the compiler inlines the small
/// writers and calls the others).
macro_rules! define_put {
    ($( $(#[$m:meta])* $k:ident : $t:ty => $codec:ident ),* $(,)?) => {
        /// One writer per key of the key table.
        // Keys no op has (a timed replay's `dev_t`, `dev_ns`) have one too.
        #[allow(dead_code)]
        mod put {
            use super::*;
            $(
                pub(super) fn $k(l: &mut EventLine<'_>, v: &write_type!($codec)) {
                    write_value!($codec, l, stringify!($k), v);
                }
            )*
        }
    };
}

wire_keys!(define_put);

/// How many of `ranks` are below `r`: the place among an op's keys, in
/// key order, of the key ranked `r`.
const fn ranked_below(ranks: &[u8], r: u8) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < ranks.len() {
        n += (ranks[i] < r) as usize;
        i += 1;
    }
    n
}

/// Where `r` is in `ranks` (the place of a field in its op's declaration).
const fn place(ranks: &[u8], r: u8) -> usize {
    let mut i = 0;
    while ranks[i] != r {
        i += 1;
    }
    i
}

/// Whether no two of `ranks` are equal (no two fields of an op share a key).
const fn distinct(ranks: &[u8]) -> bool {
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i + 1;
        while j < ranks.len() {
            if ranks[i] == ranks[j] {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

/// A field's key rank (callback of `op_field!`).
macro_rules! key_rank {
    ([] $f:ident $t:ty; $k:ident; $d:tt $omit:tt) => {
        Key::$k as u8
    };
}

/// A field written under its key (callback of `op_field!`): its value, if
/// it has one (an `Option` field may not) and it is not an omitted default.
macro_rules! put_field {
    ([$l:ident] $f:ident $t:ty; $k:ident; $d:tt ()) => {
        if let Some(v) = <$t as Field>::value($f) {
            put::$k(&mut $l, v);
        }
    };
    ([$l:ident] $f:ident $t:ty; $k:ident; ($d:expr) (omit)) => {{
        let default: $t = $d;
        if *$f != default {
            put::$k(&mut $l, $f);
        }
    }};
}

/// An op's fields, written in key order whatever their order in the
/// table: slot *i* writes the field whose key comes *i*-th among the op's
/// keys. Which field that is is a constant, so each slot compiles to the
/// one write it makes.
macro_rules! put_fields_in_key_order {
    ($name:literal $l:ident $all:tt $( ($f:ident $t:ty; $wa:tt) )*) => {
        const RANKS: &[u8] = &[$( op_field!(key_rank [] $f $t; $wa) ),*];
        const _: () = assert!(distinct(RANKS), concat!("op `", $name, "`: two fields share a key"));
        $( put_slot!($l RANKS (op_field!(key_rank [] $f $t; $wa)) $all); )*
    };
}

/// One slot of [`put_fields_in_key_order!`]: the field of the `$slot`-ranked
/// key's place.
macro_rules! put_slot {
    ($l:ident $ranks:ident ($slot:expr) [$( ($f:ident $t:ty; $wa:tt) )*]) => {
        $(
            if const { ranked_below($ranks, op_field!(key_rank [] $f $t; $wa)) == place($ranks, $slot) } {
                op_field!(put_field [$l] $f $t; $wa);
            }
        )*
    };
}

/// Callback of `op_table!`: [`encode_op`].
macro_rules! encode_ops {
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
        /// Encodes the body of any event: its fields in the order of
        /// [`Wire`](crate::wire::Wire)'s keys, the bytes of
        /// [`Event::write_line`](crate::Event::write_line). A recorder
        /// writes a launch from the application's memory instead
        /// ([`launch_head`], [`EventLine::arg_with`]).
        pub fn encode_op(buf: &mut Vec<u8>, tid: u64, dev: u32, api: &str, ret: i64, op: &Op) {
            let mut l = EventLine::begin(buf, tid, dev, api, op.name(), ret);
            match op {
                $(
                    Op::$V $({ $($f),* })? => {
                        $(put_fields_in_key_order!(
                            $name l [$( ($f $t; [$($($wa)*)?]) )*] $( ($f $t; [$($($wa)*)?]) )*
                        );)?
                    }
                )*
            }
            l.end();
        }
    };
}

op_table!(encode_ops);

/// Encodes the body of a `launch` event whose pointer offsets are known.
#[inline]
pub fn encode_launch(
    buf: &mut Vec<u8>,
    tid: u64,
    dev: u32,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
    args: &[ArgRef<'_>],
) {
    let mut l = launch_head(buf, tid, dev, api, ret, k);
    l.args(args.iter().copied());
    l.end();
}

/// Begins the body of a `launch` event: everything before `,"args":`.
#[inline]
pub fn launch_head<'a>(
    buf: &'a mut Vec<u8>,
    tid: u64,
    dev: u32,
    api: &str,
    ret: i64,
    k: &LaunchRef<'_>,
) -> EventLine<'a> {
    let mut l = EventLine::begin(buf, tid, dev, api, "launch", ret);
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
#[inline]
pub fn push_head(buf: &mut Vec<u8>, seq: u64, t: u64) {
    // Under the capture sink's lock: through a cursor, like an argument.
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

#[inline]
fn mem_str(m: MemKind) -> &'static str {
    match m {
        MemKind::Device => "device",
        MemKind::Host => "host",
        MemKind::Managed => "managed",
        MemKind::Pinned => "pinned",
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[inline]
fn is_identifier(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// "00" "01" … "99": two digits per division.
pub(super) const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
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

#[inline]
fn push_hex(buf: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() >= SIMD_HEX_FROM {
        let at = buf.len();
        buf.resize(at + 2 * bytes.len(), 0);
        hex_into(&mut buf[at..], bytes);
        return;
    }
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

/// Argument length from which hex digits are made 16 or 32 bytes at a time
/// (`const_hex`, SIMD): a framework's by-value lists of tensor addresses
/// are KiBs, and a byte at a time was a third of recording such a launch.
const SIMD_HEX_FROM: usize = 64;

/// Writes the lowercase hex digits of `bytes` into `out`, exactly twice as
/// long.
#[inline(always)]
fn hex_into(out: &mut [u8], bytes: &[u8]) {
    if bytes.len() >= SIMD_HEX_FROM {
        const_hex::encode_to_slice(bytes, out).expect("two digits of room per byte");
        return;
    }
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&HEX_PAIRS[*b as usize]);
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

/// Writes `v` in decimal into `d`, which is [`digits`]`(v)` bytes long,
/// two digits at a time.
#[inline(always)]
fn put_digits(mut v: u64, d: &mut [u8]) {
    let mut i = d.len();
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
}

#[inline]
fn push_u64(buf: &mut Vec<u8>, v: u64) {
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
    put_digits(v, &mut tmp[..n]);
    push_prefix(buf, &tmp, n);
}

#[inline]
fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// `"0x…"`, lowercase, no leading zeros (`"0x0"` for 0), as hrr-core writes it.
#[inline]
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
#[inline]
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
#[inline]
pub fn line(seq: u64, t: u64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 32);
    push_head(&mut out, seq, t);
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Addr, Dir, Event, HexBytes, KernelArg};
    use proptest::prelude::*;

    #[test]
    fn hex_of_every_length_and_byte_is_lowercase_pairs() {
        let bytes: Vec<u8> = (0..600u32).map(|i| (i * 7 + i / 256) as u8).collect();
        for n in (0..=130).chain([255, 256, 257, 600]) {
            let want: String = bytes[..n].iter().map(|b| format!("{b:02x}")).collect();
            let mut buf = b"prefix".to_vec();
            push_hex(&mut buf, &bytes[..n]);
            assert_eq!(std::str::from_utf8(&buf).unwrap(), format!("prefix{want}"));
            let mut out = vec![0u8; 2 * n];
            hex_into(&mut out, &bytes[..n]);
            assert_eq!(std::str::from_utf8(&out).unwrap(), want, "{n} bytes");
        }
    }

    fn reference(seq: u64, t: u64, tid: u64, api: &str, ret: i64, op: &Op) -> Vec<u8> {
        let e = Event {
            seq,
            t,
            tid,
            api: api.to_string(),
            ret,
            dev: 0,
            op: op.clone(),
        };
        let mut v = Vec::new();
        e.write_line(&mut v);
        v
    }

    fn ours(seq: u64, t: u64, tid: u64, api: &str, ret: i64, op: &Op) -> Vec<u8> {
        let mut body = Vec::new();
        encode_op(&mut body, tid, 0, api, ret, op);
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
                        objs: Vec::new(),
                    },
                    KernelArg {
                        offset: None,
                        size: 4,
                        hex: HexBytes(vec![1, 2, 3, 4]),
                        ptrs: vec![],
                        objs: Vec::new(),
                    },
                ],
                attrs: vec![],
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
                attrs: vec![],
            },
            Op::Launch {
                name: "clustered".into(),
                code: b,
                func: Some(a),
                grid: [8, 1, 1],
                block: [128, 1, 1],
                shmem: 0,
                stream: s,
                args: vec![KernelArg {
                    offset: Some(0),
                    size: 4,
                    hex: HexBytes(vec![9, 9, 9, 9]),
                    ptrs: vec![],
                    objs: Vec::new(),
                }],
                attrs: vec![
                    crate::event::LaunchAttr {
                        id: 4,
                        hex: HexBytes(vec![2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]),
                    },
                    crate::event::LaunchAttr {
                        id: 2,
                        hex: HexBytes(vec![1; 64]),
                    },
                ],
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
            Op::CtxCreate { ctx: s, device: 0 },
            Op::CtxDestroy { ctx: s },
            Op::CtxSet {
                ctx: s,
                device: Some(1),
            },
            Op::CtxSet {
                ctx: Addr(0),
                device: None,
            },
            Op::VaReserve {
                ptr: a,
                size: 1 << 40,
            },
            Op::VaFree {
                ptr: a,
                size: 1 << 40,
            },
            Op::MemCreate {
                handle: s,
                size: 2 << 20,
                mem: MemKind::Device,
            },
            Op::MemRelease { handle: s },
            Op::MemMap {
                ptr: a,
                size: 2 << 20,
                offset: 4096,
                handle: s,
            },
            Op::MemUnmap {
                ptr: a,
                size: 2 << 20,
            },
            Op::MemAccess {
                ptr: a,
                size: 2 << 20,
            },
            Op::Global {
                module: s,
                name: "table".into(),
                code: b,
                ptr: a,
                size: 256,
            },
            Op::Relocate {
                dst: a,
                size: 24,
                blob: BlobId::of(b"offsets"),
            },
            Op::GraphExec {
                exec: s,
                graph: a,
                nodes: crate::graph::tests::sample_nodes(),
            },
            Op::GraphLaunch {
                exec: s,
                stream: Addr(0),
                blobs: vec![],
            },
            Op::GraphLaunch {
                exec: s,
                stream: a,
                blobs: vec![
                    crate::graph::NodeBlob { node: 1, blob: b },
                    crate::graph::NodeBlob {
                        node: 7,
                        blob: BlobId::of(b"d2h"),
                    },
                ],
            },
            Op::GraphExecDestroy { exec: s },
            Op::HostWrite {
                ptr: a,
                size: 65536,
                blob: BlobId::of(b"host"),
            },
            Op::HostRead {
                ptr: Addr(0),
                size: 0,
                blob: b,
            },
            Op::MemcpyRect {
                dir: Dir::H2d,
                dst: a,
                dpitch: [64, 1024],
                src: s,
                spitch: [40, 640],
                extent: [40, 16, 2],
                stream: None,
                blob: Some(b),
            },
            Op::MemcpyRect {
                dir: Dir::D2d,
                dst: a,
                dpitch: [64, 0],
                src: s,
                spitch: [128, 0],
                extent: [64, 3, 1],
                stream: Some(s),
                blob: None,
            },
            Op::MemsetRect {
                dst: a,
                pitch: [64, 1024],
                extent: [40, 16, 1],
                value: 7,
                width: 1,
                stream: None,
            },
            Op::MemsetRect {
                dst: a,
                pitch: [64, 1024],
                extent: [40, 16, 2],
                value: u32::MAX,
                width: 4,
                stream: Some(s),
            },
            Op::PoolCreate { pool: s },
            Op::PoolDestroy { pool: s },
            Op::PoolTrim { pool: s, size: 99 },
            Op::PoolAttr {
                pool: s,
                attr: 4,
                value: u64::MAX,
            },
            Op::DevicePool { device: 0, pool: s },
            Op::PoolAlloc {
                ptr: a,
                size: 4096,
                pool: s,
                stream: Addr(0),
            },
            Op::MemRetain { ptr: a, handle: s },
            Op::MemExport {
                handle: s,
                shareable: 7,
            },
            Op::MemImport {
                handle: s,
                shareable: u64::MAX,
            },
            Op::HostFunc { stream: s },
            Op::HostFunc { stream: Addr(0) },
            Op::MemcpyPeer {
                dst: a,
                src: a,
                size: 4096,
                stream: Some(s),
                dst_device: Some(0),
                src_device: Some(1),
            },
            Op::MemcpyPeer {
                dst: a,
                src: a,
                size: 1,
                stream: None,
                dst_device: None,
                src_device: Some(-1),
            },
            Op::PeerAccess { peer: 1 },
            Op::DeviceReset { device: 1 },
            Op::Eof { events: 42 },
        ]
    }

    #[test]
    fn every_op_matches_write_line_byte_for_byte() {
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

        /// Pointer offsets pushed while an argument is written (the
        /// table of aligned offsets, and the digits of any other) read as
        /// the reference `args` path writes them.
        #[test]
        fn pushed_pointer_offsets_print_like_listed_ones(
            len in 0usize..9000,
            picks in proptest::collection::vec((any::<u16>(), 0u32..4), 0..80),
        ) {
            let bytes = vec![0u8; len];
            // At least 8 bytes apart (what a scan finds), within the argument.
            let mut ptrs: Vec<u32> = picks
                .iter()
                .map(|&(w, skew)| if len < 8 { 0 } else { (u32::from(w) * 8 + skew) % (len as u32 - 7) })
                .filter(|_| len >= 8)
                .collect();
            ptrs.sort_unstable();
            ptrs.dedup_by(|b, a| *b < *a + 8);
            // Objects where the test has them: every other pointer's offset.
            let objs: Vec<u32> = ptrs.iter().step_by(2).copied().collect();
            let (mut pushed, mut listed) = (Vec::new(), Vec::new());
            let mut l = EventLine::begin(&mut pushed, 1, 0, "a", "launch", 0);
            l.open_args();
            l.arg_with(0, Some(8), &bytes, |list| ptrs.iter().for_each(|&p| list.push(p)), &objs);
            l.close_args();
            EventLine::begin(&mut listed, 1, 0, "a", "launch", 0)
                .args([ArgRef { offset: Some(8), bytes: &bytes, ptrs: &ptrs, objs: &objs }]);
            prop_assert_eq!(String::from_utf8(pushed).unwrap(), String::from_utf8(listed).unwrap());
        }

        #[test]
        fn strings_escape_like_serde(name in any::<String>(), bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let op = Op::Function { module: Addr(1), name: name.clone(), func: Addr(2) };
            prop_assert_eq!(ours(0, 0, 0, &name, 0, &op), reference(0, 0, 0, &name, 0, &op));
            let op = Op::Launch {
                name, code: BlobId::of(&bytes), func: None, grid: [1; 3], block: [1; 3], shmem: 0,
                stream: Addr(0),
                args: vec![KernelArg { offset: Some(8), size: bytes.len() as u32, hex: HexBytes(bytes), ptrs: vec![0, 3] , objs: Vec::new()}],
                attrs: vec![],
            };
            prop_assert_eq!(ours(1, 2, 3, "a", 0, &op), reference(1, 2, 3, "a", 0, &op));
        }
    }
}
