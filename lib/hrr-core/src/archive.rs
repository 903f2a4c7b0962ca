//! `Archive`: an opened archive directory (DESIGN.md §4), and [`repair`].
//!
//! Opening reads and version-checks the manifest and makes sure the events
//! file exists; events are streamed on demand through [`EventReader`], blobs
//! fetched on demand through [`BlobStore`], so an open archive costs no more
//! memory than its manifest.
//!
//! An archive may also be held in memory ([`Archive::open_in_memory`],
//! [`repair_in_memory`], see [`crate::mem_files`]): the same reads, limits
//! and checks, without the file system.

use std::collections::HashSet;
use std::fs;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::archive_writer::{ArchiveWriter, EVENTS_FILE, EVENTS_ZST_FILE, REGIONS_DIR, WriteError};
use crate::blob_store::{BlobError, BlobStore, CopyOutcome};
use crate::event::Op;
use crate::event_reader::{
    Ending, EventReader, MappedEvents, ParallelReader, ReadError, ReadOptions, Warning, ZstEvents,
};
use crate::hex::BlobId;
use crate::manifest::{MANIFEST_FILE, MAX_MANIFEST, Manifest, ManifestError};
use crate::mem_files::{MemFiles, MemReader};
use crate::region_record::{
    MAX_REGION_FILE, RegionError, RegionStream, load_region_bytes, load_region_file,
};
use crate::safe_fs::OpenError;
use crate::zst::Decoder;

/// Lock file a capture creates in its archive, holding its pid.
pub const OWNER_FILE: &str = ".hrr-owner";

