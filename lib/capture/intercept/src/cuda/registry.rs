//! The CUDA compiler path's registrations, and what a launch needs from
//! them: the kernel's mangled name, the blob of its fat binary, and its
//! parameter layout.
//!
//! - `__cudaRegisterFatBinary` hands over a `__fatBinC_Wrapper_t`; only the
//!   address and extent of the fat binary it points at are kept
//!   ([`locate`], [`Fatbin`]). PyTorch registers ~445 fat binaries at import
//!   and a script uses a handful, so nothing is copied or hashed here.
//! - `__cudaRegisterFunction` ties a host stub (`hostFun`) to a mangled
//!   device name ([`Registry::add_function`]).
//! - `__cudaGetKernel` maps a host stub to the `cudaKernel_t` that
//!   `__cudaLaunchKernel` receives ([`Registry::bind_handle`]).
//! - At the first launch of a kernel, [`CudaKernel::resolve`] writes its fat
//!   binary as one blob (once per fat binary, however many of its kernels
//!   run: [`Fatbin::module`]) and fixes the parameter layout: the driver's,
//!   and the fat binary's metadata only when the driver cannot give it
//!   (`layout::choose`). Reading that metadata means decompressing a cubin:
//!   milliseconds at each kernel's first launch for a framework's fat
//!   binaries, where the driver's answer takes microseconds. The result is
//!   an ordinary `code_objects::Kernel`, so the launch is recorded by
//!   `Recorder::launch` exactly like a HIP one.
//!
//! The registry is process-wide ([`global`]) and independent of the
//! recorder: registrations happen in static constructors, before `main`,
//! and do not by themselves create an archive (a process that imports a CUDA
//! library but never calls CUDA leaves none).

#![deny(unsafe_code)]

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, OnceLock, PoisonError, RwLock};

use hrr_codeobj::{CodeObjError, KernelMeta, cuda};

use super::layout::{self, Choice, ParamLayoutError};
use hrr_recorder::record::code_objects::{FatBin, Kernel, MetadataError, Module, Source};
use hrr_recorder::record::handle_hasher::HandleHasher;

/// Largest fat binary the recorder will copy (2 GiB): the runtime accepted
/// the header, but a bound keeps a corrupt one from walking off the image.
pub const MAX_FATBIN: u64 = 2 << 30;

/// Why the bytes of a fat binary (or of a driver-layer code image) cannot
/// be located or read: its kernels have no code in the archive.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ImageError {
    /// `__cudaRegisterFatBinary` was given a null wrapper.
    #[error("null fat binary wrapper")]
    NullWrapper,
    /// The wrapper's bytes could not be read.
    #[error("wrapper not readable")]
    WrapperUnreadable,
    /// The wrapper or image is not what its magic says.
    #[error(transparent)]
    Format(#[from] CodeObjError),
    /// The wrapper's data pointer does not fit an address.
    #[error("wrapper data pointer")]
    WrapperData,
    /// The wrapper points at no fat binary.
    #[error("wrapper version {0} has a null fat binary pointer")]
    NullFatbin(u32),
    /// The fat binary's header could not be read.
    #[error("fat binary header not readable")]
    HeaderUnreadable,
    /// The header claims more than [`MAX_FATBIN`] bytes.
    #[error("fat binary claims {0} bytes, beyond the {MAX_FATBIN} byte limit")]
    TooLarge(usize),
    /// `__cudaRegisterFunction` named a handle no registration returned.
    #[error("fat binary handle {0:#x} was never registered")]
    NeverRegistered(u64),
    /// It was unregistered before its first launch: its memory may be gone.
    #[error("fat binary was unregistered before its first launch")]
    Unregistered,
    /// The driver layer was given a null image.
    #[error("null image")]
    NullImage,
    /// The image's first bytes could not be read.
    #[error("image not readable")]
    ImageUnreadable,
    /// Neither a binary image nor PTX text.
    #[error(
        "image is neither a known binary (magic {0:02x?}) nor NUL-terminated text under {max} bytes",
        max = crate::cuda::driver::code::MAX_PTX
    )]
    Unknown(Vec<u8>),
    /// A driver-layer module the program loaded before this library saw it.
    #[error("module {0:#x} was loaded before the capture library saw it")]
    Unseen(u64),
    /// A module file could not be read.
    #[error("{path}")]
    File {
        /// The file the driver loaded.
        path: String,
        /// Why it could not be read here.
        #[source]
        source: Arc<std::io::Error>,
    },
}

