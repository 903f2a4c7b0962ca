//! `JobSide`: one side of a job diff — the process archives of a job, or
//! a single archive taken as a job of one process.

use std::path::{Path, PathBuf};

use hrr_core::job::{self, JobError, JobManifest, JobProcess};
use hrr_core::manifest::Manifest;

/// The processes of one side, each with where its archive is.
#[derive(Clone, Debug)]
pub struct JobSide {
    /// The job file, or `None` for a single archive.
    pub file: Option<PathBuf>,
    /// Each process and its archive's path, in the job's order.
    pub processes: Vec<(JobProcess, PathBuf)>,
}

impl JobSide {
    /// The job `path` names (its job file, or the name its run was
    /// recorded as), else the archive at `path` as a job of one process
    /// (its manifest's `process`, when it has one).
    pub fn open(path: &Path) -> Result<JobSide, JobError> {
        if let Some(file) = job::locate(path) {
            let job = JobManifest::read(&file)?;
            let processes = job
                .processes
                .into_iter()
                .map(|p| {
                    let at = JobManifest::archive_path(&file, &p);
                    (p, at)
                })
                .collect();
            return Ok(JobSide {
                file: Some(file),
                processes,
            });
        }
        let manifest = Manifest::read(path).ok();
        let process = JobProcess {
            archive: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            complete: manifest.as_ref().is_some_and(|m| m.complete),
            process: manifest
                .as_ref()
                .and_then(Manifest::process)
                .unwrap_or_default(),
        };
        Ok(JobSide {
            file: None,
            processes: vec![(process, path.to_path_buf())],
        })
    }
}
