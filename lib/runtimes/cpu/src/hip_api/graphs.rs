//! Graphs and stream capture: graphs built node by node or captured from a
//! stream, instantiated, launched on a stream, updated; and the queries a
//! recorder walks a graph with (`crate::graph` holds the state).

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use ::hip_api::args;
use ::hip_api::graph::{capture_status, update_result};
use ::hip_api::types::*;

use super::modules::pack_args;
use super::put;
use crate::error::guard;
use crate::ffi::{HipError, err};
use crate::graph::{KernelNode, MemcpyNode, MemsetNode, Node, NodeKind, kernarg_bytes};
use crate::runtime::rt;

/// The dependency list of an add-node call.
///
/// # Safety
/// `deps` is null or holds `n` node handles.
unsafe fn deps(deps: *const hipGraphNode_t, n: usize) -> Result<Vec<usize>, HipError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if deps.is_null() {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: `n` handles (contract).
    let s = unsafe { std::slice::from_raw_parts(deps, n) };
    Ok(s.iter().map(|p| *p as usize).collect())
}

/// Writes a list out through HIP's two-call convention: with `out` null,
/// `*count` becomes the list's length; else up to `*count` entries are
/// written and `*count` becomes how many were.
///
/// # Safety
/// `count` valid for read and write; `out` null or valid for `*count` writes.
unsafe fn put_list(
    out: *mut *mut c_void,
    count: *mut usize,
    list: &[usize],
) -> Result<(), HipError> {
    if count.is_null() {
        return Err(err::INVALID_VALUE);
    }
    if out.is_null() {
        // SAFETY: contract.
        unsafe { count.write(list.len()) };
        return Ok(());
    }
    // SAFETY: contract.
    let room = unsafe { count.read() };
    let n = room.min(list.len());
    for (i, h) in list.iter().take(n).enumerate() {
        // SAFETY: `i < *count` entries are writable (contract).
        unsafe { out.add(i).write(*h as *mut c_void) };
    }
    // SAFETY: contract.
    unsafe { count.write(n) };
    Ok(())
}

