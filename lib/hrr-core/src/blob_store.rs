//! `BlobStore`: content-addressed blobs under `DIR/blobs/<h2>/<h>` (DESIGN.md §4).
//!
//! - Names come only from a [`BlobId`], whose parser accepts exactly 64
//!   lowercase hex digits, so an event in a hostile archive cannot name a path
//!   outside `blobs/`. Symlinked fan-out directories or blob files are refused
//!   on read and write, and blob files are opened with `O_NOFOLLOW`.
//! - `put` hashes, skips the write when the blob exists (dedup), and otherwise
//!   writes a temporary file in the destination directory and renames it into
//!   place, so a reader never sees a partly written blob under its final name.
//!   Blobs are not fsynced one by one (a capture may write thousands); a blob
//!   torn by power loss is caught by the hash check on read.
//! - `get` verifies the BLAKE3 hash of what it read, every time: a mismatch
//!   is an error naming the file. Large blobs are memory-mapped rather than
//!   copied, which keeps replay's memory bounded by the largest blob in use.
//!   Archives are immutable once written; truncating a blob file while it is
//!   mapped is outside the contract (the mapping would fault).
//! - A blob may be stored compressed (docs/FORMAT.md, *Compression*):
//!   `blobs/<h2>/<h>.zst`, one zstd frame recording the content size, `h`
//!   the hash of the content. Reads look for `<h>` first, then `<h>.zst`,
//!   which is decoded into a buffer of the size its header declares — never
//!   more than the caller expects ([`BlobStore::get_sized`],
//!   [`BlobStore::read_into`]) or [`MAX_UNSIZED`] — and hashed like any
//!   other blob. [`BlobStore::put_compressed`] writes one;
//!   [`BlobStore::replace_with_compressed`] replaces a raw file by one (the
//!   compressed file fsynced, verified and renamed before the raw one goes:
//!   a reader finds the blob in one form or the other at every moment).
//! - A store in memory ([`BlobStore::in_memory`], see [`crate::mem_files`])
//!   keeps the same names, checks and errors without touching the disk.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::ops::Deref;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use memmap2::Mmap;

use crate::hex::BlobId;
use crate::mem_files::MemFiles;

/// Blobs at least this large are memory-mapped instead of read into a `Vec`.
pub const MMAP_THRESHOLD: u64 = 256 * 1024;

/// The most a compressed blob read without an expected size may decode
/// to (a code object, a D2H result whose size the caller does not know):
/// what a frame header may make one read allocate.
pub const MAX_UNSIZED: u64 = 4 << 30;

/// Directory name of the store inside an archive.
pub const BLOBS_DIR: &str = "blobs";

/// Distinguishes temporary files of concurrent `put`s within one process.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The blob store of one archive.
#[derive(Clone, Debug)]
pub struct BlobStore {
    root: PathBuf,
    /// `blobs/<h2>` folders already checked not to be symlinks, by first
    /// byte: replay reads a blob per copy, and a `statx` per read showed up
    /// as a fifth of the engine's per-event cost.
    dirs_checked: Arc<[AtomicBool; 256]>,
    /// Fan-out directories this store made sure of for writing (exist, not
    /// a symlink): checked once each, not per blob.
    dirs_made: Arc<[AtomicBool; 256]>,
    /// `blobs/` itself checked not to be a symlink (once: see
    /// [`BlobStore::check_root`]).
    root_checked: Arc<AtomicBool>,
    /// Where the blob files are when they are not on disk.
    mem: Option<MemFiles>,
}

/// A blob's bytes, verified against its id.
pub struct Blob {
    data: BlobData,
}

enum BlobData {
    Bytes(Vec<u8>),
    Mapped(Mmap),
    Shared(Arc<Vec<u8>>),
}

impl Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.data {
            BlobData::Bytes(v) => v,
            BlobData::Mapped(m) => m,
            BlobData::Shared(v) => v,
        }
    }
}

impl AsRef<[u8]> for Blob {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if matches!(self.data, BlobData::Mapped(_)) {
            "mapped"
        } else {
            "read"
        };
        write!(f, "Blob({} bytes, {how})", self.len())
    }
}

impl Blob {
    /// Whether the bytes are a memory map (large blob) rather than a copy.
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, BlobData::Mapped(_))
    }
}

/// A blob could not be read or stored.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("blob {id} missing: {} does not exist", path.display())]
    /// No file holds the blob.
    Missing {
        /// The blob.
        id: BlobId,
        /// Where it should be.
        path: PathBuf,
    },
    #[error("{}", path.display())]
    /// The blob's file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    #[error("{}: refusing a symlink inside the blob store", path.display())]
    /// The blob's path is a symlink.
    Symlink {
        /// The file.
        path: PathBuf,
    },
    #[error("{}: is a {kind}, not a regular file", path.display())]
    /// The blob's path is not a regular file.
    NotFile {
        /// The file.
        path: PathBuf,
        /// What it is instead (directory, FIFO, …).
        kind: &'static str,
    },
    #[error("{}: content does not match its name (hashes to {actual}); the blob is corrupt", path.display())]
    /// The blob's bytes do not hash to its id.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What they hash to.
        actual: BlobId,
    },
    #[error(transparent)]
    /// A compressed blob file could not be decoded (truncated, corrupt,
    /// larger than expected: the error names the file and why).
    Compressed(#[from] crate::zst::ZstError),
    #[error("{}: holds {len} bytes where {expected} were expected", path.display())]
    /// The blob's file is not the size the event says.
    Length {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// The size expected.
        expected: u64,
    },
}

impl BlobError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            BlobError::Missing { path, .. }
            | BlobError::Io { path, .. }
            | BlobError::Symlink { path }
            | BlobError::NotFile { path, .. }
            | BlobError::Corrupt { path, .. }
            | BlobError::Length { path, .. } => path,
            BlobError::Compressed(e) => e.path(),
        }
    }
}

/// What [`BlobStore::compact`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compaction {
    /// Raw blobs looked at.
    pub blobs: u64,
    /// Of those, stored compressed now.
    pub compressed: u64,
    /// Their bytes.
    pub raw_bytes: u64,
    /// What they take on disk now.
    pub disk_bytes: u64,
}

