//! `Manifest`: an archive's `manifest.json` (DESIGN.md §4) and its version check.
//!
//! Opening parses the file as plain JSON first and checks `format` and
//! `version` before anything else, so an archive from a newer hrr that
//! changed a field's type still gets the clear "upgrade hrr" message rather
//! than a serde error about that field. Fields this version does not know are
//! kept in [`Manifest::extra`] and written back unchanged, so rewriting a
//! manifest (repair, finish) never drops a newer minor addition.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `format` every hrr manifest carries.
pub const FORMAT_NAME: &str = "hrr";
/// The archive format version this hrr writes, and the newest it reads.
/// Version 2 may store events and blobs compressed (docs/FORMAT.md,
/// *Compression*), which a version 1 reader would take for missing files.
pub const FORMAT_VERSION: u32 = 2;
/// The oldest archive format version this hrr reads: version 1 archives
/// (plain events and blobs) are version 2 archives that compress nothing.
pub const MIN_FORMAT_VERSION: u32 = 1;
/// File name of the manifest inside an archive directory.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Largest manifest read: a few hundred bytes in practice (the `argv` of a
/// long command line included).
pub const MAX_MANIFEST: u64 = 1 << 20;
/// Manifest field a writer that could not finish sets to why (`"disk full"`).
pub const INCOMPLETE_FIELD: &str = "incomplete";

/// Manifest field of captures: blob files the capture library could not
/// write (their bytes changed after they were hashed, a write failed); with
/// `complete:false` (docs/FORMAT.md).
pub const BLOB_FAILURES_FIELD: &str = "blob_failures";

/// What produced the archive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArchiveKind {
    /// `hrr-cap`: the application's own run.
    Capture,
    /// `hrr-play -o`: the D2H results a replay observed.
    Replay,
}

/// The runtime family the archive was recorded or replayed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// hrr's CPU runtime.
    Cpu,
    /// AMD GPUs through ROCm's HIP runtime.
    Amd,
    /// NVIDIA GPUs through the CUDA runtime and driver.
    Nvidia,
}

impl ArchiveKind {
    /// The name in the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            ArchiveKind::Capture => "capture",
            ArchiveKind::Replay => "replay",
        }
    }
}

impl Platform {
    /// The name in the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Cpu => "cpu",
            Platform::Amd => "amd",
            Platform::Nvidia => "nvidia",
        }
    }
}

/// `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `"hrr"`.
    pub format: String,
    /// [`FORMAT_VERSION`] when written by this hrr.
    pub version: u32,
    /// Capture or replay.
    pub kind: ArchiveKind,
    /// Where it was recorded or replayed.
    pub platform: Platform,
    /// `true` only after a clean finish (the `eof` event is written).
    pub complete: bool,
    /// Events before the `eof` trailer.
    pub events: u64,
    /// Distinct blob files.
    pub blobs: u64,
    /// Tool and version that wrote the archive, e.g. `hrr 0.1.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Unix time (seconds) the archive was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<u64>,
    /// Captures: the application's command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// Replays: the capture archive replayed, as given on the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
    /// Rewritten by `repair` from a torn or crashed archive.
    #[serde(default, skip_serializing_if = "is_false")]
    pub repaired: bool,
    /// Captures: calls to entry points the capture library forwards without
    /// recording (their effects are not in the archive), by entry point.
    /// Omitted when there were none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unrecorded: BTreeMap<String, u64>,
    /// Captures: the address arenas the process reserved (large anonymous
    /// `PROT_NONE` reservations with no address hint, in the order made:
    /// the GPU driver's, out of which it hands out device addresses). A
    /// replay reserves its own driver's arenas at the same bases where it
    /// can, so that allocations return their recorded addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub va_arenas: Vec<VaArena>,
    /// Captures: the devices the application's recorded calls ran on
    /// (the events' `dev`), ascending. Absent (captures that predate it,
    /// replays): read as `[0]` where it matters ([`Manifest::devices_used`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<u32>,
    /// Fields this version does not know, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One entry of [`Manifest::va_arenas`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VaArena {
    /// Where the reservation started.
    pub base: crate::Addr,
    /// Its length in bytes.
    pub size: u64,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The summary line of a capture's unrecorded calls, as `hrr-cap` and
