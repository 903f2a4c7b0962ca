//! Recorded graphs replayed as HIP graphs: each [`GraphSpec`] is built
//! once (`hipGraphCreate`, a node per spec node with its dependencies,
//! `hipGraphInstantiate`), kept by its id, launched with `hipGraphLaunch`,
//! and destroyed when the engine releases it. A runtime without the graph
//! API, or a graph with array copy nodes (whose arrays the backend keeps
//! as handles of its own, copied through `Device::copy_array`), runs the
//! nodes one by one (the trait's default).

use std::collections::HashMap;
use std::ffi::c_void;

use hip_api::graph::{hipKernelNodeParams, hipMemsetParams};
use hrr_replay::device::{DeviceError, Handle};
use hrr_replay::graph::{GraphSpec, NodeSpec, run_in_order};

use crate::ffi::{self, GraphApi};
use crate::hip_device::{HipDevice, ptr};
use crate::launcher::launch_extra;

/// Executable graphs built so far, by spec id.
#[derive(Default)]
pub struct Built {
    execs: HashMap<u64, usize>,
}

impl HipDevice {
    /// `Device::graph_launch` of the HIP backend.
    pub(crate) fn launch_graph(
        &mut self,
        g: &GraphSpec<'_>,
        stream: Handle,
    ) -> Result<(), DeviceError> {
        let Some(launch) = self.runtime().graphs.as_ref().map(|a| a.hipGraphLaunch) else {
            return run_in_order(self, g, stream);
        };
        // Array copy nodes: node by node here.
        if g.nodes
            .iter()
            .any(|n| matches!(n.op, NodeSpec::Array { .. }))
        {
            return run_in_order(self, g, stream);
        }
        let exec = match self.graphs.execs.get(&g.id) {
            Some(e) => *e,
            None => {
                let e = self.build(g)?;
                self.graphs.execs.insert(g.id, e);
                e
            }
        };
        // SAFETY: an executable graph this backend instantiated, on the
        // engine's stream.
        let code = unsafe { launch(ptr(exec as u64), ptr(stream)) };
        self.check("hipGraphLaunch", code)
    }

    /// `Device::graph_release`.
    pub(crate) fn release_graph(&mut self, id: u64) -> Result<(), DeviceError> {
        let Some(destroy) = self
            .runtime()
            .graphs
            .as_ref()
            .map(|a| a.hipGraphExecDestroy)
        else {
            return Ok(());
        };
        let Some(exec) = self.graphs.execs.remove(&id) else {
            return Ok(());
        };
        // SAFETY: an executable graph this backend instantiated, dropped from its map.
        let code = unsafe { destroy(ptr(exec as u64)) };
        self.check("hipGraphExecDestroy", code)
    }

    /// Builds and instantiates `g`; the graph itself is destroyed once
    /// instantiated (the executable graph is independent of it).
    fn build(&self, g: &GraphSpec<'_>) -> Result<usize, DeviceError> {
        let api = self
            .runtime()
            .graphs
            .as_ref()
            .expect("checked by launch_graph");
        let mut graph: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let code = unsafe { (api.hipGraphCreate)(&mut graph, 0) };
        self.check("hipGraphCreate", code)?;
        let r = self.add_nodes(api, graph, g).and_then(|()| {
            let mut exec: *mut c_void = std::ptr::null_mut();
            // SAFETY: the graph just built; valid out-pointer; no log buffer.
            let code = unsafe {
                (api.hipGraphInstantiate)(
                    &mut exec,
                    graph,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                )
            };
            self.check("hipGraphInstantiate", code)
                .map(|()| exec as usize)
        });
        // SAFETY: the graph made above, no longer needed.
        unsafe { (api.hipGraphDestroy)(graph) };
        r
    }

