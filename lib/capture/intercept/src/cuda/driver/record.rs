//! What the driver wrappers record (FFI: they read the program's memory).
//! Each function is the body of one or more entries of `api`; the
//! `track_*` ones run at any depth (bookkeeping later calls need), the
//! others only for a first-level call, inside the `Guard`.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

use cuda_api::{
    CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE, CU_LAUNCH_PARAM_END,
    CU_STREAM_PER_THREAD, CUDA_SUCCESS, CUlaunchAttribute, CUlaunchConfig, CUmemAllocationProp,
    CUresult, CUstream, LAUNCH_ATTR_VALUE_SIZE,
};
use hrr_core::error_chain::chain;
use hrr_core::{Addr, BlobId, Dir, HexBytes, LaunchAttr, MemKind, Op};

use super::code::{self, FnKind};
use super::{code as driver_code, libcuda};
use crate::capture;
use crate::cuda::exports::launch::{ArgSource, host_writes_of, load_image, record_kernel_launch};
use crate::cuda::ffi::recording_wanted;
use crate::cuda::layout::ParamLayoutError;
use crate::cuda::log::diag;
use crate::cuda::registry::{self, Fatbin, ImageError};
use crate::cuda::types::stream_id;
use crate::launch_params::record_memoised;
use hrr_interpose::call_args::{bytes, c_str};
use hrr_recorder::record::current_device;
use hrr_recorder::record::graph_execs;
use hrr_recorder::record::launch_memo::{self, LaunchKey};
use hrr_recorder::record::recorder::{Copy, LaunchDims, Recorder};

/// Bookkeeping outside the recorder's guard: a panic costs the entry, never
/// the application.
pub fn bookkeeping(api: &str, f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        diag(|| format!("{api}: internal error; this handle is not tracked"));
    }
}

/// Runs `f` with the recorder when this process records, at any depth (an
/// event that must exist even when a recorded runtime call made the driver
/// call: a module global replay must map).
fn with_recorder_anyway(f: impl FnOnce(&'static Recorder)) {
    if recording_wanted()
        && crate::cuda::ffi::driver_layer_on()
        && let Some(r) = capture::global()
    {
        let _ = catch_unwind(AssertUnwindSafe(|| f(r)));
    }
}

/// A stream handle as recorded (every default stream is 0).
pub fn s(stream: CUstream) -> u64 {
    stream_id(stream as u64)
}

/// `*p` after a successful call (0 otherwise).
///
/// # Safety
/// When `ret` is success and `p` non-null, `p` is valid for reads.
pub unsafe fn out<T: std::marker::Copy + Default>(ret: CUresult, p: *const T) -> T {
    // SAFETY: forwarded contract.
    unsafe { hrr_interpose::call_args::out(ret, p) }
}

/// `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`.
const HANDLE_POSIX_FD: i32 = 1;
/// `CU_MEM_HANDLE_TYPE_FABRIC`: a 64-byte `CUmemFabricHandle`.
const HANDLE_FABRIC: i32 = 8;

/// A shareable handle of type `kind` as `mem_export`/`mem_import` name it:
/// a file descriptor's number (written as an `int` at `p` by an export,
/// passed as the pointer's value to an import), a hash of a fabric
/// handle's 64 bytes (at `p` either way), else the pointer's value.
///
/// # Safety
/// `p` is the call's shareable handle, which the driver just wrote
/// (`exported`) or read: for a descriptor exported, an `int`; for a fabric
/// handle, 64 readable bytes.
pub unsafe fn shareable(kind: i32, p: *mut std::ffi::c_void, exported: bool) -> u64 {
    if p.is_null() && (exported || kind == HANDLE_FABRIC) {
        return 0;
    }
    match kind {
        // SAFETY: per the contract, an int the driver wrote.
        HANDLE_POSIX_FD if exported => unsafe { p.cast::<i32>().read_unaligned() as u64 },
        HANDLE_FABRIC => {
            // SAFETY: per the contract, 64 readable bytes.
            let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), 64) };
            // FNV-1a: the same bytes name the same allocation.
            bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            })
        }
        _ => p as u64,
    }
}

// ---------------------------------------------------------------- contexts