/// An archive could not be opened, read or repaired.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{}: no such archive", path.display())]
    /// The path does not exist.
    NotFound {
        /// The archive path given.
        path: PathBuf,
    },
    #[error("{}: not an archive directory", path.display())]
    /// The path is not a directory.
    NotDir {
        /// The archive path given.
        path: PathBuf,
    },
    #[error("{}: events file missing; is this an hrr archive?", path.display())]
    /// The directory has neither `events.ndjson` nor `events.ndjson.zst`.
    MissingEvents {
        /// The events file expected.
        path: PathBuf,
    },
    #[error("{}: is a {kind}, not the events file (a regular file)", path.display())]
    /// `events.ndjson` is there but is not a regular file.
    EventsNotFile {
        /// The events file.
        path: PathBuf,
        /// What it is instead (directory, FIFO, symbolic link…).
        kind: &'static str,
    },
    #[error("{}", path.display())]
    /// A file or directory of the archive could not be read.
    Io {
        /// Which.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    #[error(transparent)]
    /// The manifest is missing or invalid.
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    /// The events could not be read.
    Read(#[from] ReadError),
    #[error(transparent)]
    /// The repaired archive could not be written.
    Write(#[from] WriteError),
    #[error(transparent)]
    /// A blob could not be read or copied.
    Blob(#[from] BlobError),
    #[error(transparent)]
    /// A region sidecar could not be read.
    Region(#[from] RegionError),
}

/// An opened archive.
#[derive(Clone, Debug)]
pub struct Archive {
    dir: PathBuf,
    manifest: Manifest,
    blobs: BlobStore,
    /// Where the files are when they are not on disk.
    mem: Option<MemFiles>,
    /// What the events file says of a manifest's `complete:true`, once
    /// read (see [`Archive::incomplete_reason`]).
    claim: OnceLock<Option<String>>,
    /// Which events file there is: `events.ndjson`, or only its compressed
    /// form.
    events_file: &'static str,
}

/// What [`Archive::events`] reads: the events file, or its bytes in memory,
/// either decoded when compressed.
pub enum ArchiveEvents {
    /// `events.ndjson` on disk.
    File(BufReader<fs::File>),
    /// `events.ndjson.zst` on disk, decoded.
    Zst(Box<ZstEvents>),
    /// `events.ndjson` of an archive in memory.
    Memory(MemReader),
    /// `events.ndjson.zst` of an archive in memory, decoded.
    ZstMemory(Box<BufReader<Decoder<MemReader>>>),
}

impl Read for ArchiveEvents {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self {
            ArchiveEvents::File(r) => r.read(out),
            ArchiveEvents::Zst(r) => r.read(out),
            ArchiveEvents::Memory(r) => r.read(out),
            ArchiveEvents::ZstMemory(r) => r.read(out),
        }
    }
}

impl BufRead for ArchiveEvents {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            ArchiveEvents::File(r) => r.fill_buf(),
            ArchiveEvents::Zst(r) => r.fill_buf(),
            ArchiveEvents::Memory(r) => r.fill_buf(),
            ArchiveEvents::ZstMemory(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, n: usize) {
        match self {
            ArchiveEvents::File(r) => r.consume(n),
            ArchiveEvents::Zst(r) => r.consume(n),
            ArchiveEvents::Memory(r) => r.consume(n),
            ArchiveEvents::ZstMemory(r) => r.consume(n),
        }
    }
}

/// Which events file of `dir` to read: `events.ndjson` when there is one
/// (a capture writes it; a crash between compressing it and removing it
/// leaves both, the same events), else `events.ndjson.zst`. `exists` says
/// whether a name is there at all (a FIFO or directory counts: it is then
/// refused by name).
fn events_file_of(exists: impl Fn(&str) -> bool) -> Option<&'static str> {
    [EVENTS_FILE, EVENTS_ZST_FILE]
        .into_iter()
        .find(|name| exists(name))
}

impl Archive {
    /// Opens `dir`: reads `manifest.json` (format and version checked),
    /// checks that `events.ndjson` is a regular file and that `blobs/` is
    /// not a symlink.
    pub fn open(dir: impl AsRef<Path>) -> Result<Archive, ArchiveError> {
        let dir = dir.as_ref().to_path_buf();
        match fs::metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(ArchiveError::NotDir { path: dir }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ArchiveError::NotFound { path: dir });
            }
            Err(source) => return Err(ArchiveError::Io { path: dir, source }),
        }
        let manifest = Manifest::read(&dir)?;
        let events_file = events_file_of(|name| fs::symlink_metadata(dir.join(name)).is_ok())
            .unwrap_or(EVENTS_FILE);
        let events = dir.join(events_file);
        match fs::symlink_metadata(&events) {
            Ok(m) if m.is_file() => {}
            Ok(m) => {
                return Err(ArchiveError::EventsNotFile {
                    path: events,
                    kind: crate::safe_fs::kind_name(&m),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ArchiveError::MissingEvents { path: events });
            }
            Err(source) => {
                return Err(ArchiveError::Io {
                    path: events,
                    source,
                });
            }
        }
        let blobs = BlobStore::of_archive(&dir);
        // Every blob is read through `blobs/`: a symlink there is refused
        // now, by name, rather than at each blob.
        blobs.check_root()?;
        Ok(Archive {
            dir,
            manifest,
            blobs,
            mem: None,
            claim: OnceLock::new(),
            events_file,
        })
    }

    /// Opens the archive `dir` of `files` (see [`crate::mem_files`]) as
    /// [`Archive::open`] opens one on disk, with the same checks and errors.
    pub fn open_in_memory(
        dir: impl AsRef<Path>,
        files: &MemFiles,
    ) -> Result<Archive, ArchiveError> {
        let dir = dir.as_ref().to_path_buf();
        if !files.any_under(&dir) {
            return Err(ArchiveError::NotFound { path: dir });
        }
        let path = dir.join(MANIFEST_FILE);
        let bytes = files
            .read(&path)
            .ok_or_else(|| ManifestError::from(OpenError::NotFound { path: path.clone() }))?;
        if bytes.len() as u64 > MAX_MANIFEST {
            return Err(ManifestError::from(OpenError::TooLarge {
                path,
                len: bytes.len() as u64,
                limit: MAX_MANIFEST,
                what: "manifest",
            })
            .into());
        }
        let manifest = Manifest::parse(&bytes, &dir)?;
        let Some(events_file) = events_file_of(|name| files.contains(&dir.join(name))) else {
            return Err(ArchiveError::MissingEvents {
                path: dir.join(EVENTS_FILE),
            });
        };
        Ok(Archive {
            blobs: BlobStore::in_memory(dir.join(crate::blob_store::BLOBS_DIR), files),
            dir,
            manifest,
            mem: Some(files.clone()),
            claim: OnceLock::new(),
            events_file,
        })
    }

    /// The files of an archive in memory; `None` for one on disk.
    pub fn memory(&self) -> Option<&MemFiles> {
        self.mem.as_ref()
    }

    /// The archive directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Its manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Whether the archive is complete: its manifest says so and its
    /// events file bears it out ([`Archive::incomplete_reason`] is `None`).
    pub fn is_complete(&self) -> bool {
        self.incomplete_reason().is_none()
    }

    /// Why the archive is incomplete (`None` when it is complete), in the
    /// user's terms, from the best evidence there is: the reason its writer
    /// recorded (`"incomplete"` in the manifest, e.g. `disk full`, and the
    /// events it lost), a capture process that is still running (its pid
    /// in `.hrr-owner`), a torn last line (the writer died mid-write), or
    /// else a writer that died or was killed before writing its `eof`.
    ///
    /// A manifest's `complete:true` is a claim, and is checked: a reason or
    /// lost events beside it (`incomplete`, `lost_events`), and against the
    /// events file (once; one pass over it, see
    /// [`crate::event_reader::ending`]) no event line at all, a last event
    /// that is not the `eof` trailer, a torn last line, or a trailer (or
    /// manifest) counting other than the event lines there are make the
    /// archive incomplete all the same.
    pub fn incomplete_reason(&self) -> Option<String> {
        if let Some(why) = recorded_reason(&self.manifest) {
            return Some(why);
        }
        if self.manifest.complete {
            return self
                .claim
                .get_or_init(|| self.check_complete_claim())
                .clone();
        }
        if let Some(pid) = self.owner_pid()
            && process_alive(pid)
        {
            return Some(format!(
                "still being written: capture process {pid} is running"
            ));
        }
        let last = match &self.mem {
            _ if self.is_compressed() => self.events(ReadOptions::default()).ok().and_then(|r| {
                // Compressed: the last byte is the stream's.
                last_byte_of(r.into_inner())
            }),
            Some(mem) => mem
                .read(&self.events_path())
                .and_then(|e| e.last().copied()),
            None => last_byte(&self.events_path()),
        };
        if last.is_some_and(|b| b != b'\n') {
            return Some("torn last line: the writer died mid-write".into());
        }
        Some(match self.manifest.kind {
            crate::manifest::ArchiveKind::Capture => {
                "no eof: the capture was killed or died before finishing".into()
            }
            crate::manifest::ArchiveKind::Replay => {
                "no eof: the replay stopped before finishing".into()
            }
        })
    }

    /// Why the events file does not bear out the manifest's
    /// `complete:true`, if it does not. A file that cannot be read, or a
    /// line longer than a reader reads, is left to the readers, whose
    /// errors say so.
    fn check_complete_claim(&self) -> Option<String> {
        let path = self.events_path();
        let ending = match &self.mem {
            _ if self.is_compressed() => {
                crate::event_reader::ending(self.events(ReadOptions::default()).ok()?.into_inner())
            }
            Some(mem) => crate::event_reader::ending(&mem.read(&path)?[..]),
            None => crate::event_reader::ending(crate::event_reader::open_buffered(&path).ok()?),
        };
        let name = self.events_file;
        let claim = "though the manifest says the archive is complete";
        let events = self.manifest.events;
        match ending.ok()? {
            Ending::Empty => Some(format!(
                "no eof: {name} is empty, {claim} ({events} events)"
            )),
            Ending::Torn { line, bytes } => Some(format!(
                "torn last line: line {line} ({bytes} bytes, no newline) does not parse, {claim}"
            )),
            Ending::NoEof { line } => Some(format!(
                "no eof: the last event (line {line}) is not the eof trailer, {claim}"
            )),
            Ending::Eof {
                line,
                counts,
                lines,
            } if counts != lines => Some(format!(
                "the eof trailer (line {line}) counts {counts} events, but {name} holds \
                 {lines}"
            )),
            Ending::Eof { lines, .. } if lines != events => Some(format!(
                "the manifest counts {events} events, but {name} holds {lines}"
            )),
            Ending::Eof { .. } | Ending::TooLong { .. } => None,
        }
    }

    /// The pid in `.hrr-owner`, if the file is there and holds one.
    fn owner_pid(&self) -> Option<i32> {
        let path = self.dir.join(OWNER_FILE);
        if let Some(mem) = &self.mem {
            let bytes = mem.read(&path).filter(|b| b.len() <= 64)?;
            return std::str::from_utf8(&bytes).ok()?.trim().parse().ok();
        }
        let bytes =
            crate::safe_fs::read_limited(&path, crate::safe_fs::Follow::No, 64, "lock file")
                .ok()?;
        std::str::from_utf8(&bytes).ok()?.trim().parse().ok()
    }

    /// Its events file: `events.ndjson`, or `events.ndjson.zst` when only
    /// the compressed form is there.
    pub fn events_path(&self) -> PathBuf {
        self.dir.join(self.events_file)
    }

    /// Whether its events are read from `events.ndjson.zst`.
    pub fn is_compressed(&self) -> bool {
        self.events_file == EVENTS_ZST_FILE
    }

    /// The events file's size: on disk, and as read (uncompressed; for a
    /// compressed file, what its frame header says, else `None`).
    pub fn events_sizes(&self) -> (u64, Option<u64>) {
        let path = self.events_path();
        let on_disk = match &self.mem {
            Some(mem) => mem.read(&path).map_or(0, |b| b.len() as u64),
            None => fs::symlink_metadata(&path).map_or(0, |m| m.len()),
        };
        if !self.is_compressed() {
            return (on_disk, Some(on_disk));
        }
        let plain = match &self.mem {
            Some(mem) => mem.read(&path).and_then(|b| {
                crate::zst::content_size(&b[..b.len().min(crate::zst::HEADER_MAX)], &path)
                    .ok()
                    .flatten()
            }),
            None => crate::zst::file_content_size(&path),
        };
        (on_disk, plain)
    }

    /// What a progress bar over [`Archive::events`] counts up to: the
    /// events' uncompressed size where known, else the file's.
    pub fn events_len(&self) -> u64 {
        let (on_disk, plain) = self.events_sizes();
        plain.unwrap_or(on_disk)
    }

    /// A fresh streaming reader over the events.
    pub fn events(&self, options: ReadOptions) -> Result<EventReader<ArchiveEvents>, ArchiveError> {
        let path = self.events_path();
        let reader = match &self.mem {
            Some(mem) => {
                let bytes = mem
                    .read(&path)
                    .ok_or_else(|| ArchiveError::MissingEvents { path: path.clone() })?;
                if self.is_compressed() {
                    let d = Decoder::new(MemReader::new(bytes), u64::MAX).map_err(|source| {
                        ReadError::Open {
                            path: path.clone(),
                            source,
                        }
                    })?;
                    ArchiveEvents::ZstMemory(Box::new(BufReader::new(d)))
                } else {
                    ArchiveEvents::Memory(MemReader::new(bytes))
                }
            }
            None if self.is_compressed() => {
                ArchiveEvents::Zst(Box::new(crate::event_reader::open_zst(&path)?))
            }
            None => ArchiveEvents::File(crate::event_reader::open_buffered(&path)?),
        };
        Ok(EventReader::from_reader(reader, path).options(options))
    }

    /// The same reader over a memory map of the events: faster, for readers
    /// that must be (see [`EventReader::open_mapped`]).
    pub fn events_mapped(
        &self,
        options: ReadOptions,
    ) -> Result<EventReader<MappedEvents>, ArchiveError> {
        if self.mem.is_some() {
            return Err(ArchiveError::Io {
                path: self.events_path(),
                source: io::Error::other("an archive in memory has no file to map"),
            });
        }
        Ok(EventReader::open_mapped(self.events_path(), options)?)
    }

    /// The events parsed on several threads and delivered in order (see
    /// [`ParallelReader`]), for readers that must go faster still.
    pub fn events_parallel(&self, options: ReadOptions) -> Result<ParallelReader, ArchiveError> {
        Ok(ParallelReader::open(self.events_path(), options)?)
    }

    /// Its blob store.
    pub fn blobs(&self) -> &BlobStore {
        &self.blobs
    }

    /// `regions/*.ndjson` and `regions/*.hrrr`, sorted by path (the merge
    /// order for records of equal time). No `regions/` means no sidecars; an
    /// unreadable `regions/` also yields none here — use
    /// [`Archive::try_region_files`] where that must be an error.
    pub fn region_files(&self) -> Vec<PathBuf> {
        self.try_region_files().unwrap_or_default()
    }

    /// [`Archive::region_files`], reporting an unreadable `regions/`.
    pub fn try_region_files(&self) -> Result<Vec<PathBuf>, ArchiveError> {
        let dir = self.dir.join(REGIONS_DIR);
        if let Some(mem) = &self.mem {
            let mut out = mem.list(&dir);
            out.retain(|p| is_region_name(p));
            return Ok(out);
        }
        // Nothing inside an archive is a symlink (docs/FORMAT.md).
        if fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ArchiveError::Io {
                path: dir,
                source: io::Error::other("is a symbolic link; refusing to follow it"),
            });
        }
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(ArchiveError::Io { path: dir, source }),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| ArchiveError::Io {
                path: dir.clone(),
                source,
            })?;
            let path = entry.path();
            // Anything but a directory is listed: a FIFO or a symlink under
            // a region name is then refused by name when loaded, not skipped
            // in silence.
            if is_region_name(&path) && entry.file_type().is_ok_and(|t| !t.is_dir()) {
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Loads every region file tolerantly (torn tails recovered with warnings).
    pub fn load_regions(&self) -> Result<Vec<RegionStream>, ArchiveError> {
        self.try_region_files()?
            .iter()
            .map(|p| self.load_region_file(p).map_err(ArchiveError::from))
            .collect()
    }

    /// Loads one region file that [`Archive::try_region_files`] listed,
    /// tolerantly, from disk or from memory.
    pub fn load_region_file(&self, path: &Path) -> Result<RegionStream, RegionError> {
        match &self.mem {
            Some(mem) => {
                let bytes = mem.read(path).ok_or_else(|| OpenError::NotFound {
                    path: path.to_path_buf(),
                })?;
                load_region_bytes(&bytes, path)
            }
            None => load_region_file(path),
        }
    }
}

