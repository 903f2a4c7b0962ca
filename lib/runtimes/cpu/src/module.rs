//! Loading CPU code objects: the ELF goes into a memfd and is dlopen'ed from
//! `/proc/self/fd/N` (a fresh handle per load, RTLD_LOCAL); kernels are resolved by
//! the symbols named in `.hrr.kernels`.

use crate::ffi::{CpuKernelFn, HipError, err};
use hrr_codeobj::{CodeObjError, KernelMeta, bundle, cpu};
use std::borrow::Cow;
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
    /// Addresses of its globals registered as device memory.
    globals: Vec<usize>,
}

impl Drop for LoadedLib {
    fn drop(&mut self) {
        // Its globals stop being device memory before their pages go away.
        if !self.globals.is_empty()
            && let Ok(rt) = crate::runtime::rt()
        {
            let mut mem = rt.mem();
            for &g in &self.globals {
                mem.unregister_global(g);
            }
        }
        // dlclose before the memfd (field order would do it too; be explicit).
        drop(self.lib.take());
    }
}

/// Bundle target whose entries hold CPU code objects: it matches the entry
/// ids `hipv4-x86_64-unknown-linux-gnu-cpu` and `hip-x86_64-unknown-linux-gnu-cpu`.
pub const CPU_TARGET: &str = "cpu";
/// Largest kernarg segment a CPU kernel may declare (the `extra` buffer limit).
pub const MAX_KERNARG_SIZE: usize = 1 << 20;

/// A kernel ready to launch.
pub struct Function {
    /// The kernel's metadata.
    pub meta: KernelMeta,
    /// Bytes of the kernarg segment a launch passes: the metadata's segment
    /// size, at least the end of the last host argument.
    pub kernarg_size: usize,
    /// The kernel's entry point in the loaded library.
    pub entry: CpuKernelFn,
    _lib: Arc<LoadedLib>,
}

/// A loaded CPU code object.
pub struct Module {
    /// Its kernels, by name.
    pub functions: HashMap<String, Arc<Function>>,
    /// Its globals (exported data symbols), by name: address and size.
    pub globals: HashMap<String, (usize, usize)>,
    _lib: Arc<LoadedLib>,
}

fn os_err(what: &str) -> HipError {
    crate::log!("{what}: {}", std::io::Error::last_os_error());
    err::OPERATING_SYSTEM
}

/// The HIP error for a code object the runtime cannot use: no CPU entry in a
/// bundle → hipErrorNoBinaryForGpu; anything else is a broken image.
fn hip_error(e: &CodeObjError) -> HipError {
    match e {
        CodeObjError::NoMatchingTarget { .. } => err::NO_BINARY_FOR_GPU,
        _ => err::INVALID_IMAGE,
    }
}

fn fail(what: &str, e: &CodeObjError) -> HipError {
    crate::log!("{what}: {e}");
    hip_error(e)
}

/// The CPU code object in `image`: the image itself when it is an ELF, or the
/// CPU entry of an offload bundle (plain or `CCOB`). It must be a 64-bit ELF
/// for this host's machine (otherwise hipErrorNoBinaryForGpu).
pub fn cpu_elf(image: &[u8]) -> Result<Cow<'_, [u8]>, HipError> {
    let elf = bundle::select(image, CPU_TARGET).map_err(|e| fail("module load", &e))?;
    if !hrr_codeobj::elf::is_elf(&elf) {
        crate::log!("module load: the CPU code object is not an ELF");
        return Err(err::INVALID_IMAGE);
    }
    if !cpu::runs_on_host(&elf) {
        crate::log!(
            "module load: code object is for ELF class {} machine {:?}, not this CPU ({:?})",
            elf.get(4).copied().unwrap_or(0),
            hrr_codeobj::elf::machine(&elf),
            cpu::host_machine()
        );
        return Err(err::NO_BINARY_FOR_GPU);
    }
    Ok(elf)
}

