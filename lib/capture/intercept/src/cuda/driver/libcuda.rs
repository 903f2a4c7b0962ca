//! The real `libcuda.so.1`: found once the program has loaded it, its
//! exports resolved into the routing table ([`ProcTable`]) and the few
//! queries the recorder makes on its own behalf ([`Queries`]).
//!
//! Found with `dlopen("libcuda.so.1", RTLD_NOLOAD)` (never loaded by us:
//! a process that does not load the driver keeps not having it) and read
//! with glibc's `dlsym` directly (`dl::dlsym_in`), never through this
//! library's interposed `dlsym`. Until the driver is loaded every lookup
//! retries (cheap: one `dlopen` that finds nothing).

use std::ffi::{CStr, CString, c_char, c_uint, c_void};
use std::sync::OnceLock;

use cuda_api::{CUcontext, CUdevice, CUstream};

use super::routes::ProcTable;
use crate::cuda::layout::ParamLayoutError;
use hrr_interpose::dl;

use cuda_api::fns;

type PointerGetAttribute = fns::cuPointerGetAttribute;
type ParamInfo = fns::cuFuncGetParamInfo;
type GetName = fns::cuFuncGetName;
type GetModule = fns::cuFuncGetModule;
type CtxGetCurrent = fns::cuCtxGetCurrent;
type CtxGetDevice = fns::cuCtxGetDevice;
type StreamSynchronize = fns::cuStreamSynchronize;
type AddressRange = fns::cuMemGetAddressRange_v2;

/// Driver queries the recorder makes (each `None` on a driver without it),
/// typed by `cuda-api`'s table. The kernel variants have the same C types as
/// the function ones (`CUkernel` and `CUfunction` are both handles).
pub struct Queries {
    /// `cuPointerGetAttribute(void *data, CUpointer_attribute, CUdeviceptr)`.
    pub pointer_get_attribute: Option<PointerGetAttribute>,
    /// `cuFuncGetParamInfo(CUfunction, size_t, size_t *, size_t *)` (12.4).
    pub func_param_info: Option<ParamInfo>,
    /// `cuKernelGetParamInfo(CUkernel, size_t, size_t *, size_t *)` (12.4).
    pub kernel_param_info: Option<ParamInfo>,
    /// `cuFuncGetName(const char **, CUfunction)` (12.3).
    pub func_name: Option<GetName>,
    /// `cuKernelGetName(const char **, CUkernel)` (12.3).
    pub kernel_name: Option<GetName>,
    /// `cuFuncGetModule(CUmodule *, CUfunction)` (11.0).
    pub func_module: Option<GetModule>,
    /// `cuKernelGetLibrary(CUlibrary *, CUkernel)` (12.5).
    pub kernel_library: Option<GetModule>,
    /// `cuCtxGetCurrent(CUcontext *)`.
    pub ctx_get_current: Option<CtxGetCurrent>,
    /// `cuCtxGetDevice(CUdevice *)`.
    pub ctx_get_device: Option<CtxGetDevice>,
    /// `cuStreamSynchronize(CUstream)`.
    pub stream_synchronize: Option<StreamSynchronize>,
    /// `cuMemGetAddressRange_v2(CUdeviceptr *, size_t *, CUdeviceptr)`.
    pub address_range: Option<AddressRange>,
    /// `cuCtxSynchronize()` (a capture window's start).
    pub ctx_synchronize: Option<fns::cuCtxSynchronize>,
    /// `cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t)` (a capture window's
    /// state snapshot).
    pub memcpy_dtoh: Option<fns::cuMemcpyDtoH_v2>,
    /// `cuMemcpy3D_v2(const CUDA_MEMCPY3D *)` (an array's contents, in a
    /// capture window's state snapshot).
    pub memcpy_3d: Option<fns::cuMemcpy3D_v2>,
    /// Stream capture and graph queries (`driver::graphs`).
    pub graph: GraphQueries,
    /// What the device hash of D2H copies calls (`cuda::device_hash`).
    pub hash: HashCalls,
}

