//! `run`: set up the preload, run the application, report.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use hrr_core::manifest::{Manifest, UnrecordedCalls};

use crate::args::{Args, PlatformArg};
use crate::error::CapError;
use crate::intercept_lib;
use crate::no_capture::{self, NoteFile};
use crate::summary::{ArchiveSummary, child_archives};
use crate::verify;

/// The capture library's switch for its HSA region producer (its `config`).
pub const ENV_HSA_REGIONS: &str = "HRR_HSA_REGIONS";

/// The capture library's switch keeping events plain (its `config`).
pub const ENV_EVENTS: &str = "HRR_EVENTS";

/// Runs the capture; `Ok` carries the exit status hrr-cap should end with.
pub fn run(args: &Args) -> Result<u8, CapError> {
    let app = &args.command[0];
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("hrr-cap"));
    let lib = intercept_lib::find(
        &exe,
        std::env::var_os(intercept_lib::ENV_INTERCEPT).map(PathBuf::from),
    )?;
    let dir = match &args.output {
        Some(d) => d.clone(),
        None => default_dir(app, SystemTime::now()),
    };
    let created = prepare_dir(&dir)?;
    let dir = std::path::absolute(&dir).unwrap_or(dir);

    let mut cmd = Command::new(app);
    cmd.args(&args.command[1..]);
    cmd.env(
        "LD_PRELOAD",
        preload_value(&lib, std::env::var_os("LD_PRELOAD")),
    );
    cmd.env("HRR_OUT", &dir);
    // Every process of the run inherits it: their archives say they are
    // this run's (`job`).
    let job_id = crate::job::new_id();
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    cmd.env(hrr_core::process_info::ENV_JOB, &job_id);
    if args.plain {
        cmd.env(ENV_EVENTS, "plain");
    }
    if let Some(w) = &args.window {
        cmd.env(hrr_core::window::ENV_WINDOW, w.to_string());
    }
    // Only the flag turns the HSA producer on, never an inherited variable.
    if args.hsa_regions {
        cmd.env(ENV_HSA_REGIONS, "1");
    } else {
        cmd.env_remove(ENV_HSA_REGIONS);
    }
    let note = NoteFile::create();
    if let Some(n) = &note {
        cmd.env(no_capture::ENV_NOTE, n.path());
    }
    match args.platform {
        PlatformArg::Auto => {}
        PlatformArg::Hip => {
            cmd.env("HRR_PLATFORM", "hip");
        }
        PlatformArg::Cuda => {
            cmd.env("HRR_PLATFORM", "nvidia");
        }
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(source) => {
            if created {
                let _ = fs::remove_dir(&dir);
            }
            return Err(CapError::Spawn {
                app: app.clone(),
                source,
            });
        }
    };
    // Set after the spawn, so the application does not inherit them.
    let app_pid = child.id();
    let forwarding = forward_signals_to(app_pid);
    let status = child.wait().map_err(|source| CapError::Spawn {
        app: app.clone(),
        source,
    })?;
    if let Some(h) = forwarding {
        h.close();
    }

    // The blobs checked first: a bad one marks the archive incomplete,
    // which the summary then says.
    let mut archive_bad = false;
    if Manifest::read(&dir).is_ok() {
        archive_bad = verify::library_failures(&dir) > 0;
        if !args.no_verify && !verify::run(&dir) {
            archive_bad = true;
        }
        crate::compact::run(&dir);
    }
    let summary = ArchiveSummary::read(&dir);
    let mut line = format!("hrr-cap: {summary} -> {}", dir.display());
    if let Some(sig) = status.signal() {
        line.push_str(&format!(" (incomplete: app died by signal {sig})"));
    } else if summary.complete == Some(false) {
        // The reason the archive gives (a failed write, a torn line, ...).
        let why = hrr_core::archive::Archive::open(&dir)
            .ok()
            .and_then(|a| a.incomplete_reason())
            .unwrap_or_else(|| "the archive was not finished".into());
        line.push_str(&format!(" (incomplete: {why})"));
    } else if summary.complete.is_none() {
        let notes = note.as_ref().map(NoteFile::read);
        // No manifest: either nothing was recorded, or the archive could
        // not be written (a full disk) and what was recorded is lost.
        match no_capture::not_written(&dir, notes.as_ref()) {
            Some(why) => line.push_str(&format!(" (incomplete: {why})")),
            None => {
                line.push_str(&format!(
                    " (nothing recorded: {})",
                    no_capture::reason(notes.as_ref(), args.platform)
                ));
                if created {
                    let _ = fs::remove_dir(&dir);
                }
            }
        }
    } else if let Some(w) = Manifest::read(&dir)
        .ok()
        .and_then(|m| hrr_core::window::WindowInfo::of(&m))
        .filter(|w| !w.opened)
    {
        // A finished, empty archive: the run never reached its trigger.
        line.push_str(&format!(
            " (nothing recorded: the capture window {} never opened)",
            w.spec
        ));
    }
    let children = crate::job::of_this_run(child_archives(&dir), &job_id, started);
    if !children.is_empty() {
        let names: Vec<String> = children.iter().map(|c| c.display().to_string()).collect();
        line.push_str(&format!(
            " (+{} child process archive(s): {})",
            children.len(),
            names.join(", ")
        ));
    }
    // The other processes' archives are checked as the first one is.
    for c in &children {
        if Manifest::read(c).is_ok() {
            archive_bad |= verify::library_failures(c) > 0;
            if !args.no_verify && !verify::run(c) {
                archive_bad = true;
            }
            crate::compact::run(c);
        }
    }
    let argv = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // The job of a run that recorded several processes is said before the
    // summary, so that the summary and the accounting line stay the last
    // two lines, as for any capture.
    match crate::job::write(&dir, &children, &job_id, app_pid, argv) {
        Ok(Some((file, job))) => eprintln!("{}", crate::job::line(&file, &job)),
        Ok(None) => {}
        Err(e) => {
            eprintln!(
                "hrr-cap: error: writing the job file: {}",
                hrr_core::message::chain(&e)
            );
            archive_bad = true;
        }
    }
    eprintln!("{line}");
    if args.window.is_some() {
        archive_bad |= later_windows(&dir, args.no_verify);
    }
    match &summary.unrecorded {
        Some(u) => eprintln!("{}", UnrecordedCalls(u)),
        None => eprintln!("unrecorded : unknown (the archive was not finished)"),
    }
    Ok(match exit_code(status) {
        0 if archive_bad => crate::error::EXIT_ARCHIVE_BAD,
        app => app,
    })
}