/// The kernels of a CPU code object (see [`cpu_elf`]), with their kernarg sizes.
pub fn elf_kernels(elf: &[u8]) -> Result<Vec<(KernelMeta, usize)>, HipError> {
    let kernels = cpu::parse_metadata(elf).map_err(|e| fail("module load", &e))?;
    let mut out = Vec::with_capacity(kernels.len());
    for k in kernels {
        let size = k.kernarg_segment_size.max(k.host_args_size()) as usize;
        if size > MAX_KERNARG_SIZE {
            crate::log!(
                "module load: kernel {}: kernarg segment of {size} bytes is too large",
                k.name
            );
            return Err(err::INVALID_IMAGE);
        }
        out.push((k, size));
    }
    Ok(out)
}

/// Loads an ELF or offload-bundle image held in memory. The ELF is checked
/// before the dynamic loader sees it: its headers must describe no more
/// bytes than it has (ld.so trusts them), and its metadata must parse.
pub fn load_image(image: &[u8]) -> Result<Module, HipError> {
    let elf = cpu_elf(image)?;
    match hrr_codeobj::image_extent(&elf) {
        Ok(len) if len <= elf.len() => {}
        Ok(len) => {
            crate::log!(
                "module load: the ELF's headers describe {len} bytes, the image holds {}",
                elf.len()
            );
            return Err(err::INVALID_IMAGE);
        }
        Err(e) => return Err(fail("module load", &e)),
    }
    let kernels = elf_kernels(&elf)?;
    let name = CString::new("hrr-cpu-code-object").map_err(|_| err::UNKNOWN)?;
    // SAFETY: memfd_create with a valid NUL-terminated name; returns a new fd or -1.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(os_err("memfd_create"));
    }
    // SAFETY: fd is a freshly created descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd.try_clone().map_err(|_| os_err("dup"))?);
    file.write_all(&elf).map_err(|_| os_err("write memfd"))?;
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
    for (k, kernarg_size) in kernels {
        let Ok(sym) = CString::new(k.symbol.as_str()) else {
            continue;
        };
        // SAFETY: the symbol is a kernel entry with the CPU kernel ABI, as declared
        // by the object's own metadata; the pointer is only used while `lib` lives
        // (every Function holds the Arc<LoadedLib>).
        match unsafe { lib.get::<CpuKernelFn>(sym.as_bytes_with_nul()) } {
            Ok(f) => entries.push((k, kernarg_size, *f)),
            Err(e) => crate::log!("kernel {}: symbol {} not found: {e}", k.name, k.symbol),
        }
    }
    let globals = module_globals(&elf, &lib);
    let mut registered = Vec::with_capacity(globals.len());
    if !globals.is_empty() {
        let rt = crate::runtime::rt()?;
        let mut mem = rt.mem();
        for &(addr, size) in globals.values() {
            if mem.register_global(addr, size).is_ok() {
                registered.push(addr);
            }
        }
    }
    let lib = Arc::new(LoadedLib {
        lib: Some(lib),
        _fd: fd,
        globals: registered,
    });
    for (meta, kernarg_size, entry) in entries {
        let name = meta.name.clone();
        functions.insert(
            name,
            Arc::new(Function {
                meta,
                kernarg_size,
                entry,
                _lib: lib.clone(),
            }),
        );
    }
    Ok(Module {
        functions,
        globals,
        _lib: lib,
    })
}

/// The exported data symbols of a loaded code object: address (from the
/// dynamic loader) and size (from the ELF's symbol table).
fn module_globals(
    elf: &[u8],
    lib: &libloading::os::unix::Library,
) -> HashMap<String, (usize, usize)> {
    let syms = cpu::data_symbols(elf).unwrap_or_else(|e| {
        crate::log!("module load: no globals: {e}");
        Vec::new()
    });
    let mut out = HashMap::new();
    for (name, size) in syms {
        let Ok(c) = CString::new(name.as_str()) else {
            continue;
        };
        // SAFETY: only the symbol's address is taken, never called or read
        // here; it lives as long as `lib`, which the module holds.
        if let Ok(p) = unsafe { lib.get::<*mut u8>(c.as_bytes_with_nul()) } {
            out.insert(name, (p.into_raw() as usize, size as usize));
        }
    }
    out
}

