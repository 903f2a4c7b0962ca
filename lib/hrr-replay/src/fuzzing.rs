//! The whole-archive fuzz target (feature `fuzzing`): arbitrary bytes are
//! unpacked into an archive directory, which is opened, replayed onto a
//! [`MemDevice`] (capped at 64 MiB, accepting code objects and launches),
//! and repaired; the repaired archive must then read cleanly. Nothing may
//! panic, hang or allocate beyond the cap and the input's size.
//!
//! Input format (what `scripts/fuzz-pack.py` writes from a real capture):
//! sections, each a line `@@NAME` followed by its content up to the next
//! `\n@@`. `NAME` is `manifest.json`, `events.ndjson`, `regions/FILE`
//! (`FILE` a plain name ending in `.ndjson` or `.hrrr`), `blob` (stored under
//! its BLAKE3 name), or `options` (its first byte picks replay options).
//! Other names are ignored.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use hrr_core::archive::{Archive, repair};
use hrr_core::blob_store::BlobStore;
use hrr_core::event_reader::ReadOptions;

use crate::engine::mem_device::MemDevice;
use crate::engine::{AddressSpace, PinnedHost, ReplayOptions, Replayer, load_regions};

/// Memory the device of one run may hold.
const DEVICE_BYTES: u64 = 64 << 20;
/// Sections read from one input.
const MAX_SECTIONS: usize = 32;

/// One fuzz input: unpack, open, replay, repair, re-read.
pub fn archive(data: &[u8]) {
    let scratch = Scratch::new();
    let src = scratch.0.join("in.hrr");
    let options = unpack(data, &src);
    let Ok(a) = Archive::open(&src) else {
        return;
    };
    let _ = a.incomplete_reason();
    replay(&a, options);
    let fixed = scratch.0.join("fixed.hrr");
    if repair(&src, &fixed).is_ok() {
        let f = Archive::open(&fixed).expect("a repaired archive opens");
        assert!(f.is_complete(), "a repaired archive is complete");
        let events = f.events(ReadOptions::strict()).expect("events open");
        for e in events {
            e.expect("a repaired archive reads cleanly");
        }
    }
}

fn replay(a: &Archive, options: u8) {
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
    let (_summary, _error) =
        Replayer::new(&mut dev, a, &opts, space, None, &mut pinned).run(|_| {});
}

/// Writes the sections of `data` into the archive directory `dir`; returns
/// the options byte.
fn unpack(data: &[u8], dir: &Path) -> u8 {
    let _ = std::fs::create_dir_all(dir.join("regions"));
    let blobs = BlobStore::of_archive(dir);
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
                let _ = std::fs::write(dir.join(std::str::from_utf8(name).unwrap()), content);
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
                    let _ = std::fs::write(dir.join("regions").join(file), content);
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

/// A private directory for one run, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = scratch_root().join(format!(
            "hrr-fuzz-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where scratch directories go: `HRR_FUZZ_TMP` when set, else `/dev/shm`
/// when it is a writable directory, else the system's temporary directory.
/// Memory rather than disk because repair writes an archive per input the
/// way a capture does, with fsyncs (manifest, events, directory): on a disk
/// they were most of an execution's time (see docs/FUZZING.md, *Speed*).
/// An input that aborts the process leaves its `hrr-fuzz-PID-N` behind.
fn scratch_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        if let Some(dir) = std::env::var_os("HRR_FUZZ_TMP") {
            return PathBuf::from(dir);
        }
        let probe = Path::new("/dev/shm").join(format!("hrr-fuzz-{}-probe", std::process::id()));
        match std::fs::create_dir(&probe) {
            Ok(()) => {
                let _ = std::fs::remove_dir(&probe);
                PathBuf::from("/dev/shm")
            }
            Err(_) => std::env::temp_dir(),
        }
    })
}
