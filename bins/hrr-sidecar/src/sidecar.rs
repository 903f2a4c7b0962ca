//! Building region sidecars: what `hrr-sidecar` does, as a library.
//!
//! Records come from three places: `--base/--size` arguments, report lines an
//! application printed (any line containing `base=0x…` and `size=N`, such as
//! `HRR_SEGMENT base=0x7fbe01400000 size=262144`; other lines are ignored),
//! or a ROCm `.hrrr` stream. Each record remembers its [`Origin`] so every
//! error names the input line it came from.
//!
//! Before anything is written, records are checked: no zero-sized `add`, no
//! range that wraps the address space, and no two segments that overlap while
//! both are live — against each other and against every sidecar already in
//! the archive. One exception: a segment that *another* region file declares
//! over the same range, or over a range one of the two contains, is the same
//! memory seen by two producers (the capture library's `regions/hsa.ndjson`
//! and the application's `HRR_SEGMENT` lines, say); replay backs the two as
//! one segment, so it is accepted and reported as [`Shared`]. Appending to `DIR/regions/NAME.ndjson` happens under an
//! exclusive lock, and by writing the whole new file to a temporary and
//! renaming it, so a reader (or a crash) sees the old file or the new one.
//!
//! `--size auto` infers a segment's extent from the archive itself: device
//! operands (memcpy, memset, kernel pointer arguments) at or above the base
//! that no allocation live at that moment explains belong to the nearest
//! requested base below them, up to the next requested base or the next
//! recorded allocation (whichever comes first: a hidden segment cannot
//! extend into memory the runtime handed out); the extent is the highest
//! such end, rounded up to 4 KiB. It is a lower bound (only what the run
//! touched), which is what replay needs.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead, Read};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use hrr_core::archive::{Archive, ArchiveError};
use hrr_core::archive_writer::REGIONS_DIR;
use hrr_core::event::{Dir, Op};
use hrr_core::event_reader::{ReadError, ReadOptions};
use hrr_core::region_record::{
    MAX_REGION_FILE, RecordProblem, RegionError, RegionKind, RegionOp, RegionRecord,
    load_region_file,
};
use hrr_core::safe_fs::{DirFd, Follow, OpenError, read_limited};
use hrr_replay::alloc_map::{Alloc, AllocMap};

/// Longest report line read from stdin (a report line is a few dozen bytes).
pub const MAX_REPORT_LINE: u64 = 1 << 20;

/// Granularity `--size auto` rounds extents up to.
pub const AUTO_SIZE_GRANULE: u64 = 4096;
/// Sidecar name when `--name` is not given.
pub const DEFAULT_NAME: &str = "sidecar";

/// Where a record came from, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `--base/--size` on the command line.
    Args,
    /// A report line (`input` is e.g. `stdin`).
    Line { input: String, line: u64 },
    /// The `index`-th record (1-based) of a region file.
    Record { path: PathBuf, index: u64 },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Args => f.write_str("--base/--size"),
            Origin::Line { input, line } => write!(f, "{input}:{line}"),
            Origin::Record { path, index } => write!(f, "{} record {index}", path.display()),
        }
    }
}

/// A segment size: bytes, or inferred from the archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeSpec {
    Bytes(u64),
    Auto,
}

impl FromStr for SizeSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<SizeSpec, String> {
        if s == "auto" {
            return Ok(SizeSpec::Auto);
        }
        parse_u64(s)
            .map(SizeSpec::Bytes)
            .ok_or_else(|| format!("bad size `{s}` (expected bytes, 0x… or `auto`)"))
    }
}

/// Decimal, or hex with a `0x` prefix.
fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() => u64::from_str_radix(hex, 16).ok(),
        Some(_) => None,
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        None => None,
    }
}

/// Values a record gets unless its report line says otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Defaults {
    pub kind: RegionKind,
    pub device: u32,
    /// `--at`: 0 = live since before the stream began.
    pub t: u64,
    pub tag: u32,
    /// `--size` given alongside stdin reports: used for lines without `size=`.
    pub size: Option<SizeSpec>,
}

impl Default for Defaults {
    fn default() -> Defaults {
        Defaults {
            kind: RegionKind::Segment,
            device: 0,
            t: 0,
            tag: 0,
            size: None,
        }
    }
}

/// A record to be made, before `auto` sizes are resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub origin: Origin,
    pub op: RegionOp,
    pub kind: RegionKind,
    pub base: u64,
    pub size: SizeSpec,
    pub device: u32,
    pub t: u64,
    pub tag: u32,
}