/// Checks and reports the archives of a run's windows after the first
/// (`NAME-w2.hrr`, …, as long as they exist); `true` when one is bad.
fn later_windows(dir: &Path, no_verify: bool) -> bool {
    let mut bad = false;
    for index in 2.. {
        let w = hrr_core::window::window_archive(dir, index);
        if Manifest::read(&w).is_err() {
            break;
        }
        bad |= verify::library_failures(&w) > 0;
        if !no_verify && !verify::run(&w) {
            bad = true;
        }
        let summary = ArchiveSummary::read(&w);
        let mut line = format!("hrr-cap: {summary} -> {}", w.display());
        if summary.complete == Some(false) {
            line.push_str(" (incomplete)");
        }
        eprintln!("{line}");
    }
    bad
}

/// The application's exit status as hrr-cap's: its code, or 128+signal.
pub fn exit_code(status: std::process::ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(c), _) => (c & 0xff) as u8,
        (None, Some(s)) => (128 + s).clamp(0, 255) as u8,
        (None, None) => 1,
    }
}

/// `LD_PRELOAD` with the capture library first (it must interpose before
/// anything else the user preloads).
pub fn preload_value(lib: &Path, existing: Option<OsString>) -> OsString {
    let mut v = lib.as_os_str().to_os_string();
    if let Some(e) = existing.filter(|e| !e.is_empty()) {
        v.push(":");
        v.push(e);
    }
    v
}

