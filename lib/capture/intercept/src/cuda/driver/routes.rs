//! Which address a driver lookup hands out: the routing table behind
//! `cuGetProcAddress`, `dlsym(libcuda, …)` and `cudaGetDriverEntryPoint`.
//!
//! [`ProcTable`] holds, for every driver function this library wraps, the
//! real function's address in `libcuda.so.1` (resolved by its exported name)
//! and the wrapper's. A lookup answered by the real driver is then routed
//! ([`ProcTable::route_proc`], [`ProcTable::route_dlsym`]):
//!
//! - the real address of a wrapped export → that export's wrapper. Mapping
//!   by *address* hands out the wrapper of exactly the variant the driver
//!   chose (`cuMemAlloc` → `cuMemAlloc_v2`; `_ptds`/`_ptsz` with the
//!   per-thread flag; `cuGetProcAddress` → its v1 or `_v2` by version);
//! - a function without a wrapper and without device effects
//!   ([`has_no_device_effect`]) → the real address, unchanged;
//! - any other function of the driver → [`Route::Unrecorded`]: the caller
//!   hands out a counting stub (or the real address, counting the lookup),
//!   so its calls show in the archive's `unrecorded_calls`.
//!
//! Pure logic over addresses: unit-tested with fake tables; `libcuda`
//! builds the real one.

#![deny(unsafe_code)]

use std::collections::HashMap;

/// Where a looked-up address goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// This library's wrapper (an address).
    Wrapper(usize),
    /// The real address: a query, or not the driver's at all.
    Real,
    /// A driver function with device effects that nothing records.
    Unrecorded,
}

/// Wrapped driver functions: names, wrappers and their real addresses.
#[derive(Debug, Default)]
pub struct ProcTable {
    names: Vec<&'static str>,
    wrappers: Vec<usize>,
    /// Real address per entry (0: the driver lacks it).
    real: Vec<usize>,
    by_real: HashMap<usize, usize>,
    by_name: HashMap<&'static [u8], usize>,
    /// Load base of `libcuda.so.1`.
    base: usize,
}

