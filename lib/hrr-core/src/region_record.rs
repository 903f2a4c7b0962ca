//! `RegionRecord`: one line of a region sidecar (DESIGN.md §4), and the loaders
//! for `regions/*.ndjson` files.
//!
//! A sidecar declares device memory the recorder could not see. The NDJSON
//! form is
//! `{"op":"add","kind":"segment","base":"0x…","size":N,"device":0,"t":NS,"tag":0}`;
//! ROCm's binary `.hrrr` form is read by [`crate::hrrr`] into the same record.
//!
//! Two entry points with different strictness:
//! - [`read_region_ndjson`] is strict: every line must be a valid record. It
//!   is what `hrr-sidecar` uses before appending, so it never builds on a
//!   damaged file.
//! - [`load_region_file`] is what replay uses: it accepts both formats and
//!   recovers a torn last line (a producer that died mid-append) with a
//!   [`RegionWarning`], because losing a whole sidecar to one torn line would
//!   turn a recoverable crash into a fatal "not mapped".

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::hex::Addr;

/// Whether a record makes a region live or ends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegionOp {
    /// The region becomes live.
    Add,
    /// The region ends.
    Del,
}

/// A whole allocator segment, or a block carved out of memory the runtime knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegionKind {
    /// A whole allocator segment.
    Segment,
    /// A block carved out of a segment or of memory the runtime knows.
    Block,
}

impl RegionOp {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            RegionOp::Add => "add",
            RegionOp::Del => "del",
        }
    }
}

impl RegionKind {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            RegionKind::Segment => "segment",
            RegionKind::Block => "block",
        }
    }
}

/// One region sidecar record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegionRecord {
    /// Start or end.
    pub op: RegionOp,
    /// Segment or block.
    pub kind: RegionKind,
    /// Recorded device virtual address of the region's first byte.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Device ordinal the producer saw the region on.
    pub device: u32,
    /// CLOCK_MONOTONIC ns on the capture's clock; 0 = live since before the stream.
    pub t: u64,
    /// Producer-defined; carried, never interpreted.
    pub tag: u32,
}

/// Wire form: `base` as a `"0x…"` string, everything else plain. Unknown
/// fields are ignored so a newer producer's additions do not break this reader.
#[derive(Serialize, Deserialize)]
struct Wire {
    op: RegionOp,
    kind: RegionKind,
    base: Addr,
    size: u64,
    #[serde(default)]
    device: u32,
    #[serde(default)]
    t: u64,
    #[serde(default)]
    tag: u32,
}

impl Serialize for RegionRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            op: self.op,
            kind: self.kind,
            base: Addr(self.base),
            size: self.size,
            device: self.device,
            t: self.t,
            tag: self.tag,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for RegionRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = Wire::deserialize(d)?;
        Ok(RegionRecord {
            op: w.op,
            kind: w.kind,
            base: w.base.0,
            size: w.size,
            device: w.device,
            t: w.t,
            tag: w.tag,
        })
    }
}

impl RegionRecord {
    /// An `add segment` record, the common case.
    pub fn segment(base: u64, size: u64, t: u64) -> RegionRecord {
        RegionRecord {
            op: RegionOp::Add,
            kind: RegionKind::Segment,
            base,
            size,
            device: 0,
            t,
            tag: 0,
        }
    }

    /// One past the last byte, or `None` when `base + size` overflows.
    pub fn end(&self) -> Option<u64> {
        self.base.checked_add(self.size)
    }

    /// The record as one NDJSON line with its trailing newline.
    pub fn to_line(&self) -> String {
        // A record holds only plain values: serialising cannot fail.
        let mut s = serde_json::to_string(self).expect("region record serialises");
        s.push('\n');
        s
    }

    /// Checks the invariants every record must hold: an `add` has a non-zero
    /// size and `base + size` does not wrap. A `del` identifies its region by
    /// base, so its size is informational and may be 0.
    pub fn validate(&self) -> Result<(), RecordProblem> {
        if self.op == RegionOp::Add && self.size == 0 {
            return Err(RecordProblem::ZeroSize);
        }
        if self.end().is_none() {
            return Err(RecordProblem::Overflow);
        }
        Ok(())
    }
}

impl fmt::Display for RegionRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {:#x} size={} device={} t={} tag={}",
            self.op.as_str(),
            self.kind.as_str(),
            self.base,
            self.size,
            self.device,
            self.t,
            self.tag
        )
    }
}

/// What [`RegionRecord::validate`] found wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordProblem {
    #[error("zero size")]
    /// The size is 0.
    ZeroSize,
    #[error("base + size overflows the 64-bit address space")]
    /// `base + size` passes 2^64.
    Overflow,
}