/// The driver functions the device hash calls on its own behalf (each
/// `None` on a driver without it): never this library's wrappers, so
/// nothing of it is recorded.
pub struct HashCalls {
    /// `cuModuleLoadData`.
    pub module_load_data: Option<fns::cuModuleLoadData>,
    /// `cuModuleGetFunction`.
    pub module_get_function: Option<fns::cuModuleGetFunction>,
    /// `cuLaunchKernel`.
    pub launch_kernel: Option<fns::cuLaunchKernel>,
    /// `cuMemAlloc_v2`.
    pub mem_alloc: Option<fns::cuMemAlloc_v2>,
    /// `cuMemHostAlloc`.
    pub mem_host_alloc: Option<fns::cuMemHostAlloc>,
    /// `cuDeviceGetAttribute`.
    pub device_attribute: Option<fns::cuDeviceGetAttribute>,
    /// `cuDevicePrimaryCtxGetState` (whether a primary context outlived a
    /// release).
    pub primary_ctx_state: Option<fns::cuDevicePrimaryCtxGetState>,
}

/// The driver's stream capture and graph queries the recorder makes to
/// read a graph back at instantiation (each `None` on a driver without it).
pub struct GraphQueries {
    /// `cuStreamIsCapturing`.
    pub stream_is_capturing: Option<fns::cuStreamIsCapturing>,
    /// `cuGraphGetNodes`.
    pub get_nodes: Option<fns::cuGraphGetNodes>,
    /// `cuGraphNodeGetType`.
    pub node_type: Option<fns::cuGraphNodeGetType>,
    /// `cuGraphNodeGetDependencies_v2`.
    pub node_deps: Option<fns::cuGraphNodeGetDependencies_v2>,
    /// `cuGraphKernelNodeGetParams_v2`.
    pub kernel_params: Option<fns::cuGraphKernelNodeGetParams_v2>,
    /// `cuGraphMemcpyNodeGetParams`.
    pub memcpy_params: Option<fns::cuGraphMemcpyNodeGetParams>,
    /// `cuGraphMemsetNodeGetParams`.
    pub memset_params: Option<fns::cuGraphMemsetNodeGetParams>,
    /// `cuGraphHostNodeGetParams`.
    pub host_params: Option<fns::cuGraphHostNodeGetParams>,
    /// `cuGraphChildGraphNodeGetGraph`.
    pub child_graph: Option<fns::cuGraphChildGraphNodeGetGraph>,
    /// `cuGraphEventRecordNodeGetEvent`.
    pub record_event: Option<fns::cuGraphEventRecordNodeGetEvent>,
    /// `cuGraphEventWaitNodeGetEvent`.
    pub wait_event: Option<fns::cuGraphEventWaitNodeGetEvent>,
}

/// The kernel queries have the function ones' C types (compiles only then).
#[allow(dead_code)]
fn same_types(
    p: fns::cuFuncGetParamInfo,
    n: fns::cuFuncGetName,
    m: fns::cuFuncGetModule,
) -> (
    fns::cuKernelGetParamInfo,
    fns::cuKernelGetName,
    fns::cuKernelGetLibrary,
) {
    (p, n, m)
}

/// The loaded driver.
pub struct Libcuda {
    /// Its exports this library wraps, by name and address.
    pub table: ProcTable,
    /// The functions the recorder asks it on its own behalf.
    pub queries: Queries,
}

static LIB: OnceLock<Libcuda> = OnceLock::new();

/// The driver, once the program has loaded it.
pub fn get() -> Option<&'static Libcuda> {
    if let Some(l) = LIB.get() {
        return Some(l);
    }
    let h = dl::loaded_library(c"libcuda.so.1").or_else(|| dl::loaded_library(c"libcuda.so"))?;
    Some(LIB.get_or_init(|| build(h)))
}