impl Request {
    /// The request `--base B --size S` makes.
    pub fn from_args(base: u64, size: SizeSpec, d: &Defaults) -> Request {
        Request {
            origin: Origin::Args,
            op: RegionOp::Add,
            kind: d.kind,
            base,
            size,
            device: d.device,
            t: d.t,
            tag: d.tag,
        }
    }
}

/// Building or writing a sidecar failed.
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    #[error("{origin}: {reason}")]
    BadReport { origin: Origin, reason: String },
    #[error("{origin}: {kind} {base:#x} has zero size")]
    ZeroSize {
        origin: Origin,
        kind: &'static str,
        base: u64,
    },
    #[error("{origin}: {kind} {base:#x} + {size} overflows the 64-bit address space")]
    Overflow {
        origin: Origin,
        kind: &'static str,
        base: u64,
        size: u64,
    },
    #[error(
        "{origin}: segment {base:#x}+{size} overlaps segment {other_base:#x}+{other_size} from {other_origin}"
    )]
    Overlap {
        origin: Origin,
        base: u64,
        size: u64,
        other_origin: Origin,
        other_base: u64,
        other_size: u64,
    },
    #[error("{origin}: segment {base:#x}+{size} is already declared by {other_origin}")]
    Duplicate {
        origin: Origin,
        base: u64,
        size: u64,
        other_origin: Origin,
    },
    #[error("{origin}: --size auto needs --archive to infer the extent from")]
    AutoNeedsArchive { origin: Origin },
    #[error(
        "{origin}: --size auto found no access at or above {base:#x} that a recorded allocation does not \
         explain; give --size"
    )]
    AutoNoAccess { origin: Origin, base: u64 },
    #[error("bad sidecar name `{0}` (letters, digits, `.`, `_`, `-`; not starting with `.`)")]
    BadName(String),
    #[error("no reports on {0} (expected lines containing `base=0x…` and `size=N`)")]
    NoReports(String),
    #[error("{}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Region(#[from] RegionError),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// One report line's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReportLine {
    pub base: u64,
    pub size: Option<SizeSpec>,
    pub kind: Option<RegionKind>,
    pub device: Option<u32>,
    pub t: Option<u64>,
    pub tag: Option<u32>,
}

/// Parses one report line. `Ok(None)` for a line that is not a report: no
/// `base=` token, or no `size=` token while `size_optional` is false.
/// Recognised tokens (each `key=value`, at a word start): `base` (hex `0x…`),
/// `size` (bytes, `0x…` or `auto`), `kind` (`segment`/`block`), `device`,
/// `t` or `at` (ns), `tag`.
pub fn parse_report_line(line: &str, size_optional: bool) -> Result<Option<ReportLine>, String> {
    let tokens = scan_tokens(line);
    let get = |k: &str| tokens.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let Some(base) = get("base") else {
        return Ok(None);
    };
    let size = get("size");
    if size.is_none() && !size_optional {
        return Ok(None);
    }
    let base = base
        .strip_prefix("0x")
        .filter(|h| !h.is_empty() && h.len() <= 16)
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .ok_or_else(|| format!("bad base `{base}` (expected 0x followed by hex digits)"))?;
    let mut r = ReportLine {
        base,
        ..ReportLine::default()
    };
    r.size = size.map(SizeSpec::from_str).transpose()?;
    r.kind = match get("kind") {
        None => None,
        Some("segment") => Some(RegionKind::Segment),
        Some("block") => Some(RegionKind::Block),
        Some(other) => return Err(format!("bad kind `{other}` (expected segment or block)")),
    };
    let num = |k: &str| -> Result<Option<u64>, String> {
        get(k)
            .map(|v| parse_u64(v).ok_or_else(|| format!("bad {k} `{v}`")))
            .transpose()
    };
    let small = |k: &str| -> Result<Option<u32>, String> {
        num(k)?
            .map(|v| u32::try_from(v).map_err(|_| format!("{k} {v} too large")))
            .transpose()
    };
    r.device = small("device")?;
    r.tag = small("tag")?;
    r.t = num("t")?.or(num("at")?);
    Ok(Some(r))
}

