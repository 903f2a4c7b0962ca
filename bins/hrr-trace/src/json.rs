//! `TraceOut`: writes the Chrome trace JSON object one event at a time.
//!
//! No event is held as a JSON value: each is formatted straight into a byte
//! buffer that goes to the sink in 64 KiB writes, so memory stays flat
//! whatever the archive's size. Keys are static and written as they are;
//! string values go through serde_json's escaping unless they are plain
//! printable ASCII (kernel and API names almost always are). Numbers are
//! formatted by hand into fixed-size copies; timestamps are integer nanoseconds written as
//! microseconds with exactly three decimals, so no float rounding can make
//! two slices of a track overlap.
//!
//! Layout: `{"displayTimeUnit":"ns","traceEvents":[` events, one per line
//! `],"metadata":{…}}`. `displayTimeUnit` comes first because Perfetto only
//! honours it in the first chunk it reads.

use std::io::{self, Write};

/// Buffered bytes that trigger a write to the sink.
const FLUSH_BYTES: usize = 64 * 1024;

/// The streaming writer of one trace.
pub struct TraceOut<W: Write> {
    sink: W,
    buf: Vec<u8>,
    events: u64,
}

impl<W: Write> TraceOut<W> {
    /// Starts the document.
    pub fn new(sink: W) -> TraceOut<W> {
        let mut buf = Vec::with_capacity(FLUSH_BYTES + 4096);
        buf.extend_from_slice(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        TraceOut {
            sink,
            buf,
            events: 0,
        }
    }

    /// Trace events written so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Starts an event: `{"ph":PH,"pid":PID,"tid":TID`; the returned
    /// [`Obj`] adds the other members and closes it when dropped.
    #[inline(always)]
    pub fn event(&mut self, ph: u8, pid: u32, tid: u32) -> io::Result<Obj<'_>> {
        if self.buf.len() >= FLUSH_BYTES {
            self.sink.write_all(&self.buf)?;
            self.buf.clear();
        }
        if self.events > 0 {
            self.buf.extend_from_slice(b",\n");
        }
        self.events += 1;
        self.buf.extend_from_slice(b"{\"ph\":\"");
        self.buf.push(ph);
        self.buf.extend_from_slice(b"\",\"pid\":");
        push_u64(&mut self.buf, pid.into());
        self.buf.extend_from_slice(b",\"tid\":");
        push_u64(&mut self.buf, tid.into());
        Ok(Obj {
            buf: &mut self.buf,
            depth: 1,
        })
    }

    /// Ends the event array, writes `metadata` and flushes; returns the sink.
    pub fn finish(mut self, metadata: &serde_json::Value) -> io::Result<W> {
        self.buf.extend_from_slice(b"\n],\"metadata\":");
        serde_json::to_writer(&mut self.buf, metadata).map_err(io::Error::other)?;
        self.buf.extend_from_slice(b"}\n");
        self.sink.write_all(&self.buf)?;
        self.buf.clear();
        self.sink.flush()?;
        Ok(self.sink)
    }
}

/// An open JSON object inside the buffer (an event, or its `args`). Members
/// are appended after at least one already written, so each starts with a
/// comma; dropping it writes the closing braces.
pub struct Obj<'a> {
    buf: &'a mut Vec<u8>,
    depth: u8,
}