/// A region file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    #[error("{}", path.display())]
    /// The region file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    #[error("{}:{line}: malformed region record: {reason}", path.display())]
    /// A line is not a valid record.
    Malformed {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    #[error("{}:{line}: region {base:#x} has zero size", path.display())]
    /// A record of zero size.
    ZeroSize {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// The record's base.
        base: u64,
    },
    #[error("{}:{line}: region {base:#x} + {size} overflows the 64-bit address space", path.display())]
    /// A record whose end passes 2^64.
    Overflow {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// The record's base.
        base: u64,
        /// Its size.
        size: u64,
    },
    #[error("{}: not an HRRR region stream (magic {found:#010x}, expected {expected:#010x})", path.display())]
    /// A `.hrrr` file with another magic number.
    BadMagic {
        /// The file.
        path: PathBuf,
        /// The magic found.
        found: u32,
        /// The magic expected.
        expected: u32,
    },
    #[error("{}: HRRR region stream version {version}, this hrr reads version {supported}", path.display())]
    /// A `.hrrr` stream of another version.
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u16,
        /// The version this hrr reads.
        supported: u16,
    },
    #[error("{}: unknown region file type (expected .ndjson or .hrrr)", path.display())]
    /// Neither `.ndjson` nor `.hrrr`.
    UnknownType {
        /// The file.
        path: PathBuf,
    },
    #[error(transparent)]
    /// The region file is not a regular file, or is too large to be one.
    Open(#[from] crate::safe_fs::OpenError),
    #[error("{}:{line}: line longer than {limit} bytes; not a region sidecar", path.display())]
    /// A sidecar line longer than [`MAX_REGION_LINE`].
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: u64,
        /// The longest line allowed.
        limit: u64,
    },
}

/// Largest region file read (either format): a sidecar declares memory
/// segments, a few records per allocation; 256 MiB is millions of them.
pub const MAX_REGION_FILE: u64 = 256 << 20;
/// Longest sidecar NDJSON line (a record is about 120 bytes).
pub const MAX_REGION_LINE: u64 = 64 << 10;

/// Opens a region file: a regular file (`follow`: whether a symlink is
/// followed), at most [`MAX_REGION_FILE`] bytes.
fn open_region_file(
    path: &Path,
    follow: crate::safe_fs::Follow,
) -> Result<std::fs::File, RegionError> {
    let (file, meta) = crate::safe_fs::open_regular(path, follow)?;
    if meta.len() > MAX_REGION_FILE {
        return Err(crate::safe_fs::OpenError::TooLarge {
            path: path.to_path_buf(),
            len: meta.len(),
            limit: MAX_REGION_FILE,
            what: "region file",
        }
        .into());
    }
    Ok(file)
}

/// Something a tolerant region loader recovered from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionWarning {
    /// The last line (or batch) was cut short; everything before it was kept.
    TornTail {
        /// The file.
        path: PathBuf,
        /// Where the torn part starts.
        at: TornAt,
        /// Bytes dropped.
        bytes: u64,
    },
    /// A binary batch whose declared length cannot be right; reading stopped there.
    ImplausibleBatch {
        /// The file.
        path: PathBuf,
        /// The batch's byte offset.
        offset: u64,
        /// The length it declares.
        length: u64,
        /// Why that cannot be right.
        reason: &'static str,
    },
    /// A batch's record count disagrees with its length; the smaller was used.
    CountMismatch {
        /// The file.
        path: PathBuf,
        /// The batch's byte offset.
        offset: u64,
        /// The count it declares.
        declared: u64,
        /// The records present.
        present: u64,
    },
    /// A record skipped because it cannot describe a region (unknown op/kind,
    /// zero-size add, overflowing range).
    SkippedRecord {
        /// The file.
        path: PathBuf,
        /// The record's byte offset.
        offset: u64,
        /// Why it was skipped.
        reason: String,
    },
    /// Records whose time was negative; they were treated as `t:0` (baseline).
    NegativeTime {
        /// The file.
        path: PathBuf,
        /// How many.
        count: u64,
    },
    /// A record stream of another event type inside a region file; skipped.
    ForeignBatch {
        /// The file.
        path: PathBuf,
        /// The batch's byte offset.
        offset: u64,
        /// Its event type.
        event_type: u16,
    },
}

/// Where a torn tail starts: a line of a text file or a byte offset of a binary one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TornAt {
    /// At this 1-based line of a text file.
    Line(u64),
    /// At this byte offset of a binary file.
    Offset(u64),
}

/// `"PATH: "`, or nothing for anonymous input (bytes parsed without a file).
struct Prefix<'a>(&'a Path, Option<u64>);

impl fmt::Display for Prefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0.as_os_str().is_empty(), self.1) {
            (true, Some(line)) => write!(f, "line {line}: "),
            (true, None) => Ok(()),
            (false, Some(line)) => write!(f, "{}:{line}: ", self.0.display()),
            (false, None) => write!(f, "{}: ", self.0.display()),
        }
    }
}

