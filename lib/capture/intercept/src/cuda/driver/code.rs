//! The driver layer's code objects: modules and libraries the program
//! loaded (`cuModuleLoad*`, `cuLibraryLoad*`), and the functions and kernels
//! it took from them (`cuModuleGetFunction`, `cuLibraryGetKernel`,
//! `cuKernelGetFunction`), so that a `cuLaunchKernel` of any `CUfunction`
//! (or `CUkernel`, which the driver accepts in its place) is recorded with
//! its name, its code blob and its parameter layout.
//!
//! This is bookkeeping, kept whether or not the call that made a handle was
//! recorded: the CUDA runtime loads its fat binaries and looks up its
//! kernels inside runtime calls (nested, not events of their own), and a
//! later first-level launch of such a kernel (PyTorch's `cuLaunchKernel` of
//! a function from `cudaGetFuncBySymbol`) still needs to know it.
//!
//! Images are kept the way the compiler path keeps fat binaries
//! (`registry::Fatbin`): an image lying in a loaded object (a fat binary
//! in a library's `.nv_fatbin`, which the runtime hands to
//! `cuLibraryLoadData`) as an address, read and written as a blob at the
//! first launch of one of its kernels — importing PyTorch loads hundreds;
//! any other image (a heap buffer: Triton's cubins, a JIT's PTX, a file
//! read by `cuModuleLoad`) is copied at load, since the program may free
//! it. [`locate_image`] finds an image's extent from its first bytes.

#![deny(unsafe_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use hrr_codeobj::cuda;

use crate::cuda::registry::{self, ByAddr, CudaKernel, Fatbin, ImageError};

/// Longest PTX text [`locate_image`] accepts (its NUL must come before).
pub const MAX_PTX: usize = 1 << 30;

/// What a function handle is: launches accept both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    /// A `CUfunction` (layout from `cuFuncGetParamInfo`).
    Function,
    /// A `CUkernel` (layout from `cuKernelGetParamInfo`).
    Kernel,
}

/// A function or kernel handle the program obtained.
#[derive(Debug)]
pub struct DriverFunction {
    /// Name, image and the layout once resolved; shared between a `CUkernel`
    /// and the `CUfunction`s `cuKernelGetFunction` made of it.
    pub kernel: Arc<CudaKernel>,
    /// Which kind of handle it is.
    pub kind: FnKind,
}

/// Every driver-layer module, library and function, by handle.
#[derive(Default)]
pub struct DriverCode {
    /// `CUmodule` and `CUlibrary` handles (one namespace: both are
    /// addresses the driver hands out) → image.
    modules: ByAddr<Fatbin>,
    functions: ByAddr<DriverFunction>,
    /// Module handle → the globals looked up in it `(address, size)`.
    globals: RwLock<HashMap<u64, Vec<(u64, u64)>>>,
    /// Bumped by every change a lookup could see (each also moves the
    /// launch memo's epoch); its tests hold a lookup asked again to be no
    /// change.
    generation: AtomicU64,
}

impl DriverCode {
    /// No modules, libraries or functions.
    pub fn new() -> DriverCode {
        DriverCode::default()
    }

    fn bump(&self, why: &'static str) {
        self.generation.fetch_add(1, Ordering::Release);
        hrr_recorder::record::launch_memo::invalidate(why);
    }

    /// Changes so far.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A module or library loaded from `image`.
    pub fn add_module(&self, image: Fatbin) -> Arc<Fatbin> {
        let f = Arc::new(image);
        registry::put(&self.modules, f.handle, f.clone());
        self.bump("epoch moved: a module loaded");
        f
    }

    /// The image of a module or library handle.
    pub fn module(&self, handle: u64) -> Option<Arc<Fatbin>> {
        registry::get(&self.modules, handle)
    }

