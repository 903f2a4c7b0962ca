//! `ArchiveWriter`: creates an archive and streams events and blobs into it.
//!
//! Crash safety is the design goal, because the recorded process is often one
//! that crashes:
//! - `create` lays out the whole directory and writes `manifest.json` with
//!   `complete:false` before the first event, so a crash at any point leaves
//!   an archive that opens (and that `repair` can finish).
//! - Events are buffered and written in whole lines: when the buffer reaches
//!   64 KiB, when 100 ms have passed since the last write (checked on append),
//!   on [`ArchiveWriter::flush`], and on drop. A crash can therefore tear at
//!   most the last line, which the reader recovers.
//! - `finish` appends the `eof` trailer, fsyncs `events.ndjson`, and only then
//!   replaces the manifest (temp file + rename) with `complete:true` and the
//!   final counts: a manifest that says complete always describes durable events.
//! - Nothing is created through a symlink: the directory is made (`0700`) or
//!   an existing empty one opened with `O_NOFOLLOW`, and `blobs/`,
//!   `regions/` and `events.ndjson` (`0600`) are created relative to it
//!   ([`crate::safe_fs::DirFd`]).
//! - A writer that stops early says why: [`ArchiveWriter::abandon`] leaves
//!   `complete:false` with the reason in the manifest's `incomplete`.
//! - [`ArchiveWriter::create_in_memory`] writes the same files into a
//!   [`MemFiles`] (see [`crate::mem_files`]); there is nothing to fsync.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::blob_store::{BlobError, BlobStore, CopyOutcome};
use crate::event::{DevTime, Event, Op};
use crate::hex::BlobId;
use crate::manifest::{ArchiveKind, MANIFEST_FILE, Manifest, ManifestError, Platform};
use crate::mem_files::MemFiles;
use crate::safe_fs::DirFd;

/// Events file name inside an archive.
pub const EVENTS_FILE: &str = "events.ndjson";

/// The events file of a finished archive, compressed (docs/FORMAT.md,
/// *Compression*): `EVENTS_FILE` in one zstd frame.
pub const EVENTS_ZST_FILE: &str = "events.ndjson.zst";
/// Region sidecar directory inside an archive.
pub const REGIONS_DIR: &str = "regions";

/// Buffered event bytes that trigger a write.
pub const FLUSH_BYTES: usize = 64 * 1024;
/// Age of the oldest buffered event that triggers a write.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Manifest fields a producer adds beyond the required ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ManifestExtra {
    /// Captures: the application's command line.
    pub argv: Vec<String>,
    /// Replays: the capture archive being replayed.
    pub replay_of: Option<String>,
    /// Anything else, written as top-level manifest fields.
    pub fields: Map<String, Value>,
}

