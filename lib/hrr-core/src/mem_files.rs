//! `MemFiles`: archive files held in memory instead of on disk.
//!
//! An [`Archive`](crate::archive::Archive) opened with
//! [`Archive::open_in_memory`](crate::archive::Archive::open_in_memory), an
//! [`ArchiveWriter`](crate::archive_writer::ArchiveWriter) created with
//! [`ArchiveWriter::create_in_memory`](crate::archive_writer::ArchiveWriter::create_in_memory)
//! and [`repair_in_memory`](crate::archive::repair_in_memory) keep the
//! manifest, the events, the blobs and the region sidecars here, and read
//! and write them through the same parsers, limits, checks and writer rules
//! as on disk: only the system calls are gone. That is for tests and the
//! whole-archive fuzz target, which spent most of an execution in the file
//! system (docs/FUZZING.md, *Speed*).
//!
//! Files are named by their full path (the archive directory joined with
//! the name inside it), so that messages read as they would on disk;
//! directories are implied by the names. A clone shares the files.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// A set of files in memory, by path; clones share it.
#[derive(Clone, Debug, Default)]
pub struct MemFiles {
    files: Arc<Mutex<BTreeMap<PathBuf, Arc<Vec<u8>>>>>,
}

impl MemFiles {
    /// No files.
    pub fn new() -> MemFiles {
        MemFiles::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<PathBuf, Arc<Vec<u8>>>> {
        // A panic while the map was held cannot leave it half-changed: every
        // change is one insert or one append.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates or replaces the file `path`.
    pub fn write(&self, path: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) {
        self.lock().insert(path.into(), Arc::new(bytes.into()));
    }

    /// Removes the file `path`, if there is one.
    pub fn remove(&self, path: &Path) {
        self.lock().remove(path);
    }

    /// Appends to the file `path`, creating it when absent. Readers that
    /// hold the file already keep what they read.
    pub fn append(&self, path: &Path, bytes: &[u8]) {
        let mut files = self.lock();
        match files.get_mut(path) {
            Some(f) => Arc::make_mut(f).extend_from_slice(bytes),
            None => {
                files.insert(path.to_path_buf(), Arc::new(bytes.to_vec()));
            }
        }
    }

    /// The content of the file `path`, if there is one.
    pub fn read(&self, path: &Path) -> Option<Arc<Vec<u8>>> {
        self.lock().get(path).cloned()
    }

    /// Whether the file `path` exists.
    pub fn contains(&self, path: &Path) -> bool {
        self.lock().contains_key(path)
    }

    /// The files directly in the directory `dir`, sorted.
    pub fn list(&self, dir: &Path) -> Vec<PathBuf> {
        self.lock()
            .range(dir.to_path_buf()..)
            .map(|(p, _)| p)
            .take_while(|p| p.starts_with(dir))
            .filter(|p| p.parent() == Some(dir))
            .cloned()
            .collect()
    }

    /// Whether any file lies under the directory `dir`, at any depth.
    pub fn any_under(&self, dir: &Path) -> bool {
        self.lock()
            .range(dir.to_path_buf()..)
            .next()
            .is_some_and(|(p, _)| p.starts_with(dir) && p != dir)
    }

    /// Removes every file.
    pub fn clear(&self) {
        self.lock().clear();
    }
}

/// A reader over one file of a [`MemFiles`], as it was when opened.
#[derive(Clone, Debug)]
pub struct MemReader {
    bytes: Arc<Vec<u8>>,
    pos: usize,
}

impl MemReader {
    /// Reads `bytes` from the start.
    pub fn new(bytes: Arc<Vec<u8>>) -> MemReader {
        MemReader { bytes, pos: 0 }
    }
}

impl Read for MemReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = (&self.bytes[self.pos..]).read(out)?;
        self.pos += n;
        Ok(n)
    }
}

impl BufRead for MemReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Ok(&self.bytes[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.bytes.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_listed_by_directory_and_appended_to() {
        let m = MemFiles::new();
        m.write("a/regions/x.ndjson", b"1".to_vec());
        m.write("a/regions/sub/y.ndjson", b"2".to_vec());
        m.write("a/regionsX", b"3".to_vec());
        m.write("b/regions/z.ndjson", b"4".to_vec());
        assert_eq!(
            m.list(Path::new("a/regions")),
            [PathBuf::from("a/regions/x.ndjson")]
        );
        assert!(m.any_under(Path::new("a")));
        assert!(!m.any_under(Path::new("c")));
        assert!(!m.any_under(Path::new("a/regionsX")));
        let before = m.read(Path::new("a/regionsX")).unwrap();
        m.append(Path::new("a/regionsX"), b"5");
        m.append(Path::new("new"), b"6");
        assert_eq!(**before, b"3"[..]);
        assert_eq!(**m.read(Path::new("a/regionsX")).unwrap(), b"35"[..]);
        assert_eq!(**m.read(Path::new("new")).unwrap(), b"6"[..]);
        let mut r = MemReader::new(m.read(Path::new("a/regionsX")).unwrap());
        let mut s = String::new();
        r.read_line(&mut s).unwrap();
        assert_eq!(s, "35");
    }
}