/// `key=value` tokens where `key` starts a word; values run to whitespace or
/// common punctuation.
fn scan_tokens(line: &str) -> Vec<(&str, &str)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(eq) = line[i..].find('=').map(|p| p + i) {
        let mut start = eq;
        while start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
            start -= 1;
        }
        let mut end = eq + 1;
        while end < b.len() && !b[end].is_ascii_whitespace() && !b",;)]}\"'".contains(&b[end]) {
            end += 1;
        }
        if start < eq {
            out.push((&line[start..eq], &line[eq + 1..end]));
        }
        i = end.max(eq + 1);
    }
    out
}

/// Reads report lines from `reader` (`input` names it in messages, e.g.
/// `stdin`). A line that looks like a report but has a bad value is an error.
pub fn requests_from_reports(
    reader: impl BufRead,
    input: &str,
    d: &Defaults,
) -> Result<Vec<Request>, SidecarError> {
    let mut out = Vec::new();
    let mut reader = reader;
    let mut line = Vec::new();
    for i in 0u64.. {
        // Bounded: an endless line (stdin from /dev/zero) is an error, not
        // a buffer that grows until memory runs out.
        line.clear();
        let n = (&mut reader)
            .take(MAX_REPORT_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|source| SidecarError::Io {
                path: PathBuf::from(input),
                source,
            })?;
        if n == 0 {
            break;
        }
        let origin = Origin::Line {
            input: input.to_string(),
            line: i + 1,
        };
        if n as u64 > MAX_REPORT_LINE {
            return Err(SidecarError::BadReport {
                origin,
                reason: format!("line longer than {MAX_REPORT_LINE} bytes; not a report"),
            });
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        let text = String::from_utf8_lossy(&line);
        let parsed = parse_report_line(&text, d.size.is_some()).map_err(|reason| {
            SidecarError::BadReport {
                origin: origin.clone(),
                reason,
            }
        })?;
        let Some(r) = parsed else { continue };
        out.push(Request {
            origin,
            op: RegionOp::Add,
            kind: r.kind.unwrap_or(d.kind),
            base: r.base,
            size: r.size.or(d.size).expect("size present or defaulted"),
            device: r.device.unwrap_or(d.device),
            t: r.t.unwrap_or(d.t),
            tag: r.tag.unwrap_or(d.tag),
        });
    }
    if out.is_empty() {
        return Err(SidecarError::NoReports(input.to_string()));
    }
    Ok(out)
}

/// Turns requests into checked records: `auto` sizes inferred from `archive`,
/// zero sizes and overflow refused, overlapping segments refused.
pub fn resolve(
    requests: Vec<Request>,
    archive: Option<&Archive>,
) -> Result<Vec<(RegionRecord, Origin)>, SidecarError> {
    let auto_bases: Vec<u64> = requests
        .iter()
        .filter(|r| r.size == SizeSpec::Auto)
        .map(|r| r.base)
        .collect();
    let inferred = if auto_bases.is_empty() {
        HashMap::new()
    } else {
        let Some(archive) = archive else {
            let r = requests
                .iter()
                .find(|r| r.size == SizeSpec::Auto)
                .expect("an auto request");
            return Err(SidecarError::AutoNeedsArchive {
                origin: r.origin.clone(),
            });
        };
        infer_segment_sizes(archive, &auto_bases)?
    };
    let mut out = Vec::with_capacity(requests.len());
    for r in requests {
        let size = match r.size {
            SizeSpec::Bytes(n) => n,
            SizeSpec::Auto => *inferred
                .get(&r.base)
                .ok_or_else(|| SidecarError::AutoNoAccess {
                    origin: r.origin.clone(),
                    base: r.base,
                })?,
        };
        let rec = RegionRecord {
            op: r.op,
            kind: r.kind,
            base: r.base,
            size,
            device: r.device,
            t: r.t,
            tag: r.tag,
        };
        validate(&rec, &r.origin)?;
        out.push((rec, r.origin));
    }
    check_overlaps(&[], &out)?;
    Ok(out)
}

/// Records of a `.hrrr` stream with their origins (records the stream's own
/// reader skipped are reported in its warnings, not here).
pub fn records_from_hrrr(
    stream: &hrr_core::region_record::RegionStream,
) -> Vec<(RegionRecord, Origin)> {
    stream
        .records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                *r,
                Origin::Record {
                    path: stream.path.clone(),
                    index: i as u64 + 1,
                },
            )
        })
        .collect()
}

fn validate(rec: &RegionRecord, origin: &Origin) -> Result<(), SidecarError> {
    match rec.validate() {
        Ok(()) => Ok(()),
        Err(RecordProblem::ZeroSize) => Err(SidecarError::ZeroSize {
            origin: origin.clone(),
            kind: rec.kind.as_str(),
            base: rec.base,
        }),
        Err(RecordProblem::Overflow) => Err(SidecarError::Overflow {
            origin: origin.clone(),
            kind: rec.kind.as_str(),
            base: rec.base,
            size: rec.size,
        }),
    }
}