/// What [`BlobStore::replace_with_compressed`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replaced {
    /// The blob is stored compressed now: `raw` bytes in `packed`.
    Compressed {
        /// Its size.
        raw: u64,
        /// Its compressed file's.
        packed: u64,
    },
    /// Left raw: compression does not pay, or the raw file is not what its
    /// name says.
    Left,
    /// No raw file (compressed already, or never written).
    Absent,
    /// Asked to stop before it was done: left raw.
    Stopped,
    /// A test stopped it between two steps, as a crash would.
    Crashed,
}

/// A step of [`BlobStore::replace_with_compressed`] (tests stop there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReplaceStep {
    Compress,
    Sync,
    Verify,
    Rename,
    RemoveRaw,
}

/// Bytes read, compressed and verified at a time when a raw blob is
/// replaced: the compressor's memory, whatever the blob's size.
const PIECE: usize = 1 << 20;

/// Raw bytes compressed before a blob whose compressed form does not pay
/// so far is left raw.
const SAMPLE: u64 = 4 * PIECE as u64;

/// A writer that counts what it passes on.
struct Counted<W> {
    inner: W,
    n: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// How [`BlobStore::copy_from`] placed a blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyOutcome {
    /// The destination already held it.
    AlreadyPresent,
    /// Hard-linked from the source.
    HardLinked,
    /// Copied byte for byte.
    Copied,
}

/// The BLAKE3 id of `bytes`.
pub fn hash(bytes: &[u8]) -> BlobId {
    BlobId::of(bytes)
}

impl BlobStore {
    /// The store rooted at `blobs_dir` (normally `ARCHIVE/blobs`). Nothing is
    /// created or checked until used.
    pub fn new(blobs_dir: impl Into<PathBuf>) -> BlobStore {
        BlobStore {
            root: blobs_dir.into(),
            dirs_checked: Arc::new(std::array::from_fn(|_| AtomicBool::new(false))),
            dirs_made: Arc::new(std::array::from_fn(|_| AtomicBool::new(false))),
            root_checked: Arc::new(AtomicBool::new(false)),
            mem: None,
        }
    }

    /// The store rooted at `blobs_dir` whose files are in `files`.
    pub fn in_memory(blobs_dir: impl Into<PathBuf>, files: &MemFiles) -> BlobStore {
        BlobStore {
            mem: Some(files.clone()),
            ..BlobStore::new(blobs_dir)
        }
    }

    /// The store of the archive at `archive_dir`.
    pub fn of_archive(archive_dir: impl AsRef<Path>) -> BlobStore {
        BlobStore::new(archive_dir.as_ref().join(BLOBS_DIR))
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Refuses a store whose directory (`blobs/`) is a symlink: nothing
    /// inside an archive is followed (docs/FORMAT.md), and every blob path
    /// goes through it. Checked once while it is there; a missing store is
    /// not an error here (its blobs are then missing).
    pub fn check_root(&self) -> Result<(), BlobError> {
        if self.mem.is_some() || self.root_checked.load(Ordering::Relaxed) {
            return Ok(());
        }
        match fs::symlink_metadata(&self.root) {
            Ok(m) if m.file_type().is_symlink() => Err(BlobError::Symlink {
                path: self.root.clone(),
            }),
            Ok(_) => {
                self.root_checked.store(true, Ordering::Relaxed);
                Ok(())
            }
            Err(_) => Ok(()),
        }
    }

    /// `blobs/<h2>/<h>`. Safe by construction: both parts are hex digits.
    pub fn path(&self, id: &BlobId) -> PathBuf {
        let hex = id.to_hex();
        self.root.join(&hex[..2]).join(hex)
    }

    /// Whether a regular (non-symlink) file exists under the blob's name. Does
    /// not verify the content.
    pub fn contains(&self, id: &BlobId) -> bool {
        if let Some(mem) = &self.mem {
            return mem.contains(&self.path(id)) || mem.contains(&self.zst_path(id));
        }
        let is_file = |p: PathBuf| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file());
        is_file(self.path(id)) || is_file(self.zst_path(id))
    }

    /// `blobs/<h2>/<h>.zst`: where the blob is when it is stored compressed.
    pub fn zst_path(&self, id: &BlobId) -> PathBuf {
        let mut p = self.path(id).into_os_string();
        p.push(crate::zst::SUFFIX);
        PathBuf::from(p)
    }

    /// Stores `raw` (blob `id`, which the caller vouches for) compressed
    /// when that pays ([`crate::zst::encode_blob`] with `cctx`), raw
    /// otherwise; a blob already present in either form is not rewritten.
    /// The compressed file is decoded again and hashed before it takes
    /// the name: a file is what its name says. Returns whether it was
    /// stored compressed.
    pub fn put_compressed(
        &self,
        id: &BlobId,
        raw: &[u8],
        cctx: &mut zstd::bulk::Compressor<'static>,
        scratch: &mut Vec<u8>,
    ) -> io::Result<bool> {
        if self.contains(id) {
            return Ok(false);
        }
        if crate::zst::encode_blob(cctx, raw, scratch).is_none() {
            self.put_hashed(id, raw)?;
            return Ok(false);
        }
        self.write_compressed(id, raw.len(), scratch)?;
        Ok(true)
    }

    /// Stores `bytes` and returns their id; a blob already present is not rewritten.
    pub fn put(&self, bytes: &[u8]) -> io::Result<BlobId> {
        let id = hash(bytes);
        self.put_hashed(&id, bytes)?;
        Ok(id)
    }