/// Context → device, from the creating calls.
static CONTEXTS: Mutex<Option<HashMap<u64, i32>>> = Mutex::new(None);

fn contexts<R>(f: impl FnOnce(&mut HashMap<u64, i32>) -> R) -> R {
    f(CONTEXTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new))
}

/// Remembers the device of a context a successful call created (at any
/// depth: a later `cuCtxSetCurrent` is recorded with it).
pub fn track_context(ret: CUresult, ctx: u64, device: i32) {
    if ret == CUDA_SUCCESS && ctx != 0 {
        contexts(|m| m.insert(ctx, device));
    }
}

/// A reset of device `dev` (at any depth: the runtime's `cudaDeviceReset`
/// reaches `cuDevicePrimaryCtxReset`): what this library made in the
/// primary context is gone with the program's.
pub fn track_reset(ret: CUresult, dev: i32) {
    if ret == CUDA_SUCCESS {
        crate::cuda::device_hash::primary_destroyed(dev);
    }
}

/// The calling thread's current device follows a context made current
/// (at any depth: the runtime's `cudaSetDevice` reaches `cuCtxSetCurrent`),
/// so every event the thread records next carries it. `ctx` is the context
/// now current; its device is the one it was created on, or else asked of
/// the driver. No context (`NULL`) leaves the device as it was.
pub fn track_current(ret: CUresult, ctx: u64) {
    if ret != CUDA_SUCCESS || ctx == 0 {
        return;
    }
    let device = ctx_device(ctx).or_else(|| libcuda::current_context().1);
    if let Some(d) = device.and_then(|d| u32::try_from(d).ok()) {
        current_device::set(d);
    }
}

/// [`track_current`] after `cuCtxPopCurrent`: the context left current.
pub fn track_pop(ret: CUresult) {
    if ret == CUDA_SUCCESS {
        let (ctx, device) = libcuda::current_context();
        let device = ctx_device(ctx).or(device);
        if let Some(d) = device.and_then(|d| u32::try_from(d).ok()) {
            current_device::set(d);
        }
    }
}

/// The device of context `ctx`, from its creation.
pub fn ctx_device(ctx: u64) -> Option<i32> {
    contexts(|m| m.get(&ctx).copied())
}

/// Records a peer copy (`cuMemcpyPeer`): device to device, each side with
/// its context's device where known.
pub fn copy_peer(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    (dst, dst_ctx): (u64, u64),
    (src, src_ctx): (u64, u64),
    n: usize,
    stream: Option<CUstream>,
) {
    let op = Op::MemcpyPeer {
        dst: Addr(dst),
        src: Addr(src),
        size: n as u64,
        stream: stream.map(|st| Addr(s(st))),
        dst_device: ctx_device(dst_ctx),
        src_device: ctx_device(src_ctx),
    };
    r.op(api, ret, &op);
}

/// Records a context created (or the primary one retained) on `device`.
pub fn ctx_create(r: &Recorder, api: &str, ret: CUresult, ctx: u64, device: i32) {
    r.op(
        api,
        ret,
        &Op::CtxCreate {
            ctx: Addr(if ret == CUDA_SUCCESS { ctx } else { 0 }),
            device,
        },
    );
}

/// `cuDevicePrimaryCtxRelease`: the device's primary context.
pub fn primary_ctx_release(r: &Recorder, api: &str, ret: CUresult, device: i32) {
    let ctx = contexts(|m| m.iter().find(|(_, d)| **d == device).map_or(0, |(c, _)| *c));
    r.op(api, ret, &Op::CtxDestroy { ctx: Addr(ctx) });
}

/// Records a context made current, with its device (from its creation, or
/// else asked of the driver).
pub fn ctx_set(r: &Recorder, api: &str, ret: CUresult, ctx: u64) {
    let device = contexts(|m| m.get(&ctx).copied());
    let (ctx, device) = match device {
        Some(d) => (ctx, Some(d)),
        None => {
            let (_, d) = libcuda::current_context();
            (ctx, d)
        }
    };
    r.op(
        api,
        ret,
        &Op::CtxSet {
            ctx: Addr(ctx),
            device,
        },
    );
}

