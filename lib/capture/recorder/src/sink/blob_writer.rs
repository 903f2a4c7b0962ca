//! `BlobWriter`: the capture side of the archive's blob store.
//!
//! Large blobs are hashed (in the recorder's pool, `hash_pool`) and written
//! by the recording thread, straight from the application's memory (no
//! copy: the recorder's memory does not grow with the data), before the
//! event naming them is appended, inside the call whose operand they are.
//! Small ones (up to `SMALL_BLOB` bytes) are copied first, into a buffer of
//! the recording thread's, and that copy is hashed and goes to the events
//! buffer's batch (`EventSink::defer_blob`), written by whoever writes that
//! buffer, before it: creating a file costs far more than such a copy, and
//! the name is that of the bytes written whatever the program's memory
//! does meanwhile. Code objects whose memory outlives the write ([`Kept`])
//! are hashed by the recording thread and written from where they lie by
//! whoever writes their events buffer (`EventSink::defer_kept`), whatever
//! their size, and hashed again as read back from the file: a file whose
//! bytes changed since is not kept, and the sink reports it
//! (`BlobBatch::write`). Either way an event never refers to a blob that
//! is not on disk, or to one that does not hold what its name says.
//! hrr-core's `BlobStore` does the content addressing, the names and the
//! atomic tmp+rename; this adds the counts the manifest and `hrr-cap`
//! report, and skips blobs this process already wrote without a
//! filesystem call.

use std::collections::HashSet;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hrr_core::BlobId;
use hrr_core::blob_store::BlobStore;

use super::blob_zst::BlobZst;
use super::event_sink::EventSink;
use super::hash_pool;
use crate::kept::Kept;

/// Blobs up to this size are hashed before the store is asked (skipped
/// when this process has them) and written with the events buffer.
pub const SMALL_BLOB: usize = 64 * 1024;

/// How a large blob's id is had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlobHash {
    /// Hashed in the recorder's pool.
    Pool,
    /// Hashed where the application's thread waits in a synchronous call
    /// (`hash_pool::id_of_blocked`).
    Blocked,
    /// Hashed already, from these very bytes, while the call ran.
    Known(BlobId),
}

/// Writes blobs into one archive.
pub struct BlobWriter {
    store: BlobStore,
    /// Compresses each blob file once written (`blob_zst`).
    zst: Arc<BlobZst>,
    seen: Mutex<HashSet<BlobId>>,
    bytes: AtomicU64,
    /// See [`BlobWriter::unwritten`].
    unwritten: AtomicU64,
}

impl BlobWriter {
    /// The blob store of the archive in `archive_dir`.
    pub fn new(archive_dir: &Path) -> io::Result<BlobWriter> {
        use std::os::unix::fs::DirBuilderExt;
        let store = BlobStore::of_archive(archive_dir);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(hrr_core::safe_fs::DIR_MODE)
            .create(store.root())?;
        if std::fs::symlink_metadata(store.root())?
            .file_type()
            .is_symlink()
        {
            return Err(std::io::Error::other(format!(
                "{}: is a symbolic link; refusing to write blobs through it",
                store.root().display()
            )));
        }
        Ok(BlobWriter {
            zst: Arc::new(BlobZst::new(store.clone())),
            store,
            seen: Mutex::new(HashSet::new()),
            bytes: AtomicU64::new(0),
            unwritten: AtomicU64::new(0),
        })
    }

    /// Stores `bytes`; returns their id. A small blob goes to `sink`'s
    /// buffer (written before the events appended after this call).
    pub fn put(&self, bytes: &[u8], sink: &EventSink) -> io::Result<BlobId> {
        self.put_with(bytes, sink, BlobHash::Pool)
    }

    /// [`BlobWriter::put`], a large blob hashed as `how` says.
    pub fn put_with(&self, bytes: &[u8], sink: &EventSink, how: BlobHash) -> io::Result<BlobId> {
        if bytes.len() <= SMALL_BLOB {
            return with_small_copy(bytes, |copy| self.put_small(copy, sink));
        }
        // Large: the store hashes once and checks existence itself.
        let id = match how {
            BlobHash::Pool => hash_pool::id_of(bytes),
            BlobHash::Blocked => hash_pool::id_of_blocked(bytes),
            BlobHash::Known(id) => id,
        };
        self.put_large(id, bytes)?;
        Ok(id)
    }

    /// Writes large blob `id` (`bytes`, hashed by the caller; the store
    /// skips one it has) and offers a new file to the compressor.
    fn put_large(&self, id: BlobId, bytes: &[u8]) -> io::Result<()> {
        self.store.put_hashed(&id, bytes)?;
        if self.first_sight(&id, bytes.len()) {
            self.zst.offer(id);
        }
        Ok(())
    }

    /// The compressor of this archive's blobs (the events sink offers the
    /// files it writes; the recorder's finish drains it).
    pub fn zst(&self) -> &Arc<BlobZst> {
        &self.zst
    }