/// Why a kernel's layout is not taken from its fat binary's metadata.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FatbinMetaError {
    /// The driver gave the layout, so the metadata was not read.
    #[error("not read: the driver gave the layout")]
    DriverGaveIt,
    /// The image is not there to read.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// It was unregistered before its metadata was read.
    #[error("fat binary was unregistered before its metadata was read")]
    Unregistered,
    /// The metadata could not be parsed.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// The metadata lists other kernels.
    #[error("not among the {0} kernels of its metadata")]
    NotListed(usize),
}

/// Address and length of the fat binary behind the wrapper at `wrapper`.
/// `read(addr, len)` returns `len` bytes of the application's memory at
/// `addr` (or `None`); it is asked for the 24-byte wrapper, then for the
/// 16-byte fat binary header, nothing more.
pub fn locate<'a>(
    read: impl Fn(usize, usize) -> Option<&'a [u8]>,
    wrapper: usize,
) -> Result<(usize, usize), ImageError> {
    if wrapper == 0 {
        return Err(ImageError::NullWrapper);
    }
    let w = read(wrapper, cuda::WRAPPER_SIZE).ok_or(ImageError::WrapperUnreadable)?;
    let w = cuda::parse_wrapper(w)?;
    let data = usize::try_from(w.data).map_err(|_| ImageError::WrapperData)?;
    if data == 0 {
        return Err(ImageError::NullFatbin(w.version));
    }
    let head = read(data, cuda::FATBIN_HEADER_SIZE).ok_or(ImageError::HeaderUnreadable)?;
    let len = cuda::extent(head)?;
    if len as u64 > MAX_FATBIN {
        return Err(ImageError::TooLarge(len));
    }
    Ok((data, len))
}

/// A registered fat binary (or, at the driver layer, any loaded code
/// image: fat binary, cubin, PTX): where it is, written as a blob on first
/// launch.
#[derive(Debug)]
pub struct Fatbin {
    /// The `void**` handle `__cudaRegisterFatBinary` returned (at the driver
    /// layer: the `CUmodule` or `CUlibrary`).
    pub handle: u64,
    /// Address and length of the image in the application's memory (or in
    /// `owned`), or why it could not be located.
    pub image: Result<(usize, usize), ImageError>,
    /// The image's bytes when they were copied at load (the program may
    /// free its buffer); `image` then points into them.
    owned: Option<Box<[u8]>>,
    /// Cleared by `__cudaUnregisterFatBinary`: its memory may be gone.
    live: AtomicBool,
    /// The image stays where it is until a call that settles the recorder
    /// first (see [`Fatbin::settles`]).
    settles: bool,
    loaded: OnceLock<Result<Arc<Module>, ImageError>>,
}

impl Fatbin {
    /// A driver-layer image under `handle`: its extent (address, length),
    /// or why it is unknown.
    pub fn new(handle: u64, image: Result<(usize, usize), ImageError>) -> Fatbin {
        Fatbin {
            handle,
            image,
            owned: None,
            live: AtomicBool::new(true),
            settles: false,
            loaded: OnceLock::new(),
        }
    }

    /// A fat binary `__cudaRegisterFatBinary` registered: its image stays
    /// until `__cudaUnregisterFatBinary`.
    pub fn registered(handle: u64, image: Result<(usize, usize), ImageError>) -> Fatbin {
        let mut f = Fatbin::new(handle, image);
        f.settles = true;
        f
    }

    /// An image copied into this process's memory at load: `load` is later
    /// called with the address of the copy, which lives as long as `self`.
    pub fn copied(handle: u64, bytes: Vec<u8>) -> Fatbin {
        let owned = bytes.into_boxed_slice();
        let image = Ok((owned.as_ptr() as usize, owned.len()));
        Fatbin {
            handle,
            image,
            owned: Some(owned),
            live: AtomicBool::new(true),
            settles: true,
            loaded: OnceLock::new(),
        }
    }

