//! A process that ends without having recorded anything (no GPU call reached
//! this library) leaves one line saying what it had loaded, so that
//! `hrr-cap` can tell the user why the archive is empty: no GPU runtime or
//! driver at all, or one loaded but never called through here.
//!
//! The line goes to `HRR_OUT/.hrr-no-capture` (appended: a shell wrapper and
//! the application it starts each add theirs), as
//! `pid=P driver=0|1 cuda_runtime=0|1 hip=0|1`. `hrr-cap` reads and removes
//! the file.

use std::io::Write;

use crate::interpose::config::Config;
use crate::interpose::sys;

/// The file, inside the archive directory.
pub const NOTE_FILE: &str = ".hrr-no-capture";

/// What a process had loaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// `libcuda.so.1`, the NVIDIA driver.
    pub driver: bool,
    /// A CUDA runtime library (shared `libcudart`).
    pub cuda_runtime: bool,
    /// A HIP runtime (ROCm's or hrr's CPU runtime).
    pub hip: bool,
}

impl Loaded {
    /// This process, now.
    pub fn probe() -> Loaded {
        let any =
            |names: &[&std::ffi::CStr]| names.iter().any(|n| sys::loaded_library(n).is_some());
        Loaded {
            driver: any(&[c"libcuda.so.1", c"libcuda.so"]),
            cuda_runtime: sys::dlsym_next(c"cudaMalloc").is_some()
                || any(&[c"libcudart.so.13", c"libcudart.so.12", c"libcudart.so"]),
            hip: sys::dlsym_next(c"hipMalloc").is_some()
                || any(&[c"libamdhip64.so.6", c"libamdhip64.so.5", c"libamdhip64.so"]),
        }
    }

    pub fn line(&self, pid: u32) -> String {
        format!(
            "pid={pid} driver={} cuda_runtime={} hip={}\n",
            u8::from(self.driver),
            u8::from(self.cuda_runtime),
            u8::from(self.hip)
        )
    }
}

/// Appends this process's line when it records into an archive directory
/// (called at exit when no recorder was made).
pub fn write_note() {
    let Ok(Some(cfg)) = Config::from_env() else {
        return;
    };
    if !cfg.out.is_dir() {
        return;
    }
    let line = Loaded::probe().line(sys::getpid());
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(cfg.out.join(NOTE_FILE))
    {
        let _ = f.write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_process_has_no_gpu_runtime() {
        let l = Loaded::probe();
        assert_eq!(
            l,
            Loaded::default(),
            "no CUDA or HIP library in a unit test"
        );
        assert_eq!(
            Loaded { driver: true, ..l }.line(7),
            "pid=7 driver=1 cuda_runtime=0 hip=0\n"
        );
    }
}
