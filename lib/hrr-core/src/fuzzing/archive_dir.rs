//! The `archive_dir` target: an archive written as real files into a
//! scratch directory, with the file kinds a hostile archive can hold, then
//! opened and read the way the tools read it, and repaired.
//!
//! Input: the sections of the whole-archive target (`@@manifest.json`,
//! `@@events.ndjson`, `@@blob`, `@@regions/FILE`; see
//! `hrr_replay::fuzzing`, and `scripts/fuzz-pack.py` which writes them from
//! real captures) and `@@layout`: each of its bytes turns one entry of the
//! archive ([`ENTRIES`], the byte modulo their number) into another kind of
//! file ([`KINDS`], the byte divided by the number of entries, modulo
//! theirs): a FIFO, a symlink (to a copy outside the archive, dangling, or
//! to `/dev/zero`), a directory, a sparse file reaching past what its
//! reader reads, an empty file, or (for `.hrr-owner`) a live pid.
//!
//! Then [`Archive::open`], why it is incomplete, every event read three
//! ways (buffered, lenient and strict; mapped; on parallel threads), every
//! blob an event names, the blob check, the region files, and
//! [`repair`](crate::archive::repair). Each must end in `Ok` or an error:
//! never a panic, never a blocking read of a FIFO, never a read of a
//! device through a link, in bounded time and memory. A repair that
//! succeeds must give an archive that opens, reads cleanly in strict mode
//! and is incomplete for exactly the reason the repair gave; one that fails
//! must leave nothing; and nothing outside the archive may change.

use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::archive::{Archive, OWNER_FILE, referenced_blobs, repair};
use crate::archive_writer::{EVENTS_FILE, EVENTS_ZST_FILE, REGIONS_DIR};
use crate::blob_store::{BLOBS_DIR, BlobStore};
use crate::event_reader::{MAX_LINE, ReadOptions};
use crate::manifest::{MANIFEST_FILE, MAX_MANIFEST};
use crate::region_record::MAX_REGION_FILE;

/// Sections read from one input.
const MAX_SECTIONS: usize = 32;

/// What a `@@layout` byte can change.
pub const ENTRIES: &[&str] = &[
    "manifest.json",
    "events.ndjson",
    "blobs/",
    "blobs/<h2>/ of the first blob",
    "the first blob",
    "the last blob",
    "regions/",
    "the first region file",
    ".hrr-owner",
    "the archive path itself",
];

/// What it can become.
pub const KINDS: &[&str] = &[
    "a FIFO",
    "a symlink to a copy outside the archive",
    "a dangling symlink",
    "a directory",
    "a sparse file one byte longer than its reader reads (a 512 KiB blob)",
    "an empty file",
    "a symlink to /dev/zero (for .hrr-owner: a live pid)",
];

/// A sparse blob's length: past the size from which blobs are mapped.
const SPARSE_BLOB: u64 = 512 << 10;

/// The content of the file outside the archive every link points near; it
/// must be the same after the run.
const OUTSIDE: &[u8] = b"outside the archive: never written\n";

/// The target body (see the module docs).
pub fn archive_dir(data: &[u8]) {
    let scratch = Scratch::new();
    let dir = scratch.0.join("in.hrr");
    let outside = scratch.0.join("outside");
    fs::create_dir_all(&outside).expect("scratch directory");
    fs::write(outside.join("file"), OUTSIDE).expect("scratch file");
    let layout = unpack(data, &dir);
    let open_at = apply_layout(&dir, &outside, &layout);
    read_everything(&open_at);
    check_repair(&open_at, &scratch.0.join("fixed.hrr"));
    assert_eq!(
        fs::read(outside.join("file")).ok().as_deref(),
        Some(OUTSIDE),
        "a file outside the archive changed"
    );
}