    /// Whether the image stays where it is until a call that settles the
    /// recorder first (`Recorder::settle_code`): a registered fat binary
    /// until it is unregistered, a copy until it is dropped. An
    /// image in an object the driver layer loaded does not: the object can
    /// go with no call the recorder sees.
    pub fn settles(&self) -> bool {
        self.settles
    }

    /// The copied bytes, if the image was copied at load.
    pub fn owned(&self) -> Option<&[u8]> {
        self.owned.as_deref()
    }

    /// Stops later reads of the image (its module was unloaded: the memory
    /// may go). A module already made stays usable.
    pub fn retire(&self) {
        self.live.store(false, Ordering::Release);
    }

    /// The fat binary as a module (its blob and metadata), made by
    /// `load(addr, len)` the first time and never after unregistration.
    pub fn module(
        &self,
        load: impl FnOnce(usize, usize) -> Arc<Module>,
    ) -> Result<Arc<Module>, ImageError> {
        if let Some(done) = self.loaded.get() {
            return done.clone();
        }
        if !self.live.load(Ordering::Acquire) {
            return Err(ImageError::Unregistered);
        }
        self.loaded
            .get_or_init(|| match &self.image {
                Ok((addr, len)) => Ok(load(*addr, *len)),
                Err(e) => Err(e.clone()),
            })
            .clone()
    }

    /// Whether its blob has been written (or attempted).
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    /// Whether it is still registered (its memory may still be read).
    pub fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }
}

impl Drop for Fatbin {
    /// A copy whose blob may still be queued is freed only once it is
    /// written, whichever path lets the last handle go (an unload, a handle
    /// the driver reused).
    fn drop(&mut self) {
        if self.owned.is_some()
            && self.is_loaded()
            && let Some(r) = crate::capture::existing()
        {
            r.settle_code();
        }
    }
}

/// A kernel as launches resolve it, fixed at its first launch.
#[derive(Debug)]
pub struct Resolved {
    /// Name, code blob and layout, ready for `Recorder::launch`.
    pub kernel: Kernel,
    /// Why the code could not be read (launches record the empty blob and
    /// no arguments).
    pub code_error: Option<ImageError>,
    /// Where the layout came from.
    pub layout: layout::Source,
    /// Number of parameters in the layout (0 with no layout).
    pub params: usize,
    /// Things to report once (layout fallbacks).
    pub warning: Option<String>,
}

/// A kernel registered by `__cudaRegisterFunction`.
#[derive(Debug)]
pub struct CudaKernel {
    /// Mangled device name (`deviceName`).
    pub name: String,
    /// Host stub address (`hostFun`).
    pub host_fun: u64,
    /// The fat binary (or driver-layer image) holding its code.
    pub fatbin: Arc<Fatbin>,
    /// The `cudaKernel_t` `__cudaGetKernel` gave for it (0: none yet).
    handle: AtomicU64,
    resolved: OnceLock<Resolved>,
}

impl CudaKernel {
    /// Kernel `name` of `fatbin`, launched through host stub `host_fun`.
    pub fn new(name: String, host_fun: u64, fatbin: Arc<Fatbin>) -> CudaKernel {
        CudaKernel {
            name,
            host_fun,
            fatbin,
            handle: AtomicU64::new(0),
            resolved: OnceLock::new(),
        }
    }

    /// Its `cudaKernel_t`, 0 when not known.
    pub fn handle(&self) -> u64 {
        self.handle.load(Ordering::Acquire)
    }

    /// Notes its `cudaKernel_t`.
    pub fn set_handle(&self, h: u64) {
        self.handle.store(h, Ordering::Release);
    }

    /// Whether its code and layout were fixed (at its first launch).
    pub fn is_resolved(&self) -> bool {
        self.resolved.get().is_some()
    }

    /// Code and layout, fixed the first time: `load(addr, len)` writes the
    /// fat binary's blob (once per fat binary), `driver(self)` asks the
    /// driver for the parameter layout, and only where it cannot,
    /// `metadata(addr, len)` reads the fat binary's kernels. The `bool` is
    /// true for the call that resolved it (which reports `warning`).
    pub fn resolve(
        &self,
        load: impl FnOnce(usize, usize) -> Arc<Module>,
        metadata: impl FnOnce(usize, usize) -> Result<Vec<KernelMeta>, MetadataError>,
        driver: impl FnOnce(&CudaKernel) -> Result<Vec<(u64, u64)>, ParamLayoutError>,
    ) -> (&Resolved, bool) {
        let mut fresh = false;
        let r = self.resolved.get_or_init(|| {
            fresh = true;
            hrr_recorder::self_profile::phase("phase launch: a kernel's code and layout", || {
                self.resolve_now(load, metadata, driver)
            })
        });
        (r, fresh)
    }

