//! `CodeObjects`: the modules, fat binaries and kernel functions the
//! application registered, and what a launch needs from them — the kernel's
//! name, the blob of its code object, and its argument layout.
//!
//! Two routes lead to a kernel:
//! - the module API: `hipModuleLoad*` gives an image (written as a blob at
//!   once, since the application may free its buffer), `hipModuleGetFunction`
//!   a `hipFunction_t`;
//! - the compiler path: `__hipRegisterFatBinary` gives a HIPF wrapper whose
//!   bundle stays mapped in the application's image, `__hipRegisterFunction`
//!   ties a host stub address to a kernel name. Large applications register
//!   hundreds of fat binaries and use a few, so only the pointer and extent
//!   are kept at registration; the bundle becomes a blob, and its metadata is
//!   parsed, the first time one of its kernels is launched.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use hrr_codeobj::{CodeObjError, KernelMeta, bundle};
use hrr_core::BlobId;

use crate::record::handle_hasher::HandleHasher;
use crate::record::kernel_args::ArgLayout;
use hrr_core::wire::encode::BlobHex;

/// Why a module has no kernel metadata (its launches are recorded without
/// argument layouts).
#[derive(Debug, Clone, thiserror::Error)]
pub enum MetadataError {
    /// The image is not a code object, bundle or PTX module that could be
    /// parsed.
    #[error(transparent)]
    CodeObject(#[from] CodeObjError),
    /// The image could not be read from the application's memory.
    #[error("the code object could not be read")]
    Unreadable(#[source] Arc<dyn std::error::Error + Send + Sync>),
    /// The load call failed: there is no code object.
    #[error("load failed")]
    LoadFailed,
    /// A CUDA image: the driver gives its kernels' layouts.
    #[error("not read: the driver gives CUDA's layouts")]
    LeftToDriver,
}

/// Why a kernel's code object is not there for its launch (the launch is
/// recorded with the empty blob and a warning).
#[derive(Debug, Clone, thiserror::Error)]
pub enum CodeError {
    /// Its fat binary was unregistered before the first launch: its memory
    /// may be gone.
    #[error("fat binary was unregistered before its first launch")]
    Unregistered,
    /// The family could not read it; the source says why.
    #[error(transparent)]
    Unreadable(Arc<dyn std::error::Error + Send + Sync>),
}

/// A loaded module: its code blob and kernels.
#[derive(Debug)]
pub struct Module {
    /// The code object's blob.
    pub code: BlobId,
    /// `code` as launch events write it.
    pub code_hex: BlobHex,
    /// Kernels from the metadata; `Err` when it could not be parsed.
    pub kernels: Result<Vec<KernelMeta>, MetadataError>,
}

impl Module {
    /// A module of code `code`, with the kernels its metadata lists.
    pub fn new(code: BlobId, kernels: Result<Vec<KernelMeta>, MetadataError>) -> Module {
        Module {
            code,
            code_hex: BlobHex::of(&code),
            kernels,
        }
    }
}

/// A registered fat binary: where its bundle is, loaded on first launch.
#[derive(Debug)]
pub struct FatBin {
    /// Address and length of the offload bundle in the application's image.
    pub addr: usize,
    /// Its length in bytes.
    pub len: usize,
    /// Cleared by `__hipUnregisterFatBinary`: the bundle's memory may be gone.
    live: AtomicBool,
    loaded: OnceLock<Result<Arc<Module>, CodeError>>,
}

impl FatBin {
    /// A fat binary whose bundle is `len` bytes at `addr`.
    pub fn new(addr: usize, len: usize) -> FatBin {
        FatBin {
            addr,
            len,
            live: AtomicBool::new(true),
            loaded: OnceLock::new(),
        }
    }

    /// The bundle as a module, loading it with `load` the first time (never
    /// after the fat binary was unregistered).
    pub fn module(
        &self,
        load: impl FnOnce() -> Result<Arc<Module>, CodeError>,
    ) -> Result<&Arc<Module>, CodeError> {
        if self.loaded.get().is_none() && !self.live.load(Ordering::Acquire) {
            return Err(CodeError::Unregistered);
        }
        self.loaded.get_or_init(load).as_ref().map_err(Clone::clone)
    }

    /// Whether its bundle was loaded.
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }
}

/// A device variable of a registered fat binary (`__hipRegisterVar`).
#[derive(Debug)]
pub struct Var {
    /// Its name in the code object.
    pub name: String,
    /// The fat binary defining it.
    pub fatbin: Arc<FatBin>,
    /// The fat binary's handle.
    pub handle: u64,
}

/// Where a kernel's code comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A module loaded from memory or a file.
    Module(Arc<Module>),
    /// A fat binary registered at start-up.
    FatBin(Arc<FatBin>),
}