/// Creates `dir` (or accepts an existing empty one) and checks it is
/// writable. Returns whether hrr-cap created it.
fn prepare_dir(dir: &Path) -> Result<bool, CapError> {
    let err = |source| CapError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    use std::os::unix::fs::DirBuilderExt;
    // Archives hold the application's data: private to the user.
    let mut builder = fs::DirBuilder::new();
    builder.mode(hrr_core::safe_fs::DIR_MODE);
    let created = match builder.create(dir) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if !dir.is_dir() {
                return Err(err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "exists and is not a directory",
                )));
            }
            if fs::read_dir(dir).map_err(err)?.next().is_some() {
                return Err(CapError::DirNotEmpty {
                    path: dir.to_path_buf(),
                });
            }
            false
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            builder.recursive(true).create(dir).map_err(err)?;
            true
        }
        Err(e) => return Err(err(e)),
    };
    // A symlink in place of the directory is never recorded through.
    if fs::symlink_metadata(dir)
        .map_err(err)?
        .file_type()
        .is_symlink()
    {
        return Err(err(io::Error::other(
            "is a symbolic link; refusing to record through it",
        )));
    }
    let probe = dir.join(".hrr-cap-probe");
    let probe_file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&probe);
    if let Err(e) = probe_file {
        if created {
            let _ = fs::remove_dir(dir);
        }
        return Err(err(e));
    }
    let _ = fs::remove_file(&probe);
    Ok(created)
}

/// `hrr-<app>-<YYYYmmddTHHMMSSZ>.hrr` in the current directory.
pub fn default_dir(app: &OsString, now: SystemTime) -> PathBuf {
    let base = Path::new(app)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "app".into());
    let base: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from(format!("hrr-{base}-{}.hrr", utc_stamp(secs)))
}

/// `YYYYmmddTHHMMSSZ` for Unix time `secs` (civil-from-days, proleptic
/// Gregorian; no time-zone database needed).
fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Passes SIGTERM, SIGHUP, SIGINT and SIGQUIT sent to hrr-cap alone
/// (`timeout 60 hrr-cap …`, `kill -INT`, a job scheduler, a closed
/// terminal) on to the application `pid`, so that it ends as it would
/// without hrr-cap — its capture library then marks the archive as cut
/// short — while hrr-cap stays to report. A terminal's Ctrl-C or Ctrl-\
/// reaches the whole process group, the application included: those
/// (sent by the kernel) are not passed on again, and hrr-cap stays. The
/// handle stops the forwarding once the application is reaped; `None`
/// when the handlers could not be installed (said on stderr).
fn forward_signals_to(pid: u32) -> Option<signal_hook::iterator::Handle> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    use signal_hook::iterator::SignalsInfo;
    use signal_hook::iterator::exfiltrator::WithOrigin;
    use signal_hook::low_level::siginfo::Cause;
    let mut signals = match SignalsInfo::<WithOrigin>::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("hrr-cap: warning: signals to hrr-cap will not reach the application: {e}");
            return None;
        }
    };
    let handle = signals.handle();
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return None;
    };
    std::thread::spawn(move || {
        for origin in signals.forever() {
            let from_terminal =
                matches!(origin.signal, SIGINT | SIGQUIT) && matches!(origin.cause, Cause::Kernel);
            if !from_terminal {
                // SAFETY: kill(2) has no memory effects; `pid` is the child
                // hrr-cap spawned, not reaped while this handle is open.
                unsafe { libc::kill(pid, origin.signal) };
            }
        }
    });
    Some(handle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stamps() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
        assert_eq!(utc_stamp(1_767_225_599), "20251231T235959Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(86_400 + 61);
        assert_eq!(
            default_dir(&"/usr/bin/my app".into(), t),
            PathBuf::from("hrr-my_app-19700102T000101Z.hrr")
        );
    }

    #[test]
    fn preload_goes_first() {
        let lib = Path::new("/x/libhrr_intercept.so");
        assert_eq!(
            preload_value(lib, None),
            OsString::from("/x/libhrr_intercept.so")
        );
        assert_eq!(
            preload_value(lib, Some("".into())),
            OsString::from("/x/libhrr_intercept.so")
        );
        assert_eq!(
            preload_value(lib, Some("/a.so".into())),
            OsString::from("/x/libhrr_intercept.so:/a.so")
        );
    }

    #[test]
    fn exit_codes() {
        use std::process::ExitStatus;
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(11)), 139);
        assert_eq!(exit_code(ExitStatus::from_raw(9)), 137);
    }

    #[test]
    fn dirs() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b.hrr");
        assert!(prepare_dir(&d).unwrap());
        assert!(!prepare_dir(&d).unwrap(), "existing empty dir is fine");
        fs::write(d.join("x"), b"").unwrap();
        assert!(matches!(prepare_dir(&d), Err(CapError::DirNotEmpty { .. })));
        assert!(matches!(
            prepare_dir(Path::new("/proc/nope.hrr")),
            Err(CapError::Dir { .. })
        ));
    }
}
