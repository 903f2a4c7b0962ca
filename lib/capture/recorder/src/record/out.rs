//! `Out`: one archive the recorder writes — its directory, event stream,
//! blob files, manifest and the count of events it lost. A whole-run
//! capture has one; a windowed capture one per window (`window`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64};

use hrr_core::manifest::{ArchiveKind, Manifest, Platform};
use serde_json::{Map, Value};

use crate::record::recorder::RecorderError;
use crate::sink::blob_writer::BlobWriter;
use crate::sink::event_sink::EventSink;

/// One archive being written.
pub(crate) struct Out {
    /// Its directory (claimed).
    pub(crate) dir: PathBuf,
    /// Its events.
    pub(crate) sink: EventSink,
    /// Its blob files.
    pub(crate) blobs: BlobWriter,
    /// Its manifest, rewritten when it is finished.
    pub(crate) manifest: Mutex<Manifest>,
    /// Set once it is finished.
    pub(crate) finished: AtomicBool,
    /// Calls whose event was lost to a recorder failure.
    pub(crate) lost: AtomicU64,
}

impl Out {
    /// Creates the archive at `dir` (already claimed): `blobs/`, an empty
    /// `events.ndjson`, and `manifest.json` with `complete:false`.
    pub(crate) fn create(
        dir: &Path,
        platform: Platform,
        argv: Vec<String>,
        extra: Map<String, Value>,
    ) -> Result<Out, RecorderError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| RecorderError::Io { path, source }
        };
        let blobs = BlobWriter::new(dir).map_err(io(dir))?;
        let events_path = dir.join(hrr_core::archive_writer::EVENTS_FILE);
        // Relative to the claimed directory, O_EXCL | O_NOFOLLOW, 0600: a
        // symlink planted there is never followed.
        let file = hrr_core::safe_fs::DirFd::open(dir, hrr_core::safe_fs::Follow::No)
            .and_then(|d| d.create_file(hrr_core::archive_writer::EVENTS_FILE, true))
            .map_err(io(&events_path))?;
        let mut manifest = Manifest::new(ArchiveKind::Capture, platform);
        manifest.argv = argv;
        manifest.extra = extra;
        manifest.write_atomic(dir)?;
        let sink = EventSink::new(file);
        // Blob files the sink writes are compressed once written, as the
        // ones the recording threads write (`BlobWriter`).
        sink.compress_written(std::sync::Arc::clone(blobs.zst()));
        Ok(Out {
            dir: dir.to_path_buf(),
            sink,
            blobs,
            manifest: Mutex::new(manifest),
            finished: AtomicBool::new(false),
            lost: AtomicU64::new(0),
        })
    }
}