/// `cuCtxPopCurrent`: what is current afterwards.
pub fn ctx_pop(r: &Recorder, api: &str, ret: CUresult) {
    let (ctx, device) = libcuda::current_context();
    r.op(
        api,
        ret,
        &Op::CtxSet {
            ctx: Addr(ctx),
            device,
        },
    );
}

// ---------------------------------------------------------------- memory

/// `cuMemCreate`: the handle and where its memory lives.
///
/// # Safety
/// `prop` is null or the property struct the driver just read.
pub unsafe fn vmm_create(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    handle: u64,
    size: usize,
    prop: *const CUmemAllocationProp,
) {
    // SAFETY: the driver just read the property struct (null only on a
    // failed call).
    let host = unsafe { prop.as_ref() }.is_some_and(CUmemAllocationProp::is_host);
    r.op(
        api,
        ret,
        &Op::MemCreate {
            handle: Addr(if ret == CUDA_SUCCESS { handle } else { 0 }),
            size: size as u64,
            mem: if host {
                MemKind::Pinned
            } else {
                MemKind::Device
            },
        },
    );
}

/// Whether `p` is device-side: the recorder's allocations first, then the
/// driver's pointer attributes; unknown memory is pageable host memory.
fn is_device(r: &Recorder, p: u64) -> bool {
    r.is_device(p)
        .or_else(|| libcuda::pointer_is_device(p))
        .unwrap_or(false)
}

/// Whether `p`, on `side` of a 2D/3D copy, is device memory (unified
/// addresses asked as for [`copy`]).
pub fn on_device(r: &Recorder, side: cuda_api::rect::Side, p: u64) -> bool {
    use cuda_api::rect::Side;
    match side {
        Side::Host => false,
        Side::Device => true,
        Side::Unified => is_device(r, p),
    }
}

/// Any copy: `dir` as the entry point names it (`None`: `cuMemcpy`'s
/// unified addressing, resolved per operand); `stream`: the async
/// variants' (a D2H result is read once that stream has finished).
///
/// # Safety
/// The call succeeded (or `ret` says not), so `src` (H2D) was read and
/// `dst` (D2H) written for `n` bytes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn copy(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    dir: Option<Dir>,
    dst: u64,
    src: u64,
    n: usize,
    stream: Option<CUstream>,
) {
    // SAFETY: per this function's contract.
    unsafe { copy_hashed(r, api, ret, dir, (dst, src, n), stream, (None, None)) }
}

/// A copy forwarded by `call` and recorded ([`copy`]): a synchronous
/// upload's source hashed while it runs when the recorder knows its memory
/// (`crate::upload`), a large D2H's source hashed on the device on its
/// stream just before it (`crate::cuda::device_hash`). `stream`: the
/// copy's, for a stream-ordered API.
///
/// # Safety
/// `call` is the copy's call with the application's arguments, whose
/// operands `dst`, `src` and `n` are.
#[allow(clippy::too_many_arguments)]
pub unsafe fn copy_around(
    g: &crate::capture::Guard,
    api: &'static str,
    dir: Option<Dir>,
    dst: u64,
    src: u64,
    n: usize,
    stream: Option<CUstream>,
    call: impl FnOnce() -> CUresult,
) -> CUresult {
    let resolved =
        g.run(|r| dir.unwrap_or_else(|| Dir::between(is_device(r, src), is_device(r, dst))));
    let on = stream_handle(api, stream);
    let hashing =
        resolved.and_then(|d| crate::cuda::device_hash::before_copy(g, d, (dst, src, n), on));
    let (ret, pre) = if resolved == Some(Dir::H2d) && stream.is_none() {
        // SAFETY: per this function's contract.
        unsafe { crate::upload::forward_h2d(g, src as *const c_void, n, call) }
    } else {
        (call(), None)
    };
    // SAFETY: the call ran with these operands; `copy_hashed` reads host
    // memory only when it succeeded.
    g.run(|r| unsafe { copy_hashed(r, api, ret, dir, (dst, src, n), stream, (pre, hashing)) });
    ret
}

/// The stream handle a copy of `api` on `stream` goes to, as the driver
/// names it (a per-thread API's null stream is the thread's own; a
/// synchronous per-thread copy's too).
fn stream_handle(api: &str, stream: Option<CUstream>) -> u64 {
    match stream.map(|st| st as u64) {
        Some(0) | None if api.ends_with("_ptsz") || api.ends_with("_ptds") => CU_STREAM_PER_THREAD,
        Some(h) => h,
        None => 0,
    }
}

