//! Recorded handlers: modules and the compiler path's registration calls.
//! (`__hipPushCallConfiguration` / `__hipPopCallConfiguration` are queries:
//! the launch that pops the configuration carries it.)

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::{Mutex, PoisonError};

use api_table::Entry;
use hip_api::args;
use hrr_codeobj::{CodeObjError, hipf};
use hrr_core::error_chain::chain;

use super::intercept;
use crate::capture::Guard;
use crate::hip::types::{HipError, HipModule};
use hrr_interpose::call_args::{bytes, c_str, out, out_addr};
use hrr_interpose::exports::missing;
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::recorder::Order;
use hrr_recorder::record::recorder::Recorder;

/// Why a code object the runtime loaded could not be read here.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// Its headers (or the HIPF wrapper) are not what they should be.
    #[error(transparent)]
    Format(#[from] CodeObjError),
    /// Its headers claim more than [`MAX_IMAGE`] bytes.
    #[error("code object claims {0} bytes, more than the {MAX_IMAGE} byte limit")]
    TooLarge(usize),
    /// The module file could not be read.
    #[error("{path}")]
    File {
        /// The file the runtime loaded.
        path: String,
        /// Why it could not be read here.
        #[source]
        source: std::io::Error,
    },
}

/// The code object at `image` (the runtime accepted it, so its headers are
/// readable and describe its extent).
///
/// # Safety
/// `image` must point at a code object the runtime just loaded.
unsafe fn image_at<'a>(image: *const c_void) -> Result<&'a [u8], ImageError> {
    // SAFETY: the prefix reader is only asked for lengths the image's own
    // headers name (image_extent's contract), inside the loaded image.
    // SAFETY: the runtime just loaded `image`, so its headers are readable.
    let len = unsafe { extent_at(image) }?;
    // SAFETY: as above, len is the image's extent.
    Ok(unsafe { bytes(image, len) })
}

