//! ROCm HRR's binary region stream (`regions/*.hrrr`): parser and writer.
//!
//! The layout is the one ROCm's HRR region producers write (see its
//! `producers/README.md`); every integer is little-endian:
//!
//! ```text
//! file header (8 bytes)   u32 magic 0x52525248 ("HRRR" on disk), u16 version = 1, u16 0
//! batch, repeated:
//!   event header (32)     u16 event_type = 0xFFFD, u64 sequence_id, u64 timestamp_ns,
//!                         u64 thread_id, u32 payload_length, u8[2] reserved
//!                         (packed; payload_length counts the header itself:
//!                         40 + 32·n for a region batch)
//!   u32 n, u32 flags
//!   n records (32 each)   u8 op, u8 kind, u8 device, u8 flags, u32 tag,
//!                         u64 base, u64 size, i64 mono_ns
//! ```
//!
//! `op`: 0 add, 1 del. `kind`: 0 block, 1 segment (note the order differs from
//! [`RegionKind`]'s declaration; the mapping is explicit below). `mono_ns` 0
//! means live since before the stream began.
//!
//! Older ROCm archives declared `payload_length` as a u16 followed by four
//! reserved zero bytes; reading the field as a u32 at the same offset gives
//! the same value for both, so both are accepted.
//!
//! The reader works on the file's bytes and allocates only for the records
//! it returns, never from a declared length, so a hostile or damaged file
//! cannot make it allocate more than the file's size or panic. Producers write
//! one batch per `write()`, so a crash can only tear the last batch: that is
//! recovered with a warning and everything before it is kept. A batch whose
//! declared length cannot be right stops reading with a warning.

use std::io::{self, Write};
use std::path::Path;

use crate::region_record::{
    RecordProblem, RegionError, RegionKind, RegionOp, RegionRecord, RegionStream, RegionWarning,
    TornAt,
};

/// `"HRRR"` read as a little-endian u32.
pub const HRRR_MAGIC: u32 = 0x5252_5248;
/// The stream version this reader understands.
pub const HRRR_VERSION: u16 = 1;
/// `event_type` of a region batch.
pub const REGION_EVENT_TYPE: u16 = 0xFFFD;
/// Bytes of the stream's file header.
pub const FILE_HEADER_LEN: usize = 8;
/// Bytes of each event header.
pub const EVENT_HEADER_LEN: usize = 32;
/// Event header plus `u32 n, u32 flags`.
pub const BATCH_PREFIX_LEN: usize = EVENT_HEADER_LEN + 8;
/// Bytes of one region record.
pub const RECORD_LEN: usize = 32;
/// Largest batch believed: 1 Mi records (32 MiB). The reference producer
/// writes one poll interval's worth of allocator events per batch, far below.
pub const MAX_BATCH_LEN: u64 = (BATCH_PREFIX_LEN + RECORD_LEN * (1 << 20)) as u64;

const OFFSET_PAYLOAD_LENGTH: usize = 26;

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Reads and parses a `.hrrr` file the user named (a symlink is followed):
/// a regular file of at most [`crate::region_record::MAX_REGION_FILE`] bytes.
pub fn read_hrrr(path: impl AsRef<Path>) -> Result<RegionStream, RegionError> {
    let path = path.as_ref();
    let bytes = crate::safe_fs::read_limited(
        path,
        crate::safe_fs::Follow::Yes,
        crate::region_record::MAX_REGION_FILE,
        "region stream",
    )?;
    parse_hrrr(&bytes, path)
}

/// Reads and parses an already opened `.hrrr` file (at most
/// [`crate::region_record::MAX_REGION_FILE`] bytes are read).
pub fn read_hrrr_from(file: std::fs::File, path: &Path) -> Result<RegionStream, RegionError> {
    use std::io::Read;
    let limit = crate::region_record::MAX_REGION_FILE;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| RegionError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(crate::safe_fs::OpenError::TooLarge {
            path: path.to_path_buf(),
            len: bytes.len() as u64,
            limit,
            what: "region stream",
        }
        .into());
    }
    parse_hrrr(&bytes, path)
}