impl fmt::Display for RegionWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegionWarning::TornTail {
                path,
                at: TornAt::Line(line),
                bytes,
            } => write!(
                f,
                "{}torn last line ({bytes} bytes) ignored; earlier records kept",
                Prefix(path, Some(*line))
            ),
            RegionWarning::TornTail {
                path,
                at: TornAt::Offset(off),
                bytes,
            } => write!(
                f,
                "{}torn tail at byte {off} ({bytes} bytes of a partial batch) ignored; earlier records kept",
                Prefix(path, None)
            ),
            RegionWarning::ImplausibleBatch {
                path,
                offset,
                length,
                reason,
            } => write!(
                f,
                "{}batch at byte {offset} declares length {length} ({reason}); stopped reading there",
                Prefix(path, None)
            ),
            RegionWarning::CountMismatch {
                path,
                offset,
                declared,
                present,
            } => write!(
                f,
                "{}batch at byte {offset} declares {declared} records but holds {present}; used {}",
                Prefix(path, None),
                declared.min(present)
            ),
            RegionWarning::SkippedRecord {
                path,
                offset,
                reason,
            } => {
                write!(
                    f,
                    "{}record at byte {offset} skipped: {reason}",
                    Prefix(path, None)
                )
            }
            RegionWarning::NegativeTime { path, count } => write!(
                f,
                "{}{count} record(s) with negative time treated as t:0 (baseline)",
                Prefix(path, None)
            ),
            RegionWarning::ForeignBatch {
                path,
                offset,
                event_type,
            } => write!(
                f,
                "{}record at byte {offset} has event type {event_type:#06x}, not a region batch; skipped",
                Prefix(path, None)
            ),
        }
    }
}

/// Records of one region file plus what was recovered while reading it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionStream {
    /// The file.
    pub path: PathBuf,
    /// Its records, in file order.
    pub records: Vec<RegionRecord>,
    /// What was recovered from.
    pub warnings: Vec<RegionWarning>,
}

/// Reads a `regions/*.ndjson` sidecar strictly: any bad line is an error
/// naming `file:line`. Empty lines are allowed.
/// The file must be a regular file inside an archive (a symlink is refused).
pub fn read_region_ndjson(path: impl AsRef<Path>) -> Result<Vec<RegionRecord>, RegionError> {
    let path = path.as_ref();
    let file = open_region_file(path, crate::safe_fs::Follow::No)?;
    Ok(parse_region_ndjson(BufReader::new(file), path, false)?.records)
}

/// Parses sidecar NDJSON from any reader; `name` is used in messages.
/// With `tolerate_torn_tail`, a last line without its newline that does not
/// parse is dropped with a warning instead of failing the file.
pub fn parse_region_ndjson(
    mut reader: impl BufRead,
    name: &Path,
    tolerate_torn_tail: bool,
) -> Result<RegionStream, RegionError> {
    let mut out = RegionStream {
        path: name.to_path_buf(),
        ..RegionStream::default()
    };
    let mut buf = Vec::with_capacity(128);
    let mut line = 0u64;
    loop {
        buf.clear();
        // Bounded: a file of one endless line (or /dev/zero behind a pipe)
        // must not grow this buffer without limit.
        let n = (&mut reader)
            .take(MAX_REGION_LINE + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|source| RegionError::Io {
                path: name.to_path_buf(),
                source,
            })?;
        if n == 0 {
            break;
        }
        line += 1;
        if n as u64 > MAX_REGION_LINE {
            return Err(RegionError::LineTooLong {
                path: name.to_path_buf(),
                line,
                limit: MAX_REGION_LINE,
            });
        }
        let terminated = buf.last() == Some(&b'\n');
        let text = trim_ascii(&buf);
        if text.is_empty() {
            continue;
        }
        let rec: RegionRecord = match serde_json::from_slice(text) {
            Ok(r) => r,
            Err(e) if !terminated && tolerate_torn_tail && e.is_eof() => {
                out.warnings.push(RegionWarning::TornTail {
                    path: name.to_path_buf(),
                    at: TornAt::Line(line),
                    bytes: buf.len() as u64,
                });
                break;
            }
            Err(e) => {
                return Err(RegionError::Malformed {
                    path: name.to_path_buf(),
                    line,
                    reason: e.to_string(),
                });
            }
        };
        match rec.validate() {
            Ok(()) => out.records.push(rec),
            Err(RecordProblem::ZeroSize) => {
                return Err(RegionError::ZeroSize {
                    path: name.to_path_buf(),
                    line,
                    base: rec.base,
                });
            }
            Err(RecordProblem::Overflow) => {
                return Err(RegionError::Overflow {
                    path: name.to_path_buf(),
                    line,
                    base: rec.base,
                    size: rec.size,
                });
            }
        }
    }
    Ok(out)
}

