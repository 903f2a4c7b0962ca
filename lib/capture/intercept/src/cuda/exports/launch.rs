//! The CUDA compiler path: fat-binary and function registration, the
//! `cudaKernel_t` lookup, and every launch entry point.
//!
//! In CUDA 13 a `<<<grid, block, shmem, stream>>>` launch calls
//! `__cudaPushCallConfiguration`, then (first launch of that kernel only,
//! cached by the stub) `__cudaGetKernel(&k, hostFun)`, then
//! `__cudaPopCallConfiguration`, then `__cudaLaunchKernel(k, grid, block,
//! args, shmem, stream)` (`_ptsz` with `--default-stream per-thread`). The
//! push/pop pair is not wrapped: the launch carries the configuration.
//! `cudaLaunchKernel(hostFun, …)` and `cudaLaunchKernelExC(config, hostFun,
//! args)` (+`_ptsz`) are the explicit API.
//!
//! Every launch event carries `name` (the mangled device name from
//! `__cudaRegisterFunction`), `code` (the blob of the whole fat binary,
//! written at the first launch of any of its kernels) and `args` (one per
//! parameter: `offset` and `size` from the driver's layout, `hex`, and
//! `ptrs` found by scanning against the live allocations). See
//! `registry` and `layout`. A successful launch that repeats the thread's
//! previous one in every input appends the line kept from it instead
//! (`launch_memo`). Handlers of the runtime table's entries (signatures:
//! `cuda_api::cudart_fn!`).

#![allow(non_snake_case)]

use std::cell::RefCell;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hrr_core::error_chain::chain;
use hrr_core::{Addr, Op};

use api_table::Entry;
use cuda_api::runtime::args;
use cuda_api::runtime::types::*;

use super::cuda_handlers;
use crate::capture::Guard;
use crate::cuda::ffi::{self, enter, missing, recording_wanted};
use crate::cuda::layout::{self, ParamLayoutError};
use crate::cuda::log::diag;
use crate::cuda::registry::{self, CudaKernel, Resolved};
use crate::cuda::types::{self as cu, CudaError, CudaStream, Dim3, stream_id};
use crate::launch_params::{record_memoised, with_params};
use hrr_interpose::call_args::{bytes, c_str, out_addr};
use hrr_interpose::real_fn::Real;
use hrr_recorder::kept::Kept;
use hrr_recorder::record::code_objects::{CodeError, FatBin, Kernel, Module, Source, kernels_of};
use hrr_recorder::record::kernel_args::ArgValues;
use hrr_recorder::record::launch_memo::{self, LaunchKey, Slot};
use hrr_recorder::record::recorder::{LaunchDims, Recorder};

/// Registry work outside any recorded call (registrations run before
/// `main`): a panic costs the entry, never the application.
fn bookkeeping(api: &str, f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        static SAID: AtomicBool = AtomicBool::new(false);
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!("hrr-intercept: {api}: internal error; this registration is not tracked");
        }
    }
}

// ---------------------------------------------------------------- registration

/// `__cudaRegisterFatBinary`: forwarded; the fat binary is located for the
/// registry (its kernels' code) when recording is wanted.
pub unsafe fn __cudaRegisterFatBinary(
    real: &'static Real<args::__cudaRegisterFatBinary>,
    a: args::__cudaRegisterFatBinary,
) -> *mut *mut c_void {
    let Some(f) = real.get() else {
        missing("__cudaRegisterFatBinary");
        return std::ptr::null_mut();
    };
    let fat_cubin = a.fat_cubin;
    // SAFETY: the export's contract: `a` holds the application's argument.
    let handle = unsafe { a.call(f) };
    if !handle.is_null() && recording_wanted() {
        bookkeeping("__cudaRegisterFatBinary", || {
            // SAFETY: a non-null handle means the runtime accepted the
            // wrapper (24 readable bytes) and the fat binary it points at
            // (its 16-byte header readable); `locate` reads nothing else.
            let image = registry::locate(
                |addr, len| Some(unsafe { bytes(addr as *const c_void, len) }),
                fat_cubin as usize,
            );
            match &image {
                Ok((addr, len)) => {
                    diag(|| format!("fat binary {handle:p}: {len} bytes at {addr:#x}"))
                }
                Err(e) => diag(|| {
                    format!(
                        "fat binary {handle:p}: {}; its kernels will have no code",
                        chain(e)
                    )
                }),
            }
            registry::global().add_fatbin(handle as u64, image);
        });
    }
    handle
}