/// `hrr-play` print it:
///
/// ```text
/// unrecorded : 0 calls
/// unrecorded : 5 calls (hipMemcpy2D ×3, hipGraphLaunch ×1, hipMemPrefetchAsync ×1)
/// ```
///
/// Entry points by count (descending), then name; at most
/// [`UnrecordedCalls::MAX_LISTED`] of them, then `, …`.
#[derive(Clone, Copy, Debug)]
pub struct UnrecordedCalls<'a>(pub &'a BTreeMap<String, u64>);

impl UnrecordedCalls<'_> {
    /// How many entry points the line names.
    pub const MAX_LISTED: usize = 8;

    /// Total calls.
    pub fn total(&self) -> u64 {
        self.0.values().fold(0u64, |a, &n| a.saturating_add(n))
    }

    /// `(name, calls)`, most called first, then by name; zero counts left out.
    pub fn ranked(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self
            .0
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (k.as_str(), *n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }
}

impl fmt::Display for UnrecordedCalls<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unrecorded : {} calls", self.total())?;
        let ranked = self.ranked();
        if ranked.is_empty() {
            return Ok(());
        }
        f.write_str(" (")?;
        for (i, (name, n)) in ranked.iter().take(Self::MAX_LISTED).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{name} \u{d7}{n}")?;
        }
        if ranked.len() > Self::MAX_LISTED {
            f.write_str(", \u{2026}")?;
        }
        f.write_str(")")
    }
}

/// Why a manifest could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{}", path.display())]
    /// The manifest could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    #[error(transparent)]
    /// The manifest is not a regular file, or is too large to be one.
    Open(#[from] crate::safe_fs::OpenError),
    #[error("{}: invalid manifest: {reason}", path.display())]
    /// The manifest is not the JSON it should be.
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    #[error("{} is not an hrr archive (format {found:?}, expected \"hrr\")", archive.display())]
    /// The manifest's `format` is not `"hrr"`.
    NotHrr {
        /// The archive.
        archive: PathBuf,
        /// The format named.
        found: String,
    },
    #[error(
        "archive {} is format version {version}, this hrr reads version {FORMAT_VERSION}; upgrade hrr",
        archive.display()
    )]
    /// Written by a newer hrr.
    TooNew {
        /// The archive.
        archive: PathBuf,
        /// Its format version.
        version: u64,
    },
    #[error(
        "archive {} is format version {version}, older than this hrr reads (version {MIN_FORMAT_VERSION}); \
         re-capture it or convert it with the hrr release that wrote it",
        archive.display()
    )]
    /// Written in a format version this hrr no longer reads.
    TooOld {
        /// The archive.
        archive: PathBuf,
        /// Its format version.
        version: u64,
    },
}

impl Manifest {
    /// The devices the capture used: [`Manifest::devices`], or device 0
    /// for an archive that does not say.
    pub fn devices_used(&self) -> Vec<u32> {
        if self.devices.is_empty() {
            vec![0]
        } else {
            self.devices.clone()
        }
    }

