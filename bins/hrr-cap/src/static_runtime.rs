//! `warning`: whether the application carries CUDA code but links the CUDA
//! runtime statically (nvcc's default, `-cudart static`). Such a program
//! never calls into `libcudart.so`, so the preloaded capture library sees
//! none of its CUDA calls and the archive would be silently empty of them.
//!
//! The test: an ELF executable with a `.nv_fatbin` section (device code
//! nvcc embedded) that does not import `__cudaRegisterFatBinary`, the entry
//! point every CUDA program's registration calls and a shared cudart
//! exports. Anything unreadable or not ELF says nothing: this is advice.
//! Only the executable is looked at: a shared library carrying its own
//! static cudart is not detected.

use std::fs::File;
use std::path::{Path, PathBuf};

use object::Object;

/// A warning for `app` (as given on the command line), if it applies.
pub fn warning(app: &std::ffi::OsStr) -> Option<String> {
    let path = resolve(Path::new(app))?;
    let file = File::open(&path).ok()?;
    // SAFETY: read-only mapping of a file we only parse; an executable
    // being rewritten while hrr-cap starts it is outside what it supports.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let elf = object::File::parse(&*map).ok()?;
    let has_device_code = elf.section_by_name(".nv_fatbin").is_some();
    let imports_cudart = elf
        .imports()
        .ok()?
        .iter()
        .any(|i| i.name() == b"__cudaRegisterFatBinary");
    (has_device_code && !imports_cudart).then(|| {
        format!(
            "{} embeds CUDA device code but links the CUDA runtime statically \
             (nvcc's default): its CUDA calls never reach the capture library and \
             will not be recorded; rebuild it with `nvcc -cudart shared`",
            path.display()
        )
    })
}

/// `app` as the shell would find it: a path when it has a slash, else the
/// first executable of that name on `PATH`.
fn resolve(app: &Path) -> Option<PathBuf> {
    if app.components().count() > 1 {
        return Some(app.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(app))
        .find(|p| p.is_file())
}