/// A fresh directory for one input, removed (never following a link) when
/// dropped: under `HRR_FUZZ_TMP`, else `/dev/shm` (file operations are what
/// an execution costs), else the temporary directory.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static N: AtomicU64 = AtomicU64::new(0);
        let base = std::env::var_os("HRR_FUZZ_TMP")
            .map(PathBuf::from)
            .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|p| p.is_dir()))
            .unwrap_or_else(std::env::temp_dir);
        loop {
            let n = N.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!("hrr-fuzz-dir-{}-{n}", std::process::id()));
            match fs::create_dir(&dir) {
                Ok(()) => return Scratch(dir),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => panic!("{}: {e}", dir.display()),
            }
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Writes the input's sections into the archive `dir`; returns the layout
/// bytes.
fn unpack(data: &[u8], dir: &Path) -> Vec<u8> {
    let _ = fs::create_dir_all(dir.join(BLOBS_DIR));
    let blobs = BlobStore::of_archive(dir);
    let mut layout = Vec::new();
    let mut rest = data.strip_prefix(b"@@").unwrap_or(data);
    for _ in 0..MAX_SECTIONS {
        if rest.is_empty() {
            break;
        }
        let end = memchr::memmem::find(rest, b"\n@@").unwrap_or(rest.len());
        let section = &rest[..end];
        rest = rest.get(end + 3..).unwrap_or(&[]);
        let (name, content) = match memchr::memchr(b'\n', section) {
            Some(i) => (&section[..i], &section[i + 1..]),
            None => (section, &[][..]),
        };
        match name {
            b"manifest.json" => {
                let _ = fs::write(dir.join(MANIFEST_FILE), content);
            }
            b"events.ndjson" => {
                let _ = fs::write(dir.join(EVENTS_FILE), content);
            }
            // The compressed form: the bytes as given (a hostile frame), or
            // the events given compressed (a valid frame of fuzzed lines).
            b"events.ndjson.zst" => {
                let _ = fs::write(dir.join(EVENTS_ZST_FILE), content);
            }
            b"zst" => {
                if let Ok(z) = zstd::encode_all(content, 1) {
                    let _ = fs::write(dir.join(EVENTS_ZST_FILE), z);
                }
            }
            b"blob" => {
                let _ = blobs.put(content);
            }
            // A blob stored compressed, under its content's name.
            b"blob.zst" => {
                let id = crate::blob_store::hash(content);
                if let (Ok(z), Ok(_)) = (zstd::bulk::compress(content, 1), blobs.staging_names(&id))
                {
                    let _ = fs::write(blobs.zst_path(&id), z);
                }
            }
            b"layout" => layout.extend_from_slice(content),
            _ => {
                if let Some(file) = name.strip_prefix(b"regions/")
                    && plain_name(file)
                {
                    let regions = dir.join(REGIONS_DIR);
                    let _ = fs::create_dir_all(&regions);
                    let _ = fs::write(regions.join(std::ffi::OsStr::from_bytes(file)), content);
                }
            }
        }
    }
    layout
}

/// A file name of letters, digits, `.`, `_` and `-`, not hidden.
fn plain_name(name: &[u8]) -> bool {
    !name.is_empty()
        && !name.starts_with(b".")
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(b))
}