    /// `cuLibraryGetModule`: `module` is `library`'s code. `false`: an
    /// unknown library.
    pub fn alias_module(&self, module: u64, library: u64) -> bool {
        let Some(f) = self.module(library) else {
            return false;
        };
        // Asked again (PyTorch asks per launch site): nothing changes, and
        // the launch memo's lines stay good.
        if self.module(module).is_some_and(|m| Arc::ptr_eq(&m, &f)) {
            return true;
        }
        registry::put(&self.modules, module, f);
        self.bump("epoch moved: a library's module");
        true
    }

    /// `cuModuleUnload` / `cuLibraryUnload`: the image is never read again
    /// (kernels already launched keep their blob) and its handles go.
    /// Returns the globals that lived in it.
    pub fn unload(&self, handle: u64) -> Vec<(u64, u64)> {
        let f = self
            .modules
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&handle);
        if let Some(f) = &f {
            f.retire();
            let mut m = self.modules.write().unwrap_or_else(PoisonError::into_inner);
            m.retain(|_, g| !Arc::ptr_eq(g, f));
            drop(m);
            self.functions
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|_, d| !Arc::ptr_eq(&d.kernel.fatbin, f));
        }
        self.bump("epoch moved: a module unloaded");
        self.globals
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&handle)
            .unwrap_or_default()
    }

    /// `cuModuleGetFunction` / `cuLibraryGetKernel`: `func` is `name` in
    /// module (or library) `module`. A module never seen gets a placeholder
    /// image saying so (the function keeps its name).
    pub fn add_function(
        &self,
        func: u64,
        module: u64,
        name: &str,
        kind: FnKind,
    ) -> Arc<DriverFunction> {
        let known = self.module(module);
        // Asked again for the same function: the one resolved already
        // (its layout is not asked twice, the memo's lines stay good).
        if let Some(d) = self.function(func)
            && d.kind == kind
            && d.kernel.name == name
            && known
                .as_ref()
                .is_some_and(|m| Arc::ptr_eq(m, &d.kernel.fatbin))
        {
            return d;
        }
        let f =
            known.unwrap_or_else(|| Arc::new(Fatbin::new(module, Err(ImageError::Unseen(module)))));
        let k = Arc::new(CudaKernel::new(name.to_string(), 0, f));
        k.set_handle(func);
        let d = Arc::new(DriverFunction { kernel: k, kind });
        registry::put(&self.functions, func, d.clone());
        self.bump("epoch moved: a function looked up");
        d
    }

    /// `cuKernelGetFunction`: `func` is `kernel` in the current context.
    /// `false`: an unknown kernel.
    pub fn add_kernel_function(&self, func: u64, kernel: u64) -> bool {
        let Some(k) = self.function(kernel) else {
            return false;
        };
        // PyTorch asks for a kernel's function at every launch of it.
        if self
            .function(func)
            .is_some_and(|d| d.kind == FnKind::Function && Arc::ptr_eq(&d.kernel, &k.kernel))
        {
            return true;
        }
        let d = Arc::new(DriverFunction {
            kernel: k.kernel.clone(),
            kind: FnKind::Function,
        });
        registry::put(&self.functions, func, d);
        self.bump("epoch moved: a kernel's function");
        true
    }

    /// A handle the driver made itself for a kernel this process loaded
    /// (a graph node's `CUfunction` for a captured launch of a library's
    /// `CUkernel`: its module is the driver's, never handed out): the known
    /// function of the same name whose image was read at load, now also
    /// under `handle`. `None` when there is none.
    pub fn adopt_by_name(
        &self,
        handle: u64,
        name: &str,
        kind: FnKind,
    ) -> Option<Arc<DriverFunction>> {
        let k = self
            .functions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .find(|d| d.kernel.name == name && d.kernel.fatbin.image.is_ok())
            .map(|d| d.kernel.clone())?;
        let d = Arc::new(DriverFunction { kernel: k, kind });
        registry::put(&self.functions, handle, d.clone());
        self.bump("epoch moved: a graph node's function");
        Some(d)
    }

    /// The function or kernel of a handle.
    pub fn function(&self, handle: u64) -> Option<Arc<DriverFunction>> {
        registry::get(&self.functions, handle)
    }

    /// A global of `module` (for [`DriverCode::unload`]).
    pub fn add_global(&self, module: u64, ptr: u64, size: u64) {
        let mut g = self.globals.write().unwrap_or_else(PoisonError::into_inner);
        let v = g.entry(module).or_default();
        if !v.contains(&(ptr, size)) {
            v.push((ptr, size));
        }
    }
}

