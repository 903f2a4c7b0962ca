//! Why nothing was recorded: which runtime the capture expected, and what
//! the application's processes said when they exited without recording.
//!
//! hrr-cap names a note file in the application's environment
//! (`HRR_CAP_NOTE`); every process in which the capture library ran and
//! recorded nothing appends one JSON line to it at `exit()`:
//! `{"pid":…,"hip_runtime":PATH|null,"cuda_runtime":PATH|null,"cuda_driver":PATH|null,"queried":bool}`
//! (the runtime library the process had loaded, the CUDA driver if it had
//! loaded it, and whether it made calls the capture library forwards
//! without recording by design).

use std::fs;
use std::path::{Path, PathBuf};

use hrr_core::message::chain;

use crate::args::PlatformArg;

/// Environment variable the capture library reads the note path from.
pub const ENV_NOTE: &str = "HRR_CAP_NOTE";

/// The note file of one capture: created empty, removed on drop.
pub struct NoteFile {
    path: PathBuf,
}

impl NoteFile {
    /// A fresh empty note file in the temporary directory (`None` when it
    /// cannot be created: the message is then less precise, nothing else).
    pub fn create() -> Option<NoteFile> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path =
            std::env::temp_dir().join(format!("hrr-cap-{}-{nanos}.note", std::process::id()));
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .ok()?;
        Some(NoteFile { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn read(&self) -> Notes {
        Notes::parse(&fs::read_to_string(&self.path).unwrap_or_default())
    }
}

impl Drop for NoteFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// What the processes that recorded nothing reported.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Notes {
    /// Processes that reported.
    pub processes: usize,
    /// The HIP runtime libraries they had loaded (first seen first).
    pub hip: Vec<String>,
    pub cuda: Vec<String>,
    /// The CUDA drivers (`libcuda.so.1`) they had loaded.
    pub driver: Vec<String>,
    /// Whether any made a call forwarded unrecorded by design (a query).
    pub queried: bool,
}

impl Notes {
    /// Parses note lines; a line that is not one (torn, foreign) is skipped.
    pub fn parse(text: &str) -> Notes {
        let mut n = Notes::default();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if !v.is_object() {
                continue;
            }
            n.processes += 1;
            n.queried |= v["queried"].as_bool().unwrap_or(false);
            for (key, list) in [
                ("hip_runtime", &mut n.hip),
                ("cuda_runtime", &mut n.cuda),
                ("cuda_driver", &mut n.driver),
            ] {
                if let Some(p) = v[key].as_str()
                    && !list.iter().any(|q| q == p)
                {
                    list.push(p.to_string());
                }
            }
        }
        n
    }
}

/// The runtime a capture with `--platform p` expects the application to load.
pub fn expected(p: PlatformArg) -> &'static str {
    match p {
        PlatformArg::Auto => {
            "a HIP runtime (libamdhip64.so, libhrr_hip_cpu.so) or the CUDA runtime (libcudart.so)"
        }
        PlatformArg::Hip => "a HIP runtime (libamdhip64.so, libhrr_hip_cpu.so)",
        PlatformArg::Cuda => "the CUDA runtime (libcudart.so)",
    }
}

/// Why an archive with no manifest is not merely empty, if it is not: the
/// capture library started it (its lock file, events file or blob store
/// is there) and could not write it, or the file system holding it
/// refuses a write (a full disk) while the application loaded a runtime
/// (or no process could leave a note). Then what the application did was
/// not recorded: its events are lost, and the archive is incomplete. The
/// cause is found by writing a block in the archive directory (a
/// temporary, removed), which fails as the capture library's writes did.
pub fn not_written(dir: &Path, notes: Option<&Notes>) -> Option<String> {
    let started = [
        hrr_core::archive::OWNER_FILE,
        hrr_core::archive_writer::EVENTS_FILE,
        hrr_core::blob_store::BLOBS_DIR,
    ]
    .iter()
    .any(|f| fs::symlink_metadata(dir.join(f)).is_ok());
    let refused = write_refused(dir).map(|e| format!("{}: {}", dir.display(), chain(&e)));
    let lost = "the application's calls were not recorded; its events are lost";
    if started {
        return Some(match refused {
            Some(cause) => {
                format!("the capture library could not write the archive ({cause}): {lost}")
            }
            None => {
                format!("the capture library started the archive but wrote no manifest: {lost}")
            }
        });
    }
    let loaded = notes.is_none_or(|n| {
        n.processes == 0 || !n.hip.is_empty() || !n.cuda.is_empty() || !n.driver.is_empty()
    });
    let cause = refused.filter(|_| loaded)?;
    Some(format!(
        "the archive could not be written ({cause}): {lost}"
    ))
}

/// The error writing a block into a new file in `dir` gives, if it fails
/// as a full disk (or a file size limit) fails a write.
fn write_refused(dir: &Path) -> Option<std::io::Error> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let full = |e: &std::io::Error| {
        matches!(
            e.raw_os_error(),
            Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG)
        )
    };
    let probe = dir.join(format!(".hrr-cap-space-{}", std::process::id()));
    let mut f = match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(hrr_core::safe_fs::FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&probe)
    {
        Ok(f) => f,
        Err(e) => return full(&e).then_some(e),
    };
    let written = f.write_all(&[0u8; 4096]).and_then(|()| f.sync_all());
    drop(f);
    let _ = fs::remove_file(&probe);
    written.err().filter(full)
}