    fn add_nodes(
        &self,
        api: &GraphApi,
        graph: *mut c_void,
        g: &GraphSpec<'_>,
    ) -> Result<(), DeviceError> {
        let mut made: Vec<*mut c_void> = Vec::with_capacity(g.nodes.len());
        for n in g.nodes {
            let deps: Vec<*mut c_void> = n.deps.iter().map(|d| made[*d as usize]).collect();
            let (dp, dn) = (deps.as_ptr(), deps.len());
            let mut node: *mut c_void = std::ptr::null_mut();
            // A 1D copy node, of any direction: (dst, src, bytes) and the kind.
            let copy_1d = |node: &mut *mut c_void,
                           (dst, src, len): (*mut c_void, *const c_void, usize),
                           kind| {
                // SAFETY: see the comment above the match below.
                let code = unsafe {
                    (api.hipGraphAddMemcpyNode1D)(node, graph, dp, dn, dst, src, len, kind)
                };
                ("hipGraphAddMemcpyNode1D", code)
            };
            // SAFETY (every arm): `graph` is ours; `dp` holds `dn` nodes of
            // it; the parameters are read during the call, and the memory
            // they name (device operands, the engine's host buffers) stays
            // valid while the graph may be launched (the spec's contract).
            let (call, code) = match &n.op {
                NodeSpec::Kernel(l) => {
                    let kernarg = l.packed_args();
                    let mut size = kernarg.len();
                    let mut extra = launch_extra(&kernarg, &mut size);
                    let p = hipKernelNodeParams {
                        blockDim: ffi::Dim3::new(l.block[0], l.block[1], l.block[2]),
                        extra: extra.as_mut_ptr(),
                        func: ptr(l.func),
                        gridDim: ffi::Dim3::new(l.grid[0], l.grid[1], l.grid[2]),
                        kernelParams: std::ptr::null_mut(),
                        sharedMemBytes: l.shmem,
                    };
                    // The runtime copies the argument buffer when adding the node.
                    {
                        // SAFETY: see the comment above the match.
                        let code =
                            unsafe { (api.hipGraphAddKernelNode)(&mut node, graph, dp, dn, &p) };
                        ("hipGraphAddKernelNode", code)
                    }
                }
                NodeSpec::H2d { dst, src } => copy_1d(
                    &mut node,
                    (ptr(*dst), src.addr().cast_const().cast(), src.len()),
                    ffi::MEMCPY_HOST_TO_DEVICE,
                ),
                NodeSpec::D2h { dst, src } => copy_1d(
                    &mut node,
                    (dst.addr().cast(), ptr(*src).cast_const(), dst.len()),
                    ffi::MEMCPY_DEVICE_TO_HOST,
                ),
                NodeSpec::D2d { dst, src, size } => copy_1d(
                    &mut node,
                    (ptr(*dst), ptr(*src).cast_const(), *size as usize),
                    ffi::MEMCPY_DEVICE_TO_DEVICE,
                ),
                NodeSpec::Memset { dst, value, size } => {
                    let p = hipMemsetParams {
                        dst: ptr(*dst),
                        elementSize: 1,
                        height: 1,
                        pitch: 0,
                        value: u32::from(*value),
                        width: *size as usize,
                    };
                    {
                        // SAFETY: see the comment above the match.
                        let code =
                            unsafe { (api.hipGraphAddMemsetNode)(&mut node, graph, dp, dn, &p) };
                        ("hipGraphAddMemsetNode", code)
                    }
                }
                // `launch_graph` runs such graphs node by node.
                NodeSpec::Array { .. } => {
                    return Err(DeviceError::Call {
                        call: "hipGraphAddMemcpyNode",
                        code: -1,
                        message: "an array copy node".into(),
                    });
                }
                NodeSpec::Empty => {
                    // SAFETY: see the comment above the match.
                    let code = unsafe { (api.hipGraphAddEmptyNode)(&mut node, graph, dp, dn) };
                    ("hipGraphAddEmptyNode", code)
                }
                NodeSpec::EventRecord(e) => {
                    // SAFETY: see the comment above the match.
                    let code = unsafe {
                        (api.hipGraphAddEventRecordNode)(&mut node, graph, dp, dn, ptr(*e))
                    };
                    ("hipGraphAddEventRecordNode", code)
                }
                NodeSpec::EventWait(e) => {
                    // SAFETY: see the comment above the match.
                    let code = unsafe {
                        (api.hipGraphAddEventWaitNode)(&mut node, graph, dp, dn, ptr(*e))
                    };
                    ("hipGraphAddEventWaitNode", code)
                }
            };
            self.check(call, code)?;
            made.push(node);
        }
        Ok(())
    }
}
