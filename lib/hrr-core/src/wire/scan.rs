//! `scan`: a fast path that parses the common shape of an event line into a
//! [`Wire`] without going through serde, for the reader's throughput target.
//!
//! It accepts a strict subset of JSON — ASCII only, no escapes, integers
//! only, no `null`, no duplicate keys — and returns `None` for anything
//! else, in which case the caller parses the line with serde
//! ([`Event::parse`]). On the subset it accepts it must agree with serde
//! exactly; the property tests below check that on generated events and on
//! randomly damaged lines. Errors therefore always come from the serde path,
//! with serde's messages.
//!
//! Which keys it knows, and how it reads each, follows from the key table
//! (`wire_keys!` in `wire::form`): a key's value is read by its codec
//! (`read_value!`). If [`KernelArg`] or [`LaunchAttr`] gain a field this scanner
//! does not know, the fast path switches itself off (checked once, by
//! asking serde for the field lists) rather than silently dropping the new
//! field.
//!
//! [`Event::parse`]: crate::event::Event::parse

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::de::{self, Deserialize, Visitor};

use crate::event::{Dir, KernelArg, LaunchAttr, MemKind};
use crate::hex::{Addr, BlobId, HexBytes, decode_hex};
use crate::wire::Wire;
use crate::wire::form::{Key, wire_keys};

/// Keys of [`KernelArg`] the scanner fills in.
const ARG_KEYS: &[&str] = &["offset", "size", "hex", "ptrs", "objs"];
/// Keys of [`LaunchAttr`] the scanner fills in.
const ATTR_KEYS: &[&str] = &["id", "hex"];

/// Nesting depth at which the scanner gives up (serde_json's own limit is 128).
const MAX_DEPTH: u32 = 64;

/// Parses `line` if it has the common shape; `None` means "use serde".
pub fn scan(line: &[u8]) -> Option<Wire<'_>> {
    let mut w = Wire::default();
    scan_into(line, &mut w).then_some(w)
}

/// [`scan`] into a caller's `w` (which should be `Wire::default()`):
/// `false` means "use serde", and `w` may then hold part of the line.
///
/// Filled in place: a `Wire` is ~400 bytes, and moving it through `Option`s
/// and return slots costs more than some of its fields take to parse.
pub fn scan_into<'a>(line: &'a [u8], w: &mut Wire<'a>) -> bool {
    if !enabled() || !plain(line) {
        return false;
    }
    let mut c = Cursor { b: line, i: 0 };
    if c.wire(w).is_none() {
        return false;
    }
    c.ws();
    c.i == line.len()
}

/// Printable ASCII without backslashes: no escapes, no control characters
/// (JSON forbids them raw inside strings; whitespace other than spaces sends
/// the line to serde), and every sub-slice is valid UTF-8.
fn plain(line: &[u8]) -> bool {
    // Branch-free so it vectorises; lines are short, an early exit buys nothing.
    let bad = line.iter().fold(0u8, |acc, &b| {
        acc | u8::from(!(0x20..0x80).contains(&b) || b == b'\\')
    });
    bad == 0
}

/// Whether the scanner knows every field serde would fill.
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| {
        let covered = |fields: Option<&[&str]>, known: &[&str]| {
            fields.is_some_and(|f| f.iter().all(|k| known.contains(k)))
        };
        covered(struct_fields::<Wire<'_>>(), WIRE_KEYS)
            && covered(struct_fields::<KernelArg>(), ARG_KEYS)
            && covered(struct_fields::<LaunchAttr>(), ATTR_KEYS)
    })
}

/// The field names a derived `Deserialize` struct declares.
fn struct_fields<'de, T: Deserialize<'de>>() -> Option<&'static [&'static str]> {
    let mut probe = FieldProbe(None);
    let _ = T::deserialize(&mut probe);
    probe.0
}

/// A deserializer that only records the field list handed to `deserialize_struct`.
struct FieldProbe(Option<&'static [&'static str]>);