/// Writing an archive failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{}", path.display())]
    /// A file or directory of the archive could not be written.
    Io {
        /// Which.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    #[error(transparent)]
    /// The manifest could not be written.
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    /// A blob could not be stored.
    Blob(#[from] BlobError),
    #[error("{}: already exists and is not empty; refusing to overwrite an archive", path.display())]
    /// The directory exists and holds files.
    NotEmpty {
        /// The directory.
        path: PathBuf,
    },
}

/// Streams events and blobs into a new archive directory.
pub struct ArchiveWriter {
    dir: PathBuf,
    events: EventsOut,
    buf: Vec<u8>,
    /// When the buffer last went to the file (or the writer started).
    last_flush: Instant,
    blobs: BlobStore,
    blob_ids: HashSet<BlobId>,
    manifest: Manifest,
    /// Events appended (excluding the `eof` trailer).
    written: u64,
    /// Whether blobs are stored compressed where that pays and `finish`
    /// leaves `events.ndjson.zst` (the default), rather than raw blobs and
    /// `events.ndjson`.
    compress: bool,
    /// Blob compression's context and buffer, made at the first blob.
    blob_zstd: Option<(zstd::bulk::Compressor<'static>, Vec<u8>)>,
    /// One past the largest seq seen: the `eof` trailer's seq.
    next_seq: u64,
    finished: bool,
}

/// Where the events go.
enum EventsOut {
    File(File),
    /// The files of an archive in memory, and its events file's path.
    Memory(MemFiles, PathBuf),
}

impl ArchiveWriter {
    /// Creates `dir` (which must not exist or be empty) with `blobs/`,
    /// `regions/`, an empty `events.ndjson` and an incomplete manifest.
    pub fn create(
        dir: impl AsRef<Path>,
        kind: ArchiveKind,
        platform: Platform,
        extra: ManifestExtra,
    ) -> Result<ArchiveWriter, WriteError> {
        let mut manifest = Manifest::new(kind, platform);
        manifest.argv = extra.argv;
        manifest.replay_of = extra.replay_of;
        manifest.extra = extra.fields;
        ArchiveWriter::create_with_manifest(dir, manifest)
    }

    /// Like [`ArchiveWriter::create`] with a prepared manifest; `complete`,
    /// `events` and `blobs` are maintained by the writer whatever they hold.
    pub fn create_with_manifest(
        dir: impl AsRef<Path>,
        mut manifest: Manifest,
    ) -> Result<ArchiveWriter, WriteError> {
        let dir = dir.as_ref().to_path_buf();
        let io_at = |path: &Path| {
            let path = path.to_path_buf();
            move |source| WriteError::Io { path, source }
        };
        match fs::read_dir(&dir) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(WriteError::NotEmpty { path: dir });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                    fs::create_dir_all(parent).map_err(io_at(parent))?;
                }
            }
            Err(e) => {
                return Err(WriteError::Io {
                    path: dir,
                    source: e,
                });
            }
        }
        // Created here (0700), or the empty directory found above, opened
        // without following a symlink; everything else relative to it.
        let root = DirFd::create(&dir, true).map_err(io_at(&dir))?;
        let blobs = BlobStore::of_archive(&dir);
        root.subdir(crate::blob_store::BLOBS_DIR)
            .map_err(io_at(blobs.root()))?;
        let regions = dir.join(REGIONS_DIR);
        root.subdir(REGIONS_DIR).map_err(io_at(&regions))?;
        let events_path = dir.join(EVENTS_FILE);
        let events = root
            .create_file(EVENTS_FILE, true)
            .map_err(io_at(&events_path))?;
        manifest.complete = false;
        manifest.events = 0;
        manifest.blobs = 0;
        manifest.write_atomic(&dir)?;
        Ok(ArchiveWriter::started(
            dir,
            EventsOut::File(events),
            blobs,
            manifest,
        ))
    }

    /// [`ArchiveWriter::create_with_manifest`] into `files` (see
    /// [`crate::mem_files`]): `dir` must hold no file there.
    pub fn create_in_memory(
        dir: impl AsRef<Path>,
        mut manifest: Manifest,
        files: &MemFiles,
    ) -> Result<ArchiveWriter, WriteError> {
        let dir = dir.as_ref().to_path_buf();
        if files.any_under(&dir) {
            return Err(WriteError::NotEmpty { path: dir });
        }
        let events = dir.join(EVENTS_FILE);
        files.write(&events, Vec::new());
        manifest.complete = false;
        manifest.events = 0;
        manifest.blobs = 0;
        files.write(dir.join(MANIFEST_FILE), manifest.to_json());
        let blobs = BlobStore::in_memory(dir.join(crate::blob_store::BLOBS_DIR), files);
        Ok(ArchiveWriter::started(
            dir,
            EventsOut::Memory(files.clone(), events),
            blobs,
            manifest,
        ))
    }

    fn started(
        dir: PathBuf,
        events: EventsOut,
        blobs: BlobStore,
        manifest: Manifest,
    ) -> ArchiveWriter {
        ArchiveWriter {
            dir,
            events,
            buf: Vec::with_capacity(FLUSH_BYTES + 4096),
            last_flush: Instant::now(),
            blobs,
            blob_ids: HashSet::new(),
            manifest,
            written: 0,
            next_seq: 0,
            finished: false,
            compress: true,
            blob_zstd: None,
        }
    }

    /// Whether blobs are compressed where that pays and
    /// [`ArchiveWriter::finish`] compresses the events (the default:
    /// `events.ndjson.zst`), or every file stays plain (`events.ndjson`).
    /// An archive in memory keeps its events plain either way.
    pub fn compress(mut self, yes: bool) -> Self {
        self.compress = yes;
        self
    }

    /// Writes the manifest: atomically on disk, at once in memory.
    fn write_manifest(&self) -> Result<(), ManifestError> {
        match &self.events {
            EventsOut::File(_) => self.manifest.write_atomic(&self.dir),
            EventsOut::Memory(files, _) => {
                files.write(self.dir.join(MANIFEST_FILE), self.manifest.to_json());
                Ok(())
            }
        }
    }

    /// The archive directory being written.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Its blob store.
    pub fn blobs(&self) -> &BlobStore {
        &self.blobs
    }

    /// The files it writes to when it writes an archive in memory.
    pub fn memory(&self) -> Option<&MemFiles> {
        match &self.events {
            EventsOut::File(_) => None,
            EventsOut::Memory(files, _) => Some(files),
        }
    }

    /// The manifest as it will be finished (counts are filled in by `finish`).
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Events appended so far (the `eof` trailer not included).
    pub fn events_written(&self) -> u64 {
        self.written
    }

    /// Buffers one event; writes the buffer out when it is large or old.
    /// Events carry their own `seq` (a replay archive keeps the capture's).
    pub fn append(&mut self, event: &Event) -> Result<(), WriteError> {
        self.append_timed(event, None)
    }

    /// [`ArchiveWriter::append`] with a timed replay's device timing
    /// (`dev_t`, `dev_ns`) on the line when given.
    pub fn append_timed(&mut self, event: &Event, dev: Option<DevTime>) -> Result<(), WriteError> {
        event.write_line_timed(dev, &mut self.buf);
        self.written += 1;
        self.next_seq = self.next_seq.max(event.seq.saturating_add(1));
        if self.buf.len() >= FLUSH_BYTES || self.last_flush.elapsed() >= FLUSH_INTERVAL {
            self.write_buffer()?;
        }
        Ok(())
    }

    /// Stores a blob (deduplicated) and returns its id.
    /// Stored compressed when that pays (docs/FORMAT.md, *Compression*).
    pub fn put_blob(&mut self, bytes: &[u8]) -> Result<BlobId, WriteError> {
        let id = crate::blob_store::hash(bytes);
        let io_err = |source| WriteError::Io {
            path: self.blobs.root().to_path_buf(),
            source,
        };
        if !self.compress {
            self.blobs.put_hashed(&id, bytes).map_err(io_err)?;
            self.blob_ids.insert(id);
            return Ok(id);
        }
        if self.blob_zstd.is_none() {
            self.blob_zstd = Some((crate::zst::blob_compressor().map_err(io_err)?, Vec::new()));
        }
        let (cctx, scratch) = self.blob_zstd.as_mut().expect("made above");
        self.blobs
            .put_compressed(&id, bytes, cctx, scratch)
            .map_err(|source| WriteError::Io {
                path: self.blobs.root().to_path_buf(),
                source,
            })?;
        self.blob_ids.insert(id);
        Ok(id)
    }

    /// Places blob `id` from another archive's store here (hard link when
    /// possible), verifying its content first.
    pub fn adopt_blob(&mut self, src: &BlobStore, id: &BlobId) -> Result<CopyOutcome, WriteError> {
        if self.blob_ids.contains(id) {
            // Placed (and verified) by this writer already: a timed replay
            // adopts a kernel's code object once per launch it records.
            return Ok(CopyOutcome::AlreadyPresent);
        }
        let outcome = self.blobs.copy_from(src, id)?;
        self.blob_ids.insert(*id);
        Ok(outcome)
    }

    /// Writes buffered events to `events.ndjson` (not fsynced).
    pub fn flush(&mut self) -> Result<(), WriteError> {
        self.write_buffer()
    }

    fn write_buffer(&mut self) -> Result<(), WriteError> {
        if !self.buf.is_empty() {
            let r = match &mut self.events {
                EventsOut::File(f) => f.write_all(&self.buf),
                EventsOut::Memory(files, path) => {
                    files.append(path, &self.buf);
                    Ok(())
                }
            };
            // Whatever happened, never write these bytes twice.
            self.buf.clear();
            r.map_err(|source| WriteError::Io {
                path: self.dir.join(EVENTS_FILE),
                source,
            })?;
        }
        self.last_flush = Instant::now();
        Ok(())
    }

    /// Ends an archive that will not be finished (a replay that stopped
    /// early): writes the buffered events and leaves the manifest
    /// `complete:false` with `reason` in `incomplete` and the counts so far,
    /// so that readers report why rather than a crash.
    pub fn abandon(mut self, reason: &str) -> Result<Manifest, WriteError> {
        self.write_buffer()?;
        self.manifest.complete = false;
        self.manifest.events = self.written;
        self.manifest.blobs = self.blob_ids.len() as u64;
        self.manifest.extra.insert(
            crate::manifest::INCOMPLETE_FIELD.into(),
            Value::from(reason),
        );
        self.write_manifest()?;
        self.finished = true;
        Ok(self.manifest.clone())
    }

    /// Appends `{"op":"eof","events":N}`, makes the events durable, and marks
    /// the manifest complete. Returns the final manifest.
    pub fn finish(self) -> Result<Manifest, WriteError> {
        self.finish_with(|_| {})
    }

    /// [`ArchiveWriter::finish`], with `edit` given the final manifest
    /// (`complete:true`, the counts) before it is written: e.g. repair
    /// leaving an archive that lost events `complete:false`
    /// ([`Manifest::mark_incomplete`]).
    pub fn finish_with(mut self, edit: impl FnOnce(&mut Manifest)) -> Result<Manifest, WriteError> {
        let eof = Event {
            seq: self.next_seq,
            t: monotonic_ns(),
            tid: 0,
            api: "eof".to_string(),
            ret: 0,
            dev: 0,
            op: Op::Eof {
                events: self.written,
            },
        };
        eof.write_line(&mut self.buf);
        self.write_buffer()?;
        let compress = matches!(self.events, EventsOut::File(_)) && self.compress;
        if let EventsOut::File(f) = &self.events {
            f.sync_all().map_err(|source| WriteError::Io {
                path: self.dir.join(EVENTS_FILE),
                source,
            })?;
        }
        if compress {
            compress_events(&self.dir).map_err(|source| WriteError::Io {
                path: self.dir.join(EVENTS_ZST_FILE),
                source,
            })?;
        }
        self.manifest.complete = true;
        self.manifest.events = self.written;
        self.manifest.blobs = self.blob_ids.len() as u64;
        edit(&mut self.manifest);
        self.write_manifest()?;
        if compress {
            remove_plain_events(&self.dir).map_err(|source| WriteError::Io {
                path: self.dir.join(EVENTS_FILE),
                source,
            })?;
        }
        self.finished = true;
        Ok(self.manifest.clone())
    }
}