fn build(h: *mut c_void) -> Libcuda {
    let sym = |name: &str| -> Option<usize> {
        let c = CString::new(name).ok()?;
        // SAFETY: a live handle from dlopen; a C string.
        unsafe { dl::dlsym_in(h, &c) }.map(|p| p as usize)
    };
    let base = sym("cuInit")
        .or_else(|| sym("cuGetProcAddress_v2"))
        .and_then(dl::object_base)
        .unwrap_or(0);
    let table = ProcTable::new(&super::api::entries(), sym, base);
    macro_rules! q {
        ($name:literal: $ty:ty) => {
            // SAFETY: the export of this name has this C type (its table
            // line, or an identical one: see `Queries`).
            sym($name).map(|p| unsafe { std::mem::transmute::<usize, $ty>(p) })
        };
    }

    let queries = Queries {
        pointer_get_attribute: q!("cuPointerGetAttribute": PointerGetAttribute),
        func_param_info: q!("cuFuncGetParamInfo": ParamInfo),
        kernel_param_info: q!("cuKernelGetParamInfo": ParamInfo),
        func_name: q!("cuFuncGetName": GetName),
        kernel_name: q!("cuKernelGetName": GetName),
        func_module: q!("cuFuncGetModule": GetModule),
        kernel_library: q!("cuKernelGetLibrary": GetModule),
        ctx_get_current: q!("cuCtxGetCurrent": CtxGetCurrent),
        ctx_get_device: q!("cuCtxGetDevice": CtxGetDevice),
        stream_synchronize: q!("cuStreamSynchronize": StreamSynchronize),
        address_range: q!("cuMemGetAddressRange_v2": AddressRange),
        ctx_synchronize: q!("cuCtxSynchronize": fns::cuCtxSynchronize),
        memcpy_dtoh: q!("cuMemcpyDtoH_v2": fns::cuMemcpyDtoH_v2),
        memcpy_3d: q!("cuMemcpy3D_v2": fns::cuMemcpy3D_v2),
        graph: GraphQueries {
            stream_is_capturing: q!("cuStreamIsCapturing": fns::cuStreamIsCapturing),
            get_nodes: q!("cuGraphGetNodes": fns::cuGraphGetNodes),
            node_type: q!("cuGraphNodeGetType": fns::cuGraphNodeGetType),
            node_deps: q!("cuGraphNodeGetDependencies_v2": fns::cuGraphNodeGetDependencies_v2),
            kernel_params: q!("cuGraphKernelNodeGetParams_v2": fns::cuGraphKernelNodeGetParams_v2),
            memcpy_params: q!("cuGraphMemcpyNodeGetParams": fns::cuGraphMemcpyNodeGetParams),
            memset_params: q!("cuGraphMemsetNodeGetParams": fns::cuGraphMemsetNodeGetParams),
            host_params: q!("cuGraphHostNodeGetParams": fns::cuGraphHostNodeGetParams),
            child_graph: q!("cuGraphChildGraphNodeGetGraph": fns::cuGraphChildGraphNodeGetGraph),
            record_event: q!("cuGraphEventRecordNodeGetEvent": fns::cuGraphEventRecordNodeGetEvent),
            wait_event: q!("cuGraphEventWaitNodeGetEvent": fns::cuGraphEventWaitNodeGetEvent),
        },
        hash: HashCalls {
            module_load_data: q!("cuModuleLoadData": fns::cuModuleLoadData),
            module_get_function: q!("cuModuleGetFunction": fns::cuModuleGetFunction),
            launch_kernel: q!("cuLaunchKernel": fns::cuLaunchKernel),
            mem_alloc: q!("cuMemAlloc_v2": fns::cuMemAlloc_v2),
            mem_host_alloc: q!("cuMemHostAlloc": fns::cuMemHostAlloc),
            device_attribute: q!("cuDeviceGetAttribute": fns::cuDeviceGetAttribute),
            primary_ctx_state: q!("cuDevicePrimaryCtxGetState": fns::cuDevicePrimaryCtxGetState),
        },
    };
    super::super::log::diag(|| {
        let missing: Vec<&str> = (0..table.len())
            .filter(|&i| table.real(i) == 0)
            .map(|i| table.name(i))
            .collect();
        format!(
            "libcuda.so.1 at {base:#x}: {} wrapped driver functions, not exported by this driver: {missing:?}",
            table.len()
        )
    });
    Libcuda { table, queries }
}

/// The real address of wrapped entry `i`, if the driver is loaded and has it.
pub fn real(i: usize) -> Option<usize> {
    let r = get()?.table.real(i);
    (r != 0).then_some(r)
}

/// Whether memory at `p` is device-side by `cuPointerGetAttribute`
/// (`None`: the driver does not know it: pageable host memory).
pub fn pointer_is_device(p: u64) -> Option<bool> {
    let f = get()?.queries.pointer_get_attribute?;
    let mut t: c_uint = 0;
    // SAFETY: `t` is the unsigned int this attribute writes; the driver
    // only looks `p` up.
    let r = unsafe {
        f(
            (&mut t as *mut c_uint).cast(),
            cuda_api::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            p,
        )
    };
    if r != cuda_api::CUDA_SUCCESS {
        return None;
    }
    Some(matches!(
        t,
        cuda_api::CU_MEMORYTYPE_DEVICE
            | cuda_api::CU_MEMORYTYPE_UNIFIED
            | cuda_api::CU_MEMORYTYPE_ARRAY
    ))
}

