//! `BlobBatch`: small blob files waiting to be written with the events
//! buffer they travel with.
//!
//! Creating a file and renaming it into the blob store costs the recording
//! thread tens of microseconds to milliseconds (the filesystem's journal),
//! far more than the copy it records: a training loop reading its loss back
//! every step paid that per step. So a small blob's bytes are copied into
//! the batch of the events buffer being filled, and whoever writes that
//! buffer — the writer thread, an appender draining, `finish`, a fatal
//! signal's flush — writes the batch's files first. Events never name a
//! blob that is not on disk: a blob joins a batch before the event naming
//! it is appended, so it is in that event's buffer or an earlier one.
//!
//! A code object whose memory stays put until the recorder is settled
//! ([`Kept`]) joins a batch by address instead, uncopied and outside the
//! size budget: its file is written from where it lies.
//!
//! Everything lives in two plain vectors (the paths, NUL-terminated, and
//! the bytes in one arena; `Copy` items in the other), so writing and
//! clearing a batch allocate and free nothing: async-signal-safe.

use crate::interpose::kept::Kept;
use crate::interpose::sys;

/// A span of the arena.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    len: usize,
}

/// Where a pending file's bytes are.
#[derive(Clone, Copy)]
enum Data {
    /// Copied into the arena.
    Copied(Span),
    /// Where they lie.
    Kept(Kept),
}

/// One pending file: its temporary name, final name and bytes.
#[derive(Clone, Copy)]
struct Item {
    tmp: Span,
    path: Span,
    data: Data,
}

/// Blob files waiting for their events buffer's write.
#[derive(Default)]
pub struct BlobBatch {
    arena: Vec<u8>,
    items: Vec<Item>,
}

impl BlobBatch {
    /// Bytes held (paths and copied data).
    pub fn held(&self) -> usize {
        self.arena.len()
    }

    /// Files written from where their bytes lie ([`BlobBatch::push_kept`]).
    pub fn kept(&self) -> usize {
        self.items
            .iter()
            .filter(|it| matches!(it.data, Data::Kept(_)))
            .count()
    }

    /// Whether no file is pending.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds a file: `data` to be written at `tmp` and renamed to `path`
    /// (neither holds a NUL byte).
    pub fn push(&mut self, tmp: &[u8], path: &[u8], data: &[u8]) {
        let (tmp, path) = (self.copy(tmp, true), self.copy(path, true));
        let data = Data::Copied(self.copy(data, false));
        self.items.push(Item { tmp, path, data });
    }

    /// Adds a file written from `data` where it lies (see [`Kept`]).
    pub fn push_kept(&mut self, tmp: &[u8], path: &[u8], data: Kept) {
        let (tmp, path) = (self.copy(tmp, true), self.copy(path, true));
        self.items.push(Item {
            tmp,
            path,
            data: Data::Kept(data),
        });
    }

    fn copy(&mut self, bytes: &[u8], nul: bool) -> Span {
        let start = self.arena.len();
        self.arena.extend_from_slice(bytes);
        if nul {
            self.arena.push(0);
        }
        Span {
            start,
            len: self.arena.len() - start,
        }
    }

    /// Writes every file, in order, then empties the batch; the first
    /// failure's errno (later files are still tried: each is independent).
    pub fn write(&mut self) -> Result<(), i32> {
        let mut first = Ok(());
        for it in &self.items {
            let at = |s: Span| &self.arena[s.start..s.start + s.len];
            let data = match &it.data {
                Data::Copied(s) => at(*s),
                Data::Kept(k) => k.bytes(),
            };
            if let Err(e) = sys::write_file_renamed(at(it.tmp), at(it.path), data)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        self.clear();
        first
    }

    /// Drops every pending file unwritten (after a failed events write:
    /// their events are lost too). Frees nothing.
    pub fn clear(&mut self) {
        self.arena.clear();
        self.items.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_every_file_in_order_and_empties() {
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let mut b = BlobBatch::default();
        b.push(&p(".tmp-1"), &p("one"), b"first");
        b.push(&p(".tmp-2"), &p("two"), b"second");
        assert!(b.held() > 0);
        b.write().unwrap();
        assert!(b.is_empty() && b.held() == 0);
        assert_eq!(std::fs::read(t.path().join("one")).unwrap(), b"first");
        assert_eq!(std::fs::read(t.path().join("two")).unwrap(), b"second");
        assert!(!t.path().join(".tmp-1").exists());
    }

    #[test]
    fn a_kept_file_is_written_from_where_it_lies_and_not_held() {
        static CODE: [u8; 4096] = [0x5a; 4096];
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let mut b = BlobBatch::default();
        b.push(&p(".tmp-1"), &p("copied"), b"copied");
        let before = b.held();
        b.push_kept(&p(".tmp-2"), &p("kept"), Kept::of_static(&CODE));
        assert_eq!(b.kept(), 1);
        assert!(b.held() - before < 64, "only its names are held");
        b.write().unwrap();
        assert_eq!(b.kept(), 0);
        assert_eq!(std::fs::read(t.path().join("kept")).unwrap(), CODE);
        assert_eq!(std::fs::read(t.path().join("copied")).unwrap(), b"copied");
    }

    #[test]
    fn a_failed_file_is_reported_and_the_others_written() {
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let mut b = BlobBatch::default();
        // Two levels missing: only the last is made (the store's root is
        // made with the archive).
        b.push(&p("missing/ab/.tmp"), &p("missing/ab/x"), b"x");
        b.push(&p(".tmp-y"), &p("y"), b"y");
        assert_eq!(b.write(), Err(libc::ENOENT));
        assert_eq!(std::fs::read(t.path().join("y")).unwrap(), b"y");
    }
}