/// Whether `path` names a region sidecar: `*.ndjson` or `*.hrrr`, and not
/// hidden (temporaries of an in-flight atomic append are `.NAME.tmp-…`).
fn is_region_name(path: &Path) -> bool {
    let is_region = matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("ndjson" | "hrrr")
    );
    let hidden = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'));
    is_region && !hidden
}

/// Whether process `pid` exists (signal 0 checks without sending anything).
fn process_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 performs only the existence/permission check.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The last byte `r` yields (`None`: none, or a read failed).
fn last_byte_of(mut r: impl BufRead) -> Option<u8> {
    let mut last = None;
    loop {
        let buf = r.fill_buf().ok()?;
        let Some(&b) = buf.last() else {
            return last;
        };
        last = Some(b);
        let n = buf.len();
        r.consume(n);
    }
}

/// The last byte of a regular file (`None`: empty, missing or unreadable).
fn last_byte(path: &Path) -> Option<u8> {
    use std::os::unix::fs::FileExt;
    let (f, meta) = crate::safe_fs::open_regular(path, crate::safe_fs::Follow::No).ok()?;
    let len = meta.len();
    if len == 0 {
        return None;
    }
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, len - 1).ok()?;
    Some(b[0])
}

/// The blobs an operation refers to (copy payloads and code objects; a
/// graph's kernel nodes' code objects and a graph launch's host copies).
pub fn referenced_blobs(op: &Op) -> impl Iterator<Item = BlobId> + '_ {
    let id = match op {
        Op::Memcpy { blob, .. } | Op::MemcpyRect { blob, .. } | Op::MemcpyArray { blob, .. } => {
            *blob
        }
        Op::Relocate { blob, .. } | Op::HostWrite { blob, .. } | Op::HostRead { blob, .. } => {
            Some(*blob)
        }
        Op::ModuleLoad { code, .. } | Op::Launch { code, .. } | Op::Global { code, .. } => {
            Some(*code)
        }
        _ => None,
    };
    let nodes = match op {
        Op::GraphExec { nodes, .. } => &nodes[..],
        _ => &[],
    };
    let copies = match op {
        Op::GraphLaunch { blobs, .. } => &blobs[..],
        _ => &[],
    };
    id.into_iter()
        .chain(nodes.iter().filter_map(|n| match &n.op {
            crate::graph::NodeOp::Kernel { code, .. } => Some(*code),
            _ => None,
        }))
        .chain(copies.iter().map(|c| c.blob))
}