    fn resolve_now(
        &self,
        load: impl FnOnce(usize, usize) -> Arc<Module>,
        metadata: impl FnOnce(usize, usize) -> Result<Vec<KernelMeta>, MetadataError>,
        driver: impl FnOnce(&CudaKernel) -> Result<Vec<(u64, u64)>, ParamLayoutError>,
    ) -> Resolved {
        let module = self.fatbin.module(load);
        let from_driver = driver(self);
        let kernels = match (&from_driver, &module, &self.fatbin.image) {
            (Ok(_), ..) => Err(FatbinMetaError::DriverGaveIt),
            (Err(_), Err(e), _) | (Err(_), Ok(_), Err(e)) => Err(e.clone().into()),
            (Err(_), Ok(_), Ok(_)) if !self.fatbin.is_live() => Err(FatbinMetaError::Unregistered),
            (Err(_), Ok(_), &Ok((addr, len))) => metadata(addr, len).map_err(Into::into),
        };
        let from_fatbin: Result<&KernelMeta, FatbinMetaError> = match &kernels {
            Ok(ks) => ks
                .iter()
                .find(|k| k.name == self.name)
                .ok_or(FatbinMetaError::NotListed(ks.len())),
            Err(e) => Err(e.clone()),
        };
        let Choice {
            meta,
            source,
            warning,
        } = layout::choose(&self.name, from_driver, from_fatbin);
        let params = meta.as_ref().map_or(0, KernelMeta::host_arg_count);
        match module {
            Ok(m) => Resolved {
                kernel: Kernel::new(
                    self.name.clone(),
                    Source::Module(Arc::new(Module::new(
                        m.code,
                        Ok(meta.into_iter().collect()),
                    ))),
                ),
                code_error: None,
                layout: source,
                params,
                warning,
            },
            Err(e) => Resolved {
                // A fat binary whose load fails: Recorder::launch reports it
                // and records the empty blob.
                kernel: Kernel::new(
                    self.name.clone(),
                    Source::FatBin(Arc::new(FatBin::new(0, 0))),
                ),
                code_error: Some(e),
                layout: source,
                params,
                warning,
            },
        }
    }
}

pub(crate) type ByAddr<V> = RwLock<HashMap<u64, Arc<V>, BuildHasherDefault<HandleHasher>>>;

pub(crate) fn get<V>(m: &ByAddr<V>, k: u64) -> Option<Arc<V>> {
    m.read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&k)
        .cloned()
}

pub(crate) fn put<V>(m: &ByAddr<V>, k: u64, v: Arc<V>) {
    m.write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(k, v);
}

/// Every CUDA registration, by handle.
#[derive(Default)]
pub struct Registry {
    fatbins: ByAddr<Fatbin>,
    /// Host stub → kernel.
    by_host: ByAddr<CudaKernel>,
    /// `cudaKernel_t` → kernel.
    by_handle: ByAddr<CudaKernel>,
    /// Mangled name → kernel (first registration wins): the way back from a
    /// `cudaKernel_t` that `__cudaGetKernel` did not show us.
    by_name: RwLock<HashMap<String, Arc<CudaKernel>>>,
    /// Bumped by every change that can alter a lookup: a kernel found
    /// under this generation is still the answer while it is unchanged.
    generation: AtomicU64,
}

impl Registry {
    /// Nothing registered.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// `__cudaRegisterFatBinary`.
    pub fn add_fatbin(
        &self,
        handle: u64,
        image: Result<(usize, usize), ImageError>,
    ) -> Arc<Fatbin> {
        let f = Arc::new(Fatbin::registered(handle, image));
        put(&self.fatbins, handle, f.clone());
        f
    }

    /// The fat binary of a handle.
    pub fn fatbin(&self, handle: u64) -> Option<Arc<Fatbin>> {
        get(&self.fatbins, handle)
    }