/// [`copy`], with the hash [`copy_around`] took of the source: an
/// upload's, or a device hash in flight.
///
/// # Safety
/// As [`copy`]'s.
unsafe fn copy_hashed(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    dir: Option<Dir>,
    (dst, src, n): (u64, u64, usize),
    stream: Option<CUstream>,
    (mut pre, mut hashing): (
        Option<hrr_recorder::record::recorder::Prehashed>,
        Option<crate::cuda::device_hash::Pending>,
    ),
) {
    let dir = dir.unwrap_or_else(|| Dir::between(is_device(r, src), is_device(r, dst)));
    let c = Copy {
        dir,
        dst,
        src,
        size: n as u64,
        stream: stream.map(s),
    };
    let data = match dir {
        _ if ret != CUDA_SUCCESS => None,
        Dir::H2d if r.is_device(src) != Some(true) => {
            // SAFETY: the call succeeded, so the driver read `n` bytes at
            // `src` (a host address): they are readable.
            Some(unsafe { bytes(src as *const c_void, n) })
        }
        Dir::D2h if r.is_device(dst) != Some(true) => {
            if stream.is_some() {
                libcuda::sync_stream(stream_handle(api, stream));
            }
            if let Some(h) = hashing.take() {
                pre = h.finish(true, dst as *const u8);
            }
            // SAFETY: the driver wrote `n` bytes at dst and the copy is done.
            Some(unsafe { bytes(dst as *const c_void, n) })
        }
        _ => None,
    };
    if let Some(h) = hashing {
        h.finish(false, dst as *const u8);
    }
    r.memcpy_hashed(api, ret, &c, data, pre);
}

/// `cuMemsetD{8,16,32}`: `elems` elements of `width` bytes.
#[allow(clippy::too_many_arguments)]
pub fn memset(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    dst: u64,
    value: u32,
    elems: usize,
    width: u8,
    stream: Option<CUstream>,
) {
    r.memset(
        api,
        ret,
        dst,
        value,
        elems as u64 * u64::from(width),
        width,
        stream.map(s),
    );
}

// ---------------------------------------------------------------- modules

/// A module or library loaded from `image` (any depth): kept lazily when
/// it lies in a loaded object, copied otherwise (see `code`).
///
/// # Safety
/// When `ret` is success, the driver just loaded the image at `image`.
pub unsafe fn track_image(ret: CUresult, handle: u64, image: *const c_void) {
    if ret != CUDA_SUCCESS || handle == 0 {
        return;
    }
    let at = code::locate_image(
        // SAFETY: the driver accepted the image: its headers are readable and
        // name its extent; `locate_image` reads only within them (and
        // 4 bytes first, which any image has).
        |addr, len| Some(unsafe { bytes(addr as *const c_void, len) }),
        image as usize,
        // SAFETY: text the driver read up to its NUL.
        |addr| unsafe { libc::strnlen(addr as *const c_char, code::MAX_PTX) },
    );
    let fatbin = match at {
        Ok((addr, len)) if hrr_interpose::dl::object_base(addr).is_some() => {
            Fatbin::new(handle, Ok((addr, len)))
        }
        // SAFETY: as above, `len` bytes from `addr` are the image.
        Ok((addr, len)) => Fatbin::copied(
            handle,
            unsafe { bytes(addr as *const c_void, len) }.to_vec(),
        ),
        Err(e) => {
            diag(|| {
                format!(
                    "module {handle:#x}: {}; its kernels will have no code",
                    chain(&e)
                )
            });
            Fatbin::new(handle, Err(e))
        }
    };
    driver_code().add_module(fatbin);
}

/// A module or library loaded from the file `path` (any depth): read now.
///
/// # Safety
/// `path` is the C string the driver just opened.
pub unsafe fn track_file(ret: CUresult, handle: u64, path: *const c_char) {
    if ret != CUDA_SUCCESS || handle == 0 {
        return;
    }
    // SAFETY: per the contract.
    let p = unsafe { c_str(path) };
    let f = match std::fs::read(&p) {
        Ok(b) => Fatbin::copied(handle, b),
        Err(e) => Fatbin::new(
            handle,
            Err(ImageError::File {
                path: p,
                source: Arc::new(e),
            }),
        ),
    };
    driver_code().add_module(f);
}