/// One segment's lifetime: `[from, until)` in capture time.
struct Life<'a> {
    rec: &'a RegionRecord,
    origin: &'a Origin,
    from: u64,
    until: u64,
}

/// Refuses segments of `new` that overlap, while both are live, a segment of
/// `existing` or of `new`. Records are merged by time (stable, existing
/// first), so an `add` after a `del` of the same range is fine.
pub fn check_overlaps(
    existing: &[(RegionRecord, Origin)],
    new: &[(RegionRecord, Origin)],
) -> Result<(), SidecarError> {
    let n_existing = existing.len();
    let mut all: Vec<(usize, &(RegionRecord, Origin))> =
        existing.iter().chain(new).enumerate().collect();
    all.sort_by_key(|(_, (r, _))| r.t);
    let mut lives: Vec<(usize, Life<'_>)> = Vec::new();
    let mut open: HashMap<u64, usize> = HashMap::new();
    for (idx, (rec, origin)) in all {
        if rec.kind != RegionKind::Segment {
            continue;
        }
        match rec.op {
            RegionOp::Add => {
                open.insert(rec.base, lives.len());
                lives.push((
                    idx,
                    Life {
                        rec,
                        origin,
                        from: rec.t,
                        until: u64::MAX,
                    },
                ));
            }
            RegionOp::Del => {
                if let Some(i) = open.remove(&rec.base) {
                    lives[i].1.until = rec.t;
                }
            }
        }
    }
    lives.sort_by_key(|(_, l)| l.rec.base);
    for i in 0..lives.len() {
        let a = &lives[i];
        let a_end = a.1.rec.base.saturating_add(a.1.rec.size);
        for b in &lives[i + 1..] {
            if b.1.rec.base >= a_end {
                break;
            }
            let overlap_in_time = a.1.from < b.1.until && b.1.from < a.1.until;
            // Only complain about pairs involving a new record; what is
            // already in the archive was accepted before.
            if !overlap_in_time || (a.0 < n_existing && b.0 < n_existing) {
                continue;
            }
            // Name the newer record as the culprit.
            let (culprit, other) = if a.0 > b.0 {
                (&a.1, &b.1)
            } else {
                (&b.1, &a.1)
            };
            if culprit.rec.base == other.rec.base && culprit.rec.size == other.rec.size {
                return Err(SidecarError::Duplicate {
                    origin: culprit.origin.clone(),
                    base: culprit.rec.base,
                    size: culprit.rec.size,
                    other_origin: other.origin.clone(),
                });
            }
            return Err(SidecarError::Overlap {
                origin: culprit.origin.clone(),
                base: culprit.rec.base,
                size: culprit.rec.size,
                other_origin: other.origin.clone(),
                other_base: other.rec.base,
                other_size: other.rec.size,
            });
        }
    }
    Ok(())
}

/// Every record already declared in the archive's region files.
pub fn existing_records(archive: &Archive) -> Result<Vec<(RegionRecord, Origin)>, SidecarError> {
    let mut out = Vec::new();
    for path in archive.try_region_files()? {
        let stream = load_region_file(&path)?;
        out.extend(records_from_hrrr(&stream));
    }
    Ok(out)
}

/// Checks sidecar names: a plain file name, no path, not hidden. A trailing
/// `.ndjson` is accepted and dropped.
pub fn validate_name(name: &str) -> Result<&str, SidecarError> {
    let stem = name.strip_suffix(".ndjson").unwrap_or(name);
    let ok = !stem.is_empty()
        && stem.len() <= 100
        && !stem.starts_with('.')
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(stem)
    } else {
        Err(SidecarError::BadName(name.to_string()))
    }
}