/// The files of `dir` (not following links), sorted.
fn listed(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// The blob files (`blobs/<h2>/<h>`), sorted.
fn blob_files(dir: &Path) -> Vec<PathBuf> {
    let root = dir.join(BLOBS_DIR);
    if fs::symlink_metadata(&root).is_ok_and(|m| m.file_type().is_symlink()) {
        return Vec::new();
    }
    let mut v: Vec<PathBuf> = listed(&root)
        .iter()
        .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .flat_map(|fan| listed(fan))
        .collect();
    v.sort();
    v
}

/// Changes the archive as `layout` says (see the module docs); returns the
/// path to open it by.
fn apply_layout(dir: &Path, outside: &Path, layout: &[u8]) -> PathBuf {
    let mut open_at = dir.to_path_buf();
    for (n, &b) in layout.iter().enumerate().take(16) {
        let entry = usize::from(b) % ENTRIES.len();
        let kind = usize::from(b) / ENTRIES.len() % KINDS.len();
        let blobs = blob_files(dir);
        let regions = listed(&dir.join(REGIONS_DIR));
        let (path, limit, is_dir) = match entry {
            0 => (dir.join(MANIFEST_FILE), MAX_MANIFEST, false),
            1 => (dir.join(EVENTS_FILE), MAX_LINE, false),
            2 => (dir.join(BLOBS_DIR), 0, true),
            3 => match blobs.first().and_then(|b| b.parent()) {
                Some(fan) => (fan.to_path_buf(), 0, true),
                None => continue,
            },
            4 | 5 => match if entry == 4 {
                blobs.first()
            } else {
                blobs.last()
            } {
                Some(b) => (b.clone(), SPARSE_BLOB - 1, false),
                None => continue,
            },
            6 => (dir.join(REGIONS_DIR), 0, true),
            7 => match regions.first() {
                Some(r) => (r.clone(), MAX_REGION_FILE, false),
                None => continue,
            },
            8 => (dir.join(OWNER_FILE), 64, false),
            _ => {
                // Only the archive path itself may be a link (FORMAT.md).
                let link = dir.with_file_name(format!("link{n}.hrr"));
                if symlink(&open_at, &link).is_ok() {
                    open_at = link;
                }
                continue;
            }
        };
        replace(&path, kind, limit, is_dir, entry == 8, outside, n);
    }
    open_at
}

/// Puts a file of `kind` where `path` is (see [`KINDS`]).
fn replace(
    path: &Path,
    kind: usize,
    limit: u64,
    is_dir: bool,
    owner: bool,
    outside: &Path,
    n: usize,
) {
    // A file made sparse by an earlier layout byte is neither read nor
    // grown again: the harness stays within what the readers read.
    let regular = fs::symlink_metadata(path).ok().filter(|m| m.is_file());
    let len = regular.as_ref().map_or(0, |m| m.len());
    let copy = outside.join(format!("copy{n}"));
    match kind {
        // Sparse and empty change a file where it is; a directory stays.
        4 | 5 if is_dir => return,
        4 => {
            // A regular file grown, or a new one: never through a link,
            // never a FIFO opened (that would wait for a reader).
            use std::os::unix::fs::OpenOptionsExt;
            let file = match fs::symlink_metadata(path) {
                Ok(m) if m.is_file() => fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(path),
                Err(_) => fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path),
                Ok(_) => return,
            };
            if let Ok(f) = file
                && len <= limit
            {
                let _ = f.set_len(len + limit + 1);
            }
            return;
        }
        5 => {
            if fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
                let _ = fs::write(path, b"");
            }
            return;
        }
        1 if is_dir => {
            let _ = fs::create_dir_all(&copy);
            if let Ok(entries) = fs::read_dir(path) {
                for e in entries.flatten() {
                    let _ = fs::rename(e.path(), copy.join(e.file_name()));
                }
            }
        }
        1 => {
            // Only a regular file is read (a link may lead to /dev/zero).
            let content = match regular {
                Some(_) if len <= SPARSE_BLOB => fs::read(path).unwrap_or_default(),
                _ => Vec::new(),
            };
            let _ = fs::write(&copy, &content);
        }
        _ => {}
    }
    remove(path);
    let _ = match kind {
        0 => mkfifo(path),
        1 => symlink(&copy, path),
        2 => symlink(outside.join("nothing-here"), path),
        3 => fs::create_dir(path),
        _ if owner => fs::write(path, format!("{}\n", std::process::id())),
        _ => symlink("/dev/zero", path),
    };
}