/// `__cudaRegisterFatBinaryEnd`: forwarded.
pub unsafe fn __cudaRegisterFatBinaryEnd(
    real: &'static Real<args::__cudaRegisterFatBinaryEnd>,
    a: args::__cudaRegisterFatBinaryEnd,
) {
    match real.get() {
        // SAFETY: the export's contract: `a` holds the application's argument.
        Some(f) => unsafe { a.call(f) },
        None => {
            missing("__cudaRegisterFatBinaryEnd");
        }
    }
}

/// `__cudaUnregisterFatBinary`: the registry forgets the fat binary, then
/// the call is forwarded.
pub unsafe fn __cudaUnregisterFatBinary(
    real: &'static Real<args::__cudaUnregisterFatBinary>,
    a: args::__cudaUnregisterFatBinary,
) {
    let Some(f) = real.get() else {
        missing("__cudaUnregisterFatBinary");
        return;
    };
    if recording_wanted() {
        // Before the call: afterwards the fat binary's memory may be gone.
        bookkeeping("__cudaUnregisterFatBinary", || {
            if let Some(r) = crate::capture::existing() {
                r.settle_code();
            }
            registry::global().remove_fatbin(a.handle as u64);
        });
    }
    // SAFETY: the export's contract: `a` holds the application's argument.
    unsafe { a.call(f) };
}

/// `__cudaRegisterFunction`: forwarded; the kernel's host stub and device
/// name are kept in the registry.
pub unsafe fn __cudaRegisterFunction(
    real: &'static Real<args::__cudaRegisterFunction>,
    a: args::__cudaRegisterFunction,
) {
    let Some(f) = real.get() else {
        missing("__cudaRegisterFunction");
        return;
    };
    // SAFETY: the export's contract: `a` holds the application's arguments.
    unsafe { a.call(f) };
    if recording_wanted() {
        bookkeeping("__cudaRegisterFunction", || {
            // SAFETY: the kernel's C string names the runtime just read.
            let name = unsafe {
                c_str(if a.device_name.is_null() {
                    a.device_fun
                } else {
                    a.device_name
                })
            };
            registry::global().add_function(a.handle as u64, a.host_fun as u64, &name);
        });
    }
}

/// `__cudaGetKernel`: forwarded; the `cudaKernel_t` is bound to its
/// registered kernel, and recorded as a `function` event.
pub unsafe fn __cudaGetKernel(
    real: &'static Real<args::__cudaGetKernel>,
    a: args::__cudaGetKernel,
) -> cudaError_t {
    let Some(f) = real.get() else {
        return missing("__cudaGetKernel");
    };
    let (kernel, host_fun) = (a.kernel, a.host_fun);
    let g = enter("__cudaGetKernel");
    // SAFETY: the export's contract: `a` holds the application's arguments.
    let ret = unsafe { a.call(f) };
    // SAFETY: read only after success, when the runtime wrote *kernel.
    let h = unsafe { out_addr(ret, kernel) };
    let mut found = None;
    if ret == cu::SUCCESS && recording_wanted() {
        bookkeeping("__cudaGetKernel", || {
            let reg = registry::global();
            found = reg.by_host(host_fun as u64);
            match &found {
                Some(k) => reg.bind_handle(h, k),
                None => diag(|| {
                    format!("__cudaGetKernel: host function {host_fun:p} was never registered")
                }),
            }
        });
    }
    if let Some(g) = g {
        g.run(|r| {
            let (module, name) = found
                .as_ref()
                .map_or((0, String::new()), |k| (k.fatbin.handle, k.name.clone()));
            r.op(
                "__cudaGetKernel",
                ret,
                &Op::Function {
                    module: Addr(module),
                    name,
                    func: Addr(h),
                },
            )
        });
    }
    ret
}

// ---------------------------------------------------------------- launches