/// The reason given in `(nothing recorded: REASON)`.
pub fn reason(notes: Option<&Notes>, platform: PlatformArg) -> String {
    let Some(n) = notes.filter(|n| n.processes > 0) else {
        // No process reported: the capture library did not run to exit()
        // in any (a static executable, or every process left by _exit).
        return "the app made no HIP call through the capture library".into();
    };
    let loaded = |family: &str, paths: &[String]| {
        if n.queried {
            format!(
                "the app loaded the {family} runtime {} and made only calls that change no device state (queries)",
                paths.join(", ")
            )
        } else {
            format!(
                "the app loaded the {family} runtime {} but made no {family} call",
                paths.join(", ")
            )
        }
    };
    if !n.hip.is_empty() {
        loaded("HIP", &n.hip)
    } else if !n.cuda.is_empty() {
        loaded("CUDA", &n.cuda)
    } else if !n.driver.is_empty() {
        format!(
            "the app loaded the CUDA driver {} but made no CUDA call the capture library records",
            n.driver.join(", ")
        )
    } else {
        format!("expected {}, but the app loaded none", expected(platform))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_merge_processes() {
        let n = Notes::parse(concat!(
            r#"{"pid":1,"hip_runtime":null,"cuda_runtime":null,"queried":false}"#,
            "\n",
            r#"{"pid":2,"hip_runtime":"/l/libhrr_hip_cpu.so","cuda_runtime":null,"queried":true}"#,
            "\n",
            r#"{"pid":3,"hip_runtime":"/l/libhrr_hip_cpu.so","cuda_runtime":null,"queried":false}"#,
            "\n{\"pid\":4,\"hip_r"
        ));
        assert_eq!(
            n,
            Notes {
                processes: 3,
                hip: vec!["/l/libhrr_hip_cpu.so".into()],
                cuda: vec![],
                driver: vec![],
                queried: true
            }
        );
    }

    #[test]
    fn reasons() {
        assert_eq!(
            reason(None, PlatformArg::Auto),
            "the app made no HIP call through the capture library"
        );
        let none =
            Notes::parse(r#"{"pid":1,"hip_runtime":null,"cuda_runtime":null,"queried":false}"#);
        assert_eq!(
            reason(Some(&none), PlatformArg::Hip),
            "expected a HIP runtime (libamdhip64.so, libhrr_hip_cpu.so), but the app loaded none"
        );
        let hip = Notes::parse(
            r#"{"pid":1,"hip_runtime":"/r/libamdhip64.so.5","cuda_runtime":null,"queried":false}"#,
        );
        assert_eq!(
            reason(Some(&hip), PlatformArg::Auto),
            "the app loaded the HIP runtime /r/libamdhip64.so.5 but made no HIP call"
        );
        let q = Notes::parse(
            r#"{"pid":1,"hip_runtime":null,"cuda_runtime":"/c/libcudart.so.13","queried":true}"#,
        );
        assert!(
            reason(Some(&q), PlatformArg::Cuda).starts_with(
                "the app loaded the CUDA runtime /c/libcudart.so.13 and made only calls"
            )
        );
        // A static runtime or a driver-API program: only the driver.
        let drv = Notes::parse(
            r#"{"pid":1,"hip_runtime":null,"cuda_runtime":null,"cuda_driver":"/d/libcuda.so.1","queried":false}"#,
        );
        assert_eq!(
            reason(Some(&drv), PlatformArg::Cuda),
            "the app loaded the CUDA driver /d/libcuda.so.1 but made no CUDA call the capture library records"
        );
    }

    #[test]
    fn an_archive_the_library_started_and_could_not_write_lost_its_events() {
        let t = tempfile::tempdir().unwrap();
        let queried = Notes::parse(
            r#"{"pid":1,"hip_runtime":"/l/libhrr_hip_cpu.so","cuda_runtime":null,"queried":true}"#,
        );
        // Nothing there, and room to write: nothing was recorded.
        assert_eq!(not_written(t.path(), Some(&queried)), None);
        assert_eq!(not_written(t.path(), None), None);
        // The capture library claimed the directory and wrote no manifest.
        fs::write(t.path().join(hrr_core::archive::OWNER_FILE), b"").unwrap();
        assert_eq!(
            not_written(t.path(), Some(&queried)).as_deref(),
            Some(
                "the capture library started the archive but wrote no manifest: the \
                 application's calls were not recorded; its events are lost"
            )
        );
        // The probe leaves nothing behind.
        let names: Vec<_> = fs::read_dir(t.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn note_file_is_created_empty_and_removed() {
        let f = NoteFile::create().unwrap();
        let p = f.path().to_path_buf();
        assert_eq!(fs::read_to_string(&p).unwrap(), "");
        drop(f);
        assert!(!p.exists());
    }
}