// The writers below are always inlined: their keys and literals are then
// constants, copied with a few moves instead of a `memcpy` call each.
impl Obj<'_> {
    #[inline(always)]
    fn key(&mut self, key: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// `"key":"value"`, escaped.
    #[inline(always)]
    pub fn str(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        push_str(self.buf, value);
        self
    }

    /// `"key":"value"` for a value known to need no escaping (a literal or
    /// a name from a fixed set), without checking it.
    #[inline(always)]
    pub fn lit(&mut self, key: &str, value: &'static str) -> &mut Self {
        debug_assert!(is_plain(value), "{value:?} needs escaping");
        self.key(key);
        self.buf.push(b'"');
        self.buf.extend_from_slice(value.as_bytes());
        self.buf.push(b'"');
        self
    }

    /// `"key":N`.
    #[inline(always)]
    pub fn u64(&mut self, key: &str, value: u64) -> &mut Self {
        self.key(key);
        push_u64(self.buf, value);
        self
    }

    /// `"key":N` for a signed value.
    pub fn i64(&mut self, key: &str, value: i64) -> &mut Self {
        self.key(key);
        if value < 0 {
            self.buf.push(b'-');
        }
        push_u64(self.buf, value.unsigned_abs());
        self
    }

    /// `"key":US.NNN`: nanoseconds as microseconds, exactly.
    #[inline(always)]
    pub fn us(&mut self, key: &str, ns: u64) -> &mut Self {
        self.key(key);
        // One fixed-size copy, as in `push_u64`.
        let (int, frac) = (ns / 1000, (ns % 1000) as usize);
        let mut tmp = [0u8; 24];
        let n = digits(int);
        write_digits(&mut tmp[..n], int);
        tmp[n] = b'.';
        tmp[n + 1] = b'0' + (frac / 100) as u8;
        tmp[n + 2..n + 4].copy_from_slice(&PAIRS[frac % 100]);
        push_prefix(self.buf, &tmp, n + 4);
        self
    }

    /// `"key":"0x…"`, lowercase hex as the archive writes it.
    #[inline(always)]
    pub fn addr(&mut self, key: &str, value: u64) -> &mut Self {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        self.key(key);
        let digits = (64 - value.leading_zeros() as usize).div_ceil(4).max(1);
        let mut tmp = [0u8; 20];
        tmp[..3].copy_from_slice(b"\"0x");
        for i in 0..digits {
            tmp[2 + digits - i] = DIGITS[((value >> (4 * i)) & 0xf) as usize];
        }
        tmp[3 + digits] = b'"';
        push_prefix(self.buf, &tmp, 4 + digits);
        self
    }

    /// `"key":[x,y,z]`.
    pub fn dim3(&mut self, key: &str, v: [u32; 3]) -> &mut Self {
        self.key(key);
        self.buf.push(b'[');
        for (i, x) in v.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            push_u64(self.buf, (*x).into());
        }
        self.buf.push(b']');
        self
    }

    /// Opens `"args":{`, starting with `"seq":SEQ` (every event of an
    /// archive event carries it); later members go into it.
    pub fn args(&mut self, seq: u64) -> &mut Self {
        debug_assert_eq!(self.depth, 1, "args only at the top level");
        self.buf.extend_from_slice(b",\"args\":{\"seq\":");
        push_u64(self.buf, seq);
        self.depth = 2;
        self
    }

    /// Opens `"args":{` with an arbitrary first member (metadata events).
    pub fn args_str(&mut self, key: &str, value: &str) -> &mut Self {
        debug_assert_eq!(self.depth, 1, "args only at the top level");
        self.buf.extend_from_slice(b",\"args\":{\"");
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
        push_str(self.buf, value);
        self.depth = 2;
        self
    }

    /// `"args":{"key":N}` in one go.
    pub fn args_u64(&mut self, key: &str, value: u64) -> &mut Self {
        debug_assert_eq!(self.depth, 1, "args only at the top level");
        self.buf.extend_from_slice(b",\"args\":{\"");
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
        push_u64(self.buf, value);
        self.depth = 2;
        self
    }
}

impl Drop for Obj<'_> {
    fn drop(&mut self) {
        for _ in 0..self.depth {
            self.buf.push(b'}');
        }
    }
}

/// Appends `v` in decimal.
///
/// The digits are written into a 20-byte array that is appended whole and
/// cut back: a fixed-size copy is a few moves, where appending a
/// variable-length slice (as with `itoa`) called `memcpy` for every number,
/// the largest part of formatting them.
#[inline(always)]
fn push_u64(buf: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 20];
    let n = digits(v);
    write_digits(&mut tmp[..n], v);
    push_prefix(buf, &tmp, n);
}

/// Appends the first `n` bytes of `tmp` by appending all of it (a
/// fixed-size copy) and cutting the rest back off.
#[inline(always)]
fn push_prefix<const N: usize>(buf: &mut Vec<u8>, tmp: &[u8; N], n: usize) {
    buf.extend_from_slice(tmp);
    buf.truncate(buf.len() - (N - n));
}

/// Decimal digits of `v`.
#[inline(always)]
fn digits(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |l| l as usize + 1)
}

/// "00", "01", … "99".
const PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// Writes `v` into `out`, whose length is its number of digits.
#[inline(always)]
fn write_digits(out: &mut [u8], mut v: u64) {
    let mut i = out.len();
    while i >= 2 {
        out[i - 2..i].copy_from_slice(&PAIRS[(v % 100) as usize]);
        v /= 100;
        i -= 2;
    }
    if i == 1 {
        out[0] = b'0' + v as u8;
    }
}