    /// `__cudaUnregisterFatBinary`: never read it again (kernels already
    /// launched keep their blob). `false`: not a handle we know.
    pub fn remove_fatbin(&self, handle: u64) -> bool {
        let f = self
            .fatbins
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&handle);
        if let Some(f) = &f {
            f.live.store(false, Ordering::Release);
        }
        self.changed("epoch moved: a fat binary unregistered");
        f.is_some()
    }

    /// `__cudaRegisterFunction`. A fat-binary handle never registered gets a
    /// placeholder (its kernels keep their names, and launches say why
    /// there is no code).
    pub fn add_function(&self, fatbin: u64, host_fun: u64, name: &str) -> Arc<CudaKernel> {
        let f = self
            .fatbin(fatbin)
            .unwrap_or_else(|| self.add_fatbin(fatbin, Err(ImageError::NeverRegistered(fatbin))));
        let k = Arc::new(CudaKernel::new(name.to_string(), host_fun, f));
        put(&self.by_host, host_fun, k.clone());
        self.by_name
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_string())
            .or_insert_with(|| k.clone());
        self.changed("epoch moved: a kernel registered");
        k
    }

    /// The kernel of a host stub.
    pub fn by_host(&self, host_fun: u64) -> Option<Arc<CudaKernel>> {
        get(&self.by_host, host_fun)
    }

    /// The kernel of a `cudaKernel_t`.
    pub fn by_handle(&self, handle: u64) -> Option<Arc<CudaKernel>> {
        get(&self.by_handle, handle)
    }

    /// The first kernel registered under a (mangled) name.
    pub fn by_name(&self, name: &str) -> Option<Arc<CudaKernel>> {
        self.by_name
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
    }

    /// `__cudaGetKernel(&handle, hostFun)` succeeded: launches through
    /// `handle` are launches of `kernel`.
    pub fn bind_handle(&self, handle: u64, kernel: &Arc<CudaKernel>) {
        if handle == 0 {
            return;
        }
        if kernel.handle() == 0 {
            kernel.set_handle(handle);
        }
        put(&self.by_handle, handle, kernel.clone());
        self.changed("epoch moved: a kernel handle bound");
    }

    /// After a change that can alter a lookup: the generation and the
    /// launch memo's epoch move (`why` names it in the capture profile).
    fn changed(&self, why: &'static str) {
        self.generation.fetch_add(1, Ordering::Release);
        hrr_recorder::record::launch_memo::invalidate(why);
    }

    /// See the field: read before a lookup, compare after.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Number of registered fat binaries, and how many were written.
    pub fn fatbin_counts(&self) -> (usize, usize) {
        let m = self.fatbins.read().unwrap_or_else(PoisonError::into_inner);
        (m.len(), m.values().filter(|f| f.is_loaded()).count())
    }
}

static GLOBAL: LazyLock<Registry> = LazyLock::new(Registry::new);