    /// A fresh manifest: incomplete, no events, tool and creation time filled in.
    pub fn new(kind: ArchiveKind, platform: Platform) -> Manifest {
        Manifest {
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION,
            kind,
            platform,
            complete: false,
            events: 0,
            blobs: 0,
            tool: Some(concat!("hrr ", env!("CARGO_PKG_VERSION")).to_string()),
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs()),
            argv: Vec::new(),
            replay_of: None,
            repaired: false,
            unrecorded: BTreeMap::new(),
            va_arenas: Vec::new(),
            devices: Vec::new(),
            extra: Map::new(),
        }
    }

    /// Reads `DIR/manifest.json` and checks format and version. The file
    /// must be a regular file (not a symlink, FIFO or device) of at most
    /// [`MAX_MANIFEST`] bytes.
    pub fn read(archive_dir: impl AsRef<Path>) -> Result<Manifest, ManifestError> {
        let dir = archive_dir.as_ref();
        let path = dir.join(MANIFEST_FILE);
        let bytes = crate::safe_fs::read_limited(
            &path,
            crate::safe_fs::Follow::No,
            MAX_MANIFEST,
            "manifest",
        )?;
        Manifest::parse(&bytes, dir)
    }

    /// Why the writer could not finish, when it said so
    /// ([`INCOMPLETE_FIELD`], e.g. `"disk full"`).
    pub fn incomplete_reason(&self) -> Option<&str> {
        self.extra.get(INCOMPLETE_FIELD).and_then(Value::as_str)
    }

    /// Marks the archive incomplete (`complete:false`) because of `why`,
    /// after any reason it already gives (`first; why`): a writer's own
    /// reason is the first cause, a later check's adds to it.
    pub fn mark_incomplete(&mut self, why: &str) {
        self.complete = false;
        let why = match self.incomplete_reason() {
            Some(first) if first.contains(why) => first.to_string(),
            Some(first) => format!("{first}; {why}"),
            None => why.to_string(),
        };
        self.extra.insert(INCOMPLETE_FIELD.into(), Value::from(why));
    }

    /// The process that recorded the archive ([`crate::process_info`]):
    /// `None` for replays and for captures that predate the field.
    pub fn process(&self) -> Option<crate::process_info::ProcessInfo> {
        self.extra
            .get(crate::process_info::PROCESS_FIELD)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    /// Parses manifest bytes of the archive at `archive_dir` (used in messages).
    pub fn parse(bytes: &[u8], archive_dir: &Path) -> Result<Manifest, ManifestError> {
        let path = archive_dir.join(MANIFEST_FILE);
        let invalid = |reason: String| ManifestError::Invalid {
            path: path.clone(),
            reason,
        };
        let value: Value = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
        let obj = value
            .as_object()
            .ok_or_else(|| invalid("not a JSON object".into()))?;
        let format = obj.get("format").and_then(Value::as_str).unwrap_or("");
        if format != FORMAT_NAME {
            return Err(ManifestError::NotHrr {
                archive: archive_dir.to_path_buf(),
                found: format.to_string(),
            });
        }
        let version = obj
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid("`version` missing or not an integer".into()))?;
        if version > u64::from(FORMAT_VERSION) {
            return Err(ManifestError::TooNew {
                archive: archive_dir.to_path_buf(),
                version,
            });
        }
        if version < u64::from(MIN_FORMAT_VERSION) {
            return Err(ManifestError::TooOld {
                archive: archive_dir.to_path_buf(),
                version,
            });
        }
        serde_json::from_value(value).map_err(|e| invalid(e.to_string()))
    }

    /// The manifest as pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        // Every field is a plain value or an already-parsed JSON value.
        let mut s = serde_json::to_string_pretty(self).expect("manifest serialises");
        s.push('\n');
        s
    }

    /// Writes `DIR/manifest.json` atomically: a temporary file in `DIR`,
    /// fsynced, renamed over the old one, then the directory fsynced, so a
    /// crash leaves either the old manifest or the new one, never a torn one.
    pub fn write_atomic(&self, archive_dir: impl AsRef<Path>) -> Result<(), ManifestError> {
        let dir = archive_dir.as_ref();
        let path = dir.join(MANIFEST_FILE);
        let io_err = |source| ManifestError::Io {
            path: path.clone(),
            source,
        };
        write_atomic(dir, MANIFEST_FILE, self.to_json().as_bytes()).map_err(io_err)
    }

    /// Overwrites `DIR/manifest.json` in place (not atomic): the fallback
    /// when [`Manifest::write_atomic`] fails for lack of space, since the
    /// existing file's block holds a manifest without allocating anything.
    /// The file must exist and be a regular file (a symlink is refused).
    pub fn write_in_place(&self, archive_dir: impl AsRef<Path>) -> Result<(), ManifestError> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = archive_dir.as_ref();
        let path = dir.join(MANIFEST_FILE);
        let io_err = |source| ManifestError::Io {
            path: path.clone(),
            source,
        };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(io_err)?;
        if !f.metadata().map_err(io_err)?.is_file() {
            return Err(io_err(io::Error::other("not a regular file")));
        }
        let json = self.to_json();
        f.write_all(json.as_bytes()).map_err(io_err)?;
        f.set_len(json.len() as u64).map_err(io_err)?;
        f.sync_all().map_err(io_err)
    }
}