/// The driver's layout of `k`, finding its `cudaKernel_t` through the real
/// `__cudaGetKernel` when no `<<<>>>` launch showed it yet.
fn driver_layout(k: &CudaKernel) -> Result<Vec<(u64, u64)>, ParamLayoutError> {
    let mut h = k.handle();
    if h == 0 {
        h = ffi::kernel_of_host_fun(k.host_fun);
        if h == 0 {
            return Err(ParamLayoutError::NoHostKernel);
        }
        k.set_handle(h);
    }
    ffi::params_of(h)
}

/// `f`'s image, `len` bytes at `addr`, as a module: its blob written from
/// where it lies by the events buffer's writer when the image stays until a
/// call that settles the recorder (`Fatbin::settles`), else by this thread.
/// Called by `Fatbin::module`, only while the image is live.
pub(crate) fn load_image(
    r: &Recorder,
    f: &registry::Fatbin,
    addr: usize,
    len: usize,
) -> Arc<Module> {
    if f.settles() {
        // SAFETY: the image is live now (see above), and it stays until
        // `__cudaUnregisterFatBinary` (a registered fat binary) or the
        // Fatbin's drop (its own copy), each of which settles the recorder
        // before the memory can go.
        r.load_code_kept(unsafe { Kept::new(addr as *const u8, len) })
    } else {
        // SAFETY: the image is live now; `len` is its extent.
        r.load_code(unsafe { bytes(addr as *const c_void, len) })
    }
}

/// Reports a kernel's first launch: its layout warning (always) and, with
/// `HRR_LOG`, where its code and layout came from.
/// `k`'s code and layout ([`CudaKernel::resolve`]), reported the first time.
fn resolve<'k>(
    r: &Recorder,
    k: &'k CudaKernel,
    driver: impl FnOnce(&CudaKernel) -> Result<Vec<(u64, u64)>, ParamLayoutError>,
) -> &'k Resolved {
    let (res, fresh) = k.resolve(
        |addr, len| load_image(r, &k.fatbin, addr, len),
        // SAFETY: the registry calls this only while the image is live: in
        // the application's loaded image, or copied into the Fatbin; `len`
        // is its extent.
        |addr, len| kernels_of(unsafe { bytes(addr as *const c_void, len) }),
        driver,
    );
    if fresh {
        report_first(r, k, res);
    }
    res
}

pub(crate) fn report_first(r: &Recorder, k: &CudaKernel, res: &Resolved) {
    if let Some(w) = &res.warning {
        r.warn(w);
    }
    diag(|| {
        let code = match (&res.kernel.source, &res.code_error) {
            (Source::Module(m), _) => format!("code blob {}", m.code),
            (_, Some(e)) => format!("NO CODE ({e})"),
            _ => "NO CODE".into(),
        };
        let (n, loaded) = registry::global().fatbin_counts();
        format!(
            "first launch of {}: {} params, layout from {}; {code}; fat binary {:#x} ({loaded} of {n} registered fat binaries written)",
            k.name,
            res.params,
            res.layout.as_str(),
            k.fatbin.handle
        )
    });
}

/// Where a launch's argument values are.
#[derive(Clone, Copy)]
pub(crate) enum ArgSource {
    /// One pointer per parameter (`kernelParams`, `<<<>>>`'s `args`).
    Params(*mut *mut c_void),
    /// The packed buffer of `extra` (`CU_LAUNCH_PARAM_BUFFER_POINTER`).
    Buffer(*const u8, usize),
}