/// A kernel as launches see it.
#[derive(Debug)]
pub struct Kernel {
    /// The kernel's name.
    pub name: String,
    /// Where its code comes from.
    pub source: Source,
    /// Layout, resolved when the code is (at once for modules, on first
    /// launch for fat binaries). `None` inside: no metadata for this kernel.
    layout: OnceLock<Option<ArgLayout>>,
}

/// The code blob and argument layout of a kernel, ready for a launch event.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a> {
    /// The code blob's digits.
    pub code: &'a BlobHex,
    /// The argument layout, when the metadata gives one.
    pub layout: Option<&'a ArgLayout>,
}

impl Kernel {
    /// A kernel `name` of `source`.
    pub fn new(name: String, source: Source) -> Kernel {
        Kernel {
            name,
            source,
            layout: OnceLock::new(),
        }
    }

    /// Code and layout; `load` turns a fat binary into a module the first time.
    pub fn resolve(
        &self,
        load: impl FnOnce(&FatBin) -> Result<Arc<Module>, CodeError>,
    ) -> Result<Resolved<'_>, CodeError> {
        let module: &Arc<Module> = match &self.source {
            Source::Module(m) => m,
            Source::FatBin(f) => f.module(|| load(f))?,
        };
        let layout = self.layout.get_or_init(|| {
            module
                .kernels
                .as_ref()
                .ok()?
                .iter()
                .find(|k| k.name == self.name)
                .map(ArgLayout::of)
        });
        Ok(Resolved {
            code: &module.code_hex,
            layout: layout.as_ref(),
        })
    }
}

/// Kernel metadata of an image: a code object, or every device entry of an
/// offload bundle (the runtime picks one; all of them name the same kernels
/// with the same host arguments).
pub fn kernels_of(image: &[u8]) -> Result<Vec<KernelMeta>, MetadataError> {
    if bundle::is_bundle(image) || bundle::is_compressed(image) {
        let inflated;
        let plain = if bundle::is_compressed(image) {
            inflated = bundle::decompress(image)?;
            &inflated[..]
        } else {
            image
        };
        let b = bundle::parse(plain)?;
        let mut all: Vec<KernelMeta> = Vec::new();
        let mut last_err = None;
        for e in b
            .entries
            .iter()
            .filter(|e| e.target().kind != "host" && e.size > 0)
        {
            match e.data(plain).and_then(hrr_codeobj::kernels) {
                Ok(ks) => {
                    for k in ks {
                        if !all.iter().any(|a| a.name == k.name) {
                            all.push(k);
                        }
                    }
                }
                Err(err) => last_err = Some(err),
            }
        }
        if let (true, Some(err)) = (all.is_empty(), last_err) {
            return Err(MetadataError::CodeObject(err));
        }
        Ok(all)
    } else if hrr_codeobj::identify(image) == hrr_codeobj::ImageKind::Unknown
        && let Ok(text) = std::str::from_utf8(image)
        && text.contains(".entry")
    {
        // PTX (a CUDA module loaded from text): its `.param` lists.
        Ok(hrr_codeobj::cuda::ptx_params(text)?
            .iter()
            .map(hrr_codeobj::cuda::PtxKernel::to_kernel_meta)
            .collect())
    } else {
        Ok(hrr_codeobj::kernels(image)?)
    }
}

/// A map from a runtime handle to what it stands for, for many readers.
struct Handles<K, V> {
    map: RwLock<HashMap<K, Arc<V>, BuildHasherDefault<HandleHasher>>>,
}