/// The process's registry.
pub fn global() -> &'static Registry {
    &GLOBAL
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::manifest::Platform;
    use hrr_core::{BlobId, MemKind, Op};
    use hrr_recorder::record::kernel_args::ArgValues;
    use hrr_recorder::record::recorder::{LaunchDims, Recorder};
    use hrr_recorder::sink::event_sink::LockMode;
    use std::path::Path;
    use std::sync::atomic::AtomicU32;

    /// nvcc 13.0 `--compress-mode=none` fat binary of
    /// hrr-codeobj/tests/fixtures/cuda/kernels.cu (saxpy, with_struct,
    /// _Z7mangledsdPh, big, noargs).
    const FATBIN: &[u8] =
        include_bytes!("../../../../hrr-codeobj/tests/fixtures/cuda/kernels.none.fatbin");
    /// The same kernels, zstd-compressed entries (`--compress-mode=size`).
    const FATBIN_ZSTD: &[u8] =
        include_bytes!("../../../../hrr-codeobj/tests/fixtures/cuda/kernels.size.fatbin");

    /// Every blob's content, read as replay reads it (a file may be
    /// compressed by the time the archive is finished).
    fn blob_files(dir: &Path) -> Vec<Vec<u8>> {
        let store = hrr_core::blob_store::BlobStore::of_archive(dir);
        store
            .list()
            .unwrap()
            .iter()
            .map(|id| store.get(id).unwrap().to_vec())
            .collect()
    }

    fn events(dir: &Path) -> Vec<hrr_core::Event> {
        hrr_core::archive::Archive::open(dir)
            .unwrap()
            .events(hrr_core::event_reader::ReadOptions::default())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// A fake address space: (base, bytes) regions.
    fn memory<'a>(regions: &'a [(usize, &'a [u8])]) -> impl Fn(usize, usize) -> Option<&'a [u8]> {
        move |addr, len| {
            regions.iter().find_map(|&(base, bytes)| {
                let off = addr.checked_sub(base)?;
                bytes.get(off..off.checked_add(len)?)
            })
        }
    }

    fn wrapper(version: u32, data: usize) -> Vec<u8> {
        let mut w = cuda::WRAPPER_MAGIC.to_le_bytes().to_vec();
        w.extend_from_slice(&version.to_le_bytes());
        w.extend_from_slice(&(data as u64).to_le_bytes());
        w.extend_from_slice(&0u64.to_le_bytes());
        w
    }

    #[test]
    fn locates_a_real_fat_binary_from_its_wrapper() {
        let fat_addr = 0x7f00_0010_0000usize;
        let mut padded = FATBIN.to_vec();
        padded.extend_from_slice(&[0xAB; 4096]);
        let w = wrapper(1, fat_addr);
        let regions = [(0x5000usize, &w[..]), (fat_addr, &padded[..])];
        assert_eq!(
            locate(memory(&regions), 0x5000).unwrap(),
            (fat_addr, FATBIN.len()),
            "the extent is the header's, not the buffer's"
        );
        let w2 = wrapper(2, fat_addr);
        let regions = [(0x5000usize, &w2[..]), (fat_addr, FATBIN_ZSTD)];
        assert_eq!(
            locate(memory(&regions), 0x5000).unwrap(),
            (fat_addr, FATBIN_ZSTD.len())
        );
        // Errors: null, bad magic, null data, not a fat binary.
        assert!(locate(memory(&regions), 0).is_err());
        let mut bad = w.clone();
        bad[0] ^= 1;
        assert!(locate(memory(&[(0x5000, &bad[..])]), 0x5000).is_err());
        let nul = wrapper(1, 0);
        assert_eq!(
            locate(memory(&[(0x5000, &nul[..])]), 0x5000)
                .unwrap_err()
                .to_string(),
            "wrapper version 1 has a null fat binary pointer"
        );
        let junk = [0x11u8; 64];
        let w3 = wrapper(1, 0x9000);
        assert!(locate(memory(&[(0x5000, &w3[..]), (0x9000, &junk[..])]), 0x5000).is_err());
    }

    #[test]
    fn registering_writes_nothing_and_first_launch_writes_one_blob_per_fatbin() {
        let t = tempfile::tempdir().unwrap();
        let r = Recorder::create(
            t.path(),
            Platform::Nvidia,
            vec!["app".into()],
            Default::default(),
        )
        .unwrap();
        let reg = Registry::new();
        let used = (FATBIN.as_ptr() as usize, FATBIN.len());
        let unused = (FATBIN_ZSTD.as_ptr() as usize, FATBIN_ZSTD.len());
        reg.add_fatbin(0xf1, Ok(used));
        reg.add_fatbin(0xf2, Ok(unused));
        let saxpy = reg.add_function(0xf1, 0x4010, "saxpy");
        let with_struct = reg.add_function(0xf1, 0x4020, "with_struct");
        reg.add_function(0xf2, 0x5010, "saxpy");
        reg.bind_handle(0xaaa0, &saxpy);
        assert!(
            blob_files(t.path()).is_empty(),
            "registration copies nothing"
        );
        assert_eq!(reg.fatbin_counts(), (2, 0));
        // by_name keeps the first registration.
        assert_eq!(reg.by_name("saxpy").unwrap().host_fun, 0x4010);
        assert_eq!(reg.by_handle(0xaaa0).unwrap().name, "saxpy");
        assert_eq!(saxpy.handle(), 0xaaa0);

        let loads = AtomicU32::new(0);
        let load = |addr: usize, len: usize| {
            assert_eq!((addr, len), used);
            loads.fetch_add(1, Ordering::Relaxed);
            r.load_code(FATBIN)
        };
        let metadata = |addr: usize, len: usize| {
            assert_eq!((addr, len), used);
            hrr_recorder::record::code_objects::kernels_of(FATBIN)
        };
        // saxpy(float a, const float *x, float *y, int n): the driver's
        // answer, and the fat binary's metadata is not read.
        let (res, fresh) = saxpy.resolve(
            load,
            |_, _| unreachable!(),
            |k| {
                assert_eq!(k.handle(), 0xaaa0);
                Ok(vec![(0, 4), (8, 8), (16, 8), (24, 4)])
            },
        );
        assert!(fresh);
        assert_eq!(res.layout, layout::Source::Driver);
        assert_eq!(res.warning, None);
        assert_eq!(res.params, 4);
        // Second resolve: cached, nothing loaded or asked.
        let (_, fresh) = saxpy.resolve(
            |_, _| unreachable!(),
            |_, _| unreachable!(),
            |_| unreachable!(),
        );
        assert!(!fresh);
        // with_struct(Pair, char, long long*) from the same fat binary, the
        // driver unavailable: the cubin's EIATTR_KPARAM_INFO is used.
        let (ws, _) = with_struct.resolve(load, metadata, |_| Err(ParamLayoutError::NoDriver));
        assert_eq!(ws.layout, layout::Source::FatbinMetadata);
        assert_eq!(ws.params, 3);
        assert!(
            ws.warning
                .as_ref()
                .unwrap()
                .contains("(libcuda.so.1 is not loaded)")
        );
        assert_eq!(loads.load(Ordering::Relaxed), 1, "one load per fat binary");
        assert_eq!(reg.fatbin_counts(), (2, 1), "the unused one is never read");

        // Launch both through the recorder with pointers into live memory.
        let dev = 0x7f12_3456_0000u64;
        r.alloc("cudaMalloc", 0, dev, 1 << 20, MemKind::Device);
        let a = 3.0f32.to_le_bytes();
        let (x, y) = ((dev + 0x100).to_le_bytes(), (dev + 0x8000).to_le_bytes());
        let n = 1000i32.to_le_bytes();
        let vals: [&[u8]; 4] = [&a, &x, &y, &n];
        let dims = LaunchDims {
            grid: [4, 1, 1],
            block: [256, 1, 1],
            shmem: 0,
            stream: 0,
        };
        r.launch(
            "__cudaLaunchKernel",
            0,
            Some(&res.kernel),
            |_| unreachable!(),
            0xaaa0,
            &dims,
            &ArgValues::Params(&vals),
            None,
        );
        // Pair { float *p; int n; double w; } = 24 bytes, p at 0.
        let mut pair = (dev + 0x10).to_le_bytes().to_vec();
        pair.extend_from_slice(&7i32.to_le_bytes());
        pair.extend_from_slice(&[0; 4]);
        pair.extend_from_slice(&2.5f64.to_le_bytes());
        let c = [b'x'];
        let out = (dev + 0x20).to_le_bytes();
        let vals: [&[u8]; 3] = [&pair, &c, &out];
        r.launch(
            "cudaLaunchKernel",
            0,
            Some(&ws.kernel),
            |_| unreachable!(),
            0x4020,
            &dims,
            &ArgValues::Params(&vals),
            None,
        );
        r.finish("exit", LockMode::Block, Default::default);

        let blobs = blob_files(t.path());
        assert_eq!(blobs.len(), 1, "exactly one blob: the used fat binary");
        assert_eq!(blobs[0], FATBIN);
        let ev = events(t.path());
        let launches: Vec<_> = ev
            .iter()
            .filter_map(|e| match &e.op {
                Op::Launch {
                    name, code, args, ..
                } => Some((name.clone(), *code, args.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(launches.len(), 2);
        let (name, code, args) = &launches[0];
        assert_eq!((name.as_str(), *code), ("saxpy", BlobId::of(FATBIN)));
        let shape: Vec<_> = args
            .iter()
            .map(|a| (a.offset, a.size, a.ptrs.clone()))
            .collect();
        assert_eq!(
            shape,
            [
                (Some(0), 4, vec![]),
                (Some(8), 8, vec![0]),
                (Some(16), 8, vec![0]),
                (Some(24), 4, vec![])
            ]
        );
        assert_eq!(args[1].hex.0, x);
        let (name, code, args) = &launches[1];
        assert_eq!((name.as_str(), *code), ("with_struct", BlobId::of(FATBIN)));
        let shape: Vec<_> = args
            .iter()
            .map(|a| (a.offset, a.size, a.ptrs.clone()))
            .collect();
        assert_eq!(
            shape,
            [
                (Some(0), 24, vec![0]),
                (Some(24), 1, vec![]),
                (Some(32), 8, vec![0])
            ]
        );
    }

    #[test]
    fn every_change_a_lookup_could_see_moves_the_generation() {
        let reg = Registry::new();
        let g0 = reg.generation();
        reg.add_fatbin(1, Ok((0x1000, 64)));
        let k = reg.add_function(1, 0x10, "k");
        let g1 = reg.generation();
        assert!(g1 > g0, "add_function");
        reg.bind_handle(0x99, &k);
        let g2 = reg.generation();
        assert!(g2 > g1, "bind_handle");
        assert!(reg.by_handle(0x99).is_some());
        assert_eq!(reg.generation(), g2, "lookups change nothing");
        reg.remove_fatbin(1);
        assert!(reg.generation() > g2, "remove_fatbin");
    }

    #[test]
    fn unregistered_or_unlocatable_fatbins_are_never_read() {
        let reg = Registry::new();
        reg.add_fatbin(1, Ok((0x1000, 64)));
        let k = reg.add_function(1, 0x10, "k");
        assert!(reg.remove_fatbin(1));
        assert!(!reg.remove_fatbin(1));
        let (res, _) = k.resolve(
            |_, _| unreachable!(),
            |_, _| unreachable!(),
            |_| Ok(vec![(0, 8)]),
        );
        assert!(matches!(res.code_error, Some(ImageError::Unregistered)));
        assert_eq!(res.params, 1, "the driver's layout is still known");

        reg.add_fatbin(2, Err(ImageError::WrapperUnreadable));
        let k = reg.add_function(2, 0x20, "k2");
        let (res, _) = k.resolve(
            |_, _| unreachable!(),
            |_, _| unreachable!(),
            |_| Err(ParamLayoutError::NoKernel),
        );
        assert_eq!(
            res.code_error.as_ref().map(ToString::to_string).as_deref(),
            Some("wrapper not readable")
        );
        assert_eq!(res.layout, layout::Source::None);
        assert_eq!(
            res.warning.as_deref(),
            Some(
                "kernel k2: no parameter layout (driver: no cudaKernel_t for it; fat binary: \
                 wrapper not readable); its launches are recorded WITHOUT arguments and cannot \
                 be replayed"
            )
        );

        // A function of a handle nobody registered still has its name.
        let k = reg.add_function(3, 0x30, "orphan");
        assert_eq!(reg.by_host(0x30).unwrap().name, "orphan");
        let (res, _) = k.resolve(|_, _| unreachable!(), |_, _| unreachable!(), |_| Ok(vec![]));
        assert_eq!(
            res.code_error.as_ref().map(ToString::to_string).as_deref(),
            Some("fat binary handle 0x3 was never registered")
        );
        // A loaded fat binary stays usable after unregistration.
        let reg = Registry::new();
        reg.add_fatbin(4, Ok((FATBIN.as_ptr() as usize, FATBIN.len())));
        let a = reg.add_function(4, 0x40, "saxpy");
        let b = reg.add_function(4, 0x41, "noargs");
        let load = |_: usize, _: usize| {
            Arc::new(Module::new(
                BlobId::of(FATBIN),
                Err(MetadataError::LeftToDriver),
            ))
        };
        let metadata = |_: usize, _: usize| Ok(hrr_codeobj::kernels(FATBIN)?);
        let (res, _) = a.resolve(load, metadata, |_| Err(ParamLayoutError::NoDriver));
        assert_eq!(res.layout, layout::Source::FatbinMetadata);
        reg.remove_fatbin(4);
        let (res, _) = b.resolve(|_, _| unreachable!(), |_, _| unreachable!(), |_| Ok(vec![]));
        assert_eq!((res.code_error.is_none(), res.params), (true, 0));
    }
}
