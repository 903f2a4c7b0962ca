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
//! size budget: its file is written from where it lies, hashed again as
//! read back into a buffer of the batch's own, and kept only if it is still
//! what its name says (see [`BlobBatch::write`]).
//!
//! Everything lives in plain vectors (the paths, NUL-terminated, and the
//! bytes in one arena; `Copy` items in another; the kept files' buffer and
//! hasher, made when the first kept file joins), so writing and clearing a
//! batch allocate and free nothing: async-signal-safe.

use hrr_core::BlobId;

use crate::kept::Kept;
use crate::sys;

/// Bytes of a kept file written, read back, hashed at a time: a piece
/// that stays in the writer's cache between the read and the hash
/// (`record/kept_write` in `benches/record.rs`; figures in
/// docs/PERFORMANCE.md).
pub const KEPT_PIECE: usize = 256 * 1024;

/// Bytes handed to the hasher at a time: BLAKE3's widest SIMD step
/// (16 chunks of 1 KiB) and no deeper, so that hashing on a signal's
/// alternate stack stays within a few kilobytes of stack.
const HASH_STEP: usize = 16 * 1024;

/// Why a pending file was not written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlobFailure {
    /// A system call failed with this errno (the disk is full, …).
    Io(i32),
    /// A kept file's bytes, as written (read back from the file), hash to
    /// `actual`, not to its name: the program changed them after the recording thread
    /// hashed them. The bytes the name stands for are gone; no file is
    /// left under the name.
    Changed {
        /// What the bytes hash to now.
        actual: BlobId,
    },
}

impl From<i32> for BlobFailure {
    fn from(errno: i32) -> BlobFailure {
        BlobFailure::Io(errno)
    }
}

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

/// One pending file: its temporary name, final name, bytes and blob.
#[derive(Clone, Copy)]
struct Item {
    tmp: Span,
    path: Span,
    data: Data,
    id: BlobId,
}

/// Blob files waiting for their events buffer's write.
#[derive(Default)]
pub struct BlobBatch {
    arena: Vec<u8>,
    items: Vec<Item>,
    /// [`KEPT_PIECE`] bytes and a hasher, for kept files (`None` until the
    /// first one joins this batch).
    kept_io: Option<Box<KeptIo>>,
}

/// What writing a kept file needs besides the file: kept with the batch
/// rather than on the stack (a signal handler's stack is small).
struct KeptIo {
    piece: Vec<u8>,
    hasher: blake3::Hasher,
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

    /// Adds a file: `data`, blob `id`, to be written at `tmp` and renamed
    /// to `path` (neither holds a NUL byte).
    pub fn push(&mut self, tmp: &[u8], path: &[u8], data: &[u8], id: BlobId) {
        let (tmp, path) = (self.copy(tmp, true), self.copy(path, true));
        let data = Data::Copied(self.copy(data, false));
        self.items.push(Item {
            tmp,
            path,
            data,
            id,
        });
    }