/// A kernel node from `hipKernelNodeParams`: `func` is a registered host
/// stub (the compiler path) or a `hipFunction_t` (the module path).
///
/// # Safety
/// `p` null or valid; its `kernelParams`/`extra` per HIP's launch contract.
unsafe fn kernel_node(p: *const hipKernelNodeParams) -> Result<NodeKind, HipError> {
    if p.is_null() {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: contract.
    let p = unsafe { p.read() };
    let rt = rt()?;
    let handle = p.func as usize;
    let func = rt
        .host_function(handle)
        .or_else(|_| rt.function(handle))
        .map_err(|_| err::INVALID_DEVICE_FUNCTION)?;
    if p.gridDim.volume().is_none_or(|n| n == 0) || p.blockDim.volume().is_none_or(|n| n == 0) {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: HIP's contract for kernelParams / extra.
    let ka = unsafe { pack_args(&func, p.kernelParams, p.extra) }?;
    Ok(NodeKind::Kernel(KernelNode {
        args: kernarg_bytes(&ka),
        func,
        handle,
        grid: p.gridDim,
        block: p.blockDim,
        shmem: p.sharedMemBytes,
    }))
}

/// # Safety
/// `p` null or valid.
unsafe fn memset_node(p: *const hipMemsetParams) -> Result<NodeKind, HipError> {
    if p.is_null() {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: contract.
    let p = unsafe { p.read() };
    if !matches!(p.elementSize, 1 | 2 | 4) || p.dst.is_null() {
        return Err(err::INVALID_VALUE);
    }
    Ok(NodeKind::Memset(MemsetNode {
        dst: p.dst as usize,
        value: p.value,
        element_size: p.elementSize,
        width: p.width,
        height: p.height.max(1),
        pitch: p.pitch,
    }))
}

/// # Safety
/// `p` null or valid.
unsafe fn memcpy_node(p: *const hipMemcpy3DParms) -> Result<NodeKind, HipError> {
    if p.is_null() {
        return Err(err::INVALID_VALUE);
    }
    // SAFETY: contract.
    let m = MemcpyNode(unsafe { p.read() });
    m.rows()?;
    Ok(NodeKind::Memcpy(m))
}

/// `*out = node(...)` after adding it to `graph`.
///
/// # Safety
/// `out` valid for a write; `dep`/`n` per [`deps`].
unsafe fn add(
    out: *mut hipGraphNode_t,
    graph: hipGraph_t,
    dep: *const hipGraphNode_t,
    n: usize,
    kind: impl FnOnce() -> Result<NodeKind, HipError>,
) -> HipError {
    guard(|| {
        if out.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: contract.
        let d = unsafe { deps(dep, n) }?;
        let h = rt()?.add_node(graph as usize, kind()?, &d)?;
        // SAFETY: checked non-null; contract.
        unsafe { put(out, h as hipGraphNode_t) }
    })
}

/// `add_nodes! { NAME { PARAM, … } => { BODY } … }`: the `hipGraphAdd*Node`
/// entry points, which share their first four parameters (out-handle, graph,
/// dependency list and its length) and differ only in how the node is built
/// from the rest: `BODY`, with `PARAM`s bound, returns the `NodeKind`.
macro_rules! add_nodes {
    ($($name:ident { $($p:ident),* } => $body:block)*) => {$(
        pub(super) unsafe fn $name(a: args::$name) -> HipError {
            let args::$name {
                pGraphNode,
                graph,
                pDependencies,
                numDependencies,
                $($p),*
            } = a;
            let kind = || -> Result<NodeKind, HipError> { $body };
            // SAFETY: HIP contract for the out-handle and the dependency list.
            unsafe { add(pGraphNode, graph, pDependencies, numDependencies, kind) }
        }
    )*};
}

// ---------------------------------------------------------------- capture

pub(super) unsafe fn hipStreamBeginCapture(a: args::hipStreamBeginCapture) -> HipError {
    let args::hipStreamBeginCapture { stream, mode } = a;
    guard(|| {
        if !(0..=2).contains(&mode) {
            return Err(err::INVALID_VALUE);
        }
        rt()?.begin_capture(stream as usize)
    })
}

pub(super) unsafe fn hipStreamEndCapture(a: args::hipStreamEndCapture) -> HipError {
    let args::hipStreamEndCapture { stream, pGraph } = a;
    guard(|| {
        if pGraph.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let g = rt()?.end_capture(stream as usize)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(pGraph, g as hipGraph_t) }
    })
}

/// A capture's id, graph and last nodes (`Runtime::capture_info`).
type CaptureInfo = (u64, usize, (*const usize, usize));

/// What the capture queries report of `stream`: its capture status and,
/// while it captures, the capture.
fn capture_state(stream: hipStream_t) -> Result<(c_int, Option<CaptureInfo>), HipError> {
    let rt = rt()?;
    rt.target(stream as usize)?;
    let info = rt.capture_info(stream as usize);
    let st = if info.is_some() {
        capture_status::ACTIVE
    } else {
        capture_status::NONE
    };
    Ok((st, info))
}

pub(super) unsafe fn hipStreamIsCapturing(a: args::hipStreamIsCapturing) -> HipError {
    let args::hipStreamIsCapturing {
        stream,
        pCaptureStatus,
    } = a;
    guard(|| {
        let (st, _) = capture_state(stream)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(pCaptureStatus, st) }
    })
}

pub(super) unsafe fn hipStreamGetCaptureInfo(a: args::hipStreamGetCaptureInfo) -> HipError {
    let args::hipStreamGetCaptureInfo {
        stream,
        pCaptureStatus,
        pId,
    } = a;
    guard(|| {
        let (st, info) = capture_state(stream)?;
        // SAFETY: HIP contract for the out-parameters.
        unsafe { put(pCaptureStatus, st) }?;
        if let (Some((id, _, _)), false) = (&info, pId.is_null()) {
            // SAFETY: as above.
            unsafe { put(pId, *id) }?;
        }
        Ok(())
    })
}

pub(super) unsafe fn hipStreamGetCaptureInfo_v2(a: args::hipStreamGetCaptureInfo_v2) -> HipError {
    let args::hipStreamGetCaptureInfo_v2 {
        stream,
        captureStatus_out,
        id_out,
        graph_out,
        dependencies_out,
        numDependencies_out,
    } = a;
    guard(|| {
        let (st, info) = capture_state(stream)?;
        // SAFETY: HIP contract for the out-parameters (optional ones may be null).
        unsafe { put(captureStatus_out, st) }?;
        if let Some((id, g, (last, n))) = info {
            if !id_out.is_null() {
                // SAFETY: as above.
                unsafe { put(id_out, id) }?;
            }
            if !graph_out.is_null() {
                // SAFETY: as above.
                unsafe { put(graph_out, g as hipGraph_t) }?;
            }
            if !numDependencies_out.is_null() {
                // SAFETY: as above.
                unsafe { put(numDependencies_out, n) }?;
            }
            if !dependencies_out.is_null() {
                // The capture's own list: valid until the next work is
                // captured on the stream, as HIP documents.
                // SAFETY: as above.
                unsafe { put(dependencies_out, last as *const hipGraphNode_t) }?;
            }
        }
        Ok(())
    })
}

// ---------------------------------------------------------------- graphs

pub(super) unsafe fn hipGraphCreate(a: args::hipGraphCreate) -> HipError {
    let args::hipGraphCreate { pGraph, flags } = a;
    guard(|| {
        if pGraph.is_null() || flags != 0 {
            return Err(err::INVALID_VALUE);
        }
        let h = rt()?.register_graph(Arc::new(crate::graph::Graph::default()));
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(pGraph, h as hipGraph_t) }
    })
}