/// Parses `.hrrr` bytes that have no file name: the records and the
/// warnings (whose messages then carry no path prefix).
pub fn parse(bytes: &[u8]) -> Result<(Vec<RegionRecord>, Vec<RegionWarning>), RegionError> {
    let s = parse_hrrr(bytes, Path::new(""))?;
    Ok((s.records, s.warnings))
}

/// Parses a whole `.hrrr` stream; `path` names it in warnings and errors.
/// Errors only for a file that is not an HRRR stream at all (bad magic,
/// unsupported version); damage inside the stream gives warnings.
pub fn parse_hrrr(bytes: &[u8], path: &Path) -> Result<RegionStream, RegionError> {
    let mut out = RegionStream {
        path: path.to_path_buf(),
        ..RegionStream::default()
    };
    if bytes.len() < FILE_HEADER_LEN {
        // A producer that died before its first write leaves an empty or
        // partial header: nothing was declared, which is not an error.
        if !bytes.is_empty() {
            out.warnings.push(RegionWarning::TornTail {
                path: path.to_path_buf(),
                at: TornAt::Offset(0),
                bytes: bytes.len() as u64,
            });
        }
        return Ok(out);
    }
    check_file_header(bytes, path)?;

    let mut negative_times = 0u64;
    let mut off = FILE_HEADER_LEN;
    while off < bytes.len() {
        let rest = &bytes[off..];
        // A producer that reopened its file in append mode writes the file
        // header again. It cannot be confused with a batch: a batch starts
        // with event_type 0xFFFD, the header with "HR".
        if rest.len() >= FILE_HEADER_LEN && u32_at(rest, 0) == HRRR_MAGIC {
            check_file_header(rest, path)?;
            off += FILE_HEADER_LEN;
            continue;
        }
        let warn_path = || path.to_path_buf();
        if rest.len() < EVENT_HEADER_LEN {
            out.warnings.push(RegionWarning::TornTail {
                path: warn_path(),
                at: TornAt::Offset(off as u64),
                bytes: rest.len() as u64,
            });
            break;
        }
        let event_type = u16_at(rest, 0);
        let length = u64::from(u32_at(rest, OFFSET_PAYLOAD_LENGTH));
        let implausible = |reason| RegionWarning::ImplausibleBatch {
            path: path.to_path_buf(),
            offset: off as u64,
            length,
            reason,
        };
        let is_region = event_type == REGION_EVENT_TYPE;
        let well_formed = length >= BATCH_PREFIX_LEN as u64
            && (length - BATCH_PREFIX_LEN as u64).is_multiple_of(RECORD_LEN as u64);
        if length < EVENT_HEADER_LEN as u64 {
            out.warnings
                .push(implausible("shorter than its own 32-byte header"));
            break;
        }
        if length > MAX_BATCH_LEN {
            out.warnings
                .push(implausible("larger than any producer writes"));
            break;
        }
        if length > rest.len() as u64 {
            // A well-formed region batch cut off by the end of the file is
            // the torn tail of a crashed producer; anything else running
            // past the end is a corrupt length field.
            out.warnings.push(if is_region && well_formed {
                RegionWarning::TornTail {
                    path: warn_path(),
                    at: TornAt::Offset(off as u64),
                    bytes: rest.len() as u64,
                }
            } else {
                implausible("runs past the end of the file")
            });
            break;
        }
        let record = &rest[..length as usize];
        if !is_region {
            out.warnings.push(RegionWarning::ForeignBatch {
                path: warn_path(),
                offset: off as u64,
                event_type,
            });
            off += length as usize;
            continue;
        }
        if !well_formed {
            out.warnings.push(implausible("not 40 + 32·n bytes"));
            break;
        }
        let declared = u64::from(u32_at(record, EVENT_HEADER_LEN));
        let present = (length - BATCH_PREFIX_LEN as u64) / RECORD_LEN as u64;
        if declared != present {
            out.warnings.push(RegionWarning::CountMismatch {
                path: warn_path(),
                offset: off as u64,
                declared,
                present,
            });
        }
        let n = declared.min(present) as usize;
        for i in 0..n {
            let at = BATCH_PREFIX_LEN + i * RECORD_LEN;
            let rec_off = (off + at) as u64;
            match decode_record(&record[at..at + RECORD_LEN]) {
                Ok((rec, negative)) => {
                    negative_times += u64::from(negative);
                    out.records.push(rec);
                }
                Err(reason) => out.warnings.push(RegionWarning::SkippedRecord {
                    path: warn_path(),
                    offset: rec_off,
                    reason,
                }),
            }
        }
        off += length as usize;
    }
    if negative_times > 0 {
        out.warnings.push(RegionWarning::NegativeTime {
            path: path.to_path_buf(),
            count: negative_times,
        });
    }
    Ok(out)
}