/// Writes `dir/name` through `dir/.name.tmp-PID-N` + fsync + rename + dir
/// fsync. Everything goes through a descriptor of `dir`: the temporary is
/// created `O_EXCL | O_NOFOLLOW` (`0600`) and renamed over `name` (a
/// symlink at `name` is replaced, never followed).
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    crate::safe_fs::DirFd::open(dir, crate::safe_fs::Follow::Yes)?.write_atomic(name, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> &'static Path {
        Path::new("cap.hrr")
    }

    #[test]
    fn round_trips_and_keeps_unknown_fields() {
        let text = r#"{"format":"hrr","version":1,"kind":"replay","platform":"nvidia",
            "complete":true,"events":3,"blobs":2,"replay_of":"cap.hrr",
            "gpu":{"name":"H200"},"future_flag":true}"#;
        let m = Manifest::parse(text.as_bytes(), dir()).unwrap();
        assert_eq!(m.kind, ArchiveKind::Replay);
        assert_eq!(m.platform, Platform::Nvidia);
        assert_eq!(m.replay_of.as_deref(), Some("cap.hrr"));
        assert_eq!(m.extra["gpu"]["name"], "H200");
        let again = Manifest::parse(m.to_json().as_bytes(), dir()).unwrap();
        assert_eq!(again, m);
        assert!(m.to_json().contains("\"future_flag\": true"));
    }

    #[test]
    fn design_fields_are_written() {
        let m = Manifest::new(ArchiveKind::Capture, Platform::Cpu);
        let v: Value = serde_json::from_str(&m.to_json()).unwrap();
        for k in [
            "format", "version", "kind", "platform", "complete", "events", "blobs",
        ] {
            assert!(v.get(k).is_some(), "{k} missing");
        }
        assert_eq!(v["kind"], "capture");
        assert_eq!(v["platform"], "cpu");
        assert!(v.get("repaired").is_none(), "false flags are omitted");
    }

    #[test]
    fn newer_version_says_upgrade_even_if_fields_changed() {
        let text = r#"{"format":"hrr","version":3,"kind":{"new":"shape"}}"#;
        let e = Manifest::parse(text.as_bytes(), dir()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "archive cap.hrr is format version 3, this hrr reads version 2; upgrade hrr"
        );
    }

    #[test]
    fn older_version_and_foreign_formats_are_clear() {
        let e = Manifest::parse(br#"{"format":"hrr","version":0}"#, dir()).unwrap_err();
        assert!(
            e.to_string().contains("format version 0, older than"),
            "{e}"
        );
        let e = Manifest::parse(br#"{"format":"zip","version":1}"#, dir()).unwrap_err();
        assert!(e.to_string().contains("not an hrr archive"), "{e}");
        let e = Manifest::parse(b"[1]", dir()).unwrap_err();
        assert!(e.to_string().contains("not a JSON object"), "{e}");
    }

    #[test]
    fn only_a_bounded_regular_manifest_is_read() {
        let t = tempfile::tempdir().unwrap();
        let mut m = Manifest::new(ArchiveKind::Capture, Platform::Cpu);
        m.write_atomic(t.path()).unwrap();
        let path = t.path().join(MANIFEST_FILE);
        let mut big = std::fs::read(&path).unwrap();
        big.resize(MAX_MANIFEST as usize + 1, b' ');
        std::fs::write(&path, big).unwrap();
        let e = Manifest::read(t.path()).unwrap_err();
        assert!(
            e.to_string()
                .contains("more than the 1048576 bytes a manifest may have"),
            "{e}"
        );
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let e = Manifest::read(t.path()).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        // In place (the full-disk fallback), shorter than what was there.
        std::fs::remove_file(&path).unwrap();
        m.argv = vec!["x".repeat(500)];
        m.write_atomic(t.path()).unwrap();
        m.argv.clear();
        m.extra
            .insert(INCOMPLETE_FIELD.into(), Value::from("disk full"));
        m.write_in_place(t.path()).unwrap();
        let back = Manifest::read(t.path()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.incomplete_reason(), Some("disk full"));
    }

    #[test]
    fn marking_incomplete_keeps_the_first_reason() {
        let mut m = Manifest::new(ArchiveKind::Capture, Platform::Cpu);
        m.complete = true;
        m.mark_incomplete("blob check: 1 of 2 blobs missing");
        assert!(!m.complete);
        assert_eq!(
            m.incomplete_reason(),
            Some("blob check: 1 of 2 blobs missing")
        );
        let mut m = Manifest::new(ArchiveKind::Capture, Platform::Cpu);
        m.extra.insert(
            INCOMPLETE_FIELD.into(),
            Value::from("blobs: blob x not written"),
        );
        m.mark_incomplete("blob check: 1 of 2 blobs missing");
        m.mark_incomplete("blob check: 1 of 2 blobs missing");
        assert_eq!(
            m.incomplete_reason(),
            Some("blobs: blob x not written; blob check: 1 of 2 blobs missing")
        );
    }

    #[test]
    fn unrecorded_calls_are_kept_and_summarised() {
        let mut m = Manifest::new(ArchiveKind::Capture, Platform::Cpu);
        assert!(
            !m.to_json().contains("unrecorded"),
            "absent when there were none"
        );
        assert_eq!(
            UnrecordedCalls(&m.unrecorded).to_string(),
            "unrecorded : 0 calls"
        );
        m.unrecorded.insert("hipMemcpy2D".into(), 2);
        let again = Manifest::parse(m.to_json().as_bytes(), dir()).unwrap();
        assert_eq!(again.unrecorded, m.unrecorded);
        assert_eq!(
            UnrecordedCalls(&again.unrecorded).to_string(),
            "unrecorded : 2 calls (hipMemcpy2D \u{d7}2)"
        );
        // By count, then name; capped with an ellipsis.
        let mut many = BTreeMap::new();
        for (i, n) in ["b", "a", "c", "d", "e", "f", "g", "h", "i", "j"]
            .iter()
            .enumerate()
        {
            many.insert(n.to_string(), if i < 2 { 5 } else { 1 });
        }
        assert_eq!(
            UnrecordedCalls(&many).to_string(),
            "unrecorded : 18 calls (a \u{d7}5, b \u{d7}5, c \u{d7}1, d \u{d7}1, e \u{d7}1, f \u{d7}1, g \u{d7}1, h \u{d7}1, \u{2026})"
        );
        // A malformed field is an error naming the manifest.
        let bad = br#"{"format":"hrr","version":1,"kind":"capture","platform":"cpu","complete":true,"events":0,"blobs":0,"unrecorded":{"hipMemcpy2D":"two"}}"#;
        let e = Manifest::parse(bad, dir()).unwrap_err();
        assert!(e.to_string().contains("invalid manifest"), "{e}");
    }

    #[test]
    fn atomic_write_replaces() {
        let t = tempfile::tempdir().unwrap();
        let mut m = Manifest::new(ArchiveKind::Capture, Platform::Amd);
        m.write_atomic(t.path()).unwrap();
        m.complete = true;
        m.events = 9;
        m.write_atomic(t.path()).unwrap();
        assert_eq!(Manifest::read(t.path()).unwrap(), m);
        let names: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("manifest.json")],
            "no temp left behind"
        );
    }
}