impl<K: Hash + Eq, V> Handles<K, V> {
    fn new() -> Self {
        Handles {
            map: RwLock::new(HashMap::default()),
        }
    }
    fn get(&self, k: &K) -> Option<Arc<V>> {
        self.map
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(k)
            .cloned()
    }
    /// Calls `f` with the value under the read lock: no reference count
    /// traffic on the per-launch path. `f` must not take this map's lock.
    fn with<R>(&self, k: &K, f: impl FnOnce(Option<&V>) -> R) -> R {
        let map = self.map.read().unwrap_or_else(PoisonError::into_inner);
        f(map.get(k).map(|v| &**v))
    }
    fn insert(&self, k: K, v: Arc<V>) {
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(k, v);
    }
    fn remove(&self, k: &K) -> Option<Arc<V>> {
        self.map
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(k)
    }
}

/// Everything registered, by handle.
pub struct CodeObjects {
    modules: Handles<u64, Module>,
    functions: Handles<u64, Kernel>,
    fatbins: Handles<u64, FatBin>,
    /// Compiler path: host stub address → kernel.
    stubs: Handles<u64, Kernel>,
    /// Compiler path: host shadow variable → device variable (`__hipRegisterVar`).
    vars: Handles<u64, Var>,
}

impl Default for CodeObjects {
    fn default() -> Self {
        CodeObjects::new()
    }
}

impl CodeObjects {
    /// No code objects.
    pub fn new() -> CodeObjects {
        CodeObjects {
            modules: Handles::new(),
            functions: Handles::new(),
            fatbins: Handles::new(),
            stubs: Handles::new(),
            vars: Handles::new(),
        }
    }

    /// After the change: a launch that reads the memo's epoch before its
    /// lookups sees the new code or misses.
    fn changed(&self) {
        crate::record::launch_memo::invalidate("epoch moved: a HIP code object");
    }

    /// `hipModuleLoad*`: `module` under its handle.
    pub fn add_module(&self, handle: u64, module: Module) {
        self.modules.insert(handle, Arc::new(module));
        self.changed();
    }

    /// `hipModuleUnload`.
    pub fn remove_module(&self, handle: u64) {
        self.modules.remove(&handle);
        self.changed();
    }

    /// The module of a handle.
    pub fn module(&self, handle: u64) -> Option<Arc<Module>> {
        self.modules.get(&handle)
    }

    /// `hipModuleGetFunction`; `false` when the module is unknown.
    pub fn add_function(&self, func: u64, module: u64, name: &str) -> bool {
        let Some(m) = self.modules.get(&module) else {
            return false;
        };
        self.functions.insert(
            func,
            Arc::new(Kernel::new(name.to_string(), Source::Module(m))),
        );
        self.changed();
        true
    }

    /// The kernel of a function handle.
    pub fn function(&self, func: u64) -> Option<Arc<Kernel>> {
        self.functions.get(&func)
    }

    /// `f` with the kernel of `func`, under the map's read lock (a launch
    /// records without cloning the `Arc`); `f` must not register or look up
    /// functions.
    pub fn with_function<R>(&self, func: u64, f: impl FnOnce(Option<&Kernel>) -> R) -> R {
        self.functions.with(&func, f)
    }

    /// `__hipRegisterFatBinary`: `fatbin` under its handle.
    pub fn add_fatbin(&self, handle: u64, fatbin: FatBin) {
        self.fatbins.insert(handle, Arc::new(fatbin));
        self.changed();
    }

    /// `__hipUnregisterFatBinary`: the bundle's memory may go away with it.
    /// Kernels registered from it keep a loaded module if they have one.
    pub fn remove_fatbin(&self, handle: u64) {
        if let Some(f) = self.fatbins.remove(&handle) {
            f.live.store(false, Ordering::Release);
        }
        self.changed();
    }

    /// `__hipRegisterFunction`; `false` when the fat binary is unknown.
    pub fn add_stub(&self, stub: u64, fatbin: u64, name: &str) -> bool {
        let Some(f) = self.fatbins.get(&fatbin) else {
            return false;
        };
        self.stubs.insert(
            stub,
            Arc::new(Kernel::new(name.to_string(), Source::FatBin(f))),
        );
        self.changed();
        true
    }

    /// The kernel of a host stub.
    pub fn stub(&self, stub: u64) -> Option<Arc<Kernel>> {
        self.stubs.get(&stub)
    }

