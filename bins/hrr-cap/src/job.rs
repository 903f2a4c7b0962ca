//! After the application: the run's process archives as one job
//! (`NAME.job.json` beside `NAME.hrr`, hrr-core's `job`), when more than
//! one process recorded.

use std::path::{Path, PathBuf};

use hrr_core::archive::Archive;
use hrr_core::job::{self, JobError, JobManifest, JobProcess};
use hrr_core::manifest::{ArchiveKind, Manifest};
use hrr_core::process_info::ProcessInfo;

/// A run's job id (`HRR_JOB`): hrr-cap's pid and the time, unique on the
/// machine.
pub fn new_id() -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{ns}", std::process::id())
}

/// The sibling archives this run recorded: an archive says which job made
/// it; one from an older capture library says when it was made. What an
/// earlier run left under the same name is neither this run's nor its
/// job's.
pub fn of_this_run(found: Vec<PathBuf>, id: &str, started: u64) -> Vec<PathBuf> {
    found
        .into_iter()
        .filter(|dir| match Manifest::read(dir) {
            // No manifest: not even started; keep saying it is there.
            Err(_) => true,
            Ok(m) => match m.process().and_then(|p| p.job) {
                Some(job) => job == id,
                None => m.created.is_none_or(|c| c >= started),
            },
        })
        .collect()
}

/// Writes `NAME.job.json` for the archive `dir` and the sibling archives
/// `children` when they are more than one process; the job and its file.
pub fn write(
    dir: &Path,
    children: &[PathBuf],
    id: &str,
    app_pid: u32,
    argv: Vec<String>,
) -> Result<Option<(PathBuf, JobManifest)>, JobError> {
    let mut archives: Vec<&Path> = Vec::new();
    if Manifest::read(dir).is_ok() {
        archives.push(dir);
    }
    archives.extend(children.iter().map(PathBuf::as_path));
    if archives.len() < 2 {
        return Ok(None);
    }
    let mut job = JobManifest::new(ArchiveKind::Capture);
    job.id = Some(id.to_string());
    job.app_pid = Some(app_pid);
    job.argv = argv;
    job.processes = archives.iter().map(|a| process(a)).collect();
    job.complete = job.processes.iter().all(|p| p.complete);
    job.sort();
    let file = job::job_file(dir);
    job.write(&file)?;
    Ok(Some((file, job)))
}

/// One process archive's entry: its manifest's `process` (or, from an
/// older capture library, the pid its manifest or name gives).
fn process(dir: &Path) -> JobProcess {
    let manifest = Manifest::read(dir).ok();
    let process = manifest
        .as_ref()
        .and_then(Manifest::process)
        .unwrap_or_else(|| ProcessInfo {
            pid: manifest
                .as_ref()
                .and_then(|m| m.extra.get("pid"))
                .and_then(serde_json::Value::as_u64)
                .map(|p| p as u32)
                .or_else(|| pid_of_name(dir))
                .unwrap_or(0),
            argv: manifest.map(|m| m.argv).unwrap_or_default(),
            ..ProcessInfo::default()
        });
    // Complete as readers judge it: the trailer checked, not the claim.
    let complete = Archive::open(dir).is_ok_and(|a| a.incomplete_reason().is_none());
    JobProcess {
        archive: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        complete,
        process,
    }
}

/// `cap-123.hrr` → 123.
fn pid_of_name(dir: &Path) -> Option<u32> {
    let name = dir.file_name()?.to_str()?.strip_suffix(".hrr")?;
    name.rsplit_once('-')?.1.parse().ok()
}

/// `job : 2 processes (rank 0, rank 1) -> FILE`, and the incomplete ones.
pub fn line(file: &Path, job: &JobManifest) -> String {
    let who: Vec<String> = job
        .processes
        .iter()
        .map(|p| match p.process.rank {
            Some(r) => format!("rank {r}"),
            None => format!("pid {}", p.process.pid),
        })
        .collect();
    let mut s = format!(
        "hrr-cap: job : {} processes ({}) -> {}",
        job.processes.len(),
        who.join(", "),
        file.display()
    );
    let bad: Vec<&str> = job
        .processes
        .iter()
        .filter(|p| !p.complete)
        .map(|p| p.archive.as_str())
        .collect();
    if !bad.is_empty() {
        s.push_str(&format!(" (incomplete: {})", bad.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_from_a_sibling_name() {
        assert_eq!(pid_of_name(Path::new("/a/cap-77.hrr")), Some(77));
        assert_eq!(pid_of_name(Path::new("/a/cap.hrr")), None);
    }
}