impl ProcTable {
    /// `entries`: (exported name, wrapper address); `resolve(name)`: the
    /// real driver's address of that export; `base`: libcuda's load base
    /// (what `object_base` says for its functions).
    pub fn new(
        entries: &[(&'static str, usize)],
        mut resolve: impl FnMut(&'static str) -> Option<usize>,
        base: usize,
    ) -> ProcTable {
        let mut t = ProcTable {
            base,
            ..ProcTable::default()
        };
        for (i, &(name, wrapper)) in entries.iter().enumerate() {
            let real = resolve(name).unwrap_or(0);
            t.names.push(name);
            t.wrappers.push(wrapper);
            t.real.push(real);
            t.by_name.insert(name.as_bytes(), i);
            // Two exports at one address (aliases): the first keeps it.
            if real != 0 {
                t.by_real.entry(real).or_insert(i);
            }
        }
        t
    }

    /// Entries in the table.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The real address of entry `i` (0: missing).
    pub fn real(&self, i: usize) -> usize {
        self.real.get(i).copied().unwrap_or(0)
    }

    /// The exported name of entry `i`.
    pub fn name(&self, i: usize) -> &'static str {
        self.names[i]
    }

    /// The entry of `name`, if wrapped.
    pub fn index(&self, name: &[u8]) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// libcuda's load base.
    pub fn base(&self) -> usize {
        self.base
    }

    /// Whether `real` is one of this library's wrappers (an answer routed
    /// already, e.g. by `cuGetProcAddress` under `cudaGetDriverEntryPoint`).
    pub fn is_wrapper(&self, addr: usize) -> bool {
        self.wrappers.contains(&addr)
    }

    /// Routes the answer `real` the driver gave for `name`
    /// (`cuGetProcAddress`: `real` is the driver's, `name` the base name
    /// asked for).
    pub fn route_proc(&self, name: &[u8], real: usize) -> Route {
        if let Some(&i) = self.by_real.get(&real) {
            return Route::Wrapper(self.wrappers[i]);
        }
        if self.is_wrapper(real) || has_no_device_effect(name) {
            Route::Real
        } else {
            Route::Unrecorded
        }
    }

    /// Routes `dlsym(handle, name)`'s answer `real`; `object_base(real)`
    /// tells which library it lies in (only driver functions are routed).
    pub fn route_dlsym(
        &self,
        name: &[u8],
        real: usize,
        object_base: impl FnOnce(usize) -> Option<usize>,
    ) -> Route {
        if let Some(i) = self.index(name)
            && self.real[i] == real
        {
            return Route::Wrapper(self.wrappers[i]);
        }
        if self.base == 0 || object_base(real) != Some(self.base) {
            return Route::Real;
        }
        self.route_proc(name, real)
    }
}

/// Driver functions without device effects a replay needs: queries, error
/// strings, occupancy, attributes that only tune performance or that replay
/// derives itself (dynamic shared memory opt-in from the launch's size),
/// host-side work (JIT linking, tensor-map encoding), profiler markers.
/// Their lookups hand out the real function.
pub fn has_no_device_effect(name: &[u8]) -> bool {
    const PREFIXES: &[&[u8]] = &[
        b"cuInit",
        b"cuDriverGetVersion",
        b"cuGetErrorString",
        b"cuGetErrorName",
        b"cuGetProcAddress",
        b"cuDeviceGet",
        b"cuDeviceCanAccessPeer",
        b"cuDeviceComputeCapability",
        b"cuDeviceTotalMem",
        b"cuDevicePrimaryCtxGetState",
        // Scheduling and host-mapping flags of the primary context: how it
        // runs, not what memory holds (both the v1 and `_v2` symbols).
        b"cuDevicePrimaryCtxSetFlags",
        b"cuCtxGet",
        b"cuCtxSetLimit",
        b"cuCtxSetCacheConfig",
        b"cuCtxSetSharedMemConfig",
        b"cuCtxSetFlags",
        b"cuPointerGetAttribute",
        b"cuFuncGet",
        b"cuFuncSetAttribute",
        b"cuFuncSetCacheConfig",
        b"cuFuncSetSharedMemConfig",
        b"cuFuncIsLoaded",
        b"cuFuncLoad",
        b"cuKernelGetAttribute",
        b"cuKernelGetName",
        b"cuKernelGetParamInfo",
        b"cuKernelGetLibrary",
        b"cuKernelSetAttribute",
        b"cuKernelSetCacheConfig",
        b"cuModuleGetLoadingMode",
        b"cuModuleGetFunctionCount",
        b"cuModuleEnumerateFunctions",
        b"cuLibraryGetKernelCount",
        b"cuLibraryEnumerateKernels",
        b"cuOccupancy",
        b"cuMemGetInfo",
        // Arrays' and objects' descriptions read back.
        b"cuArrayGetDescriptor",
        b"cuArray3DGetDescriptor",
        b"cuArrayGetMemoryRequirements",
        b"cuArrayGetSparseProperties",
        b"cuTexObjectGet",
        b"cuSurfObjectGet",
        b"cuMemGetAddressRange",
        b"cuMemGetAllocationGranularity",
        b"cuMemGetAllocationPropertiesFromHandle",
        b"cuMemGetAccess",
        b"cuMemHostGetDevicePointer",
        b"cuMemHostGetFlags",
        b"cuMemPoolGetAttribute",
        b"cuMemPoolSetAttribute",
        b"cuMemPoolCreate",
        b"cuMemPoolDestroy",
        b"cuMemPoolTrimTo",
        b"cuMemAdvise",
        b"cuMemPrefetchAsync",
        b"cuMemRangeGetAttribute",
        b"cuDeviceGraphMemTrim",
        b"cuStreamGet",
        b"cuStreamQuery",
        b"cuStreamIsCapturing",
        b"cuStreamSetAttribute",
        b"cuEventQuery",
        b"cuEventElapsedTime",
        b"cuThreadExchangeStreamCaptureMode",
        // Building and reading a graph: nothing runs until it is
        // instantiated, which reads it back (`graphs`). Host nodes, memory
        // nodes, conditional handles and executable-graph setters other
        // than the recorded ones are not listed: their calls stay counted.
        b"cuGraphCreate",
        b"cuGraphClone",
        b"cuGraphDestroy",
        b"cuGraphGet",
        b"cuGraphNodeGet",
        b"cuGraphNodeFindInClone",
        b"cuGraphNodeSetParams",
        b"cuGraphAddKernelNode",
        b"cuGraphAddMemcpyNode",
        b"cuGraphAddMemsetNode",
        b"cuGraphAddEmptyNode",
        b"cuGraphAddEventRecordNode",
        b"cuGraphAddEventWaitNode",
        b"cuGraphAddChildGraphNode",
        // Host nodes: read back at instantiation as `host` nodes, which
        // replay runs as empty ones (the calls that set a host function
        // are wrapped, `api`; the wrapper's address is handed out first).
        b"cuGraphAddHostNode",
        b"cuGraphHostNode",
        b"cuGraphExecHostNodeSetParams",
        b"cuGraphAddDependencies",
        b"cuGraphRemoveDependencies",
        b"cuGraphKernelNode",
        b"cuGraphMemcpyNode",
        b"cuGraphMemsetNode",
        b"cuGraphChildGraphNodeGetGraph",
        b"cuGraphEventRecordNode",
        b"cuGraphEventWaitNode",
        b"cuGraphDebugDotPrint",
        b"cuGraphExecGetFlags",
        b"cuGraphUpload",
        b"cuStreamUpdateCaptureDependencies",
        b"cuUserObject",
        b"cuGraphRetainUserObject",
        b"cuGraphReleaseUserObject",
        b"cuLinkCreate",
        b"cuLinkAddData",
        b"cuLinkAddFile",
        b"cuLinkComplete",
        b"cuLinkDestroy",
        b"cuTensorMapEncode",
        b"cuCtxResetPersistingL2Cache",
        b"cuFlushGPUDirectRDMAWrites",
        b"cuCoredump",
        b"cuLogs",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake driver: exports at 0x1000 + 0x10·i, libcuda based at 0x1000;
    /// `cuMemAlloc_v2` has an alias export `cuMemAlloc_v2_alias` at the
    /// same address; `cuLibraryLoadData` is missing from this driver.
    fn table() -> ProcTable {
        let exports: HashMap<&str, usize> = [
            ("cuGetProcAddress", 0x1000),
            ("cuGetProcAddress_v2", 0x1010),
            ("cuMemAlloc_v2", 0x1020),
            ("cuMemAlloc_v2_alias", 0x1020),
            ("cuMemcpyHtoD_v2", 0x1030),
            ("cuMemcpyHtoD_v2_ptds", 0x1040),
            ("cuDevicePrimaryCtxReset_v2", 0x1060),
        ]
        .into_iter()
        .collect();
        let wrapped = [
            ("cuGetProcAddress", 0x9000),
            ("cuGetProcAddress_v2", 0x9010),
            ("cuMemAlloc_v2", 0x9020),
            ("cuMemAlloc_v2_alias", 0x9025),
            ("cuMemcpyHtoD_v2", 0x9030),
            ("cuMemcpyHtoD_v2_ptds", 0x9040),
            ("cuLibraryLoadData", 0x9050),
            ("cuDevicePrimaryCtxReset_v2", 0x9060),
        ];
        ProcTable::new(&wrapped, |n| exports.get(n).copied(), 0x1000)
    }

    #[test]
    fn proc_address_answers_map_by_real_address_to_the_same_variant() {
        let t = table();
        // "cuMemAlloc" asked with cudaVersion >= 3020: the driver answers
        // cuMemAlloc_v2's address; the wrapper of that variant goes out.
        assert_eq!(t.route_proc(b"cuMemAlloc", 0x1020), Route::Wrapper(0x9020));
        // The per-thread flag: the _ptds variant's wrapper, not the legacy one.
        assert_eq!(
            t.route_proc(b"cuMemcpyHtoD", 0x1040),
            Route::Wrapper(0x9040)
        );
        assert_eq!(
            t.route_proc(b"cuMemcpyHtoD", 0x1030),
            Route::Wrapper(0x9030)
        );
        // cuGetProcAddress by version: v1 or _v2, each to its own wrapper.
        assert_eq!(
            t.route_proc(b"cuGetProcAddress", 0x1000),
            Route::Wrapper(0x9000)
        );
        assert_eq!(
            t.route_proc(b"cuGetProcAddress", 0x1010),
            Route::Wrapper(0x9010)
        );
        // What the runtime's cudaDeviceReset looks up: recorded, not counted.
        assert_eq!(
            t.route_proc(b"cuDevicePrimaryCtxReset", 0x1060),
            Route::Wrapper(0x9060)
        );
        // Not wrapped: a query goes out unchanged, anything else is counted.
        assert_eq!(t.route_proc(b"cuDeviceGetAttribute", 0x1100), Route::Real);
        assert_eq!(t.route_proc(b"cuGraphLaunch", 0x1200), Route::Unrecorded);
        // An answer that is a wrapper already (routed before) stays.
        assert_eq!(t.route_proc(b"cuGraphLaunch", 0x9030), Route::Real);
        assert!(t.is_wrapper(0x9040) && !t.is_wrapper(0x1040));
    }

    #[test]
    fn dlsym_answers_are_routed_only_for_the_driver() {
        let t = table();
        let in_cuda = |a: usize| (0x1000..0x2000).contains(&a).then_some(0x1000);
        assert_eq!(
            t.route_dlsym(b"cuGetProcAddress_v2", 0x1010, in_cuda),
            Route::Wrapper(0x9010)
        );
        assert_eq!(
            t.route_dlsym(b"cuMemAlloc_v2", 0x1020, in_cuda),
            Route::Wrapper(0x9020)
        );
        // An alias export at a wrapped address: the first wrapper of that address.
        assert_eq!(
            t.route_dlsym(b"cuMemAlloc_v2_alias", 0x1020, in_cuda),
            Route::Wrapper(0x9025),
            "by name first"
        );
        // The same name in another library (a shim, a second driver copy):
        // its answer is not ours to replace.
        assert_eq!(
            t.route_dlsym(b"cuMemAlloc_v2", 0x5020, in_cuda),
            Route::Real
        );
        assert_eq!(
            t.route_dlsym(b"cuGraphLaunch", 0x5000, in_cuda),
            Route::Real
        );
        // The driver's own unwrapped functions.
        assert_eq!(
            t.route_dlsym(b"cuGraphLaunch", 0x1300, in_cuda),
            Route::Unrecorded
        );
        assert_eq!(
            t.route_dlsym(b"cuCtxGetCurrent", 0x1310, in_cuda),
            Route::Real
        );
        // A table without libcuda routes nothing it does not wrap.
        let empty = ProcTable::new(&[], |_| None, 0);
        assert_eq!(
            empty.route_dlsym(b"cuGraphLaunch", 0x1300, in_cuda),
            Route::Real
        );
    }

    #[test]
    fn missing_exports_have_no_real_address() {
        let t = table();
        let i = t.index(b"cuLibraryLoadData").unwrap();
        assert_eq!((t.real(i), t.name(i)), (0, "cuLibraryLoadData"));
        assert_eq!(t.real(t.index(b"cuMemAlloc_v2").unwrap()), 0x1020);
        assert_eq!(t.len(), 8);
    }

    #[test]
    fn queries_and_effects() {
        for q in [
            &b"cuDeviceGetCount"[..],
            b"cuCtxGetCurrent",
            b"cuPointerGetAttributes",
            b"cuFuncGetAttribute",
            b"cuOccupancyMaxActiveBlocksPerMultiprocessor",
            b"cuGetErrorString",
            b"cuTensorMapEncodeTiled",
            b"cuFuncSetAttribute",
            b"cuStreamQuery",
            b"cuStreamIsCapturing",
            b"cuStreamGetCaptureInfo_v3",
            b"cuGraphCreate",
            b"cuGraphAddKernelNode_v2",
            b"cuGraphAddMemcpyNode",
            b"cuGraphAddChildGraphNode",
            // Host nodes: read back at instantiation as `host` nodes, which
            // replay runs as empty ones.
            b"cuGraphAddHostNode",
            b"cuGraphHostNode",
            b"cuGraphExecHostNodeSetParams",
            b"cuGraphAddDependencies_v2",
            b"cuGraphGetNodes",
            b"cuGraphNodeGetType",
            b"cuGraphKernelNodeSetParams_v2",
            b"cuGraphDestroy",
            b"cuGraphDestroyNode",
            b"cuGraphUpload",
            b"cuGraphAddHostNode",
            b"cuGraphHostNodeSetParams",
            b"cuGraphExecHostNodeSetParams",
            b"cuStreamUpdateCaptureDependencies_v2",
            b"cuUserObjectCreate",
            b"cuGraphRetainUserObject",
            b"cuDevicePrimaryCtxSetFlags",
            b"cuDevicePrimaryCtxSetFlags_v2",
            b"cuArrayGetDescriptor_v2",
            b"cuArray3DGetDescriptor_v2",
            b"cuTexObjectGetResourceDesc",
            b"cuSurfObjectGetResourceDesc",
        ] {
            assert!(has_no_device_effect(q), "{}", String::from_utf8_lossy(q));
        }
        for e in [
            &b"cuGraphLaunch"[..],
            b"cuMemcpy2D_v2",
            b"cuStreamBeginCapture_v2",
            b"cuGraphAddMemAllocNode",
            b"cuGraphAddNode_v2",
            b"cuGraphExecChildGraphNodeSetParams",
            b"cuGraphExecNodeSetParams",
            b"cuGraphNodeSetEnabled",
            b"cuGraphConditionalHandleCreate",
            b"cuMemcpy3DPeer",
            b"cuMipmappedArrayCreate",
            b"cuArrayGetPlane",
            b"cuDevicePrimaryCtxReset_v2",
            b"cuGetExportTable",
            b"cuSomethingFromTheFuture",
        ] {
            assert!(!has_no_device_effect(e), "{}", String::from_utf8_lossy(e));
        }
    }
}