/// Appends `records` to `ARCHIVE/regions/NAME.ndjson` atomically, after
/// checking them against every region file of the archive; also returns the
/// new segments that other region files already declare (accepted: see the
/// module docs).
pub fn append_to_archive(
    archive: &Archive,
    name: &str,
    records: &[(RegionRecord, Origin)],
) -> Result<Appended, SidecarError> {
    let stem = validate_name(name)?;
    let regions = archive.path().join(REGIONS_DIR);
    // Everything below goes through descriptors of the archive and of
    // `regions/`, opened without following symlinks: a symlinked `regions/`
    // or lock file is refused, never written through.
    let io_at = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SidecarError::Io { path, source }
    };
    let root = DirFd::open(archive.path(), Follow::Yes).map_err(io_at(archive.path()))?;
    let dir = root.subdir(REGIONS_DIR).map_err(io_at(&regions))?;
    let file_name = format!("{stem}.ndjson");
    let path = regions.join(&file_name);

    // Serialise concurrent hrr-sidecar runs on the same sidecar: the check
    // and the rewrite must see the same file.
    let lock_name = format!(".{file_name}.lock");
    let lock_path = regions.join(&lock_name);
    let lock = dir.open_or_create(&lock_name).map_err(io_at(&lock_path))?;
    // SAFETY: flock on a descriptor we own; released when `lock` is dropped.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(SidecarError::Io {
            path: lock_path,
            source: io::Error::last_os_error(),
        });
    }

    // The target itself is read strictly: never build on a damaged file.
    if path.exists() {
        hrr_core::region_record::read_region_ndjson(&path)?;
    }
    let (same_file, other_files): (Vec<_>, Vec<_>) = existing_records(archive)?
        .into_iter()
        .partition(|(_, o)| match o {
            Origin::Record { path: p, .. } => p.file_name() == path.file_name(),
            _ => true,
        });
    check_overlaps(&same_file, records)?;
    let shared = shared_with_other_files(&other_files, records)?;

    let mut bytes = match read_limited(&path, Follow::No, MAX_REGION_FILE, "region file") {
        Ok(b) => b,
        Err(OpenError::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(RegionError::from(e).into()),
    };
    if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
        bytes.push(b'\n');
    }
    for (r, _) in records {
        bytes.extend_from_slice(r.to_line().as_bytes());
    }
    dir.write_atomic(&file_name, &bytes).map_err(io_at(&path))?;
    Ok(Appended { path, shared })
}

/// What [`append_to_archive`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The sidecar written.
    pub path: PathBuf,
    /// New segments another region file already declares.
    pub shared: Vec<Shared>,
}

/// A new segment that a segment of another region file covers, or that covers
/// one, while both are live: two producers' views of the same memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shared {
    pub origin: Origin,
    pub base: u64,
    pub size: u64,
    pub other_origin: Origin,
    pub other_base: u64,
    pub other_size: u64,
}

impl fmt::Display for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if (self.base, self.size) == (self.other_base, self.other_size) {
            "is also declared by".to_string()
        } else {
            format!(
                "shares memory with segment {:#x}+{} from",
                self.other_base, self.other_size
            )
        };
        write!(
            f,
            "{}: segment {:#x}+{} {how} {}; replay backs them as one",
            self.origin, self.base, self.size, self.other_origin
        )
    }
}

/// Checks the new segments of `new` against the segments of other region
/// files (`others`): a pair live at the same time whose ranges are equal or
/// nested is [`Shared`]; any other overlap is [`SidecarError::Overlap`].
/// Pairs within `new` are [`check_overlaps`]'s business.
pub fn shared_with_other_files(
    others: &[(RegionRecord, Origin)],
    new: &[(RegionRecord, Origin)],
) -> Result<Vec<Shared>, SidecarError> {
    // Each segment's lifetime: from its `add` to the `del` of its base.
    let lives_of = |recs: &[(RegionRecord, Origin)]| {
        let mut all: Vec<&(RegionRecord, Origin)> = recs.iter().collect();
        all.sort_by_key(|(r, _)| r.t);
        let mut lives: Vec<(RegionRecord, Origin, u64)> = Vec::new();
        let mut open: HashMap<u64, usize> = HashMap::new();
        for (r, o) in all {
            if r.kind != RegionKind::Segment {
                continue;
            }
            match r.op {
                RegionOp::Add => {
                    open.insert(r.base, lives.len());
                    lives.push((*r, o.clone(), u64::MAX));
                }
                RegionOp::Del => {
                    if let Some(i) = open.remove(&r.base) {
                        lives[i].2 = r.t;
                    }
                }
            }
        }
        lives
    };
    let old = lives_of(others);
    let mut shared = Vec::new();
    for (n, n_origin, n_until) in lives_of(new) {
        let n_end = n.base.saturating_add(n.size);
        for (o, o_origin, o_until) in &old {
            let o_end = o.base.saturating_add(o.size);
            let overlap = n.base < o_end && o.base < n_end && n.t < *o_until && o.t < n_until;
            if !overlap {
                continue;
            }
            let nested =
                (n.base >= o.base && n_end <= o_end) || (o.base >= n.base && o_end <= n_end);
            if !nested {
                return Err(SidecarError::Overlap {
                    origin: n_origin,
                    base: n.base,
                    size: n.size,
                    other_origin: o_origin.clone(),
                    other_base: o.base,
                    other_size: o.size,
                });
            }
            shared.push(Shared {
                origin: n_origin.clone(),
                base: n.base,
                size: n.size,
                other_origin: o_origin.clone(),
                other_base: o.base,
                other_size: o.size,
            });
        }
    }
    Ok(shared)
}

