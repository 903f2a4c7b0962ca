//! `BlobWriter`: the capture side of the archive's blob store.
//!
//! Blobs are hashed and written by the recording thread, straight from the
//! application's memory (no copy: the recorder's memory does not grow with
//! the data), before the event naming them is appended — so an event never
//! refers to a blob that is not on disk. hrr-core's `BlobStore` does the
//! content addressing and the atomic tmp+rename; this adds the counts the
//! manifest and `hrr-cap` report, and skips blobs this process already wrote
//! without a filesystem call.

use std::collections::HashSet;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use hrr_core::BlobId;
use hrr_core::blob_store::BlobStore;

/// Writes blobs into one archive.
pub struct BlobWriter {
    store: BlobStore,
    seen: Mutex<HashSet<BlobId>>,
    bytes: AtomicU64,
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
            store,
            seen: Mutex::new(HashSet::new()),
            bytes: AtomicU64::new(0),
        })
    }

    /// Stores `bytes`; returns their id.
    pub fn put(&self, bytes: &[u8]) -> io::Result<BlobId> {
        // Small blobs: hash first, skip the store when this process has the
        // blob already (a loop copying the same buffer). Large ones go to the
        // store directly, which hashes once and checks existence itself.
        if bytes.len() <= 64 * 1024 {
            let id = BlobId::of(bytes);
            if self
                .seen
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&id)
            {
                return Ok(id);
            }
        }
        let id = self.store.put(bytes)?;
        if self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id)
        {
            self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        Ok(id)
    }

    /// Distinct blobs written by this process.
    pub fn count(&self) -> u64 {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len() as u64
    }

    /// Their total size in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedups_and_counts() {
        let t = tempfile::tempdir().unwrap();
        let w = BlobWriter::new(t.path()).unwrap();
        let a = w.put(b"hello").unwrap();
        assert_eq!(w.put(b"hello").unwrap(), a);
        let big = vec![7u8; 100_000];
        let b = w.put(&big).unwrap();
        w.put(&big).unwrap();
        assert_eq!((w.count(), w.bytes()), (2, 100_005));
        let store = BlobStore::of_archive(t.path());
        assert_eq!(&*store.get(&a).unwrap(), b"hello");
        assert_eq!(store.get(&b).unwrap().len(), 100_000);
    }
}