/// Removes `path` whatever it is, never following a link.
fn remove(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

fn mkfifo(path: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: `c` is a NUL-terminated path; mkfifo has no other
    // preconditions.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Opens the archive and reads all of it the ways the tools do; errors are
/// fine, panics are not.
fn read_everything(dir: &Path) {
    let Ok(archive) = Archive::open(dir) else {
        return;
    };
    let _ = archive.incomplete_reason();
    let _ = archive.is_complete();
    for options in [ReadOptions::default(), ReadOptions::strict()] {
        let Ok(events) = archive.events(options) else {
            continue;
        };
        for event in events {
            let Ok(event) = event else { break };
            for id in referenced_blobs(&event.op) {
                if let Ok(blob) = archive.blobs().get(&id) {
                    assert_eq!(
                        crate::blob_store::hash(&blob),
                        id,
                        "a blob read is not what its name says"
                    );
                }
            }
        }
    }
    if let Ok(events) = archive.events_mapped(ReadOptions::default()) {
        for event in events {
            if event.is_err() {
                break;
            }
        }
    }
    if let Ok(parallel) = archive.events_parallel(ReadOptions::default()) {
        let _ = parallel
            .threads(2)
            .chunk_bytes(4096)
            .run(|e, _| e.seq, |_, _| Ok::<(), ()>(()));
    }
    let _ = archive.load_regions();
    let _ = archive.check_blobs(&mut |_, _| {});
}

/// Repairs `src` into `dst` and checks what repair promises.
fn check_repair(src: &Path, dst: &Path) {
    let report = match repair(src, dst) {
        Ok(r) => r,
        Err(_) => {
            assert!(
                fs::symlink_metadata(dst).is_err(),
                "a failed repair left {}",
                dst.display()
            );
            return;
        }
    };
    let fixed = Archive::open(dst).expect("a repaired archive opens");
    assert_eq!(
        fixed.incomplete_reason(),
        report.incomplete,
        "a repaired archive is complete, or incomplete for the reason repair gave"
    );
    let events = fixed
        .events(ReadOptions::strict())
        .expect("a repaired archive's events open");
    let mut n = 0u64;
    for event in events {
        event.expect("a repaired archive reads cleanly");
        n += 1;
    }
    assert_eq!(n, report.events_kept + 1, "the events kept and the eof");
    // What repair wrote is regular files and directories only.
    for path in blob_files(dst)
        .into_iter()
        .chain(listed(&dst.join(REGIONS_DIR)))
        .chain([dst.join(MANIFEST_FILE), fixed.events_path()])
    {
        let m = fs::symlink_metadata(&path).expect("a file repair wrote");
        assert!(m.is_file(), "{} is not a regular file", path.display());
    }
    let _ = std::io::stderr().flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn layouts_make_the_files_they_say() {
        let s = Scratch::new();
        let dir = s.0.join("in.hrr");
        let outside = s.0.join("outside");
        fs::create_dir_all(&outside).unwrap();
        let mut data = b"@@manifest.json\n{}\n@@events.ndjson\n{}\n@@blob\nabc\n@@blob\nxyz\n\
            @@regions/a.ndjson\n{}\n@@layout\n"
            .to_vec();
        let n = ENTRIES.len() as u8;
        data.extend_from_slice(&[
            1,         // events.ndjson: a FIFO
            4 + n,     // the first blob: a link to a copy outside
            5 + 2 * n, // the last blob: a dangling link
            7 + 3 * n, // the region file: a directory
            8 + 6 * n, // .hrr-owner: a live pid
            4 * n,     // manifest.json: sparse past 1 MiB
            9,         // opened through a link
        ]);
        let layout = unpack(&data, &dir);
        let open_at = apply_layout(&dir, &outside, &layout);
        let kind = |p: &Path| fs::symlink_metadata(p).unwrap().file_type();
        assert!(kind(&dir.join(EVENTS_FILE)).is_fifo());
        let store = BlobStore::of_archive(&dir);
        let (abc, xyz) = (
            store.path(&crate::blob_store::hash(b"abc")),
            store.path(&crate::blob_store::hash(b"xyz")),
        );
        let (first, last) = if abc < xyz { (abc, xyz) } else { (xyz, abc) };
        assert!(kind(&first).is_symlink());
        assert!(fs::read(&first).is_ok(), "a link to a copy");
        assert!(kind(&last).is_symlink());
        assert!(fs::metadata(&last).is_err(), "a dangling link");
        assert!(kind(&dir.join("regions/a.ndjson")).is_dir());
        assert_eq!(
            fs::read_to_string(dir.join(OWNER_FILE)).unwrap(),
            format!("{}\n", std::process::id())
        );
        assert_eq!(
            fs::metadata(dir.join(MANIFEST_FILE)).unwrap().len(),
            2 + MAX_MANIFEST + 1
        );
        assert!(kind(&open_at).is_symlink());
        assert_eq!(
            fs::canonicalize(&open_at).unwrap(),
            fs::canonicalize(&dir).unwrap()
        );
        // And the target takes it all without a panic.
        read_everything(&open_at);
        check_repair(&open_at, &s.0.join("fixed.hrr"));
    }
}