    /// Adds a file written from `data` where it lies (see [`Kept`]), whose
    /// bytes hashed to `id` when the recording thread read them.
    pub fn push_kept(&mut self, tmp: &[u8], path: &[u8], data: Kept, id: BlobId) {
        if self.kept_io.is_none() {
            self.kept_io = Some(Box::new(KeptIo {
                piece: vec![0; KEPT_PIECE],
                hasher: blake3::Hasher::new(),
            }));
        }
        let (tmp, path) = (self.copy(tmp, true), self.copy(path, true));
        self.items.push(Item {
            tmp,
            path,
            data: Data::Kept(data),
            id,
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

    /// Writes every file, in order, then empties the batch; `failed` hears
    /// of each file that could not be written (later files are still
    /// tried: each is independent). Async-signal-safe when `failed` is.
    ///
    /// A kept file is written a piece at a time from the program's memory,
    /// and each piece is read back from the file into the batch's own
    /// buffer and hashed there: the file's hash is that of exactly the
    /// bytes in it, however the program's memory changes meanwhile. The
    /// file is renamed to its name only when that hash is the name;
    /// otherwise it is removed and `failed` hears
    /// [`BlobFailure::Changed`]. Chosen over hashing the program's memory
    /// again after writing from it (two reads of memory that can change
    /// between them prove nothing), over copying a whole code object first
    /// (a second copy of tens of megabytes) and over copying each piece
    /// out of the program's memory in this process (no faster, measured,
    /// and memory the program unmapped would fault here, where the kernel
    /// fails write(2) with `EFAULT`): the piece read back comes from the
    /// page cache just written and stays in cache for the hash, and all of
    /// it is the writer's work, none the recording thread's.
    ///
    /// `written` hears of each file written (not from a signal handler:
    /// the caller passes one that does nothing there).
    pub fn write(
        &mut self,
        mut failed: impl FnMut(&BlobId, BlobFailure),
        mut written: impl FnMut(&BlobId),
    ) {
        let BlobBatch {
            arena,
            items,
            kept_io,
        } = self;
        for it in items.iter() {
            let at = |s: Span| &arena[s.start..s.start + s.len];
            let r = match (&it.data, kept_io.as_deref_mut()) {
                (Data::Copied(s), _) => sys::write_file_renamed(at(it.tmp), at(it.path), at(*s))
                    .map_err(BlobFailure::Io),
                (Data::Kept(k), Some(io)) => {
                    sys::write_file_renamed_with(at(it.tmp), at(it.path), |fd| {
                        write_kept(fd, k, &it.id, io)
                    })
                }
                (Data::Kept(_), None) => unreachable!("push_kept makes the batch's buffer"),
            };
            match r {
                Ok(()) => written(&it.id),
                Err(f) => failed(&it.id, f),
            }
        }
        self.clear();
    }

    /// Drops every pending file unwritten (after a failed events write:
    /// their events are lost too). Frees nothing.
    pub fn clear(&mut self) {
        self.arena.clear();
        self.items.clear();
    }
}

/// Writes kept bytes `k` to `fd`, hashing them as read back through
/// `io`'s buffer (see [`BlobBatch::write`]); `Changed` when the file is not
/// blob `id`.
fn write_kept(fd: i32, k: &Kept, id: &BlobId, io: &mut KeptIo) -> Result<(), BlobFailure> {
    let KeptIo { piece, hasher } = io;
    hasher.reset();
    let bytes = k.bytes();
    let mut at = 0;
    while at < bytes.len() {
        let n = piece.len().min(bytes.len() - at);
        sys::write_all(fd, &bytes[at..at + n])?;
        let piece = &mut piece[..n];
        sys::pread_exact(fd, piece, at as u64)?;
        for step in piece.chunks(HASH_STEP) {
            hasher.update(step);
        }
        at += n;
    }
    let actual = BlobId(*hasher.finalize().as_bytes());
    if actual == *id {
        Ok(())
    } else {
        Err(BlobFailure::Changed { actual })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `write`, the failures it reported gathered.
    fn write(b: &mut BlobBatch) -> Vec<(BlobId, BlobFailure)> {
        let mut failed = vec![];
        b.write(|id, f| failed.push((*id, f)), |_| {});
        failed
    }

    #[test]
    fn writes_every_file_in_order_and_empties() {
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let mut b = BlobBatch::default();
        b.push(&p(".tmp-1"), &p("one"), b"first", BlobId::of(b"first"));
        b.push(&p(".tmp-2"), &p("two"), b"second", BlobId::of(b"second"));
        assert!(b.held() > 0);
        assert_eq!(write(&mut b), []);
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
        b.push(&p(".tmp-1"), &p("copied"), b"copied", BlobId::of(b"copied"));
        let before = b.held();
        b.push_kept(
            &p(".tmp-2"),
            &p("kept"),
            Kept::of_static(&CODE),
            BlobId::of(&CODE),
        );
        assert_eq!(b.kept(), 1);
        assert!(b.held() - before < 64, "only its names are held");
        assert_eq!(write(&mut b), []);
        assert_eq!(b.kept(), 0);
        assert_eq!(std::fs::read(t.path().join("kept")).unwrap(), CODE);
        assert_eq!(std::fs::read(t.path().join("copied")).unwrap(), b"copied");
    }

    #[test]
    // A `Kept` over memory the test owns (and changes or unmaps).
    #[allow(unsafe_code)]
    fn a_kept_file_of_many_pieces_is_written_whole() {
        let code: Vec<u8> = (0..3 * KEPT_PIECE + 17)
            .map(|i| (i * 31 + i / 4096) as u8)
            .collect();
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let mut b = BlobBatch::default();
        // SAFETY: `code` outlives the write, unchanged.
        let kept = unsafe { Kept::new(code.as_ptr(), code.len()) };
        b.push_kept(&p(".tmp"), &p("big"), kept, BlobId::of(&code));
        assert_eq!(write(&mut b), []);
        assert!(std::fs::read(t.path().join("big")).unwrap() == code);
    }

    #[test]
    // A `Kept` over memory the test owns (and changes or unmaps).
    #[allow(unsafe_code)]
    fn a_kept_file_whose_bytes_changed_since_the_hash_is_not_written() {
        // A registered code object the program rewrites after the launch
        // that hashed it and before its file is written.
        let mut code = vec![0x3cu8; KEPT_PIECE + 100];
        let id = BlobId::of(&code);
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let mut b = BlobBatch::default();
        // SAFETY: `code` outlives the write; it changes, which is the test.
        let kept = unsafe { Kept::new(code.as_ptr(), code.len()) };
        b.push_kept(&p(".tmp-k"), &p("k"), kept, id);
        b.push(&p(".tmp-c"), &p("c"), b"c", BlobId::of(b"c"));
        code[KEPT_PIECE + 7] = 0;
        let failed = write(&mut b);
        assert_eq!(
            failed,
            [(
                id,
                BlobFailure::Changed {
                    actual: BlobId::of(&code)
                }
            )]
        );
        assert!(!t.path().join("k").exists(), "nothing under its name");
        assert!(!t.path().join(".tmp-k").exists(), "no temporary left");
        assert_eq!(std::fs::read(t.path().join("c")).unwrap(), b"c");
        // The batch is reusable, its buffer kept.
        let again = code.clone();
        // SAFETY: `again` outlives the write, unchanged.
        let kept = unsafe { Kept::new(again.as_ptr(), again.len()) };
        b.push_kept(&p(".tmp-k2"), &p("k2"), kept, BlobId::of(&again));
        assert_eq!(write(&mut b), []);
        assert!(std::fs::read(t.path().join("k2")).unwrap() == again);
    }

    #[test]
    // A `Kept` over memory the test owns (and changes or unmaps).
    #[allow(unsafe_code)]
    fn a_kept_file_whose_memory_is_gone_fails_without_faulting() {
        // A registered code object freed (unmapped) without the
        // unregistration that would have settled the recorder first.
        let page = 4096;
        // SAFETY: a fresh anonymous mapping of our own.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let id = BlobId::of(&[0u8; 8192]);
        // SAFETY: mapped now; unmapped below, which is the test (only the
        // kernel reads it after that).
        let kept = unsafe { Kept::new(p.cast(), 2 * page) };
        let t = tempfile::tempdir().unwrap();
        let n = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let mut b = BlobBatch::default();
        b.push_kept(&n(".tmp"), &n("gone"), kept, id);
        // SAFETY: the mapping made above, unmapped once.
        assert_eq!(unsafe { libc::munmap(p, 2 * page) }, 0);
        assert_eq!(write(&mut b), [(id, BlobFailure::Io(libc::EFAULT))]);
        assert!(!t.path().join("gone").exists() && !t.path().join(".tmp").exists());
    }

    #[test]
    fn a_failed_file_is_reported_and_the_others_written() {
        let t = tempfile::tempdir().unwrap();
        let p = |n: &str| t.path().join(n).into_os_string().into_encoded_bytes();
        let mut b = BlobBatch::default();
        // Two levels missing: only the last is made (the store's root is
        // made with the archive).
        let x = BlobId::of(b"x");
        b.push(&p("missing/ab/.tmp"), &p("missing/ab/x"), b"x", x);
        b.push(&p(".tmp-y"), &p("y"), b"y", BlobId::of(b"y"));
        assert_eq!(write(&mut b), [(x, BlobFailure::Io(libc::ENOENT))]);
        assert_eq!(std::fs::read(t.path().join("y")).unwrap(), b"y");
    }
}
