//! Hex-encoded wire values: addresses (`"0x…"`), blob ids (64 hex chars) and
//! byte strings. Hand-written because the encodings are fixed by the format and
//! sit on the reader's hot path (no allocation for addresses and ids).

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A device or host address (or an opaque handle) as recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr(pub u64);

impl Addr {
    /// Parses `0x…` hex (lowercase or uppercase digits).
    pub fn parse(s: &str) -> Option<Addr> {
        let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
        if digits.is_empty() || digits.len() > 16 {
            return None;
        }
        // The nibble table, checked once: two addresses a line on the
        // reader's hot path, where `from_str_radix` cost more than the rest
        // of the field.
        let (mut v, mut bad) = (0u64, 0u8);
        for &d in digits.as_bytes() {
            let n = ANY_NIBBLE[usize::from(d)];
            bad |= n;
            v = v << 4 | u64::from(n & 0x0f);
        }
        if bad & 0xf0 != 0 {
            // Not all digits: `from_str_radix` decides (it also takes a `+`).
            return u64::from_str_radix(digits, 16).ok().map(Addr);
        }
        Some(Addr(v))
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl Serialize for Addr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 18];
        s.serialize_str(format_addr(self.0, &mut buf))
    }
}

/// Formats `v` as lowercase `0x…` into `buf` without allocating.
pub fn format_addr(v: u64, buf: &mut [u8; 18]) -> &str {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let n = if v == 0 {
        1
    } else {
        (64 - v.leading_zeros() as usize).div_ceil(4)
    };
    buf[0] = b'0';
    buf[1] = b'x';
    for i in 0..n {
        buf[2 + n - 1 - i] = DIGITS[((v >> (4 * i)) & 0xf) as usize];
    }
    // The buffer holds only ASCII.
    std::str::from_utf8(&buf[..2 + n]).expect("ascii")
}

impl<'de> Deserialize<'de> for Addr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Addr, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Addr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an address string \"0x…\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Addr, E> {
                Addr::parse(s).ok_or_else(|| E::custom(format!("bad address `{s}`")))
            }
        }
        d.deserialize_str(V)
    }
}

/// Blob length from which [`BlobId::of`] hashes on every core. Large blobs
/// (256 MiB copies, model weights) must: one core's BLAKE3 (5–8 GB/s) would
/// cap capture and replay copy bandwidth far below a GPU link's. A
/// framework's code objects (1–8 MiB, hashed as its first launches are
/// recorded) gain from it where there are many cores (H200 host, 16: a
/// 2 MiB blob after 5 ms idle, 396 → 187 µs), not on two (a 2 MiB code
/// object recorded: 1.18 → 1.26–1.41 ms, the pool's wake-up costs more).
fn parallel_from() -> usize {
    if crate::cores() >= 8 {
        1 << 20
    } else {
        8 << 20
    }
}

/// BLAKE3 hash of a blob's bytes; its lowercase hex names the blob file.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlobId(pub [u8; 32]);

impl BlobId {
    /// Whether [`BlobId::of`] hashes `len` bytes on every core of the
    /// current rayon pool (else on the calling thread alone).
    pub fn hashed_in_parallel(len: usize) -> bool {
        len >= parallel_from()
    }

    /// The BLAKE3 hash of `bytes`.
    pub fn of(bytes: &[u8]) -> BlobId {
        if BlobId::hashed_in_parallel(bytes.len()) {
            return BlobId(
                *blake3::Hasher::new()
                    .update_rayon(bytes)
                    .finalize()
                    .as_bytes(),
            );
        }
        BlobId(*blake3::hash(bytes).as_bytes())
    }

    /// Parses exactly 64 lowercase hex digits; anything else (including a path) is refused.
    pub fn parse(s: &str) -> Option<BlobId> {
        let b: &[u8; 64] = s.as_bytes().try_into().ok()?;
        let mut out = [0u8; 32];
        // Branch-free: every byte is looked up, invalid ones set high bits in
        // `bad`, checked once. Blob ids sit on the reader's hot path.
        let mut bad = 0u8;
        for (o, pair) in out.iter_mut().zip(b.chunks_exact(2)) {
            let (hi, lo) = (
                LOWER_NIBBLE[pair[0] as usize],
                LOWER_NIBBLE[pair[1] as usize],
            );
            bad |= hi | lo;
            *o = (hi << 4) | (lo & 0x0f);
        }
        (bad & 0xf0 == 0).then_some(BlobId(out))
    }