pub(super) unsafe fn hipGraphDestroy(a: args::hipGraphDestroy) -> HipError {
    let args::hipGraphDestroy { graph } = a;
    guard(|| rt()?.destroy_graph(graph as usize))
}

add_nodes! {
    hipGraphAddKernelNode { pNodeParams } => {
        // SAFETY: HIP contract for the parameters.
        unsafe { kernel_node(pNodeParams) }
    }
    hipGraphAddMemcpyNode { pCopyParams } => {
        // SAFETY: HIP contract for the parameters.
        unsafe { memcpy_node(pCopyParams) }
    }
    hipGraphAddMemcpyNode1D { dst, src, count, kind } => {
        if !(0..=4).contains(&kind) {
            return Err(err::INVALID_MEMCPY_DIRECTION);
        }
        Ok(NodeKind::Memcpy(MemcpyNode::linear(dst as usize, src as usize, count, kind)))
    }
    hipGraphAddMemsetNode { pMemsetParams } => {
        // SAFETY: HIP contract for the parameters.
        unsafe { memset_node(pMemsetParams) }
    }
    hipGraphAddEmptyNode {} => { Ok(NodeKind::Empty) }
    hipGraphAddHostNode { pNodeParams } => {
        if pNodeParams.is_null() {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: checked non-null; HIP contract for the parameters.
        let p = unsafe { pNodeParams.read() };
        let func = p.fn_.ok_or(err::INVALID_VALUE)?;
        Ok(NodeKind::Host { func, data: p.userData as usize })
    }
    hipGraphAddEventRecordNode { event } => {
        rt()?.event(event as usize)?;
        Ok(NodeKind::EventRecord(event as usize))
    }
    hipGraphAddEventWaitNode { event } => {
        rt()?.event(event as usize)?;
        Ok(NodeKind::EventWait(event as usize))
    }
    hipGraphAddChildGraphNode { childGraph } => {
        // The child is cloned: later changes to `childGraph` do not reach it.
        let (c, _) = rt()?.graph(childGraph as usize)?.deep_clone();
        Ok(NodeKind::Child(c))
    }
}

pub(super) unsafe fn hipGraphAddDependencies(a: args::hipGraphAddDependencies) -> HipError {
    let args::hipGraphAddDependencies {
        graph,
        from,
        to,
        numDependencies,
    } = a;
    guard(|| {
        let rt = rt()?;
        let g = rt.graph(graph as usize)?;
        // SAFETY: both arrays hold numDependencies handles (contract).
        let (from, to) = unsafe { (deps(from, numDependencies)?, deps(to, numDependencies)?) };
        for (f, t) in from.iter().zip(&to) {
            let (Some(_), Some(tn)) = (g.node(*f), g.node(*t)) else {
                return Err(err::INVALID_VALUE);
            };
            crate::runtime::lock(&tn.deps).push(*f);
        }
        Ok(())
    })
}

// ---------------------------------------------------------------- queries

/// The handles of `graph`'s nodes that `keep` accepts, in order.
fn graph_nodes(graph: hipGraph_t, keep: impl Fn(&Node) -> bool) -> Result<Vec<usize>, HipError> {
    let g = rt()?.graph(graph as usize)?;
    let nodes = crate::runtime::lock(&g.nodes);
    Ok(nodes
        .iter()
        .filter(|n| keep(n))
        .map(|n| n.handle())
        .collect())
}

pub(super) unsafe fn hipGraphGetNodes(a: args::hipGraphGetNodes) -> HipError {
    let args::hipGraphGetNodes {
        graph,
        nodes,
        numNodes,
    } = a;
    guard(|| {
        let list = graph_nodes(graph, |_| true)?;
        // SAFETY: HIP contract for the out-parameters.
        unsafe { put_list(nodes, numNodes, &list) }
    })
}

pub(super) unsafe fn hipGraphGetRootNodes(a: args::hipGraphGetRootNodes) -> HipError {
    let args::hipGraphGetRootNodes {
        graph,
        pRootNodes,
        pNumRootNodes,
    } = a;
    guard(|| {
        let list = graph_nodes(graph, |n| crate::runtime::lock(&n.deps).is_empty())?;
        // SAFETY: HIP contract for the out-parameters.
        unsafe { put_list(pRootNodes, pNumRootNodes, &list) }
    })
}

pub(super) unsafe fn hipGraphNodeGetDependencies(a: args::hipGraphNodeGetDependencies) -> HipError {
    let args::hipGraphNodeGetDependencies {
        node,
        pDependencies,
        pNumDependencies,
    } = a;
    guard(|| {
        let n = rt()?.node(node as usize)?;
        let list = crate::runtime::lock(&n.deps).clone();
        // SAFETY: HIP contract for the out-parameters.
        unsafe { put_list(pDependencies, pNumDependencies, &list) }
    })
}

pub(super) unsafe fn hipGraphNodeGetType(a: args::hipGraphNodeGetType) -> HipError {
    let args::hipGraphNodeGetType { node, pType } = a;
    guard(|| {
        let n = rt()?.node(node as usize)?;
        let t = crate::runtime::lock(&n.kind).node_type();
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(pType, t) }
    })
}

