//! Jobs: every process archive of one run, as one set (FORMAT.md, *Jobs*).
//!
//! Each recording process of a run writes an archive of its own: the first
//! claims `NAME.hrr`, the others `NAME-PID.hrr` beside it. When a run
//! recorded more than one, `hrr-cap` writes the *job file*
//! `NAME.job.json` beside them ([`job_file`]), listing each archive with
//! its process (pid, parent, command line, rank). It lives beside the
//! archives, not in one: `NAME.hrr` belongs to whichever process claimed
//! it first (a launcher that makes no GPU call never does), a claimed
//! archive is written by its process alone, and `hrr-play -o OUT` writes
//! `OUT.hrr` before it knows of a job. A run with one recording process
//! has no job file, so its archive is used exactly as it always was.

mod job_error;
mod job_process;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use job_error::JobError;
pub use job_process::JobProcess;

use crate::manifest::ArchiveKind;

/// A job file's `format`.
pub const JOB_FORMAT: &str = "hrr-job";
/// The job file format this hrr writes (and the newest it reads).
pub const JOB_VERSION: u32 = 1;
/// What follows the run's name in a job file's name.
pub const JOB_SUFFIX: &str = ".job.json";
/// Largest job file read: a process takes a few hundred bytes.
pub const MAX_JOB_FILE: u64 = 16 << 20;

/// `NAME.job.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobManifest {
    /// Always [`JOB_FORMAT`].
    pub format: String,
    /// [`JOB_VERSION`] when written by this hrr.
    pub version: u32,
    /// A job of captures (`hrr-cap`) or of replays (`hrr-play -o`).
    pub kind: ArchiveKind,
    /// `true` when every process archive was complete.
    pub complete: bool,
    /// The run's job id (`HRR_JOB`), when `hrr-cap` gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool and version that wrote the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Unix time (s) the file was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<u64>,
    /// Captures: the command `hrr-cap` ran (the launcher).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// Captures: the pid of that command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_pid: Option<u32>,
    /// Replays: the job replayed, as given on the command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
    /// The process archives, by rank (then start, then pid).
    pub processes: Vec<JobProcess>,
    /// Fields this version does not know, preserved verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The job file of the run recorded as `archive`: `cap.hrr` →
/// `cap.job.json` beside it (`out` → `out.job.json`).
pub fn job_file(archive: &Path) -> PathBuf {
    archive.with_file_name(format!("{}{JOB_SUFFIX}", stem(archive)))
}

/// The run's name: `cap.hrr` → `cap`.
pub fn stem(archive: &Path) -> String {
    let name = archive
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hrr".into());
    match name.strip_suffix(JOB_SUFFIX) {
        Some(s) => s.to_string(),
        None => name.strip_suffix(".hrr").unwrap_or(&name).to_string(),
    }
}

/// The job `path` names, if it names one: a job file itself, or the name
/// a run was recorded as (`-o`) when its job file is beside it — whether
/// or not an archive of that name exists.
pub fn locate(path: &Path) -> Option<PathBuf> {
    let is_file = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file());
    if path.to_string_lossy().ends_with(JOB_SUFFIX) && is_file(path) {
        return Some(path.to_path_buf());
    }
    let f = job_file(path);
    is_file(&f).then_some(f)
}