/// What [`repair`] kept, dropped and could not find.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// Events written to the repaired archive (the new `eof` not included).
    pub events_kept: u64,
    /// The source already ended with an `eof` trailer.
    pub had_eof: bool,
    /// Line and reason of the first malformed line; events after it were dropped.
    pub stopped_at: Option<(u64, String)>,
    /// Torn tail and unknown-op warnings from reading the source.
    pub warnings: Vec<Warning>,
    /// Blobs hard-linked into the repaired archive.
    pub blobs_linked: u64,
    /// Blobs copied (where linking failed).
    pub blobs_copied: u64,
    /// Referenced blobs absent from the source, with the first event naming each.
    pub blobs_missing: Vec<(BlobId, u64)>,
    /// Referenced blobs present but failing their hash check.
    pub blobs_corrupt: Vec<(BlobId, u64)>,
    /// Referenced blobs that could not be read: not a regular file (a FIFO,
    /// a symlink, a directory), or an error reading it; with the first event
    /// naming each and why.
    pub blobs_unreadable: Vec<(BlobId, u64, String)>,
    /// Region sidecar files copied.
    pub regions_copied: u64,
    /// Region files not copied, and why: not a regular file, or larger than
    /// a reader reads ([`crate::region_record::MAX_REGION_FILE`]).
    pub regions_left_out: Vec<(PathBuf, String)>,
    /// Why the repaired archive is not complete, when it is not: it holds
    /// fewer events than its source's writer made (see [`repair`]).
    pub incomplete: Option<String>,
}

/// Rewrites a torn or crashed archive `src` as a clean one at `dst` (which
/// must not exist or be empty): every event up to the first malformed line,
/// the referenced blobs that are present and intact (hard-linked when
/// possible), the region sidecars, a new `eof`, and a manifest with
/// `complete:true, repaired:true`. Events whose blobs are missing, corrupt
/// or unreadable are kept; the report lists the blobs so the damage is
/// visible, and the region files it left out.
///
/// Repair makes an archive readable; it cannot bring back events. The
/// repaired archive stays `complete:false` (its `incomplete` saying why,
/// `lost_events` counting what is known to be lost) when its source says
/// it is not whole (an `incomplete` reason or `lost_events` in its
/// manifest: a full disk, a blob not written, a replay that stopped) or
/// when repair drops events: lines of ops this hrr does not know, the
/// malformed line and everything after it, or fewer events than the
/// source's `eof` trailer (or its manifest's `complete:true`) counts. Only
/// a torn last line is dropped without that: the event its writer died
/// writing.
///
/// Nothing but regular files is read: a FIFO, symlink or directory in place
/// of a blob or region file is reported, never opened for a blocking read
/// or followed. On an error, what was written under `dst` is removed (`dst`
/// itself too, unless it was there before).
pub fn repair(src: impl AsRef<Path>, dst: impl AsRef<Path>) -> Result<RepairReport, ArchiveError> {
    repair_with_progress(src, dst, |_, _| {})
}

/// [`repair`], calling `progress(bytes read, bytes of events.ndjson)` as it
/// goes (every 1024 events, and once at the end).
pub fn repair_with_progress(
    src: impl AsRef<Path>,
    dst: impl AsRef<Path>,
    mut progress: impl FnMut(u64, u64),
) -> Result<RepairReport, ArchiveError> {
    let src = Archive::open(src)?;
    // A `regions/` that cannot be listed (a symlink) is refused before
    // anything is written.
    let regions = src.try_region_files()?;
    let total = src.events_len();
    let mut manifest = src.manifest().clone();
    manifest.repaired = true;
    let dst = dst.as_ref();
    let existed = fs::symlink_metadata(dst).is_ok();
    let writer = match ArchiveWriter::create_with_manifest(dst, manifest) {
        Ok(w) => w,
        Err(e) => {
            // Made here and left half made: ours to remove. One that was
            // there is not touched (it may not be empty, or not ours).
            if !existed && fs::symlink_metadata(dst).is_ok_and(|m| m.is_dir()) {
                let _ = fs::remove_dir_all(dst);
            }
            return Err(e.into());
        }
    };
    let result = repair_into(&src, writer, regions, total, &mut progress);
    if result.is_err() {
        discard(dst, existed);
    }
    result
}

/// Removes a repair's partial output: `dst` when [`repair`] created it,
/// else what it put inside (it was empty). Links are removed, never
/// followed.
fn discard(dst: &Path, existed: bool) {
    if !existed {
        let _ = fs::remove_dir_all(dst);
        return;
    }
    let Ok(entries) = fs::read_dir(dst) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let _ = match entry.file_type() {
            Ok(t) if t.is_dir() => fs::remove_dir_all(&path),
            _ => fs::remove_file(&path),
        };
    }
}

/// [`repair`] of `src` (in memory, see [`crate::mem_files`], or on disk)
/// into the archive `dst` of `files`, which must hold nothing under `dst`.
pub fn repair_in_memory(
    src: &Archive,
    dst: impl AsRef<Path>,
    files: &MemFiles,
) -> Result<RepairReport, ArchiveError> {
    let total = src
        .memory()
        .and_then(|m| m.read(&src.events_path()))
        .map_or(0, |e| e.len() as u64);
    let regions = src.try_region_files()?;
    let mut manifest = src.manifest().clone();
    manifest.repaired = true;
    let writer = ArchiveWriter::create_in_memory(dst, manifest, files)?;
    repair_into(src, writer, regions, total, &mut |_, _| {})
}