/// Records a launch of `kernel` (`None`: not one the registry knows);
/// `slot`: where to keep its line; `driver`: the driver's layout of the
/// kernel (asked at its first launch); `attrs`: CUDA launch attributes.
///
/// # Safety
/// When `ret` is success, `args` are the launch's arguments as the driver
/// read them: per `kernel`'s layout, or a buffer of that length.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn record_kernel_launch(
    r: &Recorder,
    api: &'static str,
    ret: CudaError,
    kernel: Option<&CudaKernel>,
    func: u64,
    dims: LaunchDims,
    args: ArgSource,
    slot: Option<Slot<'_>>,
    driver: impl FnOnce(&CudaKernel) -> Result<Vec<(u64, u64)>, ParamLayoutError>,
    attrs: &[hrr_core::LaunchAttr],
) {
    let launch = |kernel: Option<&Kernel>,
                  load: &dyn Fn(&FatBin) -> Result<Arc<Module>, CodeError>,
                  values: ArgValues<'_, '_>| {
        if attrs.is_empty() {
            r.launch(api, ret, kernel, load, func, &dims, &values, slot)
        } else {
            r.launch_with_attrs(api, ret, kernel, load, func, &dims, &values, attrs, slot)
        }
    };
    // SAFETY: per this function's contract.
    unsafe {
        read_kernel_launch(
            r,
            api,
            ret == cu::SUCCESS,
            kernel,
            func,
            args,
            driver,
            launch,
        )
    }
}

/// Why a launch's code could not be read, where the registry does not say
/// (a kernel it does not know: its code is never asked for).
#[derive(Debug, thiserror::Error)]
#[error("unknown kernel")]
struct UnknownKernel;

/// Why `res`'s code could not be read, for the recorder's warning (asked
/// only when it could not: its kernel then stands for `res.code_error`).
fn code_error(res: &Resolved) -> CodeError {
    CodeError::Unreadable(match &res.code_error {
        Some(e) => Arc::new(e.clone()),
        None => Arc::new(UnknownKernel),
    })
}

/// Reads a launch of `kernel` (`None`: not one the registry knows) for
/// `f`: the kernel as recorded (its code and layout resolved, `driver`
/// asked for the layout at its first launch), how to load its code, and
/// the argument values (none unless `ok`).
///
/// # Safety
/// When `ok`, `args` are the launch's arguments as the driver read them:
/// per `kernel`'s layout, or a buffer of that length.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn read_kernel_launch<R>(
    r: &Recorder,
    api: &'static str,
    ok: bool,
    kernel: Option<&CudaKernel>,
    func: u64,
    args: ArgSource,
    driver: impl FnOnce(&CudaKernel) -> Result<Vec<(u64, u64)>, ParamLayoutError>,
    f: impl FnOnce(
        Option<&Kernel>,
        &dyn Fn(&FatBin) -> Result<Arc<Module>, CodeError>,
        ArgValues<'_, '_>,
    ) -> R,
) -> R {
    let Some(k) = kernel else {
        diag(|| {
            format!("{api}: launch of unknown kernel {func:#x}: recorded without code or arguments")
        });
        return f(
            None,
            &|_: &FatBin| Err(CodeError::Unreadable(Arc::new(UnknownKernel))),
            ArgValues::None,
        );
    };
    let res = resolve(r, k, driver);
    // Made only if a launch asks for the code: then the kernel's Source is
    // the placeholder that stands for `code_error` (`CudaKernel::resolve`).
    let load = |_: &FatBin| Err(code_error(res));
    let layout = res.kernel.resolve(load).ok().and_then(|x| x.layout);
    let record = |values: ArgValues<'_, '_>| {
        // A pointer parameter at a 4-GiB-aligned address is invisible to
        // the scan: record this launch with it marked as a pointer.
        if let (Some(l), ArgValues::Params(vals)) = (layout, values) {
            let idx = layout::aligned_pointer_params(l.slots.iter().map(|s| s.size), vals, |w| {
                r.allocs().view().find(w).is_some()
            });
            if let Some(k) = (!idx.is_empty())
                .then(|| {
                    hrr_recorder::self_profile::phase(
                        "phase launch: a layout with pointers marked",
                        || pointer_variant(&res.kernel, &idx),
                    )
                })
                .flatten()
            {
                return f(Some(&k), &load, values);
            }
        }
        f(Some(&res.kernel), &load, values)
    };
    if !ok {
        return record(ArgValues::None);
    }
    match args {
        // SAFETY: the successful launch read args per this layout.
        ArgSource::Params(p) => unsafe { with_params(layout, p, record) },
        // SAFETY: per the contract, the buffer the driver read.
        ArgSource::Buffer(p, n) => record(ArgValues::Buffer(unsafe { bytes(p.cast(), n) })),
    }
}