impl JobManifest {
    /// A job of `kind` with no process yet.
    pub fn new(kind: ArchiveKind) -> JobManifest {
        JobManifest {
            format: JOB_FORMAT.into(),
            version: JOB_VERSION,
            kind,
            complete: false,
            id: None,
            tool: Some(concat!("hrr ", env!("CARGO_PKG_VERSION")).to_string()),
            created: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|d| d.as_secs()),
            argv: Vec::new(),
            app_pid: None,
            replay_of: None,
            processes: Vec::new(),
            extra: Map::new(),
        }
    }

    /// Reads and checks a job file (a regular file of at most
    /// [`MAX_JOB_FILE`] bytes; every archive a plain name).
    pub fn read(path: &Path) -> Result<JobManifest, JobError> {
        let bytes = crate::safe_fs::read_limited(
            path,
            crate::safe_fs::Follow::Yes,
            MAX_JOB_FILE,
            "job file",
        )?;
        JobManifest::parse(&bytes, path)
    }

    /// Parses job file bytes (`path` for messages).
    pub fn parse(bytes: &[u8], path: &Path) -> Result<JobManifest, JobError> {
        let invalid = |reason: String| JobError::Invalid {
            path: path.to_path_buf(),
            reason,
        };
        let v: Value = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
        if v.get("format").and_then(Value::as_str) != Some(JOB_FORMAT) {
            return Err(invalid(format!("`format` is not \"{JOB_FORMAT}\"")));
        }
        let version = v
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid("`version` missing or not an integer".into()))?;
        if version > u64::from(JOB_VERSION) {
            return Err(JobError::TooNew {
                path: path.to_path_buf(),
                version,
            });
        }
        let job: JobManifest = serde_json::from_value(v).map_err(|e| invalid(e.to_string()))?;
        // Archives are named, never pathed: a job file cannot point its
        // readers (or a replay's writers) anywhere but beside itself.
        for p in &job.processes {
            let n = p.archive.as_str();
            if n.is_empty() || n.starts_with('.') || n.contains('/') || n.contains('\0') {
                return Err(JobError::ArchiveName {
                    path: path.to_path_buf(),
                    name: p.archive.clone(),
                });
            }
        }
        Ok(job)
    }

    /// Writes the job file atomically (a temporary beside it, renamed).
    pub fn write(&self, path: &Path) -> Result<(), JobError> {
        let mut s = serde_json::to_string_pretty(self).expect("a job serialises");
        s.push('\n');
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        crate::manifest::write_atomic(dir, &name, s.as_bytes()).map_err(|source| JobError::Write {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Where process `p`'s archive is, for the job file at `job_file`.
    pub fn archive_path(job_file: &Path, p: &JobProcess) -> PathBuf {
        job_file.with_file_name(&p.archive)
    }

    /// Orders the processes as jobs list them: by rank, then by start,
    /// then by pid (a process without a rank after those with one).
    pub fn sort(&mut self) {
        self.processes.sort_by_key(|p| {
            (
                p.process.rank.is_none(),
                p.process.rank,
                p.process.start_ns,
                p.process.pid,
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            job_file(Path::new("/a/cap.hrr")),
            Path::new("/a/cap.job.json")
        );
        assert_eq!(job_file(Path::new("out")), Path::new("out.job.json"));
        assert_eq!(
            job_file(Path::new("/a/cap.job.json")),
            Path::new("/a/cap.job.json")
        );
        assert_eq!(stem(Path::new("x/run.hrr")), "run");
    }

    #[test]
    fn round_trip_locate_and_refusals() {
        let t = tempfile::tempdir().unwrap();
        let cap = t.path().join("cap.hrr");
        assert_eq!(locate(&cap), None);
        let mut job = JobManifest::new(ArchiveKind::Capture);
        for (name, rank, pid) in [("cap-9.hrr", 1, 9), ("cap.hrr", 0, 8)] {
            job.processes.push(JobProcess {
                archive: name.into(),
                complete: true,
                process: crate::process_info::ProcessInfo {
                    pid,
                    rank: Some(rank),
                    ..Default::default()
                },
            });
        }
        job.sort();
        assert_eq!(job.processes[0].archive, "cap.hrr");
        let f = job_file(&cap);
        job.write(&f).unwrap();
        // Found from the run's name, with no archive of that name, and
        // from the job file itself.
        assert_eq!(locate(&cap), Some(f.clone()));
        assert_eq!(locate(&f), Some(f.clone()));
        assert_eq!(JobManifest::read(&f).unwrap(), job);
        assert_eq!(
            JobManifest::archive_path(&f, &job.processes[1]),
            t.path().join("cap-9.hrr")
        );
        let bad = br#"{"format":"hrr-job","version":1,"kind":"capture","complete":true,
            "processes":[{"archive":"../x.hrr","complete":true,"pid":1,"ppid":0}]}"#;
        assert!(matches!(
            JobManifest::parse(bad, &f),
            Err(JobError::ArchiveName { .. })
        ));
        let newer =
            br#"{"format":"hrr-job","version":9,"kind":"capture","complete":true,"processes":[]}"#;
        assert!(matches!(
            JobManifest::parse(newer, &f),
            Err(JobError::TooNew { .. })
        ));
        assert!(JobManifest::parse(b"{\"format\":\"hrr\"}", &f).is_err());
    }
}
