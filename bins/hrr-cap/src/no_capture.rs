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
    fn note_file_is_created_empty_and_removed() {
        let f = NoteFile::create().unwrap();
        let p = f.path().to_path_buf();
        assert_eq!(fs::read_to_string(&p).unwrap(), "");
        drop(f);
        assert!(!p.exists());
    }
}
