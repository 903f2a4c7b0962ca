//! Capture windows: the setting that picks a part of a long run
//! (`hrr-cap --window SPEC`, `HRR_WINDOW=SPEC`) and what a window's
//! archive says about itself in its manifest (`"window": {…}`).
//!
//! Shared by the capture library (which parses the setting and writes the
//! manifest field), `hrr-cap` (which checks the setting before starting the
//! application and finds the later windows' archives) and the readers
//! (`hrr-play --info`).

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::manifest::Manifest;

/// The environment variable the capture library reads the setting from.
pub const ENV_WINDOW: &str = "HRR_WINDOW";

/// The manifest field of a window's archive.
pub const WINDOW_FIELD: &str = "window";

/// What opens and closes a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowSpec {
    /// `profiler`: `cudaProfilerStart`/`cuProfilerStart`/`hipProfilerStart`
    /// to the matching stop.
    Profiler,
    /// `launches:A..B`: from the A-th kernel launch of the process to the
    /// B-th (0-based, inclusive).
    Launches {
        /// First launch inside.
        first: u64,
        /// Last launch inside.
        last: u64,
    },
    /// `signal` or `signal:NAME`: the signal (SIGUSR2 by default) opens a
    /// window, the next one closes it.
    Signal {
        /// The signal's number.
        signo: i32,
        /// Its name without `SIG` (`USR2`).
        name: String,
    },
}

/// A window setting that names nothing this library knows.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WindowSpecError {
    /// Not one of the three forms.
    #[error("window {0:?}: expected profiler, launches:A..B or signal[:NAME]")]
    Form(String),
    /// `launches:` with bounds that do not parse or are out of order.
    #[error(
        "window {0:?}: expected launches:A..B with 0-based launch numbers A <= B (e.g. launches:100..199)"
    )]
    Launches(String),
    /// `signal:` naming no signal that can be caught.
    #[error("window {0:?}: unknown signal (use USR1, USR2, HUP, ALRM, ... or a number)")]
    Signal(String),
}

/// Catchable signals a window may be driven by, by name.
const SIGNALS: &[(&str, i32)] = &[
    ("USR1", libc::SIGUSR1),
    ("USR2", libc::SIGUSR2),
    ("HUP", libc::SIGHUP),
    ("ALRM", libc::SIGALRM),
    ("URG", libc::SIGURG),
    ("WINCH", libc::SIGWINCH),
    ("PROF", libc::SIGPROF),
    ("VTALRM", libc::SIGVTALRM),
];

impl WindowSpec {
    /// Parses `profiler`, `launches:A..B`, `signal` or `signal:NAME` (NAME
    /// with or without `SIG`, any case, or a number).
    pub fn parse(s: &str) -> Result<WindowSpec, WindowSpecError> {
        let t = s.trim();
        if t == "profiler" {
            return Ok(WindowSpec::Profiler);
        }
        if let Some(range) = t.strip_prefix("launches:") {
            let bad = || WindowSpecError::Launches(s.to_string());
            let (a, b) = range.split_once("..").ok_or_else(bad)?;
            let first: u64 = a.trim().parse().map_err(|_| bad())?;
            let last: u64 = b.trim().parse().map_err(|_| bad())?;
            if first > last {
                return Err(bad());
            }
            return Ok(WindowSpec::Launches { first, last });
        }
        if t == "signal" {
            return Ok(WindowSpec::Signal {
                signo: libc::SIGUSR2,
                name: "USR2".into(),
            });
        }
        if let Some(n) = t.strip_prefix("signal:") {
            let up = n.trim().to_ascii_uppercase();
            let up = up.strip_prefix("SIG").unwrap_or(&up).to_string();
            let found = SIGNALS
                .iter()
                .find(|(name, no)| *name == up || up.parse::<i32>() == Ok(*no));
            return match found {
                Some((name, no)) => Ok(WindowSpec::Signal {
                    signo: *no,
                    name: (*name).to_string(),
                }),
                None => Err(WindowSpecError::Signal(s.to_string())),
            };
        }
        Err(WindowSpecError::Form(s.to_string()))
    }