/// Printable ASCII other than `"` and `\`: a JSON string as it is.
fn is_plain(s: &str) -> bool {
    // Branch-free so it vectorises; names are short, an early exit buys nothing.
    s.bytes().fold(true, |ok, b| {
        ok & ((0x20..0x7f).contains(&b) & (b != b'"') & (b != b'\\'))
    })
}

/// A JSON string: copied as is when it needs no escaping, else by serde_json.
pub fn push_str(buf: &mut Vec<u8>, s: &str) {
    if is_plain(s) {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    } else {
        // Writing a string into a Vec cannot fail.
        serde_json::to_writer(&mut *buf, s).expect("a string serialises");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(f: impl FnOnce(&mut TraceOut<Vec<u8>>)) -> serde_json::Value {
        let mut out = TraceOut::new(Vec::new());
        f(&mut out);
        let bytes = out.finish(&serde_json::json!({"k": 1})).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn writes_a_valid_document_with_escaped_strings_and_exact_times() {
        let v = doc(|out| {
            out.event(b'X', 1, 2)
                .unwrap()
                .str("name", "k<\"q\">\n\u{e9}")
                .us("ts", 1_234_567_089)
                .us("dur", 5)
                .args(7)
                .i64("ret", -3)
                .addr("ptr", 0xdead_beef)
                .addr("null", 0)
                .addr("max", u64::MAX)
                .lit("cat", "api")
                .dim3("grid", [1, 2, 3]);
            out.event(b'M', 1, 0)
                .unwrap()
                .str("name", "process_name")
                .args_str("name", "app");
        });
        assert_eq!(v["displayTimeUnit"], "ns");
        assert_eq!(v["metadata"]["k"], 1);
        let e = &v["traceEvents"][0];
        assert_eq!(e["name"], "k<\"q\">\n\u{e9}");
        assert_eq!(e["ph"], "X");
        assert_eq!((e["pid"].as_u64(), e["tid"].as_u64()), (Some(1), Some(2)));
        assert_eq!(e["ts"].as_f64(), Some(1_234_567.089));
        assert_eq!(e["dur"].as_f64(), Some(0.005));
        assert_eq!(e["args"]["seq"], 7);
        assert_eq!(e["args"]["ret"], -3);
        assert_eq!(e["args"]["ptr"], "0xdeadbeef");
        assert_eq!(e["args"]["null"], "0x0");
        assert_eq!(e["args"]["max"], "0xffffffffffffffff");
        assert_eq!(e["args"]["cat"], "api");
        assert_eq!(e["args"]["grid"], serde_json::json!([1, 2, 3]));
        assert_eq!(v["traceEvents"][1]["args"]["name"], "app");
    }

    #[test]
    fn numbers_are_written_as_std_writes_them() {
        let mut cases = vec![
            0,
            1,
            9,
            10,
            99,
            100,
            999,
            1000,
            u64::MAX,
            u64::MAX / 10,
            1 << 63,
        ];
        for p in 1..20 {
            let x = 10u64.pow(p);
            cases.extend([x - 1, x, x + 1, x / 3 * 2]);
        }
        for v in cases {
            let mut buf = b"x".to_vec();
            push_u64(&mut buf, v);
            assert_eq!(buf, format!("x{v}").as_bytes());
            let (i, n) = (v as i64, (v as i64).wrapping_neg());
            Obj {
                buf: &mut buf,
                depth: 0,
            }
            .us("t", v)
            .i64("i", i)
            .i64("n", n)
            .addr("a", v);
            let want = format!(
                "x{v},\"t\":{}.{:03},\"i\":{i},\"n\":{n},\"a\":\"{v:#x}\"",
                v / 1000,
                v % 1000,
            );
            assert_eq!(String::from_utf8(buf).unwrap(), want);
        }
    }

    #[test]
    fn an_empty_trace_is_valid() {
        let v = doc(|_| {});
        assert_eq!(v["traceEvents"], serde_json::json!([]));
    }

    #[test]
    fn large_traces_go_out_in_chunks() {
        let v = doc(|out| {
            for i in 0..10_000 {
                out.event(b'i', 1, 1).unwrap().us("ts", i);
            }
        });
        assert_eq!(v["traceEvents"].as_array().unwrap().len(), 10_000);
    }
}