    /// Stores bytes whose id the caller already computed (and vouches for).
    pub fn put_hashed(&self, id: &BlobId, bytes: &[u8]) -> io::Result<()> {
        let path = self.path(id);
        if let Some(mem) = &self.mem {
            if !mem.contains(&path) {
                mem.write(path, bytes);
            }
            return Ok(());
        }
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_file() => return Ok(()),
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} exists and is not a regular file",
                    path.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        if fs::symlink_metadata(self.zst_path(id)).is_ok_and(|m| m.file_type().is_file()) {
            return Ok(());
        }
        self.write_through_staging(id, bytes, &path)
    }

    /// Writes `bytes` to a fresh temporary beside blob `id` and renames it
    /// to `path`; the temporary is removed on failure. A concurrent writer
    /// of the same blob may win the rename; the content is identical by
    /// construction, so either result is right.
    fn write_through_staging(&self, id: &BlobId, bytes: &[u8], path: &Path) -> io::Result<()> {
        let tmp = self.staging_names(id)?.0;
        let result = (|| {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(crate::safe_fs::FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&tmp)?;
            f.write_all(bytes)?;
            drop(f);
            fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// The names a new blob is written under: a temporary beside it, unique
    /// to this process and call, and its final path. Makes its fan-out
    /// directory (and refuses a symlink there) the first time only.
    pub fn staging_names(&self, id: &BlobId) -> io::Result<(PathBuf, PathBuf)> {
        let (tmp, path) = self.names_in_fan_out(id);
        let made = &self.dirs_made[usize::from(id.0[0])];
        if !made.load(Ordering::Relaxed) {
            ensure_real_dir(path.parent().expect("blob path has a parent"))?;
            made.store(true, Ordering::Relaxed);
        }
        Ok((tmp, path))
    }

    /// [`BlobStore::staging_names`] without making the fan-out directory:
    /// for a writer that makes it itself when it writes (one level, mode
    /// 0700, never through a link), away from the thread that names the
    /// blob.
    pub fn names_in_fan_out(&self, id: &BlobId) -> (PathBuf, PathBuf) {
        let path = self.path(id);
        let tmp = path.parent().expect("blob path has a parent").join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        (tmp, path)
    }

    /// Reads a blob and verifies its hash. A compressed one may decode to
    /// at most [`MAX_UNSIZED`] bytes; use [`BlobStore::get_sized`] where the
    /// events say its size.
    pub fn get(&self, id: &BlobId) -> Result<Blob, BlobError> {
        self.get_limited(id, None)
    }

    /// [`BlobStore::get`] of a blob the events say is `len` bytes: a
    /// compressed one whose header declares more is refused before it is
    /// decoded (a bomb costs nothing). A blob of another size is returned
    /// as it is, for the caller's own check and message.
    pub fn get_sized(&self, id: &BlobId, len: u64) -> Result<Blob, BlobError> {
        self.get_limited(id, Some(len))
    }

    /// Reads the raw file, or else the compressed one (decoded to at most
    /// `len`, or [`MAX_UNSIZED`]), and verifies the hash.
    fn get_limited(&self, id: &BlobId, len: Option<u64>) -> Result<Blob, BlobError> {
        let path = self.path(id);
        if let Some(mem) = &self.mem {
            let bytes = match mem_blob(mem, id, &path) {
                Err(BlobError::Missing { .. }) if mem.contains(&self.zst_path(id)) => {
                    let zpath = self.zst_path(id);
                    let bytes = mem.read(&zpath).expect("contains");
                    let limit = len.unwrap_or(MAX_UNSIZED);
                    let v = crate::zst::decode_bytes(&bytes, &zpath, limit)?;
                    let actual = hash(&v);
                    if actual != *id {
                        return Err(BlobError::Corrupt {
                            path: zpath,
                            actual,
                        });
                    }
                    return Ok(Blob {
                        data: BlobData::Bytes(v),
                    });
                }
                r => r?,
            };
            let actual = hash(&bytes);
            if actual != *id {
                return Err(BlobError::Corrupt { path, actual });
            }
            return Ok(Blob {
                data: BlobData::Shared(bytes),
            });
        }
        let (file, len) = match self.open_checked(id, &path) {
            Err(BlobError::Missing { .. }) if self.mem.is_none() => {
                let zpath = self.zst_path(id);
                let Ok((file, _)) = self.open_checked(id, &zpath) else {
                    // Neither form: the raw name is what is missing (the
                    // compressed form's own error if it is there but bad).
                    return match self.open_checked(id, &zpath) {
                        Err(BlobError::Missing { .. }) => Err(BlobError::Missing { id: *id, path }),
                        Err(e) => Err(e),
                        Ok(_) => unreachable!("opened above"),
                    };
                };
                let v = crate::zst::decode_blob(&file, &zpath, len.unwrap_or(MAX_UNSIZED))?;
                let actual = hash(&v);
                if actual != *id {
                    return Err(BlobError::Corrupt {
                        path: zpath,
                        actual,
                    });
                }
                return Ok(Blob {
                    data: BlobData::Bytes(v),
                });
            }
            r => r?,
        };
        let io_err = |source| BlobError::Io {
            path: path.clone(),
            source,
        };
        let blob = if len >= MMAP_THRESHOLD {
            // SAFETY: the file is a regular file opened read-only; archives are
            // immutable once written (see module docs), so the mapping is not
            // resized under us.
            let map = unsafe { Mmap::map(&file) }.map_err(io_err)?;
            Blob {
                data: BlobData::Mapped(map),
            }
        } else {
            // The length is known: read_to_end would stat the file again.
            let mut v = vec![0u8; len as usize];
            (&file).read_exact(&mut v).map_err(io_err)?;
            Blob {
                data: BlobData::Bytes(v),
            }
        };
        let actual = hash(&blob);
        if actual != *id {
            return Err(BlobError::Corrupt { path, actual });
        }
        Ok(blob)
    }

    /// Reads blob `id` into `dst`, which must be exactly its size, and
    /// verifies its hash. For destinations a device reaches by DMA (replay's
    /// pinned buffers): a mapping would have to be copied there anyway.
    pub fn read_into(&self, id: &BlobId, dst: &mut [u8]) -> Result<(), BlobError> {
        let path = self.path(id);
        let expected = dst.len() as u64;
        let length = |len: u64| BlobError::Length {
            path: path.clone(),
            len,
            expected,
        };
        // Decoded (and hashed) into a buffer of its declared size, which
        // must be the destination's.
        let compressed = |dst: &mut [u8]| {
            let blob = self.get_sized(id, dst.len() as u64)?;
            if blob.len() != dst.len() {
                return Err(length(blob.len() as u64));
            }
            dst.copy_from_slice(&blob);
            Ok(())
        };
        if let Some(mem) = &self.mem {
            if self.is_compressed(id) {
                return compressed(dst);
            }
            let bytes = mem_blob(mem, id, &path)?;
            if bytes.len() != dst.len() {
                return Err(length(bytes.len() as u64));
            }
            dst.copy_from_slice(&bytes);
        } else {
            // The raw file first, then the compressed one: a blob being
            // replaced has `<h>.zst` before its raw file goes, so a miss
            // here finds it there.
            let (file, len) = match self.open_checked(id, &path) {
                Err(BlobError::Missing { .. }) => return compressed(dst),
                r => r?,
            };
            if len != dst.len() as u64 {
                return Err(length(len));
            }
            read_exact_at_parallel(&file, dst).map_err(|source| BlobError::Io {
                path: path.clone(),
                source,
            })?;
        }
        let actual = hash(dst);
        if actual != *id {
            return Err(BlobError::Corrupt { path, actual });
        }
        Ok(())
    }

    /// Compresses every raw blob of the store that compression pays for
    /// ([`BlobStore::put_compressed`]: the compressed file decoded and
    /// hashed before it takes its name), then removes the raw file; on
    /// `threads` threads. A blob that does not read back as its name (it
    /// is corrupt) is left as it is, for the checks that report it. Either
    /// form is a whole blob at every moment: the raw file goes only once
    /// the compressed one is in place.
    pub fn compact(&self, threads: usize) -> io::Result<Compaction> {
        let ids = self.list()?;
        let next = AtomicU64::new(0);
        let total = std::sync::Mutex::new(Compaction::default());
        let work = || -> io::Result<()> {
            let mut cctx = crate::zst::blob_compressor()?;
            let mut scratch = Vec::new();
            let mut mine = Compaction::default();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(id) = ids.get(i) else { break };
                if self.is_compressed(id) {
                    continue;
                }
                let Ok(blob) = self.get(id) else { continue };
                mine.blobs += 1;
                mine.raw_bytes += blob.len() as u64;
                if self.put_compressed_over(id, &blob, &mut cctx, &mut scratch)? {
                    mine.compressed += 1;
                    mine.disk_bytes += scratch.len() as u64;
                } else {
                    mine.disk_bytes += blob.len() as u64;
                }
            }
            let mut t = total
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            t.blobs += mine.blobs;
            t.compressed += mine.compressed;
            t.raw_bytes += mine.raw_bytes;
            t.disk_bytes += mine.disk_bytes;
            Ok(())
        };
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads.max(1)).map(|_| s.spawn(work)).collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })?;
        Ok(total
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Replaces the raw file of blob `id` by its compressed form
    /// `<h>.zst` (one frame at `level`, content size in its header) when
    /// that pays: the raw file is compressed a piece at a time into a
    /// temporary beside it (memory: the encoder's window, whatever the
    /// blob's size), the temporary fsynced, decoded again and hashed, and
    /// renamed to `<h>.zst` only when it is the blob; the raw file is
    /// removed only then. Every step leaves the blob readable: before the
    /// rename the raw file is untouched (a temporary is ignored by
    /// readers), after it both forms hold the blob (readers take the raw
    /// one; [`BlobStore::list`] counts it once), and the raw file goes
    /// last. `stop` is asked between pieces: when it says so the
    /// temporary is removed and the blob stays raw
    /// ([`Replaced::Stopped`]). A raw file that is not what its name says
    /// is left as it is, for the check that reports it.
    pub fn replace_with_compressed(
        &self,
        id: &BlobId,
        level: i32,
        stop: &dyn Fn() -> bool,
    ) -> io::Result<Replaced> {
        self.replace_steps(id, level, stop, &mut |_| true)
    }

    /// [`BlobStore::replace_with_compressed`], `at(step)` asked as each
    /// step begins: `false` leaves everything as it is at that point, as a
    /// crash there would (tests).
    fn replace_steps(
        &self,
        id: &BlobId,
        level: i32,
        stop: &dyn Fn() -> bool,
        at: &mut dyn FnMut(ReplaceStep) -> bool,
    ) -> io::Result<Replaced> {
        use std::os::unix::fs::FileExt;
        if self.mem.is_some() {
            // Memory stores compress whole (their blobs are small).
            let Ok(blob) = self.get(id) else {
                return Ok(Replaced::Left);
            };
            let mut cctx = zstd::bulk::Compressor::new(level)?;
            cctx.include_contentsize(true)?;
            let mut scratch = Vec::new();
            return Ok(
                if self.put_compressed_over(id, &blob, &mut cctx, &mut scratch)? {
                    Replaced::Compressed {
                        raw: blob.len() as u64,
                        packed: scratch.len() as u64,
                    }
                } else {
                    Replaced::Left
                },
            );
        }
        let path = self.path(id);
        let (raw, len) = match self.open_checked(id, &path) {
            Ok(f) => f,
            // Replaced already, or never written: nothing to do.
            Err(BlobError::Missing { .. }) => return Ok(Replaced::Absent),
            Err(e) => return Err(io::Error::other(e.to_string())),
        };
        if len < crate::zst::MIN_BLOB as u64 {
            return Ok(Replaced::Left);
        }
        let tmp = self.staging_names(id)?.0;
        let zpath = self.zst_path(id);
        let result = (|| -> io::Result<Replaced> {
            if !at(ReplaceStep::Compress) {
                return Ok(Replaced::Crashed);
            }
            let out = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(crate::safe_fs::FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&tmp)?;
            // Past this many compressed bytes it does not pay.
            let most = len - len / crate::zst::MIN_SAVING_DIVISOR as u64;
            let mut enc = zstd::stream::write::Encoder::new(
                Counted {
                    inner: io::BufWriter::with_capacity(PIECE, &out),
                    n: 0,
                },
                level,
            )?;
            enc.include_contentsize(true)?;
            enc.include_checksum(false)?;
            enc.set_pledged_src_size(Some(len))?;
            let mut piece = vec![0u8; PIECE.min(len as usize)];
            let mut at_byte = 0u64;
            while at_byte < len {
                if stop() {
                    return Ok(Replaced::Stopped);
                }
                let n = piece.len().min((len - at_byte) as usize);
                raw.read_exact_at(&mut piece[..n], at_byte)?;
                enc.write_all(&piece[..n])?;
                at_byte += n as u64;
                // Bytes that do not compress (weights, already compressed
                // data) are told from the first pieces: the encoder's
                // output lags its input by a block at most.
                let written = enc.get_ref().n;
                if written > most
                    || at_byte >= SAMPLE
                        && written > at_byte - at_byte / crate::zst::MIN_SAVING_DIVISOR as u64
                {
                    return Ok(Replaced::Left);
                }
            }
            let mut counted = enc.finish()?;
            counted.inner.flush()?;
            let packed = counted.n;
            drop(counted);
            if !crate::zst::worth_it(len as usize, packed as usize) {
                return Ok(Replaced::Left);
            }
            if !at(ReplaceStep::Sync) {
                return Ok(Replaced::Crashed);
            }
            // Durable before it takes the name: the raw file goes after.
            out.sync_data()?;
            if !at(ReplaceStep::Verify) {
                return Ok(Replaced::Crashed);
            }
            // A file is what its name says: decoded as written, hashed.
            let (back, _) = crate::safe_fs::open_regular(&tmp, crate::safe_fs::Follow::No)
                .map_err(|e| io::Error::other(e.to_string()))?;
            if crate::zst::declared_size(&back, &tmp, len).ok() != Some(len) {
                return Ok(Replaced::Left);
            }
            let mut d = crate::zst::Decoder::new(io::BufReader::with_capacity(PIECE, back), len)?;
            let mut hasher = blake3::Hasher::new();
            let copied = io::copy(&mut d, &mut hasher);
            if copied.ok() != Some(len) || BlobId(*hasher.finalize().as_bytes()) != *id {
                // The raw file is not its name (or changed): left for
                // the check that reports it.
                return Ok(Replaced::Left);
            }
            if !at(ReplaceStep::Rename) {
                return Ok(Replaced::Crashed);
            }
            fs::rename(&tmp, &zpath)?;
            if !at(ReplaceStep::RemoveRaw) {
                return Ok(Replaced::Crashed);
            }
            fs::remove_file(&path)?;
            Ok(Replaced::Compressed { raw: len, packed })
        })();
        match result {
            Ok(Replaced::Crashed) => Ok(Replaced::Crashed),
            Ok(Replaced::Compressed { .. }) => result,
            other => {
                let _ = fs::remove_file(&tmp);
                other
            }
        }
    }

    /// [`BlobStore::put_compressed`] of a blob stored raw: the compressed
    /// file written beside it, then the raw one removed. Whether it was.
    fn put_compressed_over(
        &self,
        id: &BlobId,
        raw: &[u8],
        cctx: &mut zstd::bulk::Compressor<'static>,
        scratch: &mut Vec<u8>,
    ) -> io::Result<bool> {
        if crate::zst::encode_blob(cctx, raw, scratch).is_none() {
            return Ok(false);
        }
        self.write_compressed(id, raw.len(), scratch)?;
        if let Some(mem) = &self.mem {
            mem.remove(&self.path(id));
            return Ok(true);
        }
        fs::remove_file(self.path(id))?;
        Ok(true)
    }

    /// Writes `packed`, the compressed form of blob `id` (`len` bytes), to
    /// `<h>.zst` through a temporary, after decoding and hashing it.
    fn write_compressed(&self, id: &BlobId, len: usize, packed: &[u8]) -> io::Result<()> {
        let back = zstd::bulk::decompress(packed, len)?;
        if hash(&back) != *id {
            return Err(io::Error::other(format!(
                "blob {id}: its compressed form does not decode to it"
            )));
        }
        let path = self.zst_path(id);
        if let Some(mem) = &self.mem {
            mem.write(path, packed.to_vec());
            return Ok(());
        }
        self.write_through_staging(id, packed, &path)
    }

    /// Whether the blob is stored only in its compressed form.
    fn is_compressed(&self, id: &BlobId) -> bool {
        if let Some(mem) = &self.mem {
            return !mem.contains(&self.path(id)) && mem.contains(&self.zst_path(id));
        }
        fs::symlink_metadata(self.path(id)).is_err()
            && fs::symlink_metadata(self.zst_path(id)).is_ok()
    }

    /// Size in bytes of a stored blob (a compressed one's content size, as
    /// its frame header declares it), without reading or verifying it.
    pub fn size(&self, id: &BlobId) -> Result<u64, BlobError> {
        let path = self.path(id);
        let zpath = self.zst_path(id);
        if let Some(mem) = &self.mem {
            if self.is_compressed(id) {
                let bytes = mem_blob(mem, id, &zpath)?;
                let head = &bytes[..bytes.len().min(crate::zst::HEADER_MAX)];
                return crate::zst::content_size(head, &zpath)?
                    .ok_or(crate::zst::ZstError::NoContentSize { path: zpath }.into());
            }
            return Ok(mem_blob(mem, id, &path)?.len() as u64);
        }
        // Raw, then compressed (see `read_into`).
        match self.open_checked(id, &path) {
            Err(BlobError::Missing { .. }) => {}
            r => return Ok(r?.1),
        }
        match self.open_checked(id, &zpath) {
            Ok((file, _)) => Ok(crate::zst::declared_size(&file, &zpath, u64::MAX)?),
            Err(BlobError::Missing { .. }) => Err(BlobError::Missing { id: *id, path }),
            Err(e) => Err(e),
        }
    }

    /// Places blob `id` of `src` into this store after verifying it:
    /// a hard link when both stores share a filesystem, a copy otherwise.
    pub fn copy_from(&self, src: &BlobStore, id: &BlobId) -> Result<CopyOutcome, BlobError> {
        if self.contains(id) {
            return Ok(CopyOutcome::AlreadyPresent);
        }
        let blob = src.get(id)?;
        let dst = self.path(id);
        if self.mem.is_some() || src.mem.is_some() {
            // No link between memory and disk, nor within memory.
            self.put_hashed(id, &blob)
                .map_err(|source| BlobError::Io { path: dst, source })?;
            return Ok(CopyOutcome::Copied);
        }
        let dir = dst.parent().expect("blob path has a parent");
        ensure_real_dir(dir).map_err(|source| BlobError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        // The source's file as it is: raw or compressed.
        let (from, dst) = if src.is_compressed(id) {
            (src.zst_path(id), self.zst_path(id))
        } else {
            (src.path(id), dst)
        };
        match fs::hard_link(from, &dst) {
            Ok(()) => Ok(CopyOutcome::HardLinked),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(CopyOutcome::AlreadyPresent),
            Err(_) => {
                self.put_hashed(id, &blob)
                    .map_err(|source| BlobError::Io { path: dst, source })?;
                Ok(CopyOutcome::Copied)
            }
        }
    }

    /// Ids of every blob file present (temporary files and foreign names are
    /// skipped), unsorted. Does not verify contents.
    pub fn list(&self) -> io::Result<Vec<BlobId>> {
        let mut out = Vec::new();
        if let Some(mem) = &self.mem {
            for fan in 0..=255u8 {
                let dir = self.root.join(format!("{fan:02x}"));
                // Only a name in its own fan-out directory is a blob.
                out.extend(
                    mem.list(&dir)
                        .iter()
                        .filter_map(|p| p.file_name()?.to_str().and_then(blob_name))
                        .filter(|id| id.0[0] == fan),
                );
            }
            out.sort_unstable();
            out.dedup();
            return Ok(out);
        }
        self.check_root()
            .map_err(|e| io::Error::other(e.to_string()))?;
        let top = match fs::read_dir(&self.root) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for fan in top {
            let fan = fan?;
            if !fan.file_type()?.is_dir() {
                continue;
            }
            for entry in fs::read_dir(fan.path())? {
                let entry = entry?;
                if !entry.file_type()?.is_file() {
                    continue;
                }
                // Only a name in its own fan-out directory is a blob.
                let name = entry.file_name();
                if let Some(id) = name.to_str().and_then(blob_name)
                    && name.to_str().map(|n| &n[..2]) == fan.file_name().to_str()
                {
                    out.push(id);
                }
            }
        }
        // A blob in both forms (a writer compressing it after a crash left
        // the raw one) is one blob.
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Opens a blob file refusing symlinks at the fan-out directory and the file.
    /// Opens a blob file refusing symlinks; returns it with its length.
    fn open_checked(&self, id: &BlobId, path: &Path) -> Result<(File, u64), BlobError> {
        self.check_root()?;
        let dir = path.parent().expect("blob path has a parent");
        let checked = &self.dirs_checked[usize::from(id.0[0])];
        if !checked.load(Ordering::Relaxed) {
            match fs::symlink_metadata(dir) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(BlobError::Symlink {
                        path: dir.to_path_buf(),
                    });
                }
                Ok(_) => checked.store(true, Ordering::Relaxed),
                Err(_) => {}
            }
        }
        let file = OpenOptions::new()
            .read(true)
            // O_NONBLOCK: a FIFO planted as a blob must not block the open
            // (it is then refused as not a regular file).
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => BlobError::Missing {
                    id: *id,
                    path: path.to_path_buf(),
                },
                // O_NOFOLLOW on a symlink fails with ELOOP.
                _ if e.raw_os_error() == Some(libc::ELOOP) => BlobError::Symlink {
                    path: path.to_path_buf(),
                },
                _ => BlobError::Io {
                    path: path.to_path_buf(),
                    source: e,
                },
            })?;
        let meta = file.metadata().map_err(|source| BlobError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_file() {
            return Err(BlobError::NotFile {
                path: path.to_path_buf(),
                kind: crate::safe_fs::kind_name(&meta),
            });
        }
        Ok((file, meta.len()))
    }
}