/// The `module_load` event of a first-level load: images copied at load are
/// written now (the program may free its buffer; the blob is the copy);
/// images in a loaded object are written at their first launch and have no
/// event of their own, like the compiler path's fat binaries.
pub fn module_load(r: &Recorder, api: &str, ret: CUresult, handle: u64) {
    if ret != CUDA_SUCCESS {
        r.module_load(api, ret, 0, Ok::<_, std::convert::Infallible>(&[]));
        return;
    }
    let Some(f) = driver_code().module(handle) else {
        return;
    };
    if f.owned().is_none() {
        return;
    }
    match f.module(|addr, len| load_image(r, &f, addr, len)) {
        Ok(m) => r.op(
            api,
            ret,
            &Op::ModuleLoad {
                module: Addr(handle),
                code: m.code,
            },
        ),
        Err(e) => r.warn(&format!("{api}: {}", chain(&e))),
    }
}

/// A module or library unloaded (any depth): its handles go, and so do
/// the globals the recorder knew in it.
pub fn track_unload(ret: CUresult, handle: u64) {
    if ret != CUDA_SUCCESS {
        return;
    }
    let globals = driver_code().unload(handle);
    if !globals.is_empty() {
        with_recorder_anyway(|r| globals.iter().for_each(|&(p, _)| r.forget_memory(p)));
    }
}

/// A function or kernel taken from a module or library (any depth).
///
/// # Safety
/// `name` is the C string the driver just read.
pub unsafe fn track_function(
    ret: CUresult,
    func: u64,
    module: u64,
    name: *const c_char,
    kind: FnKind,
) {
    if ret == CUDA_SUCCESS && func != 0 {
        // SAFETY: per the contract.
        let n = unsafe { c_str(name) };
        driver_code().add_function(func, module, &n, kind);
    }
}

/// The `function` event of a first-level lookup.
///
/// # Safety
/// As [`track_function`].
pub unsafe fn function(
    r: &Recorder,
    api: &str,
    ret: CUresult,
    func: u64,
    module: u64,
    name: *const c_char,
) {
    // SAFETY: per the contract.
    let n = unsafe { c_str(name) };
    r.op(
        api,
        ret,
        &Op::Function {
            module: Addr(module),
            name: n,
            func: Addr(if ret == CUDA_SUCCESS { func } else { 0 }),
        },
    );
}

/// `cuKernelGetFunction` (any depth).
pub fn track_kernel_function(ret: CUresult, func: u64, kernel: u64) {
    if ret == CUDA_SUCCESS && func != 0 && !driver_code().add_kernel_function(func, kernel) {
        diag(|| format!("cuKernelGetFunction: kernel {kernel:#x} was never seen"));
    }
}

/// The `function` event of a first-level `cuKernelGetFunction`.
pub fn kernel_function(r: &Recorder, api: &str, ret: CUresult, func: u64, kernel: u64) {
    let (module, name) = driver_code()
        .function(kernel)
        .map_or((0, String::new()), |d| {
            (d.kernel.fatbin.handle, d.kernel.name.clone())
        });
    r.op(
        api,
        ret,
        &Op::Function {
            module: Addr(module),
            name,
            func: Addr(if ret == CUDA_SUCCESS { func } else { 0 }),
        },
    );
}