impl<'de> de::Deserializer<'de> for &mut FieldProbe {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("field probe"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = Some(fields);
        Err(de::Error::custom("field probe"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// Where the first `"` in `s` is. Most strings of a line are keys and short
/// values (addresses, blob ids): sixteen bytes at a time with SSE2 (every
/// x86-64 has it) while sixteen remain, then eight at a time
/// ([`find_quote_swar`]); past 64 bytes (argument bytes), `memchr`.
#[cfg(target_arch = "x86_64")]
fn find_quote(s: &[u8]) -> Option<usize> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut i = 0;
    while i < 64 && i + 16 <= s.len() {
        let chunk = &s[i..i + 16];
        // SAFETY: `chunk` holds 16 readable bytes, the unaligned load's
        // size; SSE2, which the intrinsics need, is part of x86-64.
        let mask = unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)))
        };
        if mask != 0 {
            return Some(i + mask.trailing_zeros() as usize);
        }
        i += 16;
    }
    find_quote_swar(&s[i..]).map(|p| i + p)
}

#[cfg(not(target_arch = "x86_64"))]
fn find_quote(s: &[u8]) -> Option<usize> {
    find_quote_swar(s)
}

/// [`find_quote`] eight bytes at a time without a branch per byte, which
/// beat both a byte loop (one mispredicted exit per string) and `memchr`'s
/// setup on short strings; past 64 bytes, `memchr`.
fn find_quote_swar(s: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    let mut i = 0;
    while i < 64 {
        let Some(chunk) = s.get(i..i + 8) else {
            return s[i..].iter().position(|&b| b == b'"').map(|p| i + p);
        };
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ QUOTES;
        // A byte of `x` is zero where the chunk holds a quote; the lowest
        // flagged byte is always a true zero (borrows only run upwards).
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    memchr::memchr(b'"', &s[i..]).map(|p| i + p)
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

/// Records a key as seen; a duplicate sends the line to serde (which rejects it).
macro_rules! once {
    ($seen:ident, $bit:expr) => {{
        let bit = 1u128 << $bit;
        if $seen & bit != 0 {
            return None;
        }
        $seen |= bit;
    }};
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string; the line has no escapes or control characters (`plain`).
    fn str(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let len = find_quote(&self.b[start..])?;
        self.i = start + len + 1;
        let bytes = &self.b[start..start + len];
        // SAFETY: `scan` only runs on lines `plain` accepted, which are all
        // ASCII, so every sub-slice is valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
    }

    /// A non-negative JSON integer (no fraction, exponent or leading zero).
    fn uint(&mut self) -> Option<u64> {
        self.ws();
        let start = self.i;
        let mut v: u64 = 0;
        // Nineteen digits cannot overflow a u64: no checks until then.
        while let Some(&d @ b'0'..=b'9') = self.b.get(self.i) {
            if self.i - start >= 19 {
                v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            } else {
                v = v * 10 + u64::from(d - b'0');
            }
            self.i += 1;
        }
        let digits = self.i - start;
        if digits == 0 || (digits > 1 && self.b[start] == b'0') {
            return None;
        }
        match self.b.get(self.i) {
            Some(b'.' | b'e' | b'E') => None,
            _ => Some(v),
        }
    }

    fn int(&mut self) -> Option<i64> {
        if self.peek()? == b'-' {
            self.i += 1;
            let v = self.uint()?;
            if v == 1 << 63 {
                Some(i64::MIN)
            } else {
                i64::try_from(v).ok().map(|v| -v)
            }
        } else {
            i64::try_from(self.uint()?).ok()
        }
    }

    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.uint()?).ok()
    }

    fn addr(&mut self) -> Option<Addr> {
        Addr::parse(self.str()?)
    }

    fn blob(&mut self) -> Option<BlobId> {
        BlobId::parse(self.str()?)
    }

    fn dim3(&mut self) -> Option<[u32; 3]> {
        self.eat(b'[')?;
        let x = self.u32()?;
        self.eat(b',')?;
        let y = self.u32()?;
        self.eat(b',')?;
        let z = self.u32()?;
        self.eat(b']')?;
        Some([x, y, z])
    }

    /// An array of exactly `N` non-negative integers.
    fn u64s<const N: usize>(&mut self) -> Option<[u64; N]> {
        let mut out = [0u64; N];
        self.eat(b'[')?;
        for (i, v) in out.iter_mut().enumerate() {
            if i > 0 {
                self.eat(b',')?;
            }
            *v = self.uint()?;
        }
        self.eat(b']')?;
        Some(out)
    }

    /// Calls `item` for each element of an array.
    fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Calls `field` with each key of an object, positioned at its value.
    fn object(&mut self, mut field: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.str()?;
            self.eat(b':')?;
            field(self, key)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Skips any JSON value (an unknown key's), validating its syntax.
    fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.str().map(drop),
            b'{' => self.object(|c, _| c.skip(depth + 1)),
            b'[' => self.array(|c| c.skip(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.b[self.i..]
            .starts_with(word)
            .then(|| self.i += word.len())
    }

    /// Any JSON number: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        let b = self.b;
        let digits = |i: &mut usize| {
            let s = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - s
        };
        let mut i = self.i;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let start = i;
        let n = digits(&mut i);
        if n == 0 || (n > 1 && b[start] == b'0') {
            return None;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if digits(&mut i) == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            if digits(&mut i) == 0 {
                return None;
            }
        }
        self.i = i;
        Some(())
    }

    fn dir(&mut self) -> Option<Dir> {
        match self.str()? {
            "h2d" => Some(Dir::H2d),
            "d2h" => Some(Dir::D2h),
            "d2d" => Some(Dir::D2d),
            "h2h" => Some(Dir::H2h),
            _ => None,
        }
    }

    fn mem(&mut self) -> Option<MemKind> {
        match self.str()? {
            "device" => Some(MemKind::Device),
            "host" => Some(MemKind::Host),
            "managed" => Some(MemKind::Managed),
            "pinned" => Some(MemKind::Pinned),
            _ => None,
        }
    }

    fn kernel_arg(&mut self) -> Option<KernelArg> {
        let (mut offset, mut size, mut hex, mut ptrs, mut objs) =
            (None, None, None, Vec::new(), Vec::new());
        let mut seen = 0u128;
        self.object(|c, key| {
            match key {
                "offset" => {
                    once!(seen, 0);
                    offset = Some(c.u32()?);
                }
                "size" => {
                    once!(seen, 1);
                    size = Some(c.u32()?);
                }
                "hex" => {
                    once!(seen, 2);
                    hex = Some(HexBytes(decode_hex(c.str()?)?));
                }
                "ptrs" => {
                    once!(seen, 3);
                    c.array(|c| c.u32().map(|p| ptrs.push(p)))?;
                }
                "objs" => {
                    once!(seen, 4);
                    c.array(|c| c.u32().map(|p| objs.push(p)))?;
                }
                _ => c.skip(2)?,
            }
            Some(())
        })?;
        Some(KernelArg {
            offset,
            size: size?,
            hex: hex?,
            ptrs,
            objs,
        })
    }

    fn launch_attr(&mut self) -> Option<LaunchAttr> {
        let (mut id, mut hex) = (None, None);
        let mut seen = 0u128;
        self.object(|c, key| {
            match key {
                "id" => {
                    once!(seen, 0);
                    id = Some(c.u32()?);
                }
                "hex" => {
                    once!(seen, 1);
                    hex = Some(HexBytes(decode_hex(c.str()?)?));
                }
                _ => c.skip(2)?,
            }
            Some(())
        })?;
        Some(LaunchAttr { id: id?, hex: hex? })
    }
}

/// A key's value read at cursor `$c`, by the key's codec (the key table's
/// `=> codec`): an `Option`, `None` sending the line to serde.
macro_rules! read_value {
    (addr, $c:ident) => {
        $c.addr()
    };
    (uint, $c:ident) => {
        $c.uint()
    };
    (u32, $c:ident) => {
        $c.u32()
    };
    (u8, $c:ident) => {
        u8::try_from($c.uint()?).ok()
    };
    (i32, $c:ident) => {
        i32::try_from($c.int()?).ok()
    };
    (mem, $c:ident) => {
        $c.mem()
    };
    (dir, $c:ident) => {
        $c.dir()
    };
    (blob, $c:ident) => {
        $c.blob()
    };
    (str, $c:ident) => {
        $c.str().map(Cow::Borrowed)
    };
    (dims, $c:ident) => {
        $c.dim3()
    };
    (nums, $c:ident) => {
        $c.u64s()
    };
    (hex, $c:ident) => {
        decode_hex($c.str()?).map(HexBytes)
    };
    (args, $c:ident) => {{
        let mut args = Vec::new();
        $c.array(|c| c.kernel_arg().map(|a| args.push(a)))
            .map(|()| args)
    }};
    (attrs, $c:ident) => {{
        let mut attrs = Vec::new();
        $c.array(|c| c.launch_attr().map(|a| attrs.push(a)))
            .map(|()| attrs)
    }};
    // Graph topologies and launch blobs are rare: serde reads them.
    (nodes, $c:ident) => {
        None
    };
    (node_blobs, $c:ident) => {
        None
    };
    (addrs, $c:ident) => {{
        let mut v = Vec::new();
        $c.array(|c| c.addr().map(|a| v.push(a))).map(|()| v)
    }};
    (ints, $c:ident) => {{
        let mut v = Vec::new();
        $c.array(|c| i32::try_from(c.int()?).ok().map(|i| v.push(i)))
            .map(|()| v)
    }};
}

/// Callback of `wire_keys!`: the keys the scanner knows and its reading of
/// a whole line.
macro_rules! scan_wire {
    ($( $(#[$m:meta])* $k:ident : $t:ty => $codec:ident ),* $(,)?) => {
        /// Keys of [`Wire`] the scanner fills in.
        const WIRE_KEYS: &[&str] = &["seq", "t", "tid", "api", "op", "ret", "dev", $(stringify!($k)),*];

        // One bit per key in a u128.
        const _: () = assert!(WIRE_KEYS.len() <= 128, "the scanner's `seen` has a bit per key");

        impl<'a> Cursor<'a> {
            fn wire(&mut self, w: &mut Wire<'a>) -> Option<()> {
                let mut seen = 0u128;
                self.object(|c, key| {
                    match key {
                        "seq" => {
                            once!(seen, Key::seq as u8);
                            w.seq = c.uint()?;
                        }
                        "t" => {
                            once!(seen, Key::t as u8);
                            w.t = c.uint()?;
                        }
                        "tid" => {
                            once!(seen, Key::tid as u8);
                            w.tid = c.uint()?;
                        }
                        "api" => {
                            once!(seen, Key::api as u8);
                            w.api = Cow::Borrowed(c.str()?);
                        }
                        "op" => {
                            once!(seen, Key::op as u8);
                            w.op = Cow::Borrowed(c.str()?);
                        }
                        "ret" => {
                            once!(seen, Key::ret as u8);
                            w.ret = c.int()?;
                        }
                        "dev" => {
                            once!(seen, Key::dev as u8);
                            w.dev = c.u32()?;
                        }
                        $(
                            stringify!($k) => {
                                once!(seen, Key::$k as u8);
                                w.$k = Some(read_value!($codec, c)?);
                            }
                        )*
                        _ => c.skip(1)?,
                    }
                    Some(())
                })?;
                // seq, api and op have no default: without them serde reports the error.
                const REQUIRED: u128 = 1 << Key::seq as u8 | 1 << Key::api as u8 | 1 << Key::op as u8;
                (seen & REQUIRED == REQUIRED).then_some(())
            }
        }
    };
}

wire_keys!(scan_wire);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, Op};
    use proptest::prelude::*;

    #[test]
    fn knows_every_wire_field() {
        assert!(
            enabled(),
            "Wire or KernelArg gained a field: teach wire/scan.rs about it"
        );
        assert_eq!(struct_fields::<Wire<'_>>().unwrap().len(), WIRE_KEYS.len());
    }

    fn agree(line: &[u8]) {
        let slow = Event::parse(line);
        if let Some(w) = scan(line) {
            let fast = Event::from_wire(w);
            assert_eq!(
                fast,
                slow,
                "fast and serde paths disagree on {:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn typical_lines_take_the_fast_path() {
        let lines: [&[u8]; 4] = [
            br#"{"seq":3,"t":10,"tid":1,"api":"hipMemcpyAsync","op":"memcpy","ret":0,"dir":"d2h","dst":"0x10","src":"0x20","size":4,"stream":"0x0","blob":"af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"}"#,
            br#"{ "seq" : 4 , "api":"hipLaunchKernel","op":"launch","ret":-1,"name":"k","code":"af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262","grid":[1,2,3],"block":[4,5,6],"shmem":0,"stream":"0x0","args":[{"offset":0,"size":8,"hex":"0010000000000000","ptrs":[0]},{"size":4,"hex":"01000000","x":[1,{"y":null}]}]}"#,
            br#"{"seq":5,"api":"hipMalloc","op":"alloc","ptr":"0x1000","size":64,"mem":"device","future":{"a":[1.5e3,-0.25,true,false]}}"#,
            br#"{"seq":6,"api":"x","op":"set_device","device":-3}"#,
        ];
        for l in lines {
            assert!(scan(l).is_some(), "{}", String::from_utf8_lossy(l));
            agree(l);
        }
    }

    #[test]
    fn device_timing_takes_the_fast_path() {
        let l =
            br#"{"seq":1,"api":"hipDeviceSynchronize","op":"device_sync","dev_t":12,"dev_ns":3}"#;
        let fast = scan(l).expect("fast path");
        let slow: Wire<'_> = serde_json::from_slice(l).unwrap();
        assert_eq!(
            fast.dev_time(),
            Some(crate::event::DevTime { t: 12, ns: 3 })
        );
        assert_eq!(fast.dev_time(), slow.dev_time());
        agree(l);
    }

    #[test]
    fn unusual_lines_fall_back_to_serde() {
        for l in [
            &br#"{"seq":1,"api":"a\"b","op":"device_sync"}"#[..],
            br#"{"seq":1,"seq":2,"api":"a","op":"device_sync"}"#,
            br#"{"seq":01,"api":"a","op":"device_sync"}"#,
            br#"{"seq":1.0,"api":"a","op":"device_sync"}"#,
            br#"{"seq":18446744073709551616,"api":"a","op":"device_sync"}"#,
            br#"{"seq":1,"api":"a","op":"free","ptr":null}"#,
            br#"{"api":"a","op":"device_sync"}"#,
            br#"{"seq":1,"api":"\u00e9","op":"device_sync"}"#,
            "{\"seq\":1,\"api\":\"é\",\"op\":\"device_sync\"}".as_bytes(),
            br#"{"seq":1,"api":"a","op":"device_sync"} x"#,
            br#"{"seq":1,"api":"a","op":"memcpy","dir":"sideways"}"#,
        ] {
            assert!(scan(l).is_none(), "{}", String::from_utf8_lossy(l));
            agree(l);
        }
    }

    fn addr() -> impl Strategy<Value = Addr> {
        prop_oneof![Just(Addr(0)), any::<u64>().prop_map(Addr)]
    }

    fn arg() -> impl Strategy<Value = KernelArg> {
        (
            proptest::option::of(any::<u32>()),
            proptest::collection::vec(any::<u8>(), 0..24),
            proptest::collection::vec(any::<u32>(), 0..3),
        )
            .prop_map(|(offset, hex, ptrs)| KernelArg {
                offset,
                size: hex.len() as u32,
                hex: HexBytes(hex),
                ptrs,
                objs: Vec::new(),
            })
    }

    fn attr() -> impl Strategy<Value = LaunchAttr> {
        (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..64)).prop_map(|(id, hex)| {
            LaunchAttr {
                id,
                hex: HexBytes(hex),
            }
        })
    }

    fn op() -> impl Strategy<Value = Op> {
        let blob = any::<[u8; 32]>().prop_map(BlobId);
        prop_oneof![
            (addr(), any::<u64>()).prop_map(|(ptr, size)| Op::Alloc {
                ptr,
                size,
                mem: MemKind::Pinned
            }),
            (
                addr(),
                addr(),
                any::<u64>(),
                proptest::option::of(addr()),
                proptest::option::of(blob.clone())
            )
                .prop_map(|(dst, src, size, stream, blob)| Op::Memcpy {
                    dir: Dir::D2d,
                    dst,
                    src,
                    size,
                    stream,
                    blob
                }),
            (
                addr(),
                any::<u32>(),
                any::<u64>(),
                prop_oneof![Just(1u8), Just(2), Just(4)]
            )
                .prop_map(|(dst, value, size, width)| Op::Memset {
                    dst,
                    value,
                    size,
                    width,
                    stream: None
                }),
            (
                "[_A-Za-z0-9]{1,40}",
                blob.clone(),
                any::<[u32; 3]>(),
                any::<u32>(),
                addr(),
                proptest::collection::vec(arg(), 0..5),
                proptest::collection::vec(attr(), 0..3)
            )
                .prop_map(|(name, code, grid, shmem, stream, args, attrs)| {
                    Op::Launch {
                        name,
                        code,
                        func: None,
                        grid,
                        block: [grid[2], grid[0], 1],
                        shmem,
                        stream,
                        args,
                        attrs,
                    }
                }),
            any::<i32>().prop_map(|device| Op::SetDevice { device }),
            (addr(), any::<i32>()).prop_map(|(ctx, device)| Op::CtxCreate { ctx, device }),
            (addr(), proptest::option::of(any::<i32>()))
                .prop_map(|(ctx, device)| Op::CtxSet { ctx, device }),
            (addr(), any::<u64>(), any::<u64>(), addr()).prop_map(|(ptr, size, offset, handle)| {
                Op::MemMap {
                    ptr,
                    size,
                    offset,
                    handle,
                }
            }),
            (addr(), any::<u64>()).prop_map(|(handle, size)| Op::MemCreate {
                handle,
                size,
                mem: MemKind::Device
            }),
            (addr(), any::<u64>()).prop_map(|(ptr, size)| Op::VaReserve { ptr, size }),
            (addr(), any::<u64>(), blob.clone()).prop_map(|(dst, size, blob)| Op::Relocate {
                dst,
                size,
                blob
            }),
            (addr(), any::<u64>(), blob.clone(), any::<bool>()).prop_map(
                |(ptr, size, blob, read)| {
                    if read {
                        Op::HostRead { ptr, size, blob }
                    } else {
                        Op::HostWrite { ptr, size, blob }
                    }
                }
            ),
            ("[_A-Za-z0-9]{1,40}", blob.clone(), addr(), any::<u64>()).prop_map(
                |(name, code, ptr, size)| Op::Global {
                    module: Addr(0x10),
                    name,
                    code,
                    ptr,
                    size
                }
            ),
            (
                addr(),
                any::<[u64; 2]>(),
                addr(),
                any::<[u64; 2]>(),
                any::<[u64; 3]>(),
                proptest::option::of(addr()),
                proptest::option::of(blob.clone())
            )
                .prop_map(|(dst, dpitch, src, spitch, extent, stream, blob)| {
                    Op::MemcpyRect {
                        dir: Dir::D2h,
                        dst,
                        dpitch,
                        src,
                        spitch,
                        extent,
                        stream,
                        blob,
                    }
                }),
            (addr(), any::<[u64; 2]>(), any::<[u64; 3]>(), any::<u32>()).prop_map(
                |(dst, pitch, extent, value)| Op::MemsetRect {
                    dst,
                    pitch,
                    extent,
                    value,
                    width: 2,
                    stream: None
                }
            ),
            (addr(), any::<u32>(), any::<u64>()).prop_map(|(pool, attr, value)| Op::PoolAttr {
                pool,
                attr,
                value
            }),
            (addr(), any::<u64>(), addr(), addr()).prop_map(|(ptr, size, pool, stream)| {
                Op::PoolAlloc {
                    ptr,
                    size,
                    pool,
                    stream,
                }
            }),
            any::<u64>().prop_map(|events| Op::Eof { events }),
            addr().prop_map(|exec| Op::GraphExecDestroy { exec }),
            (addr(), addr()).prop_map(|(exec, stream)| Op::GraphLaunch {
                exec,
                stream,
                blobs: vec![]
            }),
        ]
    }

    #[test]
    fn the_largest_integers_take_the_fast_path() {
        let max =
            br#"{"seq":18446744073709551615,"t":9999999999999999999,"api":"a","op":"device_sync"}"#;
        let w = scan(max).expect("fast path");
        assert_eq!((w.seq, w.t), (u64::MAX, 9_999_999_999_999_999_999));
        agree(max);
        for l in [
            &br#"{"seq":99999999999999999999,"api":"a","op":"device_sync"}"#[..],
            br#"{"seq":184467440737095516150,"api":"a","op":"device_sync"}"#,
        ] {
            assert!(scan(l).is_none(), "{}", String::from_utf8_lossy(l));
            agree(l);
        }
    }

    proptest! {
        #[test]
        fn find_quote_finds_the_first_quote(s in proptest::collection::vec(prop_oneof![1 => Just(b'"'), 40 => any::<u8>()], 0..200), from in 0usize..200) {
            let s = &s[from.min(s.len())..];
            prop_assert_eq!(find_quote(s), s.iter().position(|&b| b == b'"'));
        }

        #[test]
        fn addresses_parse_as_the_standard_parser_does(s in "0[xX][0-9a-fA-F+g -]{0,18}") {
            let reference = s
                .get(2..)
                .filter(|d| !d.is_empty() && d.len() <= 16)
                .and_then(|d| u64::from_str_radix(d, 16).ok())
                .map(Addr);
            prop_assert_eq!(Addr::parse(&s), reference);
        }

        #[test]
        fn generated_events_agree(seq: u64, t: u64, tid: u64, ret: i64, dev in 0u32..4, api in "[A-Za-z_]{1,30}", op in op()) {
            let e = Event { seq, t, tid, api, ret, dev, op };
            let mut line = Vec::new();
            e.write_line(&mut line);
            let w = scan(line.trim_ascii_end());
            prop_assert!(w.is_some(), "writer output must take the fast path: {}", String::from_utf8_lossy(&line));
            prop_assert_eq!(Event::from_wire(w.unwrap()), Ok(e));
        }

        #[test]
        fn damaged_lines_agree_or_fall_back(op in op(), edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
            let e = Event { seq: 1, t: 2, tid: 3, api: "hipX".into(), ret: 0, dev: 1, op };
            let mut line = Vec::new();
            e.write_line(&mut line);
            line.pop();
            for (at, byte) in edits {
                let i = at.index(line.len());
                line[i] = byte;
            }
            agree(&line);
        }
    }
}
