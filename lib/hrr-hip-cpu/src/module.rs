//! Loading CPU code objects: the ELF goes into a memfd and is dlopen'ed from
//! `/proc/self/fd/N` (a fresh handle per load, RTLD_LOCAL); kernels are resolved by
//! the symbols named in `.hrr.kernels`.

use crate::codeobj::{self, KernelMeta};
use crate::ffi::{CpuKernelFn, HipError, err};
use std::collections::HashMap;
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

/// A dlopen'ed code object. The memfd stays open while the library is loaded so
/// that its `/proc/self/fd/N` name stays unique among live modules (glibc matches
/// dlopen names of already loaded objects).
pub struct LoadedLib {
    lib: Option<libloading::os::unix::Library>,
    _fd: OwnedFd,
}

impl Drop for LoadedLib {
    fn drop(&mut self) {
        // dlclose before the memfd (field order would do it too; be explicit).
        drop(self.lib.take());
    }
}

/// A kernel ready to launch.
pub struct Function {
    pub meta: KernelMeta,
    pub entry: CpuKernelFn,
    _lib: Arc<LoadedLib>,
}

pub struct Module {
    pub functions: HashMap<String, Arc<Function>>,
    _lib: Arc<LoadedLib>,
}

fn os_err(what: &str) -> HipError {
    crate::log!("{what}: {}", std::io::Error::last_os_error());
    err::OPERATING_SYSTEM
}

/// Loads an ELF or offload-bundle image held in memory.
pub fn load_image(image: &[u8]) -> Result<Module, HipError> {
    let elf = codeobj::cpu_elf(image).map_err(|e| {
        crate::log!("module load: {e}");
        e.hip_error()
    })?;
    let kernels = codeobj::elf_kernels(elf).map_err(|e| {
        crate::log!("module load: {e}");
        e.hip_error()
    })?;
    let name = CString::new("hrr-cpu-code-object").map_err(|_| err::UNKNOWN)?;
    // SAFETY: memfd_create with a valid NUL-terminated name; returns a new fd or -1.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(os_err("memfd_create"));
    }
    // SAFETY: fd is a freshly created descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd.try_clone().map_err(|_| os_err("dup"))?);
    file.write_all(elf).map_err(|_| os_err("write memfd"))?;
    drop(file);
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    // SAFETY: dlopen runs the object's initialisers; CPU code objects are trusted
    // code by contract (exactly as a GPU runtime trusts the code objects it loads).
    let lib = unsafe {
        libloading::os::unix::Library::open(Some(&path), libc::RTLD_NOW | libc::RTLD_LOCAL)
    }
    .map_err(|e| {
        crate::log!("dlopen {path}: {e}");
        err::SHARED_OBJECT_INIT_FAILED
    })?;
    let mut functions = HashMap::new();
    let mut entries = Vec::with_capacity(kernels.len());
    for k in &kernels {
        let Ok(sym) = CString::new(k.symbol.as_str()) else { continue };
        // SAFETY: the symbol is a kernel entry with the CPU kernel ABI, as declared
        // by the object's own metadata; the pointer is only used while `lib` lives
        // (every Function holds the Arc<LoadedLib>).
        match unsafe { lib.get::<CpuKernelFn>(sym.as_bytes_with_nul()) } {
            Ok(f) => entries.push((k.clone(), *f)),
            Err(e) => crate::log!("kernel {}: symbol {} not found: {e}", k.name, k.symbol),
        }
    }
    let lib = Arc::new(LoadedLib { lib: Some(lib), _fd: fd });
    for (meta, entry) in entries {
        let name = meta.name.clone();
        functions.insert(name, Arc::new(Function { meta, entry, _lib: lib.clone() }));
    }
    Ok(Module { functions, _lib: lib })
}

/// Reads an image of unknown length that starts at `ptr` (ELF or offload bundle).
///
/// # Safety
/// `ptr` must point at a complete, readable code object (ELF or bundle) that stays
/// valid for the returned lifetime.
pub unsafe fn image_from_ptr<'a>(ptr: *const u8) -> Result<&'a [u8], HipError> {
    if ptr.is_null() {
        return Err(err::INVALID_VALUE);
    }
    let mut read = |off: u64, len: usize| -> Option<Vec<u8>> {
        // SAFETY: the caller guarantees a complete object at ptr; the parser only
        // asks for bytes its own headers declare (bounded by MAX_IMAGE).
        Some(unsafe { std::slice::from_raw_parts(ptr.add(off as usize), len) }.to_vec())
    };
    let len = codeobj::image_extent(&mut read).map_err(|e| {
        crate::log!("image at {ptr:?}: {e}");
        e.hip_error()
    })?;
    // SAFETY: as above: [ptr, ptr+len) is the image the caller vouched for.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len as usize) })
}