    /// [`CodeObjects::with_function`] for a host stub.
    pub fn with_stub<R>(&self, stub: u64, f: impl FnOnce(Option<&Kernel>) -> R) -> R {
        self.stubs.with(&stub, f)
    }

    /// `__hipRegisterVar`; `false` when the fat binary is unknown.
    pub fn add_var(&self, var: u64, fatbin: u64, name: &str) -> bool {
        let Some(f) = self.fatbins.get(&fatbin) else {
            return false;
        };
        let v = Var {
            name: name.to_string(),
            fatbin: f,
            handle: fatbin,
        };
        self.vars.insert(var, Arc::new(v));
        true
    }

    /// The device variable behind a host shadow variable.
    pub fn var(&self, var: u64) -> Option<Arc<Var>> {
        self.vars.get(&var)
    }

    /// Whether the fat binary `handle` is still registered.
    pub fn has_fatbin(&self, handle: u64) -> bool {
        self.fatbins.get(&handle).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_codeobj::{ArgKind, ArgMeta};
    use std::sync::atomic::{AtomicU32, Ordering};

    fn meta(name: &str) -> KernelMeta {
        KernelMeta {
            name: name.into(),
            symbol: name.into(),
            kernarg_segment_size: 8,
            args: vec![ArgMeta {
                offset: 0,
                size: 8,
                kind: ArgKind::GlobalBuffer,
                address_space: None,
                name: None,
            }],
        }
    }

    #[test]
    fn module_functions_resolve_at_once() {
        let c = CodeObjects::new();
        let code = BlobId::of(b"so");
        c.add_module(1, Module::new(code, Ok(vec![meta("saxpy")])));
        assert!(c.add_function(10, 1, "saxpy"));
        assert!(c.add_function(11, 1, "missing"));
        assert!(!c.add_function(12, 2, "saxpy"), "unknown module");
        let k = c.function(10).unwrap();
        let r = k.resolve(|_| unreachable!()).unwrap();
        assert_eq!(*r.code, BlobHex::of(&code));
        assert_eq!(r.layout.unwrap().slots.len(), 1);
        assert!(
            c.function(11)
                .unwrap()
                .resolve(|_| unreachable!())
                .unwrap()
                .layout
                .is_none()
        );
    }

    #[test]
    fn fatbins_load_once_on_first_resolve() {
        let c = CodeObjects::new();
        c.add_fatbin(5, FatBin::new(0x1000, 64));
        assert!(c.add_stub(0xabc, 5, "vadd"));
        assert!(c.add_stub(0xdef, 5, "scale"));
        let loads = AtomicU32::new(0);
        let load = |f: &FatBin| {
            assert_eq!((f.addr, f.len), (0x1000, 64));
            loads.fetch_add(1, Ordering::Relaxed);
            Ok(Arc::new(Module::new(
                BlobId::of(b"bundle"),
                Ok(vec![meta("vadd"), meta("scale")]),
            )))
        };
        for stub in [0xabc, 0xdef, 0xabc] {
            let k = c.stub(stub).unwrap();
            assert!(k.resolve(load).unwrap().layout.is_some());
        }
        assert_eq!(loads.load(Ordering::Relaxed), 1);
        c.remove_fatbin(5);
        assert!(
            c.stub(0xabc).unwrap().resolve(|_| unreachable!()).is_ok(),
            "loaded code survives unregister"
        );
        c.add_fatbin(6, FatBin::new(0x2000, 64));
        c.add_stub(0x123, 6, "k");
        c.remove_fatbin(6);
        assert!(
            c.stub(0x123).unwrap().resolve(|_| unreachable!()).is_err(),
            "never read after unregister"
        );
    }

    #[test]
    fn bundle_metadata_comes_from_device_entries() {
        let json = br#"{"kernels":[{"name":"k","args":[{"offset":0,"size":8,"value_kind":"global_buffer"}]}]}"#;
        // Not an ELF: the entry fails to parse, and that error is reported.
        let b = bundle::write(&[
            ("host-x86_64-unknown-linux-gnu-", &[]),
            ("hipv4-x86_64-unknown-linux-gnu-cpu", json),
        ]);
        assert!(kernels_of(&b).is_err());
    }
}