/// The node of `node`'s handle, if it is of the kind `f` accepts.
fn with_kind<T>(
    node: hipGraphNode_t,
    f: impl FnOnce(&NodeKind) -> Option<T>,
) -> Result<T, HipError> {
    let n = rt()?.node(node as usize)?;
    let k = crate::runtime::lock(&n.kind);
    f(&k).ok_or(err::INVALID_VALUE)
}

pub(super) unsafe fn hipGraphKernelNodeGetParams(a: args::hipGraphKernelNodeGetParams) -> HipError {
    let args::hipGraphKernelNodeGetParams { node, pNodeParams } = a;
    guard(|| {
        let n = rt()?.node(node as usize)?;
        let k = crate::runtime::lock(&n.kind);
        let NodeKind::Kernel(kn) = &*k else {
            return Err(err::INVALID_VALUE);
        };
        // kernelParams points into the node's own copy of the arguments,
        // valid while the node's parameters stay as they are.
        let params = crate::runtime::lock(&n.params);
        let p = hipKernelNodeParams {
            blockDim: kn.block,
            extra: std::ptr::null_mut(),
            func: kn.handle as *mut c_void,
            gridDim: kn.grid,
            kernelParams: params.as_ptr() as *mut *mut c_void,
            sharedMemBytes: kn.shmem,
        };
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(pNodeParams, p) }
    })
}

pub(super) unsafe fn hipGraphKernelNodeSetParams(a: args::hipGraphKernelNodeSetParams) -> HipError {
    let args::hipGraphKernelNodeSetParams { node, pNodeParams } = a;
    guard(|| {
        let n = rt()?.node(node as usize)?;
        if !matches!(&*crate::runtime::lock(&n.kind), NodeKind::Kernel(_)) {
            return Err(err::INVALID_VALUE);
        }
        // SAFETY: HIP contract for the parameters.
        let k = unsafe { kernel_node(pNodeParams) }?;
        n.set_kind(k);
        Ok(())
    })
}

/// `node_getters! { NAME(OUT) PATTERN => VALUE; … }`: the entry points that
/// read one thing out of a node of one kind: `node`'s kind must match
/// `PATTERN` (else `hipErrorInvalidValue`), and `VALUE`, from its bindings,
/// is written to the out-parameter `OUT`.
macro_rules! node_getters {
    ($($name:ident($out:ident) $kind:pat => $value:expr;)*) => {$(
        pub(super) unsafe fn $name(a: args::$name) -> HipError {
            let args::$name { node, $out } = a;
            guard(|| {
                let v = with_kind(node, |k| match k {
                    $kind => Some($value),
                    _ => None,
                })?;
                // SAFETY: HIP contract for the out-parameter.
                unsafe { put($out, v) }
            })
        }
    )*};
}

node_getters! {
    hipGraphMemcpyNodeGetParams(pNodeParams) NodeKind::Memcpy(m) => m.0;
    hipGraphMemsetNodeGetParams(pNodeParams) NodeKind::Memset(m) => hipMemsetParams {
        dst: m.dst as *mut c_void,
        elementSize: m.element_size,
        height: m.height,
        pitch: m.pitch,
        value: m.value,
        width: m.width,
    };
    hipGraphHostNodeGetParams(pNodeParams) NodeKind::Host { func, data } => hipHostNodeParams {
        fn_: Some(*func),
        userData: *data as *mut c_void,
    };
    hipGraphChildGraphNodeGetGraph(pGraph) NodeKind::Child(g) => Arc::as_ptr(g) as hipGraph_t;
    hipGraphEventRecordNodeGetEvent(event_out) NodeKind::EventRecord(e) => *e as hipEvent_t;
    hipGraphEventWaitNodeGetEvent(event_out) NodeKind::EventWait(e) => *e as hipEvent_t;
}