/// The blob a file name in the store names: `<h>` or `<h>.zst`.
fn blob_name(name: &str) -> Option<BlobId> {
    BlobId::parse(name.strip_suffix(crate::zst::SUFFIX).unwrap_or(name))
}

/// Blob `id` of a store in memory, at `path`, unverified.
fn mem_blob(mem: &MemFiles, id: &BlobId, path: &Path) -> Result<Arc<Vec<u8>>, BlobError> {
    mem.read(path).ok_or_else(|| BlobError::Missing {
        id: *id,
        path: path.to_path_buf(),
    })
}

/// Fills `dst` from the start of `file`, large reads split over threads: one
/// thread copies from the page cache at a few GB/s, well below a GPU link.
fn read_exact_at_parallel(file: &File, dst: &mut [u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    const PARALLEL_FROM: usize = 8 << 20;
    if dst.len() < PARALLEL_FROM {
        return file.read_exact_at(dst, 0);
    }
    let threads = crate::cores().min(8);
    if threads == 1 {
        return file.read_exact_at(dst, 0);
    }
    let chunk = dst.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = dst
            .chunks_mut(chunk)
            .enumerate()
            .map(|(i, part)| s.spawn(move || file.read_exact_at(part, (i * chunk) as u64)))
            .collect();
        parts
            .into_iter()
            .try_for_each(|p| p.join().expect("blob reader thread panicked"))
    })
}