    /// The 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(char::from(b"0123456789abcdef"[(b >> 4) as usize]));
            s.push(char::from(b"0123456789abcdef"[(b & 15) as usize]));
        }
        s
    }
}

/// Value of each byte as a hex digit, or 0xff for a non-digit.
const fn nibble_table(accept_upper: bool) -> [u8; 256] {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        if accept_upper {
            t[b'A' as usize + i] = 10 + i as u8;
        }
        i += 1;
    }
    t
}

static LOWER_NIBBLE: [u8; 256] = nibble_table(false);
static ANY_NIBBLE: [u8; 256] = nibble_table(true);

impl fmt::Display for BlobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for BlobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlobId({})", &self.to_hex()[..12])
    }
}

impl Serialize for BlobId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for BlobId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BlobId, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = BlobId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a blob id (64 lowercase hex digits)")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<BlobId, E> {
                BlobId::parse(s).ok_or_else(|| E::custom(format!("bad blob id `{s}`")))
            }
        }
        d.deserialize_str(V)
    }
}

/// Bytes carried as a hex string (kernel argument values).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HexBytes(pub Vec<u8>);

impl fmt::Debug for HexBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HexBytes({})", encode_hex(&self.0))
    }
}

/// Lowercase hex of `bytes`, two digits each.
pub fn encode_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(b"0123456789abcdef"[(b >> 4) as usize]));
        s.push(char::from(b"0123456789abcdef"[(b & 15) as usize]));
    }
    s
}

/// The bytes of an even-length hex string; `None` if it is not one.
pub fn decode_hex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() / 2);
    let mut bad = 0u8;
    for p in b.chunks_exact(2) {
        let (hi, lo) = (ANY_NIBBLE[p[0] as usize], ANY_NIBBLE[p[1] as usize]);
        bad |= hi | lo;
        out.push((hi << 4) | (lo & 0x0f));
    }
    (bad & 0xf0 == 0).then_some(out)
}

impl Serialize for HexBytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode_hex(&self.0))
    }
}

impl<'de> Deserialize<'de> for HexBytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<HexBytes, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = HexBytes;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a hex byte string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<HexBytes, E> {
                decode_hex(s)
                    .map(HexBytes)
                    .ok_or_else(|| E::custom("bad hex byte string"))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_id_is_the_same_on_every_core_as_on_one() {
        for len in [parallel_from() - 1, parallel_from(), 9 << 20] {
            let b: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            assert_eq!(BlobId::of(&b).0, *blake3::hash(&b).as_bytes(), "{len}");
        }
    }

    proptest! {
        #[test]
        fn addr_round_trips(v: u64) {
            let mut buf = [0u8; 18];
            let s = format_addr(v, &mut buf).to_string();
            prop_assert_eq!(s.clone(), format!("{v:#x}"));
            prop_assert_eq!(Addr::parse(&s), Some(Addr(v)));
        }

        #[test]
        fn hex_round_trips(v: Vec<u8>) {
            prop_assert_eq!(decode_hex(&encode_hex(&v)), Some(v));
        }
    }

    #[test]
    fn large_blobs_hash_the_same_in_parallel() {
        let big: Vec<u8> = (0..(9u32 << 20)).map(|i| ((i * 31) >> 7) as u8).collect();
        assert_eq!(BlobId::of(&big).0, *blake3::hash(&big).as_bytes());
    }

    #[test]
    fn blob_id_refuses_paths_and_uppercase() {
        let good = BlobId::of(b"abc").to_hex();
        assert!(BlobId::parse(&good).is_some());
        assert!(BlobId::parse(&good.to_uppercase()).is_none());
        assert!(BlobId::parse(&format!("../{}", &good[3..])).is_none());
        assert!(BlobId::parse("00").is_none());
    }
}