/// What [`repair`] does once `writer` is created: `regions` are the source's
/// region files ([`Archive::try_region_files`]), `total` is the size of the
/// source's events, for `progress`.
fn repair_into(
    src: &Archive,
    mut writer: ArchiveWriter,
    regions: Vec<PathBuf>,
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RepairReport, ArchiveError> {
    let mut report = RepairReport::default();
    let mut seen: HashSet<BlobId> = HashSet::new();
    let mut events = src.events(ReadOptions::default())?;
    // The events the source's `eof` trailer counts, when it has one.
    let mut trailer = None;
    while let Some(item) = events.next() {
        if report.events_kept.is_multiple_of(1024) {
            progress(events.bytes_read(), total);
        }
        let event = match item {
            Ok(e) => e,
            Err(ReadError::Malformed { line, reason, .. }) => {
                report.stopped_at = Some((line, reason));
                break;
            }
            Err(e) => return Err(e.into()),
        };
        if let Op::Eof { events } = event.op {
            // The writer adds a fresh trailer with the right count.
            report.had_eof = true;
            trailer = Some(events);
            break;
        }
        for id in referenced_blobs(&event.op) {
            if !seen.insert(id) {
                continue;
            }
            match writer.adopt_blob(src.blobs(), &id) {
                Ok(CopyOutcome::HardLinked | CopyOutcome::AlreadyPresent) => {
                    report.blobs_linked += 1
                }
                Ok(CopyOutcome::Copied) => report.blobs_copied += 1,
                Err(WriteError::Blob(BlobError::Missing { .. })) => {
                    report.blobs_missing.push((id, event.seq))
                }
                Err(WriteError::Blob(BlobError::Corrupt { .. })) => {
                    report.blobs_corrupt.push((id, event.seq))
                }
                // The source's blob could not be read (a FIFO, symlink or
                // directory in its place, an I/O error): listed, its events
                // kept. Writing the copy failing is the repair's own error.
                Err(WriteError::Blob(e)) if e.path().starts_with(src.blobs().root()) => report
                    .blobs_unreadable
                    .push((id, event.seq, crate::error_chain::chain(&e).to_string())),
                Err(e) => return Err(e.into()),
            }
        }
        writer.append(&event)?;
        report.events_kept += 1;
    }
    progress(events.bytes_read(), total);
    report.warnings = events.take_warnings();
    for path in regions {
        match copy_region(src, &writer, &path)? {
            Ok(()) => report.regions_copied += 1,
            Err(why) => report.regions_left_out.push((path, why)),
        }
    }
    let (dropped, lost) = dropped_by_repair(src.manifest(), &report, trailer);
    if dropped.is_empty() && recorded_reason(src.manifest()).is_none() {
        writer.finish()?;
        return Ok(report);
    }
    let source_lost = lost_events(src.manifest());
    let m = writer.finish_with(|m| {
        m.complete = false;
        for why in &dropped {
            m.mark_incomplete(why);
        }
        if lost > 0 {
            m.extra
                .insert(LOST_EVENTS_FIELD.into(), (source_lost + lost).into());
        }
    })?;
    report.incomplete = recorded_reason(&m);
    Ok(report)
}

/// Why a repair dropped events its source's writer made, each reason a
/// sentence, and how many events that is where it is known: lines of ops
/// this hrr does not know, a malformed line and what follows it, fewer
/// events read than the source's `eof` trailer (or, with none, its
/// manifest's `complete:true`) counts.
fn dropped_by_repair(
    source: &Manifest,
    report: &RepairReport,
    trailer: Option<u64>,
) -> (Vec<String>, u64) {
    let mut why = Vec::new();
    let unknown = report
        .warnings
        .iter()
        .filter(|w| matches!(w, Warning::UnknownOp { .. }))
        .count() as u64;
    if unknown > 0 {
        why.push(format!(
            "repair dropped {unknown} events of ops this hrr does not know"
        ));
    }
    if let Some((line, reason)) = &report.stopped_at {
        why.push(format!(
            "repair dropped line {line} and every line after it (malformed event: {reason})"
        ));
    }
    let read = report.events_kept + unknown;
    let counted = match trailer {
        Some(n) => Some((n, "the eof trailer")),
        None => source.complete.then_some((source.events, "the manifest")),
    };
    let mut lost = unknown;
    if let Some((n, by)) = counted
        && n > read
    {
        why.push(format!("{by} counted {n} events, {read} were read"));
        lost = n - report.events_kept;
    }
    (why, lost)
}

/// The manifest field counting events a writer lost (FORMAT.md).
const LOST_EVENTS_FIELD: &str = "lost_events";

/// `lost_events` of a manifest (0 without one).
fn lost_events(m: &Manifest) -> u64 {
    m.extra
        .get(LOST_EVENTS_FIELD)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

/// What a manifest itself says of why its archive is not whole: the
/// reason its writer (or a check, or repair) gave, and the events lost.
fn recorded_reason(m: &Manifest) -> Option<String> {
    match (m.incomplete_reason(), lost_events(m)) {
        (Some(why), 0) => Some(why.to_string()),
        (Some(why), lost) => Some(format!("{why}; {lost} events lost")),
        (None, 0) => None,
        (None, lost) => Some(format!("{lost} events lost")),
    }
}

/// Bytes read and written at a time when copying a region file.
const REGION_COPY_CHUNK: usize = 64 << 10;

/// Copies region file `path` of `src` into `writer`'s `regions/`; the inner
/// error says why the file was left out (not a regular file, larger than
/// [`MAX_REGION_FILE`], unreadable), the outer one that writing failed.
/// Runs of zeros are not written (the copy is sparse where they are).
fn copy_region(
    src: &Archive,
    writer: &ArchiveWriter,
    path: &Path,
) -> Result<Result<(), String>, ArchiveError> {
    use crate::safe_fs::{Follow, OpenError, open_regular};
    use std::io::{Seek, SeekFrom, Write};
    use std::os::unix::fs::OpenOptionsExt;
    let name = path.file_name().expect("region file has a name");
    let to = writer.path().join(REGIONS_DIR).join(name);
    let too_large = |len: u64| {
        OpenError::TooLarge {
            path: path.to_path_buf(),
            len,
            limit: MAX_REGION_FILE,
            what: "region file",
        }
        .to_string()
    };
    // A new file in the directory the writer made (O_EXCL: never through
    // a link).
    let write_err = |source| ArchiveError::Io {
        path: to.clone(),
        source,
    };
    let create = || {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(crate::safe_fs::FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&to)
            .map_err(write_err)
    };
    // In memory, on either side: whole byte vectors.
    if src.memory().is_some() || writer.memory().is_some() {
        let read = match src.memory() {
            Some(m) => m
                .read(path)
                .map(|b| b.to_vec())
                .ok_or_else(|| OpenError::NotFound { path: path.into() }),
            None => crate::safe_fs::read_limited(path, Follow::No, MAX_REGION_FILE, "region file"),
        };
        let bytes = match read {
            Ok(b) if b.len() as u64 > MAX_REGION_FILE => return Ok(Err(too_large(b.len() as u64))),
            Ok(b) => b,
            Err(e) => return Ok(Err(e.to_string())),
        };
        match writer.memory() {
            Some(m) => m.write(to, bytes),
            None => create()?.write_all(&bytes).map_err(write_err)?,
        }
        return Ok(Ok(()));
    }
    let (file, meta) = match open_regular(path, Follow::No) {
        Ok(f) => f,
        Err(e) => return Ok(Err(e.to_string())),
    };
    if meta.len() > MAX_REGION_FILE {
        return Ok(Err(too_large(meta.len())));
    }
    let mut out = create()?;
    // At most the length seen: a file growing meanwhile is copied as it was.
    let mut input = file.take(meta.len());
    let mut buf = vec![0u8; REGION_COPY_CHUNK];
    let mut copied = 0u64;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                drop(out);
                let _ = fs::remove_file(&to);
                return Ok(Err(format!("{}: {e}", path.display())));
            }
        };
        if buf[..n].iter().all(|&b| b == 0) {
            out.seek(SeekFrom::Current(n as i64)).map_err(write_err)?;
        } else {
            out.write_all(&buf[..n]).map_err(write_err)?;
        }
        copied += n as u64;
    }
    // Trailing zeros were skipped: the length makes them (as a hole).
    out.set_len(copied).map_err(write_err)?;
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive_writer::ManifestExtra;
    use crate::error_chain::chain;
    use crate::event::{Dir, Event};
    use crate::hex::Addr;
    use crate::manifest::{ArchiveKind, Platform};
    use std::io::Write;

    fn memcpy(seq: u64, blob: BlobId) -> Event {
        Event {
            seq,
            t: seq,
            tid: 1,
            api: "hipMemcpy".into(),
            ret: 0,
            dev: 0,
            op: Op::Memcpy {
                dir: Dir::H2d,
                dst: Addr(0x10),
                src: Addr(0x20),
                size: 3,
                stream: None,
                blob: Some(blob),
            },
        }
    }

    /// An archive whose writer "crashed": no finish, a torn last line.
    fn crashed(dir: &Path) -> (BlobId, BlobId) {
        let mut w = ArchiveWriter::create(
            dir,
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap();
        let a = w.put_blob(b"aaa").unwrap();
        let b = w.put_blob(b"bbb").unwrap();
        w.append(&memcpy(0, a)).unwrap();
        w.append(&memcpy(1, b)).unwrap();
        w.append(&memcpy(2, a)).unwrap();
        drop(w);
        fs::remove_file(BlobStore::of_archive(dir).path(&b)).unwrap();
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(dir.join(EVENTS_FILE))
            .unwrap();
        f.write_all(br#"{"seq":3,"api":"hipMem"#).unwrap();
        fs::write(
            dir.join("regions/app.ndjson"),
            crate::region_record::RegionRecord::segment(0x1000, 64, 0).to_line(),
        )
        .unwrap();
        (a, b)
    }

    #[test]
    fn open_checks_layout() {
        let t = tempfile::tempdir().unwrap();
        let e = Archive::open(t.path().join("nope")).unwrap_err();
        assert!(e.to_string().ends_with("nope: no such archive"), "{e}");
        let dir = t.path().join("a.hrr");
        ArchiveWriter::create(
            &dir,
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap()
        .compress(false)
        .finish()
        .unwrap();
        fs::remove_file(dir.join(EVENTS_FILE)).unwrap();
        let e = Archive::open(&dir).unwrap_err();
        assert!(
            e.to_string().contains("events.ndjson: events file missing"),
            "{e}"
        );
    }

    #[test]
    fn incomplete_archives_say_why() {
        let t = tempfile::tempdir().unwrap();
        let finished = t.path().join("ok.hrr");
        ArchiveWriter::create(
            &finished,
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap()
        .compress(false)
        .finish()
        .unwrap();
        assert_eq!(Archive::open(&finished).unwrap().incomplete_reason(), None);
        // Died: no eof, whole lines.
        let died = t.path().join("died.hrr");
        let mut w = ArchiveWriter::create(
            &died,
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap();
        w.append(&memcpy(0, crate::blob_store::hash(b"x"))).unwrap();
        drop(w);
        let why = |dir: &Path| Archive::open(dir).unwrap().incomplete_reason().unwrap();
        assert_eq!(
            why(&died),
            "no eof: the capture was killed or died before finishing"
        );
        // Still running: the owner pid (this process) is alive.
        fs::write(died.join(OWNER_FILE), format!("{}\n", std::process::id())).unwrap();
        assert_eq!(
            why(&died),
            format!(
                "still being written: capture process {} is running",
                std::process::id()
            )
        );
        fs::remove_file(died.join(OWNER_FILE)).unwrap();
        // Torn: the last line has no newline.
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(died.join(EVENTS_FILE))
            .unwrap();
        f.write_all(b"{\"seq\":1").unwrap();
        assert_eq!(why(&died), "torn last line: the writer died mid-write");
        // The writer said why: that wins.
        let stopped = t.path().join("stopped.hrr");
        let mut w = ArchiveWriter::create(
            &stopped,
            ArchiveKind::Replay,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap();
        w.append(&memcpy(0, crate::blob_store::hash(b"x"))).unwrap();
        let m = w
            .abandon("the replay stopped: event 9 (hipMemcpy): boom")
            .unwrap();
        assert!(!m.complete);
        assert_eq!(m.events, 1);
        assert_eq!(
            why(&stopped),
            "the replay stopped: event 9 (hipMemcpy): boom"
        );
    }

    #[test]
    fn a_non_file_events_or_a_symlinked_regions_dir_is_refused_by_name() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("a.hrr");
        ArchiveWriter::create(
            &dir,
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap()
        .compress(false)
        .finish()
        .unwrap();
        fs::remove_dir(dir.join(REGIONS_DIR)).unwrap();
        std::os::unix::fs::symlink(t.path(), dir.join(REGIONS_DIR)).unwrap();
        let e = Archive::open(&dir).unwrap().try_region_files().unwrap_err();
        // The refusal is the cause of the error naming the directory.
        let e = crate::error_chain::chain(&e).to_string();
        assert!(e.contains("regions: is a symbolic link"), "{e}");
        fs::remove_file(dir.join(EVENTS_FILE)).unwrap();
        fs::create_dir(dir.join(EVENTS_FILE)).unwrap();
        let e = Archive::open(&dir).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("events.ndjson: is a directory, not the events file (a regular file)"),
            "{e}"
        );
    }

    #[test]
    fn region_files_are_sorted_and_filtered() {
        let t = tempfile::tempdir().unwrap();
        ArchiveWriter::create(
            t.path(),
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap()
        .compress(false)
        .finish()
        .unwrap();
        for n in [
            "b.ndjson",
            "a.hrrr",
            "notes.txt",
            ".sidecar.ndjson.tmp-1",
            ".x.ndjson",
        ] {
            fs::write(t.path().join("regions").join(n), b"").unwrap();
        }
        let a = Archive::open(t.path()).unwrap();
        let names: Vec<_> = a
            .region_files()
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["a.hrrr", "b.ndjson"]);
    }

    /// What the repair of the crashed archive of these tests gives: complete,
    /// marked repaired, 3 events and `eof`, blob `a` ("aaa") and one sidecar.
    fn assert_repaired_crash(fixed: &Archive, a: &BlobId) {
        let m = fixed.manifest();
        assert!(m.complete && m.repaired);
        assert_eq!((m.events, m.blobs), (3, 1));
        let events: Vec<_> = fixed
            .events(ReadOptions::strict())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(events.len(), 4);
        assert_eq!(events[3].op, Op::Eof { events: 3 });
        assert_eq!(&*fixed.blobs().get(a).unwrap(), b"aaa");
        assert_eq!(fixed.region_files().len(), 1);
    }

    fn mkfifo(path: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path; mkfifo has no other preconditions.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn repair_lists_blobs_that_are_not_regular_files_and_keeps_their_events() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("crashed.hrr");
        let (a, _) = crashed(&src);
        let store = BlobStore::of_archive(&src);
        for (i, damage) in ["fifo", "symlink", "dir"].into_iter().enumerate() {
            let blob = store.path(&a);
            fs::remove_file(&blob).unwrap();
            match damage {
                "fifo" => mkfifo(&blob),
                "symlink" => {
                    let outside = t.path().join("aaa");
                    fs::write(&outside, b"aaa").unwrap();
                    std::os::unix::fs::symlink(&outside, &blob).unwrap();
                }
                _ => fs::create_dir(&blob).unwrap(),
            }
            let dst = t.path().join(format!("fixed{i}.hrr"));
            let r = repair(&src, &dst).unwrap();
            assert_eq!(r.events_kept, 3, "{damage}");
            assert_eq!(r.blobs_linked + r.blobs_copied, 0, "{damage}");
            let [(id, seq, why)] = &r.blobs_unreadable[..] else {
                panic!("{damage}: {r:?}");
            };
            assert_eq!((id, *seq), (&a, 0), "{damage}");
            let blob_name = blob.display().to_string();
            let wanted = match damage {
                "fifo" => format!("{blob_name}: is a FIFO, not a regular file"),
                "symlink" => format!("{blob_name}: refusing a symlink inside the blob store"),
                _ => format!("{blob_name}: is a directory, not a regular file"),
            };
            assert_eq!(why, &wanted);
            let fixed = Archive::open(&dst).unwrap();
            assert!(fixed.manifest().complete);
            assert_eq!(fixed.manifest().events, 3);
            assert!(!fixed.blobs().contains(&a));
            // Whatever it was, it is still there, and nothing was followed.
            if damage == "dir" {
                fs::remove_dir(&blob).unwrap();
            } else {
                fs::remove_file(&blob).unwrap();
            }
            fs::write(&blob, b"aaa").unwrap();
        }
        assert_eq!(fs::read(t.path().join("aaa")).unwrap(), b"aaa");
    }

    #[test]
    fn repair_leaves_out_region_files_it_must_not_read_and_copies_holes_as_holes() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("crashed.hrr");
        crashed(&src);
        let regions = src.join(REGIONS_DIR);
        mkfifo(&regions.join("fifo.ndjson"));
        fs::write(t.path().join("victim"), b"").unwrap();
        std::os::unix::fs::symlink(t.path().join("victim"), regions.join("link.hrrr")).unwrap();
        let big = fs::File::create(regions.join("big.hrrr")).unwrap();
        big.set_len(MAX_REGION_FILE + 1).unwrap();
        // Within the limit and mostly hole: copied, the hole kept.
        let sparse = fs::File::create(regions.join("sparse.ndjson")).unwrap();
        sparse.set_len(64 << 20).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&sparse, b"{}\n", 32 << 20).unwrap();
        drop((big, sparse));
        let dst = t.path().join("fixed.hrr");
        let r = repair(&src, &dst).unwrap();
        assert_eq!(r.regions_copied, 2);
        let mut left: Vec<(String, String)> = r
            .regions_left_out
            .iter()
            .map(|(p, why)| (p.file_name().unwrap().to_string_lossy().into(), why.clone()))
            .collect();
        left.sort();
        let at = |n: &str| regions.join(n).display().to_string();
        assert_eq!(
            left,
            [
                (
                    "big.hrrr".to_string(),
                    format!(
                        "{}: 268435457 bytes, more than the 268435456 bytes a region file may have",
                        at("big.hrrr")
                    )
                ),
                (
                    "fifo.ndjson".to_string(),
                    format!(
                        "{}: is a FIFO, not a regular file; refusing to read it",
                        at("fifo.ndjson")
                    )
                ),
                (
                    "link.hrrr".to_string(),
                    format!(
                        "{}: is a symbolic link; refusing to follow it inside an archive",
                        at("link.hrrr")
                    )
                ),
            ]
        );
        let copy = dst.join(REGIONS_DIR).join("sparse.ndjson");
        let meta = fs::symlink_metadata(&copy).unwrap();
        assert_eq!(meta.len(), 64 << 20);
        assert!(meta.blocks() * 512 < 1 << 20, "{} blocks", meta.blocks());
        assert_eq!(
            fs::read(&copy).unwrap(),
            fs::read(regions.join("sparse.ndjson")).unwrap()
        );
        assert_eq!(fs::read(t.path().join("victim")).unwrap(), b"");
    }

    #[test]
    fn repair_refuses_symlinked_store_directories_before_writing_anything() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let src = t.path().join("crashed.hrr");
        crashed(&src);
        let dst = t.path().join("fixed.hrr");
        // regions/ a link: refused by every reader, and by repair first.
        fs::rename(src.join(REGIONS_DIR), outside.path().join("regions")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("regions"), src.join(REGIONS_DIR)).unwrap();
        let e = repair(&src, &dst).unwrap_err();
        assert!(
            chain(&e)
                .to_string()
                .contains("regions: is a symbolic link"),
            "{e}"
        );
        assert!(!dst.exists());
        fs::remove_file(src.join(REGIONS_DIR)).unwrap();
        fs::rename(outside.path().join("regions"), src.join(REGIONS_DIR)).unwrap();
        // blobs/ a link: the archive does not open.
        let blobs = src.join(crate::blob_store::BLOBS_DIR);
        fs::rename(&blobs, outside.path().join("blobs")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("blobs"), &blobs).unwrap();
        let e = Archive::open(&src).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: refusing a symlink inside the blob store",
                blobs.display()
            )
        );
        let e = repair(&src, &dst).unwrap_err();
        assert!(e.to_string().contains("refusing a symlink"), "{e}");
        assert!(!dst.exists());
    }

    #[test]
    fn a_failed_repairs_output_is_discarded_without_following_links() {
        // A `dst` repair made is removed; one that was there (empty) is
        // emptied again. A link inside goes, its target stays.
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        fs::create_dir(&victim).unwrap();
        fs::write(victim.join("keep"), b"x").unwrap();
        let made = t.path().join("made.hrr");
        let pre = t.path().join("pre.hrr");
        fs::create_dir(&pre).unwrap();
        for (dst, existed) in [(&made, false), (&pre, true)] {
            ArchiveWriter::create(
                dst,
                ArchiveKind::Capture,
                Platform::Cpu,
                ManifestExtra::default(),
            )
            .unwrap();
            std::os::unix::fs::symlink(&victim, dst.join("link")).unwrap();
            discard(dst, existed);
        }
        assert!(!made.exists());
        assert!(fs::read_dir(&pre).unwrap().next().is_none());
        assert_eq!(fs::read(victim.join("keep")).unwrap(), b"x");
    }

    #[test]
    fn repair_rewrites_a_crashed_archive() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("crashed.hrr");
        let (a, b) = crashed(&src);
        assert!(!Archive::open(&src).unwrap().is_complete());
        let dst = t.path().join("fixed.hrr");
        let r = repair(&src, &dst).unwrap();
        assert_eq!(r.events_kept, 3);
        assert!(!r.had_eof);
        assert_eq!(r.blobs_missing, vec![(b, 1)]);
        assert_eq!(r.blobs_linked + r.blobs_copied, 1);
        assert_eq!(r.regions_copied, 1);
        assert!(
            matches!(r.warnings[..], [Warning::TornTail { line: 4, .. }]),
            "{:?}",
            r.warnings
        );

        let fixed = Archive::open(&dst).unwrap();
        assert_repaired_crash(&fixed, &a);
    }

    /// Every file under `dir`, into `files` under `name`.
    fn load_into(files: &MemFiles, dir: &Path, name: &Path) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let to = name.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                load_into(files, &entry.path(), &to);
            } else {
                files.write(to, fs::read(entry.path()).unwrap());
            }
        }
    }

    #[test]
    fn an_archive_in_memory_reads_and_repairs_as_on_disk() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("crashed.hrr");
        let (a, b) = crashed(&src);
        let files = MemFiles::new();
        let name = Path::new("m/crashed.hrr");
        load_into(&files, &src, name);
        let disk = Archive::open(&src).unwrap();
        let mem = Archive::open_in_memory(name, &files).unwrap();
        assert_eq!(mem.manifest(), disk.manifest());
        assert_eq!(
            mem.incomplete_reason().as_deref(),
            Some("torn last line: the writer died mid-write")
        );
        // Whole lines and no eof; then a capture still running.
        let text = fs::read(src.join(EVENTS_FILE)).unwrap();
        let whole = &text[..=text.iter().rposition(|&b| b == b'\n').unwrap()];
        files.write(
            "m/died.hrr/manifest.json",
            fs::read(src.join("manifest.json")).unwrap(),
        );
        files.write("m/died.hrr/events.ndjson", whole.to_vec());
        let died = Archive::open_in_memory("m/died.hrr", &files).unwrap();
        assert_eq!(
            died.incomplete_reason().as_deref(),
            Some("no eof: the capture was killed or died before finishing")
        );
        files.write("m/died.hrr/.hrr-owner", format!("{}\n", std::process::id()));
        assert_eq!(
            died.incomplete_reason(),
            Some(format!(
                "still being written: capture process {} is running",
                std::process::id()
            ))
        );
        let events = |a: &Archive| {
            let mut r = a.events(ReadOptions::default()).unwrap();
            let events: Vec<_> = r.by_ref().map(Result::unwrap).collect();
            (events, r.warnings().len())
        };
        assert_eq!(events(&mem), events(&disk));
        assert_eq!(events(&mem).0.len(), 3);
        let regions = |a: &Archive| {
            let streams = a.load_regions().unwrap();
            let names: Vec<_> = a
                .region_files()
                .iter()
                .map(|p| p.file_name().unwrap().to_owned())
                .collect();
            (
                names,
                streams.into_iter().map(|s| s.records).collect::<Vec<_>>(),
            )
        };
        assert_eq!(regions(&mem), regions(&disk));
        assert_eq!(regions(&mem).0.len(), 1);

        let r = repair_in_memory(&mem, "m/fixed.hrr", &files).unwrap();
        let on_disk = repair(&src, t.path().join("fixed.hrr")).unwrap();
        assert_eq!(
            (r.events_kept, r.had_eof, &r.stopped_at, &r.blobs_missing),
            (3, false, &None, &vec![(b, 1)])
        );
        assert_eq!(
            (r.events_kept, r.had_eof, &r.stopped_at, &r.blobs_missing),
            (
                on_disk.events_kept,
                on_disk.had_eof,
                &on_disk.stopped_at,
                &on_disk.blobs_missing
            )
        );
        // No hard links in memory: the blob is copied.
        assert_eq!(
            (r.blobs_linked, r.blobs_copied, r.regions_copied),
            (0, 1, 1)
        );
        assert_eq!(r.warnings.len(), on_disk.warnings.len());

        let fixed = Archive::open_in_memory("m/fixed.hrr", &files).unwrap();
        assert_repaired_crash(&fixed, &a);
        assert!(matches!(
            repair_in_memory(&mem, "m/fixed.hrr", &files),
            Err(ArchiveError::Write(WriteError::NotEmpty { .. }))
        ));
    }

    #[test]
    fn an_archive_in_memory_is_refused_as_on_disk() {
        let files = MemFiles::new();
        let open = |files: &MemFiles| Archive::open_in_memory("a.hrr", files).unwrap_err();
        assert_eq!(open(&files).to_string(), "a.hrr: no such archive");
        files.write("a.hrr/events.ndjson", Vec::new());
        let e = chain(&open(&files)).to_string();
        assert!(e.contains("a.hrr/manifest.json: no such file"), "{e}");
        files.write(
            "a.hrr/manifest.json",
            vec![b' '; crate::manifest::MAX_MANIFEST as usize + 1],
        );
        let e = chain(&open(&files)).to_string();
        assert!(
            e.contains("a.hrr/manifest.json: 1048577 bytes, more than the 1048576 bytes a manifest may have"),
            "{e}"
        );
        files.write("a.hrr/manifest.json", b"{\"format\":\"nope\"}".to_vec());
        let e = chain(&open(&files)).to_string();
        assert!(e.contains("a.hrr is not an hrr archive"), "{e}");
        let disk = tempfile::tempdir().unwrap();
        let dir = disk.path().join("a.hrr");
        ArchiveWriter::create(
            &dir,
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap()
        .compress(false)
        .finish()
        .unwrap();
        let other = MemFiles::new();
        other.write(
            "a.hrr/manifest.json",
            fs::read(dir.join("manifest.json")).unwrap(),
        );
        let e = open(&other).to_string();
        assert_eq!(
            e,
            "a.hrr/events.ndjson: events file missing; is this an hrr archive?"
        );
        other.write("a.hrr/events.ndjson", Vec::new());
        assert!(
            Archive::open_in_memory("a.hrr", &other)
                .unwrap()
                .events_mapped(ReadOptions::default())
                .is_err()
        );
    }

    #[test]
    fn repair_stops_at_a_malformed_line() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("s.hrr");
        crashed(&src);
        // Corrupt line 2 in the middle.
        let text = fs::read_to_string(src.join(EVENTS_FILE)).unwrap();
        let mut lines: Vec<&str> = text.split('\n').collect();
        lines[1] = "{garbage";
        fs::write(src.join(EVENTS_FILE), lines.join("\n")).unwrap();
        let r = repair(&src, t.path().join("d.hrr")).unwrap();
        assert_eq!(r.events_kept, 1);
        assert_eq!(r.stopped_at.as_ref().map(|s| s.0), Some(2));
    }

    #[test]
    fn repair_refuses_to_overwrite() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("s.hrr");
        crashed(&src);
        assert!(matches!(
            repair(&src, &src),
            Err(ArchiveError::Write(WriteError::NotEmpty { .. }))
        ));
    }
}