    /// [`BlobWriter::put`] of a small blob's copy: hashed, skipped when
    /// this process has the blob already (a loop copying the same buffer),
    /// else queued with the events buffer.
    fn put_small(&self, copy: &[u8], sink: &EventSink) -> io::Result<BlobId> {
        let id = BlobId::of(copy);
        if self.has(&id) {
            return Ok(id);
        }
        // The fan-out directory is made by whoever writes the batch.
        let (tmp, path) = self.store.names_in_fan_out(&id);
        let name = |p: std::path::PathBuf| p.into_os_string().into_encoded_bytes();
        if !sink.defer_blob(&name(tmp), &name(path), copy, id) {
            self.store.put_hashed(&id, copy)?;
            if self.first_sight(&id, copy.len()) {
                self.zst.offer(id);
            }
            return Ok(id);
        }
        self.first_sight(&id, copy.len());
        Ok(id)
    }

    /// Stores `bytes` that stay where they lie until `sink` is settled
    /// (`EventSink::settle_kept`); returns their id. Only hashing happens
    /// here: the file is written with the events buffer, from `bytes`, if
    /// they still hash to the id then.
    pub fn put_kept(&self, bytes: Kept, sink: &EventSink) -> io::Result<BlobId> {
        let id = hash_pool::id_of(bytes.bytes());
        if self.has(&id) {
            return Ok(id);
        }
        let (tmp, path) = self.store.names_in_fan_out(&id);
        let name = |p: std::path::PathBuf| p.into_os_string().into_encoded_bytes();
        if !sink.defer_kept(&name(tmp), &name(path), bytes, id) {
            // The sink is finished (the process is exiting): written here,
            // from a copy, under the copy's name.
            let copy = bytes.bytes().to_vec();
            let id = hash_pool::id_of(&copy);
            self.store.put_hashed(&id, &copy)?;
            if self.first_sight(&id, copy.len()) {
                self.zst.offer(id);
            }
            return Ok(id);
        }
        // Noted once queued: a thread that finds it here appends its event
        // after the file joined a batch.
        self.first_sight(&id, bytes.len());
        Ok(id)
    }

    /// Blobs written by this process that turned out not to be (their
    /// files could not be written): no longer counted.
    pub fn unwritten(&self, n: usize) {
        self.unwritten.fetch_add(n as u64, Ordering::Relaxed);
    }

    fn has(&self, id: &BlobId) -> bool {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(id)
    }

    /// Notes `id` (of `len` bytes) as written by this process; whether it
    /// was new.
    fn first_sight(&self, id: &BlobId, len: usize) -> bool {
        let new = self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(*id);
        if new {
            self.bytes.fetch_add(len as u64, Ordering::Relaxed);
        }
        new
    }

    /// Distinct blobs written by this process.
    pub fn count(&self) -> u64 {
        let seen = self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len() as u64;
        seen.saturating_sub(self.unwritten.load(Ordering::Relaxed))
    }

    /// Their total size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// `put(copy)` of a copy of `bytes` (at most [`SMALL_BLOB`]) in a buffer of
/// the calling thread's, reused (a fresh one when the thread's is in use
/// or gone).
fn with_small_copy<R>(bytes: &[u8], put: impl FnOnce(&[u8]) -> R) -> R {
    thread_local! {
        static COPY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut put = Some(put);
    let r = COPY.try_with(|c| {
        let mut c = c.try_borrow_mut().ok()?;
        c.clear();
        c.extend_from_slice(bytes);
        Some((put.take().expect("called once"))(&c))
    });
    match r {
        Ok(Some(r)) => r,
        _ => {
            // A copy all the same: the name is the copy's.
            let copy = bytes.to_vec();
            (put.take().expect("not yet called"))(&copy)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink(dir: &Path) -> EventSink {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("events.ndjson"))
            .unwrap();
        EventSink::new(f)
    }

    #[test]
    fn dedups_and_counts() {
        let t = tempfile::tempdir().unwrap();
        let w = BlobWriter::new(t.path()).unwrap();
        let s = sink(t.path());
        let a = w.put(b"hello", &s).unwrap();
        assert_eq!(w.put(b"hello", &s).unwrap(), a);
        let big = vec![7u8; 100_000];
        let b = w.put(&big, &s).unwrap();
        w.put(&big, &s).unwrap();
        assert_eq!((w.count(), w.bytes()), (2, 100_005));
        let store = BlobStore::of_archive(t.path());
        assert_eq!(store.get(&b).unwrap().len(), 100_000);
        s.flush();
        assert_eq!(&*store.get(&a).unwrap(), b"hello");
    }

    #[test]
    fn a_small_blob_is_on_disk_once_the_events_after_it_are() {
        let t = tempfile::tempdir().unwrap();
        let w = BlobWriter::new(t.path()).unwrap();
        let s = sink(t.path());
        let store = BlobStore::of_archive(t.path());
        let a = w.put(b"small", &s).unwrap();
        assert!(!store.contains(&a), "waits for its events buffer");
        let mut body = Vec::new();
        hrr_core::wire::encode::encode_op(&mut body, 1, 0, "x", 0, &hrr_core::Op::DeviceSync);
        s.append(&body);
        s.flush();
        assert_eq!(&*store.get(&a).unwrap(), b"small");
        assert!(
            !std::fs::read(t.path().join("events.ndjson"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_finished_sink_leaves_small_blobs_to_the_caller() {
        let t = tempfile::tempdir().unwrap();
        let w = BlobWriter::new(t.path()).unwrap();
        let s = sink(t.path());
        s.finish("exit", 1, super::super::event_sink::LockMode::Block);
        let a = w.put(b"late", &s).unwrap();
        assert_eq!(&*BlobStore::of_archive(t.path()).get(&a).unwrap(), b"late");
    }
}
