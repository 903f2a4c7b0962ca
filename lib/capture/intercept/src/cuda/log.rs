//! `HRR_LOG`: diagnostics of the CUDA family on stderr (never stdout: it
//! belongs to the application).
//!
//! `HRR_LOG` unset, empty or `0`: silent (problems still reach stderr as
//! `Recorder::warn` warnings). Any other value: one line per fat-binary
//! registration problem, per kernel's first launch (its layout source,
//! parameter count and code blob), per unknown kernel handle, and the
//! platform switch. Lines start with `hrr-intercept: cuda: `.

#![deny(unsafe_code)]

use std::sync::OnceLock;

/// Whether `HRR_LOG` asks for diagnostics (read once).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| parse(std::env::var_os("HRR_LOG").as_deref()))
}

fn parse(v: Option<&std::ffi::OsStr>) -> bool {
    v.is_some_and(|v| !v.is_empty() && v != "0")
}

/// Prints `msg` when `HRR_LOG` is on.
pub fn diag(msg: impl FnOnce() -> String) {
    if enabled() {
        eprintln!("hrr-intercept: cuda: {}", msg());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn switch_values() {
        assert!(!parse(None));
        assert!(!parse(Some(OsStr::new(""))));
        assert!(!parse(Some(OsStr::new("0"))));
        assert!(parse(Some(OsStr::new("1"))));
        assert!(parse(Some(OsStr::new("debug"))));
    }
}