/// Infers segment sizes for `bases` from the archive's unexplained device
/// accesses (see the module docs). Bases with no such access are absent
/// from the result.
pub fn infer_segment_sizes(
    archive: &Archive,
    bases: &[u64],
) -> Result<HashMap<u64, u64>, SidecarError> {
    let mut sorted: Vec<u64> = bases.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    // First pass: every allocation base ever recorded, to bound each segment.
    let mut alloc_bases = Vec::new();
    for event in archive.events(ReadOptions::default())? {
        if let Op::Alloc { ptr, .. } = event?.op {
            alloc_bases.push(ptr.0);
        }
    }
    alloc_bases.sort_unstable();
    let limits: Vec<u64> = sorted
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let next_base = sorted.get(i + 1).copied().unwrap_or(u64::MAX);
            let j = alloc_bases.partition_point(|&a| a <= b);
            next_base.min(alloc_bases.get(j).copied().unwrap_or(u64::MAX))
        })
        .collect();
    let mut max_end: HashMap<u64, u64> = HashMap::new();
    let mut allocs = AllocMap::new();
    let mut note = |ptr: u64, len: u64, allocs: &AllocMap, whole_pointer: bool| {
        if ptr == 0 {
            return;
        }
        // A kernel pointer may legitimately point one past the end.
        let explained = if whole_pointer {
            allocs.translate(ptr).is_some()
        } else {
            allocs.find(ptr).is_some()
        };
        if explained {
            return;
        }
        let i = sorted.partition_point(|&b| b <= ptr);
        if i == 0 || ptr >= limits[i - 1] {
            return;
        }
        let base = sorted[i - 1];
        let end = ptr.saturating_add(len.max(1)).min(limits[i - 1]);
        let e = max_end.entry(base).or_insert(end);
        *e = (*e).max(end);
    };
    for event in archive.events(ReadOptions::default())? {
        let event = event?;
        match &event.op {
            Op::Alloc { ptr, size, mem } => {
                let a = Alloc {
                    base: ptr.0,
                    size: *size,
                    mem: *mem,
                    live: ptr.0,
                    materialised: false,
                };
                // A recording with overlapping allocations is odd, but
                // inference only needs "is this address explained".
                let _ = allocs.insert(a);
            }
            Op::Free { ptr, .. } => {
                let _ = allocs.remove(ptr.0);
            }
            Op::Memcpy {
                dir,
                dst,
                src,
                size,
                ..
            } => match dir {
                Dir::H2d => note(dst.0, *size, &allocs, false),
                Dir::D2h => note(src.0, *size, &allocs, false),
                Dir::D2d => {
                    note(dst.0, *size, &allocs, false);
                    note(src.0, *size, &allocs, false);
                }
                Dir::H2h => {}
            },
            Op::Memset { dst, size, .. } => note(dst.0, *size, &allocs, false),
            Op::Launch { args, .. } => {
                for arg in args {
                    for &off in &arg.ptrs {
                        let off = off as usize;
                        if let Some(b) = arg.hex.0.get(off..off + 8) {
                            let p = u64::from_le_bytes(b.try_into().expect("8 bytes"));
                            note(p, 1, &allocs, true);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(max_end
        .into_iter()
        .map(|(base, end)| {
            (
                base,
                (end - base).div_ceil(AUTO_SIZE_GRANULE) * AUTO_SIZE_GRANULE,
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::{ArchiveBuilder, ptr_arg, struct_arg};

    fn seg(base: u64, size: u64, t: u64) -> (RegionRecord, Origin) {
        (RegionRecord::segment(base, size, t), Origin::Args)
    }

    fn line(n: u64) -> Origin {
        Origin::Line {
            input: "stdin".into(),
            line: n,
        }
    }

    #[test]
    fn report_lines() {
        let r = parse_report_line("[app] HRR_SEGMENT base=0x7fbe01400000 size=262144", false)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.base, r.size),
            (0x7fbe_0140_0000, Some(SizeSpec::Bytes(262144)))
        );
        let r = parse_report_line(
            "x base=0x10, size=0x20 kind=block device=1 tag=7 t=99",
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.kind, Some(RegionKind::Block));
        assert_eq!(
            (r.device, r.tag, r.t, r.size),
            (Some(1), Some(7), Some(99), Some(SizeSpec::Bytes(0x20)))
        );
        assert_eq!(parse_report_line("no report here", false).unwrap(), None);
        assert_eq!(
            parse_report_line("database=0x10 size=1", false).unwrap(),
            None,
            "word start only"
        );
        assert_eq!(parse_report_line("base=0x10 only", false).unwrap(), None);
        assert!(parse_report_line("base=0x10 only", true).unwrap().is_some());
        assert!(
            parse_report_line("base=0xZZ size=1", false)
                .unwrap_err()
                .contains("bad base `0xZZ`")
        );
        assert!(
            parse_report_line("base=16 size=1", false).is_err(),
            "base must be hex"
        );
        assert!(parse_report_line("base=0x10 size=-1", false).is_err());
    }

    #[test]
    fn report_errors_name_the_line() {
        let input = "hello\nHRR_SEGMENT base=0x1000 size=4096\nHRR_SEGMENT base=0x9000 size=12x\n";
        let e = requests_from_reports(input.as_bytes(), "stdin", &Defaults::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "stdin:3: bad size `12x` (expected bytes, 0x… or `auto`)"
        );
        let e = requests_from_reports("nothing\n".as_bytes(), "stdin", &Defaults::default())
            .unwrap_err();
        assert!(matches!(e, SidecarError::NoReports(_)));
    }

    #[test]
    fn zero_overflow_and_overlap_are_errors() {
        let d = Defaults::default();
        let zero = Request {
            origin: line(4),
            ..Request::from_args(0x1000, SizeSpec::Bytes(0), &d)
        };
        assert_eq!(
            resolve(vec![zero], None).unwrap_err().to_string(),
            "stdin:4: segment 0x1000 has zero size"
        );
        let wrap = Request::from_args(u64::MAX - 10, SizeSpec::Bytes(100), &d);
        assert!(
            resolve(vec![wrap], None)
                .unwrap_err()
                .to_string()
                .contains("overflows")
        );

        let a = Request {
            origin: line(1),
            ..Request::from_args(0x1000, SizeSpec::Bytes(0x1000), &d)
        };
        let b = Request {
            origin: line(2),
            ..Request::from_args(0x1800, SizeSpec::Bytes(0x1000), &d)
        };
        let e = resolve(vec![a.clone(), b], None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "stdin:2: segment 0x1800+4096 overlaps segment 0x1000+4096 from stdin:1"
        );
        let adjacent = Request {
            origin: line(2),
            ..Request::from_args(0x2000, SizeSpec::Bytes(0x1000), &d)
        };
        assert!(resolve(vec![a, adjacent], None).is_ok());
    }

    #[test]
    fn overlap_respects_lifetimes() {
        let del = (
            RegionRecord {
                op: RegionOp::Del,
                ..RegionRecord::segment(0x1000, 0, 50)
            },
            Origin::Args,
        );
        // Freed at 50, the same range re-declared at 50 or later is fine.
        check_overlaps(&[seg(0x1000, 0x1000, 10), del], &[seg(0x1000, 0x1000, 50)]).unwrap();
        let e = check_overlaps(&[seg(0x1000, 0x1000, 10)], &[seg(0x1000, 0x1000, 60)]).unwrap_err();
        assert!(matches!(e, SidecarError::Duplicate { .. }), "{e}");
        // Blocks may overlap segments (they live inside them).
        let block = (
            RegionRecord {
                kind: RegionKind::Block,
                ..RegionRecord::segment(0x1000, 16, 0)
            },
            Origin::Args,
        );
        check_overlaps(&[seg(0x1000, 0x1000, 0)], &[block]).unwrap();
    }

    #[test]
    fn auto_size_from_unexplained_accesses() {
        let t = tempfile::tempdir().unwrap();
        let hidden = 0x7f00_0000_0000u64;
        let other = 0x7e00_0000_0000u64;
        let mut embedded = vec![0u8; 16];
        embedded[8..].copy_from_slice(&(hidden + 0x2_0000).to_le_bytes());
        let dir = ArchiveBuilder::new(Platform::Cpu)
            .alloc(0x1000, 0x100)
            .h2d(hidden, &[0; 100])
            .memset(hidden + 0x1_0000, 0, 8)
            .launch(
                "k",
                b"c",
                [1, 1, 1],
                [1, 1, 1],
                vec![ptr_arg(0x1000), struct_arg(&embedded, &[8])],
            )
            .alloc(hidden + 0x10_0000, 0x100)
            .d2h(hidden + 0x10_0000, &[0; 0x100])
            .d2h(other + 5, &[0; 3])
            .write(t.path().join("cap.hrr"))
            .unwrap();
        let a = Archive::open(dir).unwrap();
        let sizes = infer_segment_sizes(&a, &[hidden, other, 0x1]).unwrap();
        assert_eq!(
            sizes[&hidden], 0x2_1000,
            "embedded pointer at +0x20000 is the furthest unexplained access"
        );
        assert_eq!(sizes[&other], 0x1000);
        assert!(!sizes.contains_key(&0x1), "0x1000 is a recorded allocation");

        // 0x500 is bounded by the allocation at 0x1000: the far accesses are not its.
        let req = Request::from_args(0x500, SizeSpec::Auto, &Defaults::default());
        assert!(matches!(
            resolve(vec![req.clone()], Some(&a)),
            Err(SidecarError::AutoNoAccess { .. })
        ));
        assert!(matches!(
            resolve(vec![req], None),
            Err(SidecarError::AutoNeedsArchive { .. })
        ));
    }

    #[test]
    fn another_files_segment_over_the_same_memory_is_shared_not_an_error() {
        let t = tempfile::tempdir().unwrap();
        // testkit.ndjson plays the capture library's producer file.
        let dir = ArchiveBuilder::new(Platform::Cpu)
            .segment(0x10_0000, 0x4000, 0)
            .write(t.path().join("a"))
            .unwrap();
        let a = Archive::open(&dir).unwrap();
        let same = append_to_archive(&a, "sidecar", &[seg(0x10_0000, 0x4000, 0)]).unwrap();
        assert_eq!(same.shared.len(), 1, "{:?}", same.shared);
        assert_eq!(
            same.shared[0].to_string(),
            format!(
                "--base/--size: segment 0x100000+16384 is also declared by {} record 1; \
                 replay backs them as one",
                dir.join("regions/testkit.ndjson").display()
            )
        );
        // Nested (a `--size auto` lower bound) is the same memory too.
        let inner = append_to_archive(&a, "inner", &[seg(0x10_1000, 0x1000, 0)]).unwrap();
        assert!(
            inner.shared[0]
                .to_string()
                .contains("shares memory with segment 0x100000+16384")
        );
        // Within one file, a second declaration is still refused.
        let e = append_to_archive(&a, "sidecar", &[seg(0x10_0000, 0x4000, 0)]).unwrap_err();
        assert!(matches!(e, SidecarError::Duplicate { .. }), "{e}");
        // A partial overlap with another file is still an error.
        let e = append_to_archive(&a, "partial", &[seg(0x10_3000, 0x2000, 0)]).unwrap_err();
        assert!(matches!(e, SidecarError::Overlap { .. }), "{e}");
    }

    #[test]
    fn append_is_checked_against_the_archive() {
        let t = tempfile::tempdir().unwrap();
        let dir = ArchiveBuilder::new(Platform::Cpu)
            .segment(0x10_0000, 0x1000, 0)
            .write(t.path().join("a"))
            .unwrap();
        let a = Archive::open(&dir).unwrap();
        let p = append_to_archive(&a, "sidecar", &[seg(0x20_0000, 0x1000, 0)])
            .unwrap()
            .path;
        assert!(p.ends_with("regions/sidecar.ndjson"));
        append_to_archive(&a, "sidecar.ndjson", &[seg(0x30_0000, 0x1000, 0)]).unwrap();
        assert_eq!(
            hrr_core::region_record::read_region_ndjson(&p)
                .unwrap()
                .len(),
            2
        );
        let e = append_to_archive(&a, "other", &[seg(0x10_0800, 0x1000, 0)]).unwrap_err();
        assert!(e.to_string().contains("testkit.ndjson record 1"), "{e}");
        assert!(matches!(
            append_to_archive(&a, "../x", &[]),
            Err(SidecarError::BadName(_))
        ));
        assert_eq!(
            a.region_files().len(),
            2,
            "no temporaries or lock files listed"
        );
    }
}