/// Loads one region file of either format, tolerantly (see the module docs):
/// `*.ndjson` sidecars and ROCm `*.hrrr` binary streams. The file is one of
/// an archive's: a regular file (never a symlink) of at most
/// [`MAX_REGION_FILE`] bytes.
pub fn load_region_file(path: impl AsRef<Path>) -> Result<RegionStream, RegionError> {
    let path = path.as_ref();
    match path.extension().and_then(|e| e.to_str()) {
        Some("ndjson") => {
            let file = open_region_file(path, crate::safe_fs::Follow::No)?;
            parse_region_ndjson(BufReader::new(file), path, true)
        }
        Some("hrrr") => {
            let file = open_region_file(path, crate::safe_fs::Follow::No)?;
            crate::hrrr::read_hrrr_from(file, path)
        }
        _ => Err(RegionError::UnknownType {
            path: path.to_path_buf(),
        }),
    }
}

/// [`load_region_file`] over the file's bytes, already read (an archive in
/// memory): the same limit, parsers and tolerance.
pub fn load_region_bytes(bytes: &[u8], path: &Path) -> Result<RegionStream, RegionError> {
    if bytes.len() as u64 > MAX_REGION_FILE {
        return Err(crate::safe_fs::OpenError::TooLarge {
            path: path.to_path_buf(),
            len: bytes.len() as u64,
            limit: MAX_REGION_FILE,
            what: "region file",
        }
        .into());
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("ndjson") => parse_region_ndjson(bytes, path, true),
        Some("hrrr") => crate::hrrr::parse_hrrr(bytes, path),
        _ => Err(RegionError::UnknownType {
            path: path.to_path_buf(),
        }),
    }
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, tolerant: bool) -> Result<RegionStream, RegionError> {
        parse_region_ndjson(text.as_bytes(), Path::new("r.ndjson"), tolerant)
    }

    #[test]
    fn line_matches_design_shape() {
        let r = RegionRecord {
            tag: 7,
            device: 1,
            ..RegionRecord::segment(0x7fbe_0140_0000, 262144, 5)
        };
        assert_eq!(
            r.to_line(),
            "{\"op\":\"add\",\"kind\":\"segment\",\"base\":\"0x7fbe01400000\",\"size\":262144,\
             \"device\":1,\"t\":5,\"tag\":7}\n"
        );
        let back = parse(&r.to_line(), false).unwrap().records;
        assert_eq!(back, vec![r]);
    }

    #[test]
    fn errors_name_file_and_line() {
        let good = RegionRecord::segment(0x1000, 16, 0).to_line();
        let err = parse(&format!("{good}\n{{\"op\":\"add\"}}\n"), false).unwrap_err();
        assert!(
            err.to_string().starts_with("r.ndjson:3: malformed"),
            "{err}"
        );

        let zero = r#"{"op":"add","kind":"segment","base":"0x1000","size":0}"#;
        let err = parse(zero, false).unwrap_err();
        assert!(
            matches!(
                err,
                RegionError::ZeroSize {
                    line: 1,
                    base: 0x1000,
                    ..
                }
            ),
            "{err}"
        );

        let wrap = r#"{"op":"add","kind":"block","base":"0xffffffffffffff00","size":512}"#;
        let err = parse(wrap, false).unwrap_err();
        assert!(err.to_string().contains("overflows"), "{err}");
    }

    #[test]
    fn del_may_have_zero_size() {
        let del = r#"{"op":"del","kind":"segment","base":"0x1000","size":0,"t":9}"#;
        assert_eq!(parse(del, false).unwrap().records[0].op, RegionOp::Del);
    }

    #[test]
    fn torn_tail_is_tolerated_only_when_asked() {
        let good = RegionRecord::segment(0x1000, 16, 0).to_line();
        let text = format!("{good}{{\"op\":\"add\",\"ki");
        assert!(parse(&text, false).is_err());
        let s = parse(&text, true).unwrap();
        assert_eq!(s.records.len(), 1);
        assert!(matches!(
            s.warnings[0],
            RegionWarning::TornTail {
                at: TornAt::Line(2),
                ..
            }
        ));
    }

    #[test]
    fn unknown_fields_are_ignored_but_required_ones_are_not() {
        let text = r#"{"op":"add","kind":"segment","base":"0x1000","size":8,"pool":"a"}"#;
        assert_eq!(parse(text, false).unwrap().records[0].size, 8);
        let typo = r#"{"op":"add","kind":"segment","base":"0x1000","sise":8}"#;
        assert!(parse(typo, false).unwrap_err().to_string().contains("size"));
    }
}