fn check_file_header(b: &[u8], path: &Path) -> Result<(), RegionError> {
    let magic = u32_at(b, 0);
    if magic != HRRR_MAGIC {
        return Err(RegionError::BadMagic {
            path: path.to_path_buf(),
            found: magic,
            expected: HRRR_MAGIC,
        });
    }
    let version = u16_at(b, 4);
    if version != HRRR_VERSION {
        return Err(RegionError::UnsupportedVersion {
            path: path.to_path_buf(),
            version,
            supported: HRRR_VERSION,
        });
    }
    Ok(())
}

/// One 32-byte record; the bool says its time was negative (clamped to 0).
fn decode_record(r: &[u8]) -> Result<(RegionRecord, bool), String> {
    let op = match r[0] {
        0 => RegionOp::Add,
        1 => RegionOp::Del,
        other => return Err(format!("unknown op {other}")),
    };
    let kind = match r[1] {
        0 => RegionKind::Block,
        1 => RegionKind::Segment,
        other => return Err(format!("unknown kind {other}")),
    };
    let mono = u64_at(r, 24) as i64;
    let rec = RegionRecord {
        op,
        kind,
        device: u32::from(r[2]),
        tag: u32_at(r, 4),
        base: u64_at(r, 8),
        size: u64_at(r, 16),
        t: mono.max(0) as u64,
    };
    match rec.validate() {
        Ok(()) => Ok((rec, mono < 0)),
        Err(RecordProblem::ZeroSize) => {
            Err(format!("{} {:#x} has zero size", kind.as_str(), rec.base))
        }
        Err(RecordProblem::Overflow) => Err(format!(
            "{} {:#x} + {} overflows",
            kind.as_str(),
            rec.base,
            rec.size
        )),
    }
}

/// The 8-byte file header.
pub fn encode_file_header() -> [u8; FILE_HEADER_LEN] {
    let mut h = [0u8; FILE_HEADER_LEN];
    h[..4].copy_from_slice(&HRRR_MAGIC.to_le_bytes());
    h[4..6].copy_from_slice(&HRRR_VERSION.to_le_bytes());
    h
}

/// One batch (event header, count, records) stamped `timestamp_ns`.
pub fn encode_batch(records: &[RegionRecord], timestamp_ns: u64) -> Vec<u8> {
    let length = BATCH_PREFIX_LEN + RECORD_LEN * records.len();
    let mut b = Vec::with_capacity(length);
    b.extend_from_slice(&REGION_EVENT_TYPE.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes()); // sequence_id: unused, records order by time
    b.extend_from_slice(&timestamp_ns.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes()); // thread_id
    b.extend_from_slice(&(length as u32).to_le_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&(records.len() as u32).to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes()); // flags
    for r in records {
        b.push(match r.op {
            RegionOp::Add => 0,
            RegionOp::Del => 1,
        });
        b.push(match r.kind {
            RegionKind::Block => 0,
            RegionKind::Segment => 1,
        });
        b.push(u8::try_from(r.device).unwrap_or(u8::MAX));
        b.push(0);
        b.extend_from_slice(&r.tag.to_le_bytes());
        b.extend_from_slice(&r.base.to_le_bytes());
        b.extend_from_slice(&r.size.to_le_bytes());
        b.extend_from_slice(&(r.t.min(i64::MAX as u64) as i64).to_le_bytes());
    }
    debug_assert_eq!(b.len(), length);
    b
}

