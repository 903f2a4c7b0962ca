//! The whole-archive fuzz target (feature `fuzzing`): arbitrary bytes are
//! unpacked into an archive, which is opened, replayed onto a [`MemDevice`]
//! (capped at 64 MiB, accepting code objects and launches), and repaired;
//! the repaired archive must then read cleanly, and be complete unless
//! repair said why not (events its source lost, or that it dropped). Nothing may panic, hang or
//! allocate beyond the cap and the input's size.
//!
//! The archives are held in memory ([`hrr_core::mem_files`]): the same
//! reader, engine and repair, without the file system, which was most of an
//! execution's time (docs/FUZZING.md, *Speed*). [`outcome`] runs an input
//! either way, so that tests check that both give the same results.
//!
//! Input format (what `scripts/fuzz-pack.py` writes from a real capture):
//! sections, each a line `@@NAME` followed by its content up to the next
//! `\n@@`. `NAME` is `manifest.json`, `events.ndjson`, `regions/FILE`
//! (`FILE` a plain name ending in `.ndjson` or `.hrrr`), `blob` (stored under
//! its BLAKE3 name), or `options` (its first byte picks replay options).
//! Other names are ignored.

use std::path::{Path, PathBuf};

use hrr_core::archive::{Archive, ArchiveError, RepairReport, repair, repair_in_memory};
use hrr_core::blob_store::BlobStore;
use hrr_core::error_chain::chain;
use hrr_core::event::{Event, Op};
use hrr_core::event_reader::ReadOptions;
use hrr_core::mem_files::MemFiles;

use crate::engine::mem_device::MemDevice;
use crate::engine::{AddressSpace, PinnedHost, ReplayOptions, Replayer, load_regions};

/// Memory the device of one run may hold.
const DEVICE_BYTES: u64 = 64 << 20;
/// Sections read from one input.
const MAX_SECTIONS: usize = 32;

/// One fuzz input: unpack, open, replay, repair, re-read, all in memory.
pub fn archive(data: &[u8]) {
    let files = MemFiles::new();
    run(data, &Store::Memory(files));
}

/// What one input did, in terms that do not depend on where the archive
/// was stored (paths are relative to the scratch directory).
#[derive(Debug, PartialEq)]
pub struct Outcome {
    /// Why the unpacked archive did not open, if it did not.
    pub open_error: Option<String>,
    /// Why it is incomplete.
    pub incomplete: Option<String>,
    /// Events replayed, errors counted, warnings, and the error that
    /// stopped the replay.
    pub replay: Option<(u64, u64, Vec<String>, Option<String>)>,
    /// What repair reported (`{:?}`; blobs copied counted as linked: an
    /// archive in memory has no hard links), or why it failed.
    pub repair: Option<Result<String, String>>,
    /// The repaired archive's manifest (counts and flags) and events, the
    /// `eof`'s clock reading zeroed.
    pub repaired: Option<(u64, u64, Vec<Event>)>,
}

/// Runs `data` as [`archive`] does, in memory or (`disk`: a scratch
/// directory, which must exist) on disk, and says what happened.
pub fn outcome(data: &[u8], disk: Option<&Path>) -> Outcome {
    match disk {
        Some(dir) => run(data, &Store::Disk(dir.to_path_buf())),
        None => run(data, &Store::Memory(MemFiles::new())),
    }
}

/// Where an input's archives are unpacked and repaired.
enum Store {
    Memory(MemFiles),
    /// A directory holding nothing else.
    Disk(PathBuf),
}

impl Store {
    fn path(&self, name: &str) -> PathBuf {
        match self {
            Store::Memory(_) => PathBuf::from(name),
            Store::Disk(dir) => dir.join(name),
        }
    }

    fn write(&self, path: PathBuf, content: &[u8]) {
        match self {
            Store::Memory(files) => files.write(path, content),
            Store::Disk(_) => {
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let _ = std::fs::write(path, content);
            }
        }
    }

    fn blobs(&self, archive: &Path) -> BlobStore {
        let root = archive.join(hrr_core::blob_store::BLOBS_DIR);
        match self {
            Store::Memory(files) => BlobStore::in_memory(root, files),
            Store::Disk(_) => BlobStore::new(root),
        }
    }

    fn open(&self, archive: &Path) -> Result<Archive, ArchiveError> {
        match self {
            Store::Memory(files) => Archive::open_in_memory(archive, files),
            Store::Disk(_) => Archive::open(archive),
        }
    }

    fn repair(&self, src: &Archive, dst: &Path) -> Result<RepairReport, ArchiveError> {
        match self {
            Store::Memory(files) => repair_in_memory(src, dst, files),
            Store::Disk(_) => repair(src.path(), dst),
        }
    }