/// Address and length of the code image at `addr` that the driver just
/// loaded. `read(a, n)` returns `n` bytes of the program's memory at `a`;
/// `strlen(a)` the length of the NUL-terminated text there (bounded by
/// [`MAX_PTX`]). Binary images (cubin ELF, fat binary, offload bundle) are
/// sized from their headers; a fat-binary *wrapper* (what
/// `cuModuleLoadFatBinary` may get) leads to the fat binary it points at;
/// anything else is PTX text, sized to its NUL (the NUL not included).
pub fn locate_image<'a>(
    read: impl Fn(usize, usize) -> Option<&'a [u8]>,
    addr: usize,
    strlen: impl FnOnce(usize) -> usize,
) -> Result<(usize, usize), ImageError> {
    if addr == 0 {
        return Err(ImageError::NullImage);
    }
    let head = read(addr, 4).ok_or(ImageError::ImageUnreadable)?;
    if head == cuda::WRAPPER_MAGIC.to_le_bytes() {
        return registry::locate(read, addr);
    }
    let binary = head == *b"\x7fELF"
        || head == cuda::FATBIN_MAGIC.to_le_bytes()
        || *head == hrr_codeobj::bundle::MAGIC[..4]
        || *head == hrr_codeobj::bundle::CCOB_MAGIC[..4];
    if binary {
        let len = hrr_codeobj::read_image_extent(|n| read(addr, n))?;
        return Ok((addr, len));
    }
    let len = strlen(addr);
    if len == 0 || len >= MAX_PTX {
        return Err(ImageError::Unknown(head.to_vec()));
    }
    Ok((addr, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FATBIN: &[u8] =
        include_bytes!("../../../../../hrr-codeobj/tests/fixtures/cuda/kernels.none.fatbin");

    fn memory<'a>(regions: &'a [(usize, &'a [u8])]) -> impl Fn(usize, usize) -> Option<&'a [u8]> {
        move |addr, len| {
            regions.iter().find_map(|&(base, bytes)| {
                let off = addr.checked_sub(base)?;
                bytes.get(off..off.checked_add(len)?)
            })
        }
    }

    #[test]
    fn images_are_sized_by_kind() {
        let mut padded = FATBIN.to_vec();
        padded.extend_from_slice(&[0xEE; 512]);
        let regions = [(0x1000usize, &padded[..])];
        let no_text = |_| panic!("a binary is not text");
        assert_eq!(
            locate_image(memory(&regions), 0x1000, no_text).unwrap(),
            (0x1000, FATBIN.len())
        );
        // A wrapper leads to its fat binary.
        let mut w = cuda::WRAPPER_MAGIC.to_le_bytes().to_vec();
        w.extend_from_slice(&1u32.to_le_bytes());
        w.extend_from_slice(&0x1000u64.to_le_bytes());
        w.extend_from_slice(&0u64.to_le_bytes());
        let regions = [(0x1000usize, &padded[..]), (0x9000, &w[..])];
        assert_eq!(
            locate_image(memory(&regions), 0x9000, no_text).unwrap(),
            (0x1000, FATBIN.len())
        );
        // PTX: to its NUL.
        let ptx = b".version 8.0\n.target sm_90\n\0garbage";
        let regions = [(0x2000usize, &ptx[..])];
        assert_eq!(
            locate_image(memory(&regions), 0x2000, |a| {
                assert_eq!(a, 0x2000);
                27
            })
            .unwrap(),
            (0x2000, 27)
        );
        assert!(locate_image(memory(&regions), 0x2000, |_| 0).is_err());
        assert!(locate_image(memory(&regions), 0, |_| 1).is_err());
        // A truncated binary is an error, not a guess.
        let regions = [(0x3000usize, &FATBIN[..40])];
        assert!(locate_image(memory(&regions), 0x3000, no_text).is_err());
    }

    #[test]
    fn functions_kernels_and_aliases_share_their_image() {
        let c = DriverCode::new();
        let lib = c.add_module(Fatbin::copied(0x100, FATBIN.to_vec()));
        assert_eq!(lib.owned(), Some(FATBIN));
        let g0 = c.generation();
        let k = c.add_function(0x1c1, 0x100, "saxpy", FnKind::Kernel);
        assert!(c.generation() > g0);
        assert!(Arc::ptr_eq(&k.kernel.fatbin, &lib));
        assert!(c.add_kernel_function(0xf1, 0x1c1));
        let f = c.function(0xf1).unwrap();
        assert_eq!(
            (f.kind, f.kernel.name.as_str()),
            (FnKind::Function, "saxpy")
        );
        assert!(Arc::ptr_eq(&f.kernel, &k.kernel), "one resolution for both");
        assert!(!c.add_kernel_function(0xf2, 0x999));
        assert!(c.alias_module(0x200, 0x100));
        assert!(Arc::ptr_eq(&c.module(0x200).unwrap(), &lib));
        assert!(!c.alias_module(0x300, 0x999));
        // Asked again, as PyTorch asks per launch: the same answers, and
        // the generation (so every kept launch line) stays.
        let g1 = c.generation();
        assert!(c.add_kernel_function(0xf1, 0x1c1));
        assert!(c.alias_module(0x200, 0x100));
        let again = c.add_function(0x1c1, 0x100, "saxpy", FnKind::Kernel);
        assert!(Arc::ptr_eq(&again, &k));
        assert_eq!(c.generation(), g1);
        // A handle reused for another function is a change.
        let d = DriverCode::new();
        d.add_module(Fatbin::copied(0x100, FATBIN.to_vec()));
        d.add_function(0x1c1, 0x100, "saxpy", FnKind::Kernel);
        let g2 = d.generation();
        d.add_function(0x1c1, 0x100, "other", FnKind::Kernel);
        assert!(d.generation() > g2);
        // A handle the driver made for a loaded kernel: adopted by name,
        // sharing its image (not so a name nothing loaded has).
        let adopted = c.adopt_by_name(0xd1, "saxpy", FnKind::Function).unwrap();
        assert!(Arc::ptr_eq(&adopted.kernel, &k.kernel));
        assert!(Arc::ptr_eq(&c.function(0xd1).unwrap().kernel, &k.kernel));
        assert!(c.adopt_by_name(0xd2, "nowhere", FnKind::Function).is_none());
        // A function of a module never seen: named, without code.
        let orphan = c.add_function(0xf9, 0x777, "lost", FnKind::Function);
        let err = orphan.kernel.fatbin.image.as_ref().unwrap_err();
        assert!(err.to_string().contains("0x777"), "{err}");
        // Unloading retires the image and drops its handles and aliases.
        c.add_global(0x100, 0x7f00_0000_1000, 64);
        c.add_global(0x100, 0x7f00_0000_1000, 64);
        assert_eq!(c.unload(0x100), vec![(0x7f00_0000_1000, 64)]);
        assert!(c.function(0x1c1).is_none() && c.function(0xf1).is_none());
        assert!(
            c.function(0xd1).is_none(),
            "an adopted handle goes with its image"
        );
        assert!(c.module(0x200).is_none());
        assert!(!lib.is_live());
        assert!(c.function(0xf9).is_some(), "other modules' functions stay");
    }
}