/// A module global looked up (any depth: replay must map it even when a
/// recorded runtime call looked it up): a `global` event carrying the
/// module's code, and device memory from now on.
///
/// # Safety
/// `name` is the C string the driver just read.
pub unsafe fn global(
    api: &'static str,
    ret: CUresult,
    module: u64,
    name: *const c_char,
    ptr: u64,
    size: usize,
) {
    if ret != CUDA_SUCCESS || ptr == 0 {
        return;
    }
    // SAFETY: per the contract.
    let n = unsafe { c_str(name) };
    // A program may pass no size pointer (cuBLAS does): the size is then
    // asked of the driver, since replay maps and translates by it.
    let size = match size {
        0 => super::libcuda::range_size(ptr).unwrap_or(0) as usize,
        s => s,
    };
    driver_code().add_global(module, ptr, size as u64);
    with_recorder_anyway(|r| {
        let code = driver_code()
            .module(module)
            // The image is live while its module is loaded (it just answered
            // this lookup), or the Fatbin's copy.
            .map(|f| f.module(|addr, len| load_image(r, &f, addr, len)));
        let code: BlobId = match code {
            Some(Ok(m)) => m.code,
            Some(Err(e)) => {
                r.warn(&format!(
                    "{api}: global {n}: no code for its module: {}",
                    chain(&e)
                ));
                r.empty_code()
            }
            None => {
                r.warn(&format!(
                    "{api}: global {n} of module {module:#x}, which was never seen"
                ));
                r.empty_code()
            }
        };
        r.global(api, ret, module, &n, code, ptr, size as u64);
    });
}

// ---------------------------------------------------------------- launches

/// The packed buffer of a launch's `extra` (`CU_LAUNCH_PARAM_BUFFER_POINTER`,
/// `…_SIZE`, `…_END`), if it has one and no `kernelParams` (which the
/// driver takes first).
///
/// # Safety
/// `extra` is null or the `extra` array the driver just accepted.
unsafe fn extra_buffer(
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Option<(*const u8, usize)> {
    if !kernel_params.is_null() || extra.is_null() {
        return None;
    }
    let (mut buf, mut size) = (None, None);
    for i in 0..16 {
        // SAFETY: the driver read the array up to its END key, in pairs.
        let key = unsafe { *extra.add(2 * i) } as usize;
        if key == CU_LAUNCH_PARAM_END {
            break;
        }
        // SAFETY: as above: every key but END has a value.
        let v = unsafe { *extra.add(2 * i + 1) };
        match key {
            CU_LAUNCH_PARAM_BUFFER_POINTER => buf = Some(v as *const u8),
            CU_LAUNCH_PARAM_BUFFER_SIZE if !v.is_null() => {
                // SAFETY: the driver read the size_t the value points at.
                size = Some(unsafe { *(v as *const usize) })
            }
            _ => return None,
        }
    }
    Some((buf?, size?))
}

/// The recorded form of a launch's attributes.
///
/// # Safety
/// `attrs` is null or `n` attributes the driver just read.
pub unsafe fn attributes(attrs: *const CUlaunchAttribute, n: u32) -> Vec<LaunchAttr> {
    if attrs.is_null() {
        return Vec::new();
    }
    // SAFETY: per the contract.
    let all = unsafe { std::slice::from_raw_parts(attrs, n as usize) };
    all.iter()
        .filter(|a| a.id != cuda_api::launch_attr::IGNORE)
        .map(|a| LaunchAttr {
            id: a.id,
            hex: HexBytes(a.value[..LAUNCH_ATTR_VALUE_SIZE].to_vec()),
        })
        .collect()
}

/// The configuration of a `cuLaunchKernelEx`.
///
/// # Safety
/// `config` is null or the configuration the driver just read.
pub unsafe fn config(config: *const CUlaunchConfig) -> Option<(LaunchDims, Vec<LaunchAttr>)> {
    // SAFETY: per the contract.
    let c = unsafe { config.as_ref() }?;
    let dims = LaunchDims {
        grid: [c.grid_dim_x, c.grid_dim_y, c.grid_dim_z],
        block: [c.block_dim_x, c.block_dim_y, c.block_dim_z],
        shmem: c.shared_mem_bytes,
        stream: s(c.h_stream),
    };
    // SAFETY: as above: `attrs` holds `num_attrs` attributes.
    Some((dims, unsafe { attributes(c.attrs, c.num_attrs) }))
}

/// The function or kernel behind a launch handle: tracked, or described by
/// the driver (a handle obtained before this library saw its module).
fn function_of(h: u64, ret: CUresult) -> Option<Arc<code::DriverFunction>> {
    let c = driver_code();
    if let Some(d) = c.function(h) {
        return Some(d);
    }
    if ret != CUDA_SUCCESS || h == 0 {
        return None;
    }
    for (kernel, kind) in [(false, FnKind::Function), (true, FnKind::Kernel)] {
        if let Some((name, module)) = libcuda::describe(h, kernel) {
            let module = module.unwrap_or(0);
            if c.module(module).is_none()
                && let Some(d) = c.adopt_by_name(h, &name, kind)
            {
                diag(|| format!("launch handle {h:#x}: {name}, a kernel loaded before, by name"));
                return Some(d);
            }
            diag(|| format!("launch handle {h:#x}: {name} by the driver's own description"));
            return Some(c.add_function(h, module, &name, kind));
        }
    }
    None
}

/// Records a driver launch of `f` with `kernel_params` or `extra`.
///
/// # Safety
/// The launch's own arguments, the driver having accepted them when `ret`
/// is success.
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    f: u64,
    dims: LaunchDims,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    attrs: &[LaunchAttr],
) {
    // SAFETY: per this function's contract.
    let full = |slot: Option<launch_memo::Slot<'_>>| unsafe {
        launch_in_full(r, api, ret, f, dims, kernel_params, extra, attrs, slot)
    };
    if ret != CUDA_SUCCESS {
        full(None);
        return;
    }
    // SAFETY: as above.
    let packed = unsafe { extra_buffer(kernel_params, extra) };
    let key = LaunchKey {
        api,
        func: f,
        dims,
        epoch: launch_memo::epoch(),
        attrs: launch_memo::attrs_key(attrs),
        packed: packed.is_some(),
    };
    match packed {
        Some((p, n)) => {
            // SAFETY: the buffer the driver just read.
            let b = unsafe { bytes(p.cast(), n) };
            launch_memo::record(r, key, |_, _| b, full)
        }
        // SAFETY: the driver accepted this launch with these kernelParams.
        None => unsafe { record_memoised(r, key, kernel_params, full) },
    }
}

