//! Modules and the compiler path's registration calls.

use std::ffi::{c_char, c_int, c_uint, c_void};

use hrr_codeobj::hipf;

use super::{Order, bytes, c_str, intercept, out_addr, real};
use crate::hip::types::{Dim3, HipError, HipFunction, HipModule, JitOption};
use crate::interpose::guard::Guard;
use crate::record::recorder::Recorder;

/// The code object at `image` (the runtime accepted it, so its headers are
/// readable and describe its extent).
///
/// # Safety
/// `image` must point at a code object the runtime just loaded.
unsafe fn image_at<'a>(image: *const c_void) -> Result<&'a [u8], String> {
    // SAFETY: the prefix reader is only asked for lengths the image's own
    // headers name (image_extent's contract), inside the loaded image.
    // SAFETY: the runtime just loaded `image`, so its headers are readable.
    let len = unsafe { extent_at(image) }?;
    // SAFETY: as above, len is the image's extent.
    Ok(unsafe { bytes(image, len) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoad(module: *mut HipModule, fname: *const c_char) -> HipError {
    let real =
        real!(hipModuleLoad: unsafe extern "C" fn(*mut HipModule, *const c_char) -> HipError);
    intercept(
        "hipModuleLoad",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(module, fname) },
        |r, ret| {
            // SAFETY: read only after success, when the runtime wrote *module;
            // fname is the C string the runtime just opened.
            let (m, path) = unsafe { (out_addr(ret, module), c_str(fname)) };
            let image = if ret == 0 {
                std::fs::read(&path).map_err(|e| format!("{path}: {e}"))
            } else {
                Ok(Vec::new())
            };
            r.module_load(
                "hipModuleLoad",
                ret,
                m,
                image.as_deref().map_err(Clone::clone),
            )
        },
    )
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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadData(
    module: *mut HipModule,
    image: *const c_void,
) -> HipError {
    let real =
        real!(hipModuleLoadData: unsafe extern "C" fn(*mut HipModule, *const c_void) -> HipError);
    intercept(
        "hipModuleLoadData",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(module, image) },
        // SAFETY: the call's own arguments and result.
        |r, ret| unsafe { record_load_data(r, "hipModuleLoadData", ret, module, image) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut HipModule,
    image: *const c_void,
    num_options: c_uint,
    options: *mut JitOption,
    option_values: *mut *mut c_void,
) -> HipError {
    type F = unsafe extern "C" fn(
        *mut HipModule,
        *const c_void,
        c_uint,
        *mut JitOption,
        *mut *mut c_void,
    ) -> HipError;
    let real = real!(hipModuleLoadDataEx: F);
    // SAFETY: the application's arguments, forwarded unchanged.
    let call = |f: F| unsafe { f(module, image, num_options, options, option_values) };
    intercept(
        "hipModuleLoadDataEx",
        real,
        Order::Lifecycle,
        call,
        // SAFETY: the call's own arguments and result.
        |r, ret| unsafe { record_load_data(r, "hipModuleLoadDataEx", ret, module, image) },
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleUnload(module: HipModule) -> HipError {
    let real = real!(hipModuleUnload: unsafe extern "C" fn(HipModule) -> HipError);
    intercept(
        "hipModuleUnload",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(module) },
        |r, ret| r.module_unload("hipModuleUnload", ret, module as u64),
    )
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut HipFunction,
    module: HipModule,
    kname: *const c_char,
) -> HipError {
    let real = real!(hipModuleGetFunction: unsafe extern "C" fn(*mut HipFunction, HipModule, *const c_char) -> HipError);
    intercept(
        "hipModuleGetFunction",
        real,
        Order::Lifecycle,
        // SAFETY: the application's arguments, forwarded unchanged.
        |f| unsafe { f(function, module, kname) },
        |r, ret| {
            // SAFETY: *function written on success; kname is a C string the
            // application passed (the runtime read it).
            let (func, name) = unsafe { (out_addr(ret, function), c_str(kname)) };
            r.get_function("hipModuleGetFunction", ret, func, module as u64, &name)
        },
    )
}

// ---------------------------------------------------------------- compiler path

/// Address and extent of the offload bundle behind a HIPF wrapper.
///
/// # Safety
/// `wrapper` must be the wrapper the runtime just registered.
unsafe fn fatbin_extent(wrapper: *const c_void) -> Result<(usize, usize), String> {
    // SAFETY: a registered wrapper is at least WRAPPER_SIZE readable bytes.
    let w =
        hipf::parse(unsafe { bytes(wrapper, hipf::WRAPPER_SIZE) }).map_err(|e| e.to_string())?;
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
unsafe fn extent_at(image: *const c_void) -> Result<usize, String> {
    // SAFETY: the prefix reader is asked only for lengths the image's own
    // headers name (read_image_extent's contract), inside the image.
    let len = hrr_codeobj::read_image_extent(|n| Some(unsafe { bytes(image, n) }))
        .map_err(|e| e.to_string())?;
    if len > MAX_IMAGE {
        return Err(format!(
            "code object claims {len} bytes, more than the {MAX_IMAGE} byte limit"
        ));
    }
    Ok(len)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    type F = unsafe extern "C" fn(*const c_void) -> *mut *mut c_void;
    let Some(f) = real!(__hipRegisterFatBinary: F) else {
        super::missing("__hipRegisterFatBinary");
        return std::ptr::null_mut();
    };
    let Some(g) = Guard::enter("__hipRegisterFatBinary") else {
        // SAFETY: the application's argument, forwarded unchanged.
        return unsafe { f(data) };
    };
    // SAFETY: the application's argument, forwarded unchanged.
    let handle = unsafe { f(data) };
    g.run(|r| {
        if handle.is_null() {
            return;
        }
        // SAFETY: a non-null handle means the runtime accepted the wrapper.
        match unsafe { fatbin_extent(data) } {
            Ok((addr, len)) => r.register_fatbin(handle as u64, addr, len),
            Err(e) => r.warn(&format!(
                "__hipRegisterFatBinary: {e}; its kernels are recorded without code"
            )),
        }
    });
    handle
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipRegisterFunction(
    modules: *mut *mut c_void,
    host_function: *const c_void,
    device_function: *mut c_char,
    device_name: *const c_char,
    thread_limit: c_uint,
    tid: *mut c_void,
    bid: *mut c_void,
    block_dim: *mut Dim3,
    grid_dim: *mut Dim3,
    w_size: *mut c_int,
) {
    type F = unsafe extern "C" fn(
        *mut *mut c_void,
        *const c_void,
        *mut c_char,
        *const c_char,
        c_uint,
        *mut c_void,
        *mut c_void,
        *mut Dim3,
        *mut Dim3,
        *mut c_int,
    );
    let Some(f) = real!(__hipRegisterFunction: F) else {
        super::missing("__hipRegisterFunction");
        return;
    };
    let g = Guard::enter("__hipRegisterFunction");
    // SAFETY: the application's arguments, forwarded unchanged.
    unsafe {
        f(
            modules,
            host_function,
            device_function,
            device_name,
            thread_limit,
            tid,
            bid,
            block_dim,
            grid_dim,
            w_size,
        )
    };
    if let Some(g) = g {
        g.run(|r| {
            // SAFETY: device_name is the kernel's C string name the runtime just read.
            let name = unsafe {
                c_str(if device_name.is_null() {
                    device_function
                } else {
                    device_name
                })
            };
            r.register_function(
                "__hipRegisterFunction",
                modules as u64,
                host_function as u64,
                &name,
            )
        });
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipUnregisterFatBinary(modules: *mut *mut c_void) {
    let Some(f) = real!(__hipUnregisterFatBinary: unsafe extern "C" fn(*mut *mut c_void)) else {
        super::missing("__hipUnregisterFatBinary");
        return;
    };
    let g = Guard::enter("__hipUnregisterFatBinary");
    if let Some(g) = &g {
        // Before the call: afterwards the bundle's memory may be gone.
        g.run(|r| r.unregister_fatbin(modules as u64));
    }
    // SAFETY: the application's argument, forwarded unchanged.
    unsafe { f(modules) };
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipPushCallConfiguration(
    grid_dim: Dim3,
    block_dim: Dim3,
    shared_mem: usize,
    stream: *mut c_void,
) -> HipError {
    let real = real!(__hipPushCallConfiguration: unsafe extern "C" fn(Dim3, Dim3, usize, *mut c_void) -> HipError);
    // Forwarded only: the launch that pops the configuration carries it.
    match real {
        // SAFETY: the application's arguments, forwarded unchanged.
        Some(f) => unsafe { f(grid_dim, block_dim, shared_mem, stream) },
        None => super::missing("__hipPushCallConfiguration"),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipPopCallConfiguration(
    grid_dim: *mut Dim3,
    block_dim: *mut Dim3,
    shared_mem: *mut usize,
    stream: *mut *mut c_void,
) -> HipError {
    type F = unsafe extern "C" fn(*mut Dim3, *mut Dim3, *mut usize, *mut *mut c_void) -> HipError;
    match real!(__hipPopCallConfiguration: F) {
        // SAFETY: the application's arguments, forwarded unchanged.
        Some(f) => unsafe { f(grid_dim, block_dim, shared_mem, stream) },
        None => super::missing("__hipPopCallConfiguration"),
    }
}