/// Before a launch of `kernel` on `stream` is forwarded: records the host
/// memory its arguments reach, and managed memory (see
/// `record::host_memory`). Callers check the recorder's `watches_host_memory()` first.
///
/// # Safety
/// `args` are the launch's arguments, about to be handed to the runtime or
/// driver, which reads them per `kernel`'s layout, or a buffer of that
/// length.
#[cold]
pub(crate) unsafe fn host_writes_of(
    r: &Recorder,
    api: &'static str,
    kernel: Option<&CudaKernel>,
    stream: u64,
    args: ArgSource,
    driver: impl FnOnce(&CudaKernel) -> Result<Vec<(u64, u64)>, ParamLayoutError>,
) {
    let layout = match kernel {
        Some(k) => {
            let res = resolve(r, k, driver);
            res.kernel
                .resolve(|_: &FatBin| Err(code_error(res)))
                .ok()
                .and_then(|x| x.layout)
        }
        None => None,
    };
    let record = |values: ArgValues<'_, '_>| {
        r.host_writes_before_launch(api, stream, &values, layout);
    };
    match args {
        // SAFETY: per the contract: the runtime reads args per this layout.
        ArgSource::Params(p) => unsafe { with_params(layout, p, record) },
        // SAFETY: per the contract, the buffer it reads.
        ArgSource::Buffer(p, n) => record(ArgValues::Buffer(unsafe { bytes(p.cast(), n) })),
    }
}

/// [`host_writes_of`] for a runtime-layer launch.
///
/// # Safety
/// As [`host_writes_of`], `args` one pointer per parameter.
#[cold]
unsafe fn runtime_host_writes(
    g: &Guard,
    api: &'static str,
    named: Named,
    func: u64,
    stream: u64,
    args: *mut *mut c_void,
) {
    g.run(|r| {
        let go = |k: Option<&CudaKernel>| {
            // SAFETY: per this function's contract.
            unsafe { host_writes_of(r, api, k, stream, ArgSource::Params(args), driver_layout) }
        };
        match named {
            Named::Handle => with_kernel_of_handle(func, cu::SUCCESS, go),
            Named::Func => go(kernel_of_func(func).as_deref()),
        }
    });
}

/// Records a launch of `kernel` (`None`: not one the registry knows) with
/// launch attributes `attrs`; `slot`: where to keep its line.
#[allow(clippy::too_many_arguments)]
fn record_launch(
    api: &'static str,
    g: &Guard,
    ret: CudaError,
    kernel: Option<&CudaKernel>,
    func: u64,
    dims: LaunchDims,
    args: *mut *mut c_void,
    attrs: &[hrr_core::LaunchAttr],
    slot: Option<Slot<'_>>,
) {
    g.run(|r| {
        // SAFETY: the runtime accepted this launch with these args.
        unsafe {
            record_kernel_launch(
                r,
                api,
                ret,
                kernel,
                func,
                dims,
                ArgSource::Params(args),
                slot,
                driver_layout,
                attrs,
            )
        }
    });
}

/// `kernel` with the parameters at `indices` marked as pointers (a
/// one-launch copy; `None` without a module layout).
fn pointer_variant(kernel: &Kernel, indices: &[usize]) -> Option<Kernel> {
    let Source::Module(m) = &kernel.source else {
        return None;
    };
    let meta = m.kernels.as_ref().ok()?.first()?;
    let marked = layout::with_pointers(meta, indices);
    Some(Kernel::new(
        kernel.name.clone(),
        Source::Module(Arc::new(Module::new(m.code, Ok(vec![marked])))),
    ))
}

fn dims(grid: Dim3, block: Dim3, shmem: usize, stream: CudaStream) -> LaunchDims {
    LaunchDims {
        grid: grid.to_array(),
        block: block.to_array(),
        shmem: u32::try_from(shmem).unwrap_or(u32::MAX),
        stream: stream_id(stream as u64),
    }
}

thread_local! {
    /// The thread's last `(handle, registry generation, kernel)`: a launch
    /// loop finds its kernel without the registry's lock and map.
    static LAST_KERNEL: RefCell<Option<(u64, u64, Arc<CudaKernel>)>> =
        const { RefCell::new(None) };
}