/// [`launch`] recorded in full: the handle looked up (a repeated launch's
/// was, when its line was kept), arguments read and encoded. Out of line,
/// so that its locals leave the repeat path's stack frame: 3 fewer of the
/// frame's lines written per repeated launch (cachegrind, a simulated
/// 32 KiB L1, the driver loop touching 64 KiB between launches), lines the
/// runtime's own launch has evicted in between.
///
/// # Safety
/// As [`launch`].
#[inline(never)]
#[cold]
#[allow(clippy::too_many_arguments)]
unsafe fn launch_in_full(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    f: u64,
    dims: LaunchDims,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    attrs: &[LaunchAttr],
    slot: Option<launch_memo::Slot<'_>>,
) {
    let d = function_of(f, ret);
    let kernel = d.as_ref().map(|d| &*d.kernel);
    // SAFETY: the driver read `extra` (when it had no kernelParams).
    let args = unsafe { arg_source(kernel_params, extra) };
    // SAFETY: per the contract: the arguments the driver read.
    unsafe {
        record_kernel_launch(
            r,
            api,
            ret,
            kernel,
            f,
            dims,
            args,
            slot,
            driver_layout(f, &d),
            attrs,
        )
    }
}

/// How the driver gives the parameter layout of `f`, which is `d`.
fn driver_layout(
    f: u64,
    d: &Option<Arc<code::DriverFunction>>,
) -> impl FnOnce(&registry::CudaKernel) -> Result<Vec<(u64, u64)>, ParamLayoutError> {
    let kernel = d.as_ref().is_some_and(|d| d.kind == FnKind::Kernel);
    move |_| libcuda::param_layout(f, kernel)
}

/// A driver launch's arguments: `extra`'s packed buffer, or `kernelParams`.
///
/// # Safety
/// As [`extra_buffer`].
unsafe fn arg_source(kernel_params: *mut *mut c_void, extra: *mut *mut c_void) -> ArgSource {
    // SAFETY: per the contract.
    match unsafe { extra_buffer(kernel_params, extra) } {
        Some((p, n)) => ArgSource::Buffer(p, n),
        None => ArgSource::Params(kernel_params),
    }
}

/// Before a driver launch of `f` is forwarded: the host memory it may
/// read (see `record::host_memory`), found through its arguments.
///
/// # Safety
/// The launch's own arguments, about to be handed to the driver, which
/// reads `kernel_params` per the kernel's parameters, or `extra`.
pub unsafe fn host_writes(
    r: &Recorder,
    api: &'static str,
    f: u64,
    stream: u64,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) {
    let d = function_of(f, CUDA_SUCCESS);
    // SAFETY: per the contract, the extra array the driver reads.
    let args = unsafe { arg_source(kernel_params, extra) };
    let kernel = d.as_ref().map(|d| &*d.kernel);
    // SAFETY: per the contract.
    unsafe { host_writes_of(r, api, kernel, stream, args, driver_layout(f, &d)) };
}