/// Writes a `.hrrr` stream the way ROCm's producers do: one `write` per batch,
/// so a crash can only tear the last one.
pub struct HrrrWriter<W: Write> {
    out: W,
}

impl<W: Write> HrrrWriter<W> {
    /// Starts a new stream: writes the file header.
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(&encode_file_header())?;
        Ok(HrrrWriter { out })
    }

    /// Continues a stream whose header is already written.
    pub fn appending(out: W) -> Self {
        HrrrWriter { out }
    }

    /// Appends one batch of `records`, stamped `timestamp_ns`, and flushes.
    pub fn write_batch(&mut self, records: &[RegionRecord], timestamp_ns: u64) -> io::Result<()> {
        self.out.write_all(&encode_batch(records, timestamp_ns))?;
        self.out.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("x.hrrr")
    }

    fn recs() -> Vec<RegionRecord> {
        vec![
            RegionRecord::segment(0x7f00_0000_0000, 1 << 20, 0),
            RegionRecord {
                kind: RegionKind::Block,
                device: 3,
                tag: 9,
                ..RegionRecord::segment(0x7f00_0000_1000, 256, 100)
            },
            RegionRecord {
                op: RegionOp::Del,
                ..RegionRecord::segment(0x7f00_0000_0000, 1 << 20, 200)
            },
        ]
    }

    fn stream(batches: &[&[RegionRecord]]) -> Vec<u8> {
        let mut w = HrrrWriter::new(Vec::new()).unwrap();
        for b in batches {
            w.write_batch(b, 42).unwrap();
        }
        w.into_inner()
    }

    #[test]
    fn layout_matches_the_reference_producer() {
        // struct.pack("<IHH", 0x52525248, 1, 0) + "<HQQQI2x" + "<II" + "<BBBBIQQq"
        let bytes = stream(&[&recs()[1..2]]);
        assert_eq!(&bytes[..8], b"HRRR\x01\x00\x00\x00");
        assert_eq!(&bytes[8..10], &[0xfd, 0xff]);
        assert_eq!(
            u32_at(&bytes, 8 + 26),
            72,
            "payload_length counts the header: 40 + 32"
        );
        assert_eq!(u32_at(&bytes, 8 + 32), 1);
        let rec = &bytes[8 + 40..];
        assert_eq!(
            rec[..4],
            [0, 0, 3, 0],
            "op add, kind block, device 3, flags 0"
        );
        assert_eq!(u32_at(rec, 4), 9);
        assert_eq!(u64_at(rec, 8), 0x7f00_0000_1000);
        assert_eq!(u64_at(rec, 16), 256);
        assert_eq!(u64_at(rec, 24), 100);
        assert_eq!(bytes.len(), 8 + 72);
    }

    #[test]
    fn round_trips() {
        let r = recs();
        let s = parse_hrrr(&stream(&[&r[..2], &r[2..]]), p()).unwrap();
        assert_eq!(s.records, r);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn torn_tail_keeps_earlier_batches() {
        let r = recs();
        let full = stream(&[&r[..2], &r[2..]]);
        for cut in 1..(40 + 32) {
            let s = parse_hrrr(&full[..full.len() - cut], p()).unwrap();
            assert_eq!(s.records, r[..2], "cut {cut}");
            assert!(
                matches!(s.warnings.as_slice(), [RegionWarning::TornTail { at: TornAt::Offset(o), .. }] if *o == 8 + 40 + 64),
                "cut {cut}: {:?}",
                s.warnings
            );
        }
    }

    #[test]
    fn implausible_lengths_stop_with_a_warning() {
        let r = recs();
        let good = stream(&[&r[..1]]);
        let bad_at = good.len();
        for (len, why) in [
            (8u32, "shorter"),
            (u32::MAX, "larger"),
            (40 + 33, "40 + 32"),
        ] {
            let mut b = stream(&[&r[..1], &r[1..]]);
            b[bad_at + 26..bad_at + 30].copy_from_slice(&len.to_le_bytes());
            let s = parse_hrrr(&b, p()).unwrap();
            assert_eq!(s.records, r[..1]);
            match &s.warnings[..] {
                [RegionWarning::ImplausibleBatch { reason, offset, .. }] => {
                    assert!(reason.contains(why), "{reason}");
                    assert_eq!(*offset, bad_at as u64);
                }
                w => panic!("len {len}: {w:?}"),
            }
        }
    }

    #[test]
    fn count_mismatch_trusts_the_bytes() {
        let r = recs();
        let mut b = stream(&[&r]);
        b[8 + 32..8 + 36].copy_from_slice(&1000u32.to_le_bytes());
        let s = parse_hrrr(&b, p()).unwrap();
        assert_eq!(s.records, r);
        assert!(matches!(
            s.warnings[0],
            RegionWarning::CountMismatch {
                declared: 1000,
                present: 3,
                ..
            }
        ));
    }

    #[test]
    fn bad_magic_and_version_are_errors() {
        let mut b = stream(&[&recs()]);
        b[0] = b'X';
        assert!(matches!(
            parse_hrrr(&b, p()),
            Err(RegionError::BadMagic { .. })
        ));
        let mut b = stream(&[&recs()]);
        b[4] = 2;
        let e = parse_hrrr(&b, p()).unwrap_err();
        assert!(e.to_string().contains("version 2"), "{e}");
    }

    #[test]
    fn repeated_header_foreign_batches_and_odd_records() {
        let r = recs();
        let mut b = stream(&[&r[..1]]);
        b.extend_from_slice(&encode_file_header());
        // A foreign event of another type, header only.
        let mut foreign = encode_batch(&[], 0);
        foreign[0..2].copy_from_slice(&7u16.to_le_bytes());
        b.extend_from_slice(&foreign);
        let mut odd = encode_batch(&[r[1], r[1], RegionRecord { t: 0, ..r[1] }], 0);
        odd[40] = 9; // unknown op in the first record
        odd[40 + 32 + 16..40 + 32 + 24].copy_from_slice(&0u64.to_le_bytes()); // zero size add
        odd[40 + 64 + 24..40 + 64 + 32].copy_from_slice(&(-5i64).to_le_bytes());
        b.extend_from_slice(&odd);
        let s = parse_hrrr(&b, p()).unwrap();
        assert_eq!(s.records, vec![r[0], RegionRecord { t: 0, ..r[1] }]);
        let kinds: Vec<_> = s.warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(kinds.len(), 4, "{kinds:#?}");
        assert!(kinds[0].contains("event type 0x0007"));
        assert!(kinds[1].contains("unknown op 9"));
        assert!(kinds[2].contains("zero size"));
        assert!(kinds[3].contains("negative time"));
    }

    #[test]
    fn empty_and_partial_headers_are_not_errors() {
        assert!(parse_hrrr(&[], p()).unwrap().warnings.is_empty());
        assert_eq!(parse_hrrr(b"HRR", p()).unwrap().warnings.len(), 1);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_garbage(tail: Vec<u8>) {
            let mut b = encode_file_header().to_vec();
            b.extend_from_slice(&tail);
            let _ = parse_hrrr(&b, p());
        }

        #[test]
        fn never_panics_on_mutated_streams(flips: Vec<(usize, u8)>) {
            let r = recs();
            let mut b = stream(&[&r[..2], &r[2..]]);
            for (i, v) in flips {
                let n = b.len();
                b[8 + i % (n - 8)] = v;
            }
            let _ = parse_hrrr(&b, p());
        }
    }
}