/// Reads an image of unknown length that starts at `ptr` (ELF, offload bundle
/// or `CCOB`), sized from its headers by [`hrr_codeobj::read_image_extent`].
///
/// # Safety
/// `ptr` must point at a complete, readable code object (at least 64 bytes) that
/// stays valid for the returned lifetime.
pub unsafe fn image_from_ptr<'a>(ptr: *const u8) -> Result<&'a [u8], HipError> {
    if ptr.is_null() {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: the caller guarantees a complete object at ptr; read_image_extent
    // asks for its first 64 bytes, then only for bytes its own headers declare
    // (bounded by hrr_codeobj::MAX_IMAGE_SIZE).
    let len =
        hrr_codeobj::read_image_extent(|n| Some(unsafe { std::slice::from_raw_parts(ptr, n) }))
            .map_err(|e| fail(&format!("image at {ptr:?}"), &e))?;
    // SAFETY: as above: [ptr, ptr+len) is the image the caller vouched for.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_codeobj::bundle::Compression;

    const CPU_ENTRY: &str = "hipv4-x86_64-unknown-linux-gnu-cpu";

    /// This test executable: an ELF for the host machine, without `.hrr.kernels`.
    fn exe() -> Vec<u8> {
        std::fs::read(std::env::current_exe().unwrap()).unwrap()
    }

    #[test]
    fn cpu_entries_of_bundles_and_ccobs() {
        let elf = exe();
        assert_eq!(&*cpu_elf(&elf).unwrap(), &elf[..]);
        let b = bundle::write(&[("host-x86_64-unknown-linux-gnu-", b""), (CPU_ENTRY, &elf)]);
        assert_eq!(&*cpu_elf(&b).unwrap(), &elf[..]);
        let old = bundle::write(&[("hip-x86_64-unknown-linux-gnu-cpu", &elf)]);
        assert_eq!(&*cpu_elf(&old).unwrap(), &elf[..]);
        for (m, v) in [
            (Compression::Zstd, 3),
            (Compression::Zlib, 2),
            (Compression::Zlib, 1),
        ] {
            let c = bundle::compress(&b, m, v, None).unwrap();
            assert_eq!(&*cpu_elf(&c).unwrap(), &elf[..], "{m:?} v{v}");
        }
        // No metadata in this executable: a broken image, not a missing one.
        assert_eq!(elf_kernels(&elf).err(), Some(err::INVALID_IMAGE));
    }

    /// A real CPU code object (tests/workloads/kernels/fill.c, built with gcc).
    fn fill_so() -> Vec<u8> {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/workloads");
        let t = std::env::temp_dir().join(format!("hrr-module-test-{}.so", std::process::id()));
        let ok = std::process::Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2", "-I"])
            .arg(root.join("include"))
            .arg(root.join("kernels/fill.c"))
            .arg("-o")
            .arg(&t)
            .status()
            .unwrap()
            .success();
        assert!(ok, "gcc");
        let so = std::fs::read(&t).unwrap();
        let _ = std::fs::remove_file(&t);
        so
    }

    #[test]
    fn an_elf_whose_headers_describe_more_than_it_holds_never_reaches_dlopen() {
        let so = fill_so();
        assert!(load_image(&so).is_ok(), "the intact object loads");
        // Grow the last PT_LOAD segment's file size past the end of the file
        // (the metadata section is untouched and still parses).
        let mut bad = so.clone();
        let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
        let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let (phoff, phentsize, phnum) = (
            u64_at(&so, 0x20) as usize,
            u16_at(&so, 0x36),
            u16_at(&so, 0x38),
        );
        let last = (0..phnum)
            .map(|i| phoff + i * phentsize)
            .filter(|&p| u32::from_le_bytes(so[p..p + 4].try_into().unwrap()) == 1)
            .max_by_key(|&p| u64_at(&so, p + 8) + u64_at(&so, p + 0x20))
            .unwrap();
        for field in [0x20, 0x28] {
            let v = u64_at(&bad, last + field) + (1 << 20);
            bad[last + field..last + field + 8].copy_from_slice(&v.to_le_bytes());
        }
        assert_eq!(load_image(&bad).err(), Some(err::INVALID_IMAGE));
        // Cut short anywhere: refused, never loaded.
        for cut in [64, 4096, so.len() / 2, so.len() - 1] {
            assert_eq!(
                load_image(&so[..cut]).err(),
                Some(err::INVALID_IMAGE),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn error_mapping() {
        let elf = exe();
        let gpu_only = bundle::write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF not for us")]);
        assert_eq!(cpu_elf(&gpu_only).err(), Some(err::NO_BINARY_FOR_GPU));
        // An empty CPU entry holds nothing.
        let empty = bundle::write(&[(CPU_ENTRY, b"")]);
        assert_eq!(cpu_elf(&empty).err(), Some(err::NO_BINARY_FOR_GPU));
        // A CPU code object for another machine (here: AMDGPU), or 32-bit.
        let mut other = elf.clone();
        other[18..20].copy_from_slice(&224u16.to_le_bytes());
        assert_eq!(cpu_elf(&other).err(), Some(err::NO_BINARY_FOR_GPU));
        let b = bundle::write(&[(CPU_ENTRY, &other)]);
        assert_eq!(cpu_elf(&b).err(), Some(err::NO_BINARY_FOR_GPU));
        let mut elf32 = elf.clone();
        elf32[4] = 1;
        assert_eq!(cpu_elf(&elf32).err(), Some(err::NO_BINARY_FOR_GPU));
        // Anything else is an invalid image.
        assert_eq!(cpu_elf(b"garbage").err(), Some(err::INVALID_IMAGE));
        assert_eq!(
            cpu_elf(&bundle::write(&[(CPU_ENTRY, b"not an ELF")])).err(),
            Some(err::INVALID_IMAGE)
        );
        let b = bundle::write(&[(CPU_ENTRY, &elf)]);
        assert_eq!(cpu_elf(&b[..b.len() - 1]).err(), Some(err::INVALID_IMAGE));
    }

    #[test]
    fn kernarg_sizes() {
        let k = |j: &str| cpu::parse_json(j.as_bytes()).unwrap().remove(0);
        let m = k(
            r#"{"kernels":[{"name":"a","kernarg_segment_size":40,"args":[{"offset":0,"size":8,"value_kind":"global_buffer"},{"offset":8,"size":8,"value_kind":"hidden_global_offset_x"}]}]}"#,
        );
        assert_eq!(m.kernarg_segment_size.max(m.host_args_size()), 40);
        assert_eq!(
            m.host_arg_count(),
            1,
            "hidden arguments are not host arguments"
        );
    }

    #[test]
    fn images_from_pointers() {
        let elf = exe();
        let b = bundle::write(&[("host-x86_64-unknown-linux-gnu-", b""), (CPU_ENTRY, &elf)]);
        let c = bundle::compress(&b, Compression::Zstd, 3, None).unwrap();
        for img in [&elf, &b, &c] {
            // SAFETY: `img` is a complete image that outlives the slice.
            let got = unsafe { image_from_ptr(img.as_ptr()) }.unwrap();
            assert_eq!(got.len(), img.len());
        }
        let mut junk = [0u8; 64];
        junk[..4].copy_from_slice(b"junk");
        // SAFETY: 64 readable bytes.
        let got = unsafe { image_from_ptr(junk.as_ptr()) };
        assert_eq!(got.err(), Some(err::INVALID_IMAGE));
        // SAFETY: null is rejected before any read.
        let got = unsafe { image_from_ptr(std::ptr::null()) };
        assert_eq!(got.err(), Some(err::INVALID_VALUE));
    }
}