/// Calls `f` with [`kernel_of_handle`], through the thread's one-entry
/// cache (lent, not cloned: no reference count traffic per launch).
fn with_kernel_of_handle<R>(h: u64, ret: CudaError, f: impl FnOnce(Option<&CudaKernel>) -> R) -> R {
    let generation = registry::global().generation();
    LAST_KERNEL.with_borrow_mut(|last| {
        if !matches!(last, Some((lh, lg, _)) if *lh == h && *lg == generation) {
            *last = kernel_of_handle(h, ret).map(|k| (h, generation, k));
        }
        f(last.as_ref().map(|(_, _, k)| &**k))
    })
}

/// The kernel behind a `cudaKernel_t`: bound by `__cudaGetKernel`, else
/// found by its driver name (a handle obtained some other way).
fn kernel_of_handle(h: u64, ret: CudaError) -> Option<Arc<CudaKernel>> {
    let reg = registry::global();
    if let Some(k) = reg.by_handle(h) {
        return Some(k);
    }
    // Only a handle the runtime just accepted is shown to the driver.
    if ret != cu::SUCCESS || h == 0 {
        return None;
    }
    let name = ffi::name_of(h)?;
    let k = reg.by_name(&name)?;
    diag(|| {
        format!("cudaKernel_t {h:#x} not seen by __cudaGetKernel; found {name} by its driver name")
    });
    reg.bind_handle(h, &k);
    Some(k)
}

/// The kernel behind a `func` of the explicit API: a registered host stub,
/// or a `cudaKernel_t` bound earlier.
fn kernel_of_func(func: u64) -> Option<Arc<CudaKernel>> {
    let reg = registry::global();
    reg.by_host(func).or_else(|| reg.by_handle(func))
}

/// How a launch names its kernel.
#[derive(Clone, Copy)]
enum Named {
    /// A `cudaKernel_t` (`<<<>>>`'s `__cudaLaunchKernel`).
    Handle,
    /// A host stub, or a `cudaKernel_t` (the explicit API).
    Func,
}

/// Records a launch: the thread's kept line when every input matches the
/// last one, else in full (see `launch_memo`).
#[allow(clippy::too_many_arguments)]
fn record_any_launch(
    r: &Recorder,
    g: &Guard,
    api: &'static str,
    ret: CudaError,
    named: Named,
    func: u64,
    dims: LaunchDims,
    args: *mut *mut c_void,
    attrs: &[hrr_core::LaunchAttr],
) {
    let in_full = |slot: Option<Slot<'_>>| match named {
        Named::Handle => with_kernel_of_handle(func, ret, |k| {
            record_launch(api, g, ret, k, func, dims, args, attrs, slot)
        }),
        Named::Func => {
            let k = kernel_of_func(func);
            record_launch(api, g, ret, k.as_deref(), func, dims, args, attrs, slot)
        }
    };
    if ret != cu::SUCCESS {
        return in_full(None);
    }
    // Read before the lookup and the scan: a change after it only makes
    // the next launch miss.
    let key = LaunchKey {
        api,
        func,
        dims,
        epoch: launch_memo::epoch(),
        attrs: launch_memo::attrs_key(attrs),
        packed: false,
    };
    // SAFETY: the runtime accepted this launch with these args.
    unsafe { record_memoised(r, key, args, in_full) };
}

