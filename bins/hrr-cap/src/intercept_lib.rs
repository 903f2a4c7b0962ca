//! Finding `libhrr_intercept.so`.
//!
//! `HRR_INTERCEPT` wins when set. Otherwise the library is expected next to
//! the `hrr-cap` executable (an installed or `cargo build` layout), or one
//! directory up (`target/<profile>/deps/` test binaries).

use std::path::{Path, PathBuf};

use crate::error::CapError;

/// File name of the capture library.
pub const LIB_NAME: &str = "libhrr_intercept.so";
/// Environment override.
pub const ENV_INTERCEPT: &str = "HRR_INTERCEPT";

/// The library to preload, as an absolute path (the application may chdir).
pub fn find(exe: &Path, env: Option<PathBuf>) -> Result<PathBuf, CapError> {
    if let Some(p) = env.filter(|p| !p.as_os_str().is_empty()) {
        return if p.is_file() {
            Ok(absolute(&p))
        } else {
            Err(CapError::BadInterceptEnv { path: p })
        };
    }
    let dir = exe.parent().unwrap_or(Path::new("."));
    let searched: Vec<PathBuf> = [Some(dir), dir.parent()]
        .into_iter()
        .flatten()
        .map(|d| d.join(LIB_NAME))
        .collect();
    searched
        .iter()
        .find(|p| p.is_file())
        .map(|p| absolute(p))
        .ok_or(CapError::NoInterceptLib { searched })
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_to_exe_then_parent_then_env() {
        let t = tempfile::tempdir().unwrap();
        let deps = t.path().join("deps");
        std::fs::create_dir(&deps).unwrap();
        let exe = deps.join("hrr-cap");
        assert!(
            matches!(find(&exe, None), Err(CapError::NoInterceptLib { searched }) if searched.len() == 2)
        );
        std::fs::write(t.path().join(LIB_NAME), b"").unwrap();
        assert_eq!(find(&exe, None).unwrap(), t.path().join(LIB_NAME));
        std::fs::write(deps.join(LIB_NAME), b"").unwrap();
        assert_eq!(find(&exe, None).unwrap(), deps.join(LIB_NAME));
        let other = t.path().join("other.so");
        assert!(matches!(
            find(&exe, Some(other.clone())),
            Err(CapError::BadInterceptEnv { .. })
        ));
        std::fs::write(&other, b"").unwrap();
        assert_eq!(find(&exe, Some(other.clone())).unwrap(), other);
    }
}