#[inline]
pub unsafe fn hipModuleLoad(
    real: &'static Real<args::hipModuleLoad>,
    a: args::hipModuleLoad,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        // SAFETY: read only after success, when the runtime wrote *module;
        // fname is the C string the runtime just opened.
        let (m, path) = unsafe { (out_addr(ret, a.module), c_str(a.fname)) };
        let image = if ret == 0 {
            std::fs::read(&path).map_err(|source| ImageError::File { path, source })
        } else {
            Ok(Vec::new())
        };
        match image {
            Ok(bytes) => r.module_load(api, ret, m, Ok::<_, ImageError>(&bytes[..])),
            Err(e) => r.module_load(api, ret, m, Err(e)),
        }
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

/// Records a `hipModuleLoadData*` call: the module it made and the image.
///
/// # Safety
/// `module`, `image` and `ret` are one such call's arguments and result.
unsafe fn record_load_data(
    r: &Recorder,
    api: &str,
    ret: HipError,
    module: *mut HipModule,
    image: *const c_void,
) {
    // SAFETY: read only after success, when the runtime wrote *module.
    let m = unsafe { out_addr(ret, module) };
    let img = if ret == 0 {
        // SAFETY: the runtime just loaded the code object at `image`.
        unsafe { image_at(image) }
    } else {
        Ok(&[][..])
    };
    r.module_load(api, ret, m, img)
}

/// `NAME;` with arguments `module` and `image`: recorded by [`record_load_data`].
macro_rules! load_data {
    ($($name:ident;)*) => {$(
        #[inline]
        pub unsafe fn $name(real: &'static Real<args::$name>, a: args::$name) -> HipError {
            // SAFETY: the call's own arguments and result.
            let record = |r: &Recorder, api, ret| unsafe { record_load_data(r, api, ret, a.module, a.image) };
            // SAFETY: the export's contract: the application's arguments.
            unsafe { intercept(real, a, Order::Lifecycle, record) }
        }
    )*};
}

load_data! {
    hipModuleLoadData;
    hipModuleLoadDataEx;
}

#[inline]
pub unsafe fn hipModuleUnload(
    real: &'static Real<args::hipModuleUnload>,
    a: args::hipModuleUnload,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        if ret == 0 {
            // Its globals stop being device memory with it.
            let gone = globals().remove(&(a.module as u64)).unwrap_or_default();
            for p in gone {
                r.forget_memory(p);
            }
        }
        r.module_unload(api, ret, a.module as u64)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

#[inline]
pub unsafe fn hipModuleGetFunction(
    real: &'static Real<args::hipModuleGetFunction>,
    a: args::hipModuleGetFunction,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        // SAFETY: *function written on success; kname is a C string the
        // application passed (the runtime read it).
        let (func, name) = unsafe { (out_addr(ret, a.function), c_str(a.kname)) };
        r.get_function(api, ret, func, a.module as u64, &name)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

/// The globals looked up in each module (module handle → addresses), to
/// forget when it is unloaded.
fn globals() -> std::sync::MutexGuard<'static, BTreeMap<u64, Vec<u64>>> {
    static GLOBALS: Mutex<BTreeMap<u64, Vec<u64>>> = Mutex::new(BTreeMap::new());
    GLOBALS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `hipModuleGetGlobal`: recorded as a `global` event (the module's code,
/// the variable's name, recorded address and size), so replay maps the
/// recorded address to its own copy of the variable, and the address is
/// device memory from now on (copies to it are H2D).
#[inline]
pub unsafe fn hipModuleGetGlobal(
    real: &'static Real<args::hipModuleGetGlobal>,
    a: args::hipModuleGetGlobal,
) -> HipError {
    let record = |r: &Recorder, api, ret| {
        // SAFETY: out-parameters read only after success (either may be
        // null); name is the C string the runtime just looked up.
        let (ptr, size, name) = unsafe {
            (
                out(ret, a.dptr.cast::<usize>().cast_const()) as u64,
                out(ret, a.bytes.cast_const()) as u64,
                c_str(a.name),
            )
        };
        let module = a.hmod as u64;
        // A program may pass no size pointer: replay maps by size, so the
        // runtime is asked for it.
        let size = match (ret, size, real.get()) {
            (0, 0, Some(f)) => {
                let mut n = 0usize;
                let q = args::hipModuleGetGlobal {
                    dptr: std::ptr::null_mut(),
                    bytes: &mut n,
                    hmod: a.hmod,
                    name: a.name,
                };
                // SAFETY: the lookup that just succeeded, with our own
                // out-parameter for the size.
                unsafe { q.call(f) };
                n as u64
            }
            _ => size,
        };
        let code = r.module_code(module).unwrap_or_else(|| {
            r.warn(&format!(
                "{api}: global {name} of module {module:#x}, which was never seen"
            ));
            r.empty_code()
        });
        if ret == 0 && ptr != 0 {
            let mut g = globals();
            let list = g.entry(module).or_default();
            if !list.contains(&ptr) {
                list.push(ptr);
            }
        }
        r.global(api, ret, module, &name, code, ptr, size)
    };
    // SAFETY: the export's contract: the application's arguments.
    unsafe { intercept(real, a, Order::Lifecycle, record) }
}

// ---------------------------------------------------------------- compiler path

/// Address and extent of the offload bundle behind a HIPF wrapper.
///
/// # Safety
/// `wrapper` must be the wrapper the runtime just registered.
unsafe fn fatbin_extent(wrapper: *const c_void) -> Result<(usize, usize), ImageError> {
    // SAFETY: a registered wrapper is at least WRAPPER_SIZE readable bytes.
    let w = hipf::parse(unsafe { bytes(wrapper, hipf::WRAPPER_SIZE) })?;
    let bundle = w.binary as *const c_void;
    // SAFETY: the runtime accepted the bundle; its headers are readable.
    let len = unsafe { extent_at(bundle) }?;
    Ok((bundle as usize, len))
}

/// Largest image the recorder will copy (1 GiB): a corrupt header must not
/// make it read gigabytes past an application's buffer.
const MAX_IMAGE: usize = 1 << 30;

/// The extent of the code object at `image`, read from its headers alone.
///
/// # Safety
/// `image` must point at a code object whose headers are readable.
unsafe fn extent_at(image: *const c_void) -> Result<usize, ImageError> {
    // SAFETY: the prefix reader is asked only for lengths the image's own
    // headers name (read_image_extent's contract), inside the image.
    let len = hrr_codeobj::read_image_extent(|n| Some(unsafe { bytes(image, n) }))?;
    if len > MAX_IMAGE {
        return Err(ImageError::TooLarge(len));
    }
    Ok(len)
}

#[inline]
pub unsafe fn __hipRegisterFatBinary(
    real: &'static Real<args::__hipRegisterFatBinary>,
    a: args::__hipRegisterFatBinary,
) -> *mut *mut c_void {
    let Some(f) = real.get() else {
        return missing::<args::__hipRegisterFatBinary>();
    };
    let Some(g) = Guard::enter("__hipRegisterFatBinary") else {
        // SAFETY: the export's contract: the application's argument.
        return unsafe { a.call(f) };
    };
    // SAFETY: the export's contract: the application's argument.
    let handle = unsafe { a.call(f) };
    g.run(|r| {
        if handle.is_null() {
            return;
        }
        // SAFETY: a non-null handle means the runtime accepted the wrapper.
        match unsafe { fatbin_extent(a.data) } {
            Ok((addr, len)) => r.register_fatbin(handle as u64, addr, len),
            Err(e) => r.warn(&format!(
                "__hipRegisterFatBinary: {}; its kernels are recorded without code",
                chain(&e)
            )),
        }
    });
    handle
}

#[inline]
pub unsafe fn __hipRegisterFunction(
    real: &'static Real<args::__hipRegisterFunction>,
    a: args::__hipRegisterFunction,
) {
    let Some(f) = real.get() else {
        return missing::<args::__hipRegisterFunction>();
    };
    let g = Guard::enter("__hipRegisterFunction");
    // SAFETY: the export's contract: the application's arguments.
    unsafe { a.call(f) };
    if let Some(g) = g {
        g.run(|r| {
            let name = if a.deviceName.is_null() {
                a.deviceFunction.cast_const()
            } else {
                a.deviceName
            };
            // SAFETY: the kernel's C string name the runtime just read.
            let name = unsafe { c_str(name) };
            r.register_function(
                "__hipRegisterFunction",
                a.modules as u64,
                a.hostFunction as u64,
                &name,
            )
        });
    }
}

#[inline]
pub unsafe fn __hipUnregisterFatBinary(
    real: &'static Real<args::__hipUnregisterFatBinary>,
    a: args::__hipUnregisterFatBinary,
) {
    let Some(f) = real.get() else {
        return missing::<args::__hipUnregisterFatBinary>();
    };
    let g = Guard::enter("__hipUnregisterFatBinary");
    if let Some(g) = &g {
        // Before the call: afterwards the bundle's memory may be gone.
        g.run(|r| r.unregister_fatbin(a.modules as u64));
    }
    // SAFETY: the export's contract: the application's argument.
    unsafe { a.call(f) };
}