impl Drop for ArchiveWriter {
    fn drop(&mut self) {
        if !self.finished {
            // Best effort: keep what was appended; the manifest stays
            // complete:false, which is what tells readers the run died.
            let _ = self.write_buffer();
        }
    }
}

/// Compresses the finished, fsynced `events.ndjson` of the archive `dir`
/// into `events.ndjson.zst`: written under a temporary name, fsynced,
/// renamed into place, the directory fsynced. `events.ndjson` stays (both
/// hold the same events; readers take the plain one while it is there)
/// until [`remove_plain_events`], once the manifest is final. Returns the
/// bytes before and after.
pub fn compress_events(dir: &Path) -> io::Result<(u64, u64)> {
    let tmp = dir.join(format!(".{EVENTS_ZST_FILE}.tmp-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let sizes = crate::zst::compress_file(&dir.join(EVENTS_FILE), &tmp)?;
    let r = fs::rename(&tmp, dir.join(EVENTS_ZST_FILE));
    if r.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    r?;
    File::open(dir)?.sync_all()?;
    Ok(sizes)
}

/// Removes `events.ndjson` once `events.ndjson.zst` holds the same events
/// durably ([`compress_events`]), and makes the removal durable.
pub fn remove_plain_events(dir: &Path) -> io::Result<()> {
    fs::remove_file(dir.join(EVENTS_FILE))?;
    File::open(dir)?.sync_all()
}

/// CLOCK_MONOTONIC in nanoseconds, the clock every event `t` is on.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Dir;
    use crate::event_reader::ReadOptions;
    use crate::hex::Addr;

    fn ev(seq: u64, blob: Option<BlobId>) -> Event {
        Event {
            seq,
            t: 1000 + seq,
            tid: 1,
            api: "hipMemcpy".into(),
            ret: 0,
            dev: 0,
            op: Op::Memcpy {
                dir: Dir::D2h,
                dst: Addr(0x10),
                src: Addr(0x20),
                size: 3,
                stream: None,
                blob,
            },
        }
    }

    fn read_all(dir: &Path) -> Vec<Event> {
        crate::archive::Archive::open(dir)
            .unwrap()
            .events(ReadOptions::strict())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn finish_writes_eof_and_complete_manifest() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap.hrr");
        let extra = ManifestExtra {
            argv: vec!["./app".into(), "-n".into()],
            ..Default::default()
        };
        let mut w =
            ArchiveWriter::create(&dir, ArchiveKind::Capture, Platform::Cpu, extra).unwrap();
        assert!(
            !Manifest::read(&dir).unwrap().complete,
            "incomplete manifest exists from the start"
        );
        assert!(dir.join("blobs").is_dir() && dir.join("regions").is_dir());
        let id = w.put_blob(b"abc").unwrap();
        assert_eq!(w.put_blob(b"abc").unwrap(), id);
        w.append(&ev(0, Some(id))).unwrap();
        w.append(&ev(5, Some(id))).unwrap();
        assert_eq!(w.events_written(), 2);
        let m = w.finish().unwrap();
        assert_eq!((m.complete, m.events, m.blobs), (true, 2, 1));
        assert_eq!(Manifest::read(&dir).unwrap(), m);
        assert_eq!(m.argv, ["./app", "-n"]);
        let events = read_all(&dir);
        assert_eq!(events.len(), 3);
        assert_eq!(events[2].seq, 6, "eof takes the next seq");
        assert_eq!(events[2].op, Op::Eof { events: 2 });
    }

    #[test]
    fn drop_without_finish_flushes_and_stays_incomplete() {
        let t = tempfile::tempdir().unwrap();
        let mut w = ArchiveWriter::create(
            t.path(),
            ArchiveKind::Replay,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap();
        w.append(&ev(1, None)).unwrap();
        drop(w);
        assert_eq!(read_all(t.path()).len(), 1);
        let m = Manifest::read(t.path()).unwrap();
        assert!(!m.complete);
        assert_eq!(m.kind, ArchiveKind::Replay);
    }

    #[test]
    fn buffer_is_written_when_large_or_old() {
        let t = tempfile::tempdir().unwrap();
        let mut w = ArchiveWriter::create(
            t.path(),
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        )
        .unwrap();
        let size = || fs::metadata(t.path().join(EVENTS_FILE)).unwrap().len();
        w.append(&ev(0, None)).unwrap();
        std::thread::sleep(FLUSH_INTERVAL + Duration::from_millis(20));
        w.append(&ev(1, None)).unwrap();
        assert!(size() > 0, "an old buffer is written on the next append");
        let before = size();
        let mut seq = 2;
        while size() == before {
            w.append(&ev(seq, None)).unwrap();
            seq += 1;
            assert!(seq < 10_000, "64 KiB never triggered a write");
        }
        assert!(w.buf.len() < FLUSH_BYTES);
    }

    #[test]
    fn refuses_a_non_empty_directory() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("x"), b"").unwrap();
        let e = ArchiveWriter::create(
            t.path(),
            ArchiveKind::Capture,
            Platform::Cpu,
            ManifestExtra::default(),
        );
        assert!(matches!(e, Err(WriteError::NotEmpty { .. })));
    }
}
