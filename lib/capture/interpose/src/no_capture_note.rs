//! Why a process recorded nothing, for `hrr-cap`'s summary.
//!
//! A process that never makes a recorded call creates no archive (see
//! `recorder`), so `hrr-cap` would otherwise only know that nothing arrived.
//! When `hrr-cap` names a note file (`HRR_CAP_NOTE`), every such process
//! appends one JSON line to it as it exits normally:
//!
//! ```json
//! {"pid":4242,"hip_runtime":"/usr/lib/x86_64-linux-gnu/libamdhip64.so.5","cuda_runtime":null,"cuda_driver":null,"queried":true}
//! ```
//!
//! `hip_runtime` / `cuda_runtime`: the library defining `hipMalloc` /
//! `cudaMalloc` after the interposer (the runtime the process loaded), or
//! null; `cuda_driver`: the CUDA driver (`libcuda.so.1`) when the process
//! had loaded it (a static runtime, a driver-API program), or null; `queried`: the process made a call the capture library forwards
//! without recording by design (a query). One short `O_APPEND` write per
//! process, so lines from concurrent processes do not interleave.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use crate::dl;

/// Environment variable naming the note file (set by `hrr-cap`).
pub const ENV_NOTE: &str = "HRR_CAP_NOTE";

/// This process's note line.
pub fn line(queried: bool) -> String {
    let path_of = |name: &std::ffi::CStr| {
        dl::dlsym_next(name)
            .and_then(|p| dl::object_path(p as usize))
            .map_or(Value::Null, |p| {
                Value::from(p.to_string_lossy().into_owned())
            })
    };
    let driver = dl::loaded_library_path(c"libcuda.so.1", c"cuInit").map_or(Value::Null, |p| {
        Value::from(p.to_string_lossy().into_owned())
    });
    let v = json!({
        "pid": std::process::id(),
        "hip_runtime": path_of(c"hipMalloc"),
        "cuda_runtime": path_of(c"cudaMalloc"),
        "cuda_driver": driver,
        "queried": queried,
    });
    format!("{v}\n")
}

/// Appends `line` to `path` (best effort: a note that cannot be written
/// only makes `hrr-cap`'s message less precise).
pub fn append(path: &Path, line: &str) {
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = f.write_all(line.as_bytes());
    }
}

/// At a normal exit: the note, when `hrr-cap` asked for one and this
/// process recorded nothing.
pub fn at_exit(recorded: bool, queried: bool) {
    if recorded {
        return;
    }
    if let Some(path) = std::env::var_os(ENV_NOTE).filter(|p| !p.is_empty()) {
        append(Path::new(&path), &line(queried));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_what_this_process_loaded() {
        let l = line(true);
        assert!(l.ends_with('\n'));
        let v: Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["pid"], std::process::id());
        assert_eq!(v["queried"], true);
        // The test binary loads no GPU runtime.
        assert!(
            v["hip_runtime"].is_null() && v["cuda_runtime"].is_null() && v["cuda_driver"].is_null(),
            "{v}"
        );
    }

    #[test]
    fn appends_only_to_an_existing_file() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("note");
        append(&p, "x\n");
        assert!(!p.exists(), "hrr-cap creates the file; nobody else does");
        std::fs::write(&p, "").unwrap();
        append(&p, "a\n");
        append(&p, "b\n");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a\nb\n");
    }
}
