//! Fuzz target bodies for the archive format's parsers (feature `fuzzing`).
//!
//! Each takes arbitrary bytes and must neither panic nor allocate beyond a
//! bound of its input, and checks a property where the format has one (what
//! the writer writes, the reader reads back the same). They are driven by the
//! cargo-fuzz targets in `lib/hrr-core/fuzz` (libFuzzer, nightly) and by the
//! stable test `tests/fuzz_corpus.rs`: the fuzzing smoke ([`smoke`]), every
//! seed and past crash and a fixed number of seeded mutations of the seeds,
//! so CI exercises them without nightly. [`archive_dir`] reads whole
//! archives written as real files, FIFOs, links and sparse files.

use std::io::BufReader;
use std::path::Path;

use crate::event::Event;
use crate::event_reader::{EventReader, ReadOptions};
use crate::manifest::Manifest;
use crate::region_record::{RegionRecord, parse_region_ndjson};

mod archive_dir;
pub mod smoke;

pub use archive_dir::archive_dir;

/// A fuzz target body.
pub type Target = fn(&[u8]);

/// The targets, by name (the fuzz crate's binaries and the seed folders).
pub const TARGETS: &[(&str, Target)] = &[
    ("event_reader", event_reader),
    ("manifest", manifest),
    ("sidecar", sidecar),
    ("hrrr", hrrr),
    ("archive_dir", archive_dir),
];

/// `events.ndjson` content: read leniently and strictly; every event read
/// round-trips through the writer's line format unchanged, and a strict read
/// gives a prefix of what a lenient read gives (it only stops earlier).
///
/// The lenient read goes through an 8 KiB `BufReader`, so that lines
/// straddle its buffer and take the copying path; the strict one reads the
/// input in place, the path of a line within the buffer. An event the
/// lenient read round-tripped already is compared, not round-tripped again:
/// the round trip was half of an execution's time.
pub fn event_reader(data: &[u8]) {
    let mut lenient = Vec::new();
    let reader = EventReader::from_reader(BufReader::new(data), "fuzz.ndjson");
    for item in reader {
        let Ok(event) = item else { break };
        round_trip(&event);
        lenient.push(event);
    }
    let reader = EventReader::from_reader(data, "fuzz.ndjson").options(ReadOptions::strict());
    for (i, item) in reader.enumerate() {
        let Ok(event) = item else { break };
        assert_eq!(
            lenient.get(i),
            Some(&event),
            "strict read's event {i} is not the lenient read's"
        );
    }
}

fn round_trip(event: &Event) {
    let mut line = Vec::new();
    event.write_line(&mut line);
    let back = Event::parse(line.trim_ascii_end())
        .unwrap_or_else(|e| panic!("written line does not parse: {e}: {line:?}"));
    assert_eq!(&back, event, "event changed through its line");
}

/// `manifest.json` content: parsed; one that parses writes back the same.
pub fn manifest(data: &[u8]) {
    let dir = Path::new("fuzz.hrr");
    if let Ok(m) = Manifest::parse(data, dir) {
        let again = Manifest::parse(m.to_json().as_bytes(), dir)
            .unwrap_or_else(|e| panic!("written manifest does not parse: {e}"));
        assert_eq!(again, m, "manifest changed through its JSON");
        let _ = m.incomplete_reason();
    }
}

/// A region sidecar (`regions/*.ndjson`): strict and tolerant; every record
/// read validates and round-trips through its line.
pub fn sidecar(data: &[u8]) {
    for tolerant in [false, true] {
        if let Ok(stream) = parse_region_ndjson(data, Path::new("fuzz.ndjson"), tolerant) {
            for r in &stream.records {
                assert!(r.validate().is_ok(), "invalid record accepted: {r:?}");
                let back: RegionRecord = serde_json::from_str(r.to_line().trim_end())
                    .unwrap_or_else(|e| panic!("written record does not parse: {e}"));
                assert_eq!(&back, r, "record changed through its line");
            }
        }
    }
}

/// A ROCm `.hrrr` stream: damage gives warnings, never a panic; every record
/// kept is valid.
pub fn hrrr(data: &[u8]) {
    if let Ok((records, _warnings)) = crate::hrrr::parse(data) {
        for r in &records {
            assert!(r.validate().is_ok(), "invalid record kept: {r:?}");
        }
    }
}

/// One edit of a seed input, for the stable mutation tests (libFuzzer has
/// its own mutators). Positions are taken modulo the input's length.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// XOR a byte.
    Flip(usize, u8),
    /// Insert bytes.
    Insert(usize, Vec<u8>),
    /// Insert a token that parsers treat specially (see [`TOKENS`]).
    Token(usize, usize),
    /// Delete up to `n` bytes.
    Delete(usize, usize),
    /// Cut the input short.
    Truncate(usize),
    /// Copy a range of the input over another place (duplicated lines).
    Splice(usize, usize, usize),
}

/// Tokens the formats give meaning to: boundary numbers, ops, separators.
pub const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\"",
    b"{}",
    b"\"op\":\"eof\",\"events\":0",
    b"\"op\":\"launch\"",
    b"\"offset\":2147483648",
    b"\"offset\":4294967295",
    b"\"size\":18446744073709551615",
    b"\"size\":4294967296",
    b"\"grid\":[4294967295,4294967295,1]",
    b"\"block\":[1024,1024,64]",
    b"\"ptrs\":[4294967295]",
    b"\"ptrs\":[]",
    b"\"hex\":\"\"",
    b"\"ptr\":\"0x0\"",
    b"\"base\":\"0xffffffffffffffff\"",
    b"\"version\":2",
    b"\"complete\":false",
    b"\"incomplete\":\"disk full\"",
    b"0x7fffffffffffffff",
    b"-1",
    b"1e308",
    b"\xff\xfe",
    b"\x00",
    b"HRRR",
    b"\xfd\xff",
    b"\n@@layout\n",
    b"\n@@blob\n",
];

impl Mutation {
    /// Applies the mutation to `data`.
    pub fn apply(&self, data: &mut Vec<u8>) {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
        match self {
            Mutation::Flip(i, x) => {
                if !data.is_empty() {
                    let i = i % data.len();
                    data[i] ^= x | 1;
                }
            }
            Mutation::Insert(i, bytes) => {
                let i = at(*i, data.len());
                data.splice(i..i, bytes.iter().copied());
            }
            Mutation::Token(i, t) => {
                let i = at(*i, data.len());
                data.splice(i..i, TOKENS[t % TOKENS.len()].iter().copied());
            }
            Mutation::Delete(i, n) => {
                if !data.is_empty() {
                    let i = i % data.len();
                    let end = (i + n % 64 + 1).min(data.len());
                    data.drain(i..end);
                }
            }
            Mutation::Truncate(n) => {
                let n = at(*n, data.len());
                data.truncate(n);
            }
            Mutation::Splice(from, len, to) => {
                if !data.is_empty() {
                    let from = from % data.len();
                    let end = (from + len % 4096 + 1).min(data.len());
                    let piece = data[from..end].to_vec();
                    let to = at(*to, data.len());
                    data.splice(to..to, piece);
                }
            }
        }
    }
}