    /// The trigger's name in the manifest (`profiler`, `launches`, `signal`).
    pub fn trigger(&self) -> &'static str {
        match self {
            WindowSpec::Profiler => "profiler",
            WindowSpec::Launches { .. } => "launches",
            WindowSpec::Signal { .. } => "signal",
        }
    }
}

impl fmt::Display for WindowSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowSpec::Profiler => f.write_str("profiler"),
            WindowSpec::Launches { first, last } => write!(f, "launches:{first}..{last}"),
            WindowSpec::Signal { name, .. } => write!(f, "signal:{name}"),
        }
    }
}

/// The `window` field of a window's manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowInfo {
    /// `profiler`, `launches` or `signal`.
    pub trigger: String,
    /// The setting as given (`launches:100..199`).
    #[serde(default)]
    pub spec: String,
    /// 1 for the run's first window, 2 for the second, ….
    pub index: u32,
    /// Bytes of device and host memory the state preamble restores.
    pub state_bytes: u64,
    /// Allocations the preamble restores.
    #[serde(default)]
    pub state_allocs: u64,
    /// Whether the window was opened at all (a run that never reached its
    /// trigger leaves an archive with `opened:false` and no events).
    #[serde(default = "yes")]
    pub opened: bool,
    /// Whether the run ended inside the window (finished at exit, not at its
    /// closing trigger).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closed_at_exit: bool,
    /// What the preamble could not rebuild (an exported IPC handle, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_restored: Vec<String>,
}

fn yes() -> bool {
    true
}

impl WindowInfo {
    /// The manifest's window field (`None`: a whole-run archive, or a field
    /// this reader cannot read).
    pub fn of(m: &Manifest) -> Option<WindowInfo> {
        m.extra
            .get(WINDOW_FIELD)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    /// As a manifest value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The archive of window `index` (1-based) of a run whose `-o` is `out`:
/// `out` itself for the first, `NAME-wK.hrr` for the K-th (NAME: `out`
/// without its `.hrr` suffix).
pub fn window_archive(out: &Path, index: u32) -> PathBuf {
    if index <= 1 {
        return out.to_path_buf();
    }
    let s = out.as_os_str().to_string_lossy();
    let s = s.trim_end_matches('/');
    let stem = s.strip_suffix(".hrr").unwrap_or(s);
    PathBuf::from(format!("{stem}-w{index}.hrr"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_print_back() {
        assert_eq!(WindowSpec::parse("profiler"), Ok(WindowSpec::Profiler));
        assert_eq!(
            WindowSpec::parse("launches:3..7"),
            Ok(WindowSpec::Launches { first: 3, last: 7 })
        );
        let usr2 = WindowSpec::parse("signal").unwrap();
        assert_eq!(usr2.to_string(), "signal:USR2");
        let usr1 = WindowSpec::parse("signal:SIGusr1").unwrap();
        assert_eq!(
            usr1,
            WindowSpec::Signal {
                signo: libc::SIGUSR1,
                name: "USR1".into()
            }
        );
        assert!(matches!(
            WindowSpec::parse("launches:7..3"),
            Err(WindowSpecError::Launches(_))
        ));
        assert!(matches!(
            WindowSpec::parse("launches:x"),
            Err(WindowSpecError::Launches(_))
        ));
        assert!(matches!(
            WindowSpec::parse("signal:KILL"),
            Err(WindowSpecError::Signal(_))
        ));
        assert!(matches!(
            WindowSpec::parse("steps"),
            Err(WindowSpecError::Form(_))
        ));
    }

    #[test]
    fn later_windows_go_beside_the_first() {
        let out = Path::new("/x/run.hrr");
        assert_eq!(window_archive(out, 1), out);
        assert_eq!(window_archive(out, 2), Path::new("/x/run-w2.hrr"));
        assert_eq!(
            window_archive(Path::new("/x/run"), 3),
            Path::new("/x/run-w3.hrr")
        );
    }
}