/// A `(kernel, grid, block, args, shmem, stream)` launch: the `<<<>>>`
/// entry points (`kernel` a `cudaKernel_t`) and the explicit API's (`func`,
/// a host stub or a `cudaKernel_t`) share a shape.
///
/// # Safety
/// `a` holds the application's arguments for entry point `A`, valid under
/// its C contract; the others are its launch's.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn launch<A: Entry<Ret = cudaError_t>>(
    real: &Real<A>,
    a: A,
    named: Named,
    func: u64,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shmem: usize,
    stream: cudaStream_t,
) -> cudaError_t {
    let Some(f) = real.get() else {
        return missing(A::NAME);
    };
    let g = enter(A::NAME);
    // Work issued to a capturing stream joins a graph and does not run now:
    // nothing is recorded (the guard stays, so the driver calls it makes
    // are not either).
    let captured = g.is_some() && super::joins_capture(A::NAME, stream);
    if let Some(g) = &g
        && g.recorder().windowed()
    {
        // A capture window may open or close before this launch.
        g.run(crate::cuda::window::before_launch);
    }
    if let Some(g) = &g
        && !captured
        && g.recorder().watches_host_memory()
    {
        let st = stream_id(stream as u64);
        // SAFETY: the launch's arguments, about to be forwarded.
        unsafe { runtime_host_writes(g, A::NAME, named, func, st, args) };
    }
    // SAFETY: per this function's contract.
    let ret = unsafe { a.call(f) };
    if let Some(g) = g.filter(|_| !captured) {
        g.run(|r| {
            let d = dims(grid, block, shmem, stream);
            record_any_launch(r, &g, A::NAME, ret, named, func, d, args, &[])
        });
    }
    ret
}

cuda_handlers! {
    [__cudaLaunchKernel, __cudaLaunchKernel_ptsz] |real, a, api| {
        // SAFETY: the export's contract: `a` holds the application's arguments.
        unsafe { launch(real, a, Named::Handle, a.kernel as u64, a.grid, a.block, a.args, a.shmem, a.stream) }
    }
    [cudaLaunchKernel, cudaLaunchKernel_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe { launch(real, a, Named::Func, a.func as u64, a.grid, a.block, a.args, a.shmem, a.stream) }
    }
    [cudaLaunchKernelExC, cudaLaunchKernelExC_ptsz] |real, a, api| {
        // SAFETY: as above.
        unsafe { launch_ex(real, a, a.config, a.func, a.args) }
    }
}

/// `cudaLaunchKernelExC(config, func, args)`: the configuration's launch
/// attributes recorded with it.
///
/// # Safety
/// As [`launch`].
unsafe fn launch_ex<A: Entry<Ret = cudaError_t>>(
    real: &Real<A>,
    a: A,
    config: *const cudaLaunchConfig_t,
    func: *const c_void,
    args: *mut *mut c_void,
) -> cudaError_t {
    let Some(f) = real.get() else {
        return missing(A::NAME);
    };
    // SAFETY: the configuration about to be forwarded: null or readable.
    let stream = unsafe { config.as_ref() }.map_or(std::ptr::null_mut(), |c| c.stream);
    let g = enter(A::NAME);
    // As in `launch`: work into a capturing stream is not recorded.
    let captured = g.is_some() && super::joins_capture(A::NAME, stream);
    if let Some(g) = &g
        && g.recorder().windowed()
    {
        // A capture window may open or close before this launch.
        g.run(crate::cuda::window::before_launch);
    }
    if let Some(g) = &g
        && !captured
        && g.recorder().watches_host_memory()
    {
        let st = stream_id(stream as u64);
        // SAFETY: the launch's arguments, about to be forwarded.
        unsafe { runtime_host_writes(g, A::NAME, Named::Func, func as u64, st, args) };
    }
    // SAFETY: per this function's contract.
    let ret = unsafe { a.call(f) };
    if let Some(g) = g.filter(|_| !captured) {
        // SAFETY: the runtime just read the configuration (null only
        // on a failed call).
        let c = unsafe { config.as_ref() }.copied();
        let d = c.map_or(
            dims(dim3::default(), dim3::default(), 0, std::ptr::null_mut()),
            |c| dims(c.grid_dim, c.block_dim, c.dynamic_smem_bytes, c.stream),
        );
        // `cudaLaunchAttribute` is laid out as the driver's
        // `CUlaunchAttribute` (id, padding, 64-byte value union).
        // SAFETY: the runtime just read `num_attrs` attributes.
        let attrs = c.map_or_else(Vec::new, |c| unsafe {
            crate::cuda::driver::record::attributes(c.attrs.cast(), c.num_attrs)
        });
        g.run(|r| {
            let (api, h) = (A::NAME, func as u64);
            record_any_launch(r, &g, api, ret, Named::Func, h, d, args, &attrs)
        });
    }
    ret
}