    /// `text` with the scratch directory left out of paths.
    fn relative(&self, text: String) -> String {
        match self {
            Store::Memory(_) => text,
            Store::Disk(dir) => text.replace(&format!("{}/", dir.display()), ""),
        }
    }
}

fn run(data: &[u8], store: &Store) -> Outcome {
    let mut out = Outcome {
        open_error: None,
        incomplete: None,
        replay: None,
        repair: None,
        repaired: None,
    };
    let src = store.path("in.hrr");
    let options = unpack(data, store, &src);
    let a = match store.open(&src) {
        Ok(a) => a,
        Err(e) => {
            out.open_error = Some(store.relative(chain(&e).to_string()));
            return out;
        }
    };
    out.incomplete = a.incomplete_reason();
    out.replay = Some(replay(&a, options, store));
    let fixed = store.path("fixed.hrr");
    let report = store.repair(&a, &fixed);
    let repaired = report.is_ok();
    let stays_incomplete = report.as_ref().ok().and_then(|r| r.incomplete.clone());
    out.repair = Some(
        report
            .map(|mut r| {
                r.blobs_linked += std::mem::take(&mut r.blobs_copied);
                store.relative(format!("{r:?}"))
            })
            .map_err(|e| store.relative(chain(&e).to_string())),
    );
    if repaired {
        let f = store.open(&fixed).expect("a repaired archive opens");
        // Complete, unless events were lost (its source said so, or
        // repair dropped some): then incomplete for the reason repair gave.
        assert_eq!(
            f.incomplete_reason(),
            stays_incomplete,
            "a repaired archive is complete, or says what repair said it lacks"
        );
        let events = f.events(ReadOptions::strict()).expect("events open");
        let mut read = Vec::new();
        for e in events {
            let mut e = e.expect("a repaired archive reads cleanly");
            if matches!(e.op, Op::Eof { .. }) {
                e.t = 0;
            }
            read.push(e);
        }
        out.repaired = Some((f.manifest().events, f.manifest().blobs, read));
    }
    out
}

fn replay(a: &Archive, options: u8, store: &Store) -> (u64, u64, Vec<String>, Option<String>) {
    let regions = options & 1 != 0;
    let mut warnings = Vec::new();
    let timeline = load_regions(a, options & 2 != 0, &mut warnings).unwrap_or_default();
    let opts = ReplayOptions {
        regions,
        continue_on_error: options & 4 != 0,
        ..ReplayOptions::default()
    };
    let space = AddressSpace {
        regions: timeline,
        regions_enabled: regions,
        ..AddressSpace::default()
    };
    let mut dev = MemDevice::new(options & 8 != 0);
    dev.max_bytes = DEVICE_BYTES;
    dev.accept_code = true;
    let mut pinned = PinnedHost::new(16 << 20);
    let (summary, error) = Replayer::new(&mut dev, a, &opts, space, None, &mut pinned).run(|_| {});
    warnings.extend(summary.warnings);
    (
        summary.events,
        summary.errors,
        warnings.into_iter().map(|w| store.relative(w)).collect(),
        error.map(|e| store.relative(chain(&e).to_string())),
    )
}

/// Writes the sections of `data` into the archive `dir` of `store`;
/// returns the options byte.
fn unpack(data: &[u8], store: &Store, dir: &Path) -> u8 {
    let blobs = store.blobs(dir);
    let mut options = 0u8;
    let mut rest = data.strip_prefix(b"@@").unwrap_or(data);
    for _ in 0..MAX_SECTIONS {
        if rest.is_empty() {
            break;
        }
        let end = find(rest, b"\n@@").unwrap_or(rest.len());
        let section = &rest[..end];
        rest = rest.get(end + 3..).unwrap_or(&[]);
        let (name, content) = match section.iter().position(|&b| b == b'\n') {
            Some(i) => (&section[..i], &section[i + 1..]),
            None => (section, &[][..]),
        };
        match name {
            b"manifest.json" | b"events.ndjson" => {
                store.write(dir.join(std::str::from_utf8(name).unwrap()), content);
            }
            b"blob" => {
                let _ = blobs.put(content);
            }
            b"options" => options = content.first().copied().unwrap_or(0),
            _ => {
                if let Some(file) = name.strip_prefix(b"regions/")
                    && let Ok(file) = std::str::from_utf8(file)
                    && !file.is_empty()
                    && file
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
                    && !file.starts_with('.')
                {
                    store.write(dir.join("regions").join(file), content);
                }
            }
        }
    }
    options
}

/// `memmem` rather than comparing every window: under libFuzzer each slice
/// comparison is an intercepted `bcmp` that feeds the comparison tables, and
/// one per input byte was a sixth of an execution.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}