// ---------------------------------------------------------------- executable graphs

pub(super) unsafe fn hipGraphInstantiate(a: args::hipGraphInstantiate) -> HipError {
    let args::hipGraphInstantiate {
        pGraphExec,
        graph,
        pErrorNode: _,
        pLogBuffer: _,
        bufferSize: _,
    } = a;
    guard(|| {
        if pGraphExec.is_null() {
            return Err(err::INVALID_VALUE);
        }
        let e = rt()?.instantiate(graph as usize)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(pGraphExec, e as hipGraphExec_t) }
    })
}

pub(super) unsafe fn hipGraphInstantiateWithFlags(
    a: args::hipGraphInstantiateWithFlags,
) -> HipError {
    let args::hipGraphInstantiateWithFlags {
        pGraphExec,
        graph,
        flags,
    } = a;
    guard(|| {
        // hipGraphInstantiateFlagAutoFreeOnLaunch concerns graph
        // allocations, which this runtime's graphs do not make.
        if pGraphExec.is_null() || flags & !1 != 0 {
            return Err(err::INVALID_VALUE);
        }
        let e = rt()?.instantiate(graph as usize)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(pGraphExec, e as hipGraphExec_t) }
    })
}

pub(super) unsafe fn hipGraphLaunch(a: args::hipGraphLaunch) -> HipError {
    let args::hipGraphLaunch { graphExec, stream } = a;
    guard(|| rt()?.launch_graph(graphExec as usize, stream as usize))
}

pub(super) unsafe fn hipGraphExecDestroy(a: args::hipGraphExecDestroy) -> HipError {
    let args::hipGraphExecDestroy { graphExec } = a;
    guard(|| rt()?.destroy_exec(graphExec as usize))
}

pub(super) unsafe fn hipGraphExecUpdate(a: args::hipGraphExecUpdate) -> HipError {
    let args::hipGraphExecUpdate {
        hGraphExec,
        hGraph,
        hErrorNode_out,
        updateResult_out,
    } = a;
    guard(|| {
        if updateResult_out.is_null() {
            return Err(err::INVALID_VALUE);
        }
        if !hErrorNode_out.is_null() {
            // SAFETY: HIP contract for the optional out-parameter.
            unsafe { put(hErrorNode_out, std::ptr::null_mut()) }?;
        }
        let r = rt()?.exec_update(hGraphExec as usize, hGraph as usize)?;
        // SAFETY: HIP contract for the out-parameter.
        unsafe { put(updateResult_out, r.err().unwrap_or(update_result::SUCCESS)) }?;
        r.map_err(|_| err::GRAPH_EXEC_UPDATE_FAILURE)
    })
}

pub(super) unsafe fn hipGraphExecKernelNodeSetParams(
    a: args::hipGraphExecKernelNodeSetParams,
) -> HipError {
    let args::hipGraphExecKernelNodeSetParams {
        hGraphExec,
        node,
        pNodeParams,
    } = a;
    guard(|| {
        // SAFETY: HIP contract for the parameters.
        let k = unsafe { kernel_node(pNodeParams) }?;
        rt()?.exec_set(hGraphExec as usize, node as usize, k)
    })
}

pub(super) unsafe fn hipGraphExecMemcpyNodeSetParams1D(
    a: args::hipGraphExecMemcpyNodeSetParams1D,
) -> HipError {
    let args::hipGraphExecMemcpyNodeSetParams1D {
        hGraphExec,
        node,
        dst,
        src,
        count,
        kind,
    } = a;
    guard(|| {
        let k = NodeKind::Memcpy(MemcpyNode::linear(dst as usize, src as usize, count, kind));
        rt()?.exec_set(hGraphExec as usize, node as usize, k)
    })
}

pub(super) unsafe fn hipGraphExecMemsetNodeSetParams(
    a: args::hipGraphExecMemsetNodeSetParams,
) -> HipError {
    let args::hipGraphExecMemsetNodeSetParams {
        hGraphExec,
        node,
        pNodeParams,
    } = a;
    guard(|| {
        // SAFETY: HIP contract for the parameters.
        let k = unsafe { memset_node(pNodeParams) }?;
        rt()?.exec_set(hGraphExec as usize, node as usize, k)
    })
}