/// The size of the device range that starts at `p` (a module global's size
/// when the program did not ask for it), by `cuMemGetAddressRange_v2`.
pub fn range_size(p: u64) -> Option<u64> {
    let f = get()?.queries.address_range?;
    let (mut base, mut size): (cuda_api::CUdeviceptr, usize) = (0, 0);
    // SAFETY: both out-parameters are ours; the driver only looks `p` up.
    let r = unsafe { f(&mut base, &mut size, p) };
    (r == cuda_api::CUDA_SUCCESS && base == p).then_some(size as u64)
}

/// Waits for `stream` through the real driver (a D2H's result is read only
/// once it has landed).
pub fn sync_stream(stream: u64) {
    if let Some(f) = get().and_then(|l| l.queries.stream_synchronize) {
        hrr_recorder::self_profile::phase("phase D2H: stream wait", || {
            // SAFETY: the application's own stream handle (or a
            // default-stream handle), just used successfully.
            unsafe { f(stream as CUstream) }
        });
    }
}

/// Whether device `dev`'s primary context is active, by
/// `cuDevicePrimaryCtxGetState` (`None`: the driver cannot say).
pub fn primary_active(dev: CUdevice) -> Option<bool> {
    let f = get()?.queries.hash.primary_ctx_state?;
    let (mut flags, mut active): (c_uint, std::ffi::c_int) = (0, 0);
    // SAFETY: both out-parameters are ours; `dev` was just accepted by a
    // primary context call.
    (unsafe { f(dev, &mut flags, &mut active) } == cuda_api::CUDA_SUCCESS).then_some(active != 0)
}

/// The parameter layout of a function (`cuFuncGetParamInfo`) or kernel
/// (`cuKernelGetParamInfo`) handle.
pub fn param_layout(handle: u64, kernel: bool) -> Result<Vec<(u64, u64)>, ParamLayoutError> {
    let q = &get().ok_or(ParamLayoutError::NoDriver)?.queries;
    let (f, what) = if kernel {
        (q.kernel_param_info, "cuKernelGetParamInfo")
    } else {
        (q.func_param_info, "cuFuncGetParamInfo")
    };
    let f = f.ok_or(ParamLayoutError::NoQuery(what))?;
    crate::cuda::layout::query_params(|i| {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: a handle the driver gave the program and accepted in a
        // launch; the outputs are ours.
        let r = unsafe { f(handle as *mut c_void, i, &mut offset, &mut size) };
        (r, offset as u64, size as u64)
    })
}

/// Name and module (or library) of a function or kernel handle nothing
/// recorded, from the driver (`cuFuncGetName`/`cuFuncGetModule`,
/// `cuKernelGetName`/`cuKernelGetLibrary`).
pub fn describe(handle: u64, kernel: bool) -> Option<(String, Option<u64>)> {
    let q = &get()?.queries;
    let (name, module) = if kernel {
        (q.kernel_name?, q.kernel_library)
    } else {
        (q.func_name?, q.func_module)
    };
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: p is ours; the handle was accepted by a launch.
    if unsafe { name(&mut p, handle as *mut c_void) } != cuda_api::CUDA_SUCCESS || p.is_null() {
        return None;
    }
    // SAFETY: on success the driver points p at a string it owns.
    let n = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    let m = module.and_then(|f| {
        let mut m: *mut c_void = std::ptr::null_mut();
        // SAFETY: as above.
        let r = unsafe { f(&mut m, handle as *mut c_void) };
        (r == cuda_api::CUDA_SUCCESS && !m.is_null()).then_some(m as u64)
    });
    Some((n, m))
}

/// The calling thread's current context and its device (0, None when none).
pub fn current_context() -> (u64, Option<i32>) {
    let Some(q) = get().map(|l| &l.queries) else {
        return (0, None);
    };
    let mut ctx: CUcontext = std::ptr::null_mut();
    if let Some(f) = q.ctx_get_current {
        // SAFETY: a valid out-pointer.
        unsafe { f(&mut ctx) };
    }
    let mut dev: CUdevice = -1;
    let device = q.ctx_get_device.and_then(|f| {
        // SAFETY: a valid out-pointer.
        (!ctx.is_null() && unsafe { f(&mut dev) } == cuda_api::CUDA_SUCCESS).then_some(dev)
    });
    (ctx as u64, device)
}