/// Creates `dir` (and parents, `0700`) and refuses it if it is a symlink,
/// or if its parent (the store's `blobs/`) is one: nothing is created
/// through a link.
fn ensure_real_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(root) = dir.parent()
        && fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err(io::Error::other(format!(
            "{}: refusing a symlink inside the blob store",
            root.display()
        )));
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(crate::safe_fs::DIR_MODE)
        .create(dir)?;
    if fs::symlink_metadata(dir)?.file_type().is_symlink() {
        return Err(io::Error::other(format!(
            "{}: refusing a symlink inside the blob store",
            dir.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_in_memory_verifies_what_it_reads_as_on_disk() {
        let files = MemFiles::new();
        let s = BlobStore::in_memory("a/blobs", &files);
        let id = s.put(b"hello").unwrap();
        assert!(s.contains(&id));
        assert_eq!(&*s.get(&id).unwrap(), b"hello");
        assert_eq!(s.size(&id).unwrap(), 5);
        let mut five = [0u8; 5];
        s.read_into(&id, &mut five).unwrap();
        assert_eq!(&five, b"hello");
        assert!(matches!(
            s.read_into(&id, &mut [0u8; 4]),
            Err(BlobError::Length {
                len: 5,
                expected: 4,
                ..
            })
        ));
        assert_eq!(s.list().unwrap(), [id]);
        // A blob under a name its bytes do not hash to.
        files.write(s.path(&id), b"jello".to_vec());
        assert!(matches!(s.get(&id), Err(BlobError::Corrupt { .. })));
        assert!(matches!(
            s.read_into(&id, &mut five),
            Err(BlobError::Corrupt { .. })
        ));
        let absent = hash(b"absent");
        let e = s.get(&absent).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "blob {absent} missing: a/blobs/{}/{absent} does not exist",
                &absent.to_hex()[..2]
            )
        );
        // Between memory and disk, both ways: copied, verified.
        let (_t, disk) = store();
        let good = s.put(b"good").unwrap();
        assert_eq!(disk.copy_from(&s, &good).unwrap(), CopyOutcome::Copied);
        assert_eq!(&*disk.get(&good).unwrap(), b"good");
        assert!(matches!(
            disk.copy_from(&s, &id),
            Err(BlobError::Corrupt { .. })
        ));
        let back = BlobStore::in_memory("b/blobs", &files);
        assert_eq!(back.copy_from(&disk, &good).unwrap(), CopyOutcome::Copied);
        assert_eq!(
            back.copy_from(&disk, &good).unwrap(),
            CopyOutcome::AlreadyPresent
        );
        assert_eq!(&*back.get(&good).unwrap(), b"good");
    }

    fn store() -> (tempfile::TempDir, BlobStore) {
        let t = tempfile::tempdir().unwrap();
        let s = BlobStore::of_archive(t.path());
        (t, s)
    }

    #[test]
    fn put_get_dedup() {
        let (_t, s) = store();
        let id = s.put(b"hello").unwrap();
        assert_eq!(id, BlobId::of(b"hello"));
        let hex = id.to_hex();
        assert!(s.path(&id).ends_with(format!("blobs/{}/{hex}", &hex[..2])));
        assert_eq!(&*s.get(&id).unwrap(), b"hello");
        let before = fs::metadata(s.path(&id)).unwrap().modified().unwrap();
        assert_eq!(s.put(b"hello").unwrap(), id);
        assert_eq!(
            fs::metadata(s.path(&id)).unwrap().modified().unwrap(),
            before,
            "not rewritten"
        );
        assert_eq!(s.list().unwrap(), vec![id]);
        assert_eq!(s.size(&id).unwrap(), 5);
        assert!(s.contains(&id));
    }

    #[test]
    fn large_blobs_are_mapped_and_checked() {
        let (_t, s) = store();
        let big: Vec<u8> = (0..MMAP_THRESHOLD as usize + 7)
            .map(|i| (i * 31) as u8)
            .collect();
        let id = s.put(&big).unwrap();
        let b = s.get(&id).unwrap();
        assert!(b.is_mapped());
        assert_eq!(&*b, &big[..]);
    }

    #[test]
    fn read_into_fills_checks_length_and_hash() {
        let (_t, s) = store();
        // Past the parallel threshold, and not a multiple of any thread count.
        let big: Vec<u8> = (0..(9 << 20) + 13)
            .map(|i| ((i * 131) >> 3) as u8)
            .collect();
        let id = s.put(&big).unwrap();
        let mut dst = vec![0u8; big.len()];
        s.read_into(&id, &mut dst).unwrap();
        assert!(dst == big, "every chunk landed at its offset");

        let mut short = vec![0u8; big.len() - 1];
        let e = s.read_into(&id, &mut short).unwrap_err();
        assert!(matches!(e, BlobError::Length { .. }), "{e}");

        let mut flipped = big.clone();
        flipped[(5 << 20) + 1] ^= 1;
        fs::write(s.path(&id), &flipped).unwrap();
        let e = s.read_into(&id, &mut dst).unwrap_err();
        assert!(matches!(e, BlobError::Corrupt { .. }), "{e}");
    }

    #[test]
    fn corruption_is_an_error_naming_the_file() {
        let (_t, s) = store();
        let id = s.put(b"payload").unwrap();
        fs::write(s.path(&id), b"paylOad").unwrap();
        let e = s.get(&id).unwrap_err();
        assert!(matches!(e, BlobError::Corrupt { .. }));
        assert!(e.to_string().contains(&id.to_hex()), "{e}");
    }

    #[test]
    fn missing_is_distinct() {
        let (_t, s) = store();
        let e = s.get(&BlobId::of(b"nothing")).unwrap_err();
        assert!(matches!(e, BlobError::Missing { .. }), "{e}");
    }

    #[test]
    fn symlinks_are_refused() {
        let (t, s) = store();
        let outside = t.path().join("secret");
        fs::write(&outside, b"secret").unwrap();
        let id = BlobId::of(b"secret");
        fs::create_dir_all(s.path(&id).parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&outside, s.path(&id)).unwrap();
        assert!(matches!(s.get(&id), Err(BlobError::Symlink { .. })));
        assert!(!s.contains(&id));

        let id2 = BlobId::of(b"other");
        let fan = s.path(&id2).parent().unwrap().to_path_buf();
        std::os::unix::fs::symlink(t.path(), &fan).unwrap();
        assert!(matches!(s.get(&id2), Err(BlobError::Symlink { .. })));
        assert!(
            s.put(b"other").is_err(),
            "never writes through a symlinked fan-out dir"
        );
    }

    #[test]
    fn a_symlinked_store_directory_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let real = BlobStore::new(outside.path().join("blobs"));
        let id = real.put(b"elsewhere").unwrap();
        let root = t.path().join(BLOBS_DIR);
        std::os::unix::fs::symlink(outside.path().join("blobs"), &root).unwrap();
        let s = BlobStore::new(&root);
        let refused = format!(
            "{}: refusing a symlink inside the blob store",
            root.display()
        );
        assert_eq!(s.check_root().unwrap_err().to_string(), refused);
        assert_eq!(s.get(&id).unwrap_err().to_string(), refused);
        assert!(s.size(&id).is_err());
        assert!(s.list().unwrap_err().to_string().contains(&refused));
        let e = s.put(b"new").unwrap_err();
        assert!(e.to_string().contains(&refused), "{e}");
        assert!(
            !real.contains(&BlobId::of(b"new")),
            "nothing written through it"
        );
        // A blob that is not a regular file says what it is.
        let s = BlobStore::new(t.path().join("real"));
        let id = BlobId::of(b"dir");
        fs::create_dir_all(s.path(&id)).unwrap();
        assert_eq!(
            s.get(&id).unwrap_err().to_string(),
            format!(
                "{}: is a directory, not a regular file",
                s.path(&id).display()
            )
        );
    }

    /// Bytes that compress (floats of a smooth signal) but are not trivial.
    fn compressible(n: usize) -> Vec<u8> {
        (0..n / 4)
            .flat_map(|i| {
                (((i % 5000) as f32 * 0.01).sin() * 100.0)
                    .round()
                    .to_le_bytes()
            })
            .collect()
    }

    #[test]
    fn a_raw_blob_is_replaced_by_its_compressed_form() {
        let (_t, s) = store();
        // Several pieces, not a multiple of one.
        let raw = compressible(3 * PIECE + 4100);
        let id = s.put(&raw).unwrap();
        let r = s.replace_with_compressed(&id, 1, &|| false).unwrap();
        let Replaced::Compressed { raw: n, packed } = r else {
            panic!("{r:?}")
        };
        assert_eq!(n, raw.len() as u64);
        assert_eq!(fs::metadata(s.zst_path(&id)).unwrap().len(), packed);
        assert!(!s.path(&id).exists());
        assert_eq!(&*s.get(&id).unwrap(), &raw[..]);
        assert_eq!(s.size(&id).unwrap(), raw.len() as u64);
        // Twice: nothing to do; no temporary left behind.
        assert_eq!(
            s.replace_with_compressed(&id, 1, &|| false).unwrap(),
            Replaced::Absent
        );
        let fan = s.path(&id).parent().unwrap().to_path_buf();
        assert_eq!(fs::read_dir(&fan).unwrap().count(), 1);
        // Incompressible, tiny, stopped: raw, and no temporary.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 56) as u8
            })
            .collect();
        for (bytes, stop) in [
            (&noise[..], false),
            (&[5u8; 100][..], false),
            (&raw[..9000], true),
        ] {
            let id = s.put(bytes).unwrap();
            let want = if stop {
                Replaced::Stopped
            } else {
                Replaced::Left
            };
            assert_eq!(s.replace_with_compressed(&id, 1, &|| stop).unwrap(), want);
            assert!(s.path(&id).exists() && !s.zst_path(&id).exists());
            let fan = s.path(&id).parent().unwrap().to_path_buf();
            assert!(
                fs::read_dir(&fan).unwrap().all(|e| !e
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".tmp")),
                "temporary removed"
            );
        }
    }

    #[test]
    fn a_raw_file_that_is_not_its_name_is_left_for_the_check() {
        let (_t, s) = store();
        let raw = compressible(100_000);
        let id = s.put(&raw).unwrap();
        let mut bad = raw.clone();
        bad[5000] ^= 1;
        fs::write(s.path(&id), &bad).unwrap();
        assert_eq!(
            s.replace_with_compressed(&id, 1, &|| false).unwrap(),
            Replaced::Left
        );
        assert!(!s.zst_path(&id).exists());
        assert!(matches!(s.get(&id), Err(BlobError::Corrupt { .. })));
    }

    #[test]
    fn a_crash_between_any_two_steps_leaves_the_blob_readable() {
        let steps = [
            ReplaceStep::Compress,
            ReplaceStep::Sync,
            ReplaceStep::Verify,
            ReplaceStep::Rename,
            ReplaceStep::RemoveRaw,
        ];
        for crash in steps {
            let (_t, s) = store();
            let raw = compressible(2 * PIECE + 77);
            let id = s.put(&raw).unwrap();
            let r = s
                .replace_steps(&id, 1, &|| false, &mut |step| step != crash)
                .unwrap();
            assert_eq!(r, Replaced::Crashed, "{crash:?}");
            // Every reader finds the blob, whole, once.
            assert_eq!(&*s.get(&id).unwrap(), &raw[..], "{crash:?}");
            assert_eq!(&*s.get_sized(&id, raw.len() as u64).unwrap(), &raw[..]);
            let mut into = vec![0u8; raw.len()];
            s.read_into(&id, &mut into).unwrap();
            assert!(into == raw, "{crash:?}");
            assert_eq!(s.size(&id).unwrap(), raw.len() as u64);
            assert!(s.contains(&id));
            assert_eq!(s.list().unwrap(), [id], "{crash:?}");
            // hrr-cap's compaction finishes it: one form, compressed.
            let c = s.compact(2).unwrap();
            assert_eq!((c.blobs, c.compressed), (1, 1), "{crash:?}");
            assert!(!s.path(&id).exists() && s.zst_path(&id).exists());
            assert_eq!(&*s.get(&id).unwrap(), &raw[..]);
            // And the compressor itself, run again, has nothing left.
            assert_eq!(
                s.replace_with_compressed(&id, 1, &|| false).unwrap(),
                Replaced::Absent
            );
        }
    }

    #[test]
    fn a_reader_between_the_rename_and_the_removal_finds_the_blob() {
        // The raw file gone once a reader looked for it: the compressed
        // one is there (it is renamed into place first).
        let (_t, s) = store();
        let raw = compressible(300_000);
        let id = s.put(&raw).unwrap();
        s.replace_steps(&id, 1, &|| false, &mut |step| {
            step != ReplaceStep::RemoveRaw
        })
        .unwrap();
        fs::remove_file(s.path(&id)).unwrap();
        let mut into = vec![0u8; raw.len()];
        s.read_into(&id, &mut into).unwrap();
        assert!(into == raw);
        assert_eq!(s.size(&id).unwrap(), raw.len() as u64);
    }

    #[test]
    fn copy_from_links_and_verifies() {
        let (_a, src) = store();
        let (_b, dst) = store();
        let id = src.put(b"abc").unwrap();
        assert_ne!(
            dst.copy_from(&src, &id).unwrap(),
            CopyOutcome::AlreadyPresent
        );
        assert_eq!(
            dst.copy_from(&src, &id).unwrap(),
            CopyOutcome::AlreadyPresent
        );
        assert_eq!(&*dst.get(&id).unwrap(), b"abc");

        let bad = src.put(b"xyz").unwrap();
        fs::write(src.path(&bad), b"xyZ").unwrap();
        assert!(matches!(
            dst.copy_from(&src, &bad),
            Err(BlobError::Corrupt { .. })
        ));
        assert!(!dst.contains(&bad));
    }
}