/// A `cuLaunchKernel`-shaped launch's configuration.
#[allow(clippy::too_many_arguments)]
pub fn dims(
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shmem: u32,
    stream: CUstream,
) -> LaunchDims {
    LaunchDims {
        grid: [gx, gy, gz],
        block: [bx, by, bz],
        shmem,
        stream: s(stream),
    }
}

/// The attribute a cooperative launch stands for.
pub fn cooperative() -> Vec<LaunchAttr> {
    let mut v = vec![0u8; LAUNCH_ATTR_VALUE_SIZE];
    v[0] = 1;
    vec![LaunchAttr {
        id: cuda_api::launch_attr::COOPERATIVE,
        hex: HexBytes(v),
    }]
}

// ---------------------------------------------------------------- graphs

/// A graph's kernel node, as a launch of the same function would be
/// recorded (`graph_exec`'s `kernel` node; `unsupported` when the launch
/// cannot be read). The function is looked up as a driver handle the
/// recorder tracked (`cuModuleGetFunction`, `cuKernelGetFunction`,
/// `cuLibraryGetKernel`), then as a runtime kernel (`cudaKernel_t`, or the
/// registered kernel of the driver's name for it: the runtime's capture of
/// `<<<>>>` names a `CUfunction` it made itself), then by the driver's own
/// description.
///
/// # Safety
/// `p` holds a kernel node's parameters as the driver gave them (or the
/// application, in a call the driver accepted): `kernel_params` has one
/// readable pointer per parameter, or `extra` is a well-formed list.
pub unsafe fn kernel_node(
    r: &Recorder,
    api: &'static str,
    p: &cuda_api::graph::CUDA_KERNEL_NODE_PARAMS,
) -> hrr_core::graph::NodeOp {
    use hrr_core::graph::NodeOp;
    let (h, is_kernel) = if p.func.is_null() {
        (p.kern as u64, true)
    } else {
        (p.func as u64, false)
    };
    let dims = LaunchDims {
        grid: [p.grid_dim_x, p.grid_dim_y, p.grid_dim_z],
        block: [p.block_dim_x, p.block_dim_y, p.block_dim_z],
        shmem: p.shared_mem_bytes,
        stream: 0,
    };
    let tracked = driver_code().function(h);
    let (kernel, kind_kernel): (Option<Arc<registry::CudaKernel>>, bool) = match &tracked {
        Some(d) => (Some(d.kernel.clone()), d.kind == FnKind::Kernel),
        None => {
            let reg = registry::global();
            let by_runtime = reg.by_handle(h).or_else(|| {
                libcuda::describe(h, is_kernel).and_then(|(name, _)| reg.by_name(&name))
            });
            match by_runtime {
                Some(k) => (Some(k), is_kernel),
                None => {
                    let d = function_of(h, CUDA_SUCCESS);
                    let kind = d.as_ref().is_some_and(|d| d.kind == FnKind::Kernel);
                    (d.map(|d| d.kernel.clone()), kind || is_kernel)
                }
            }
        }
    };
    let driver = |_: &registry::CudaKernel| libcuda::param_layout(h, kind_kernel);
    // SAFETY: the driver read `extra` (when it had no kernelParams).
    let args = unsafe { arg_source(p.kernel_params, p.extra) };
    // SAFETY: per the contract.
    let op = unsafe {
        crate::cuda::exports::launch::read_kernel_launch(
            r,
            api,
            true,
            kernel.as_deref(),
            h,
            args,
            driver,
            |k, load, values| r.launch_op(api, k, load, h, &dims, &values),
        )
    };
    op.filter(|o| matches!(o, Op::Launch { name, .. } if !name.is_empty()))
        .and_then(graph_execs::kernel_node)
        .unwrap_or_else(|| NodeOp::Unsupported {
            what: format!("a kernel node of function {h:#x}, which the recorder does not know"),
        })
}
