//! Recorded handlers: GPU graphs and stream capture.
//!
//! * **Stream capture** (`hipStreamBeginCapture`/`EndCapture`) is tracked,
//!   not recorded: while any capture is active, work issued to a capturing
//!   stream is added to a graph by the runtime, not executed, so the copy,
//!   memset, launch and event handlers ask [`captured`] and record nothing
//!   for it. The question costs one atomic load while no capture is active.
//! * **Instantiation** (`hipGraphInstantiate*`) and **exec updates**
//!   (`hipGraphExecUpdate`, `hipGraphExec{Kernel,Memcpy,Memset}NodeSetParams*`)
//!   write a `graph_exec` event: the executable graph's flat topology, read
//!   back through the runtime's query API (one path for captured and
//!   node-built graphs; kernel arguments read with the kernel's layout, as
//!   launches are).
//! * **Launches** write `graph_launch`, with the bytes each host-to-device
//!   node reads at this launch and, once the launch has completed (the
//!   stream is synchronised, as for an asynchronous D2H), the bytes each
//!   device-to-host node wrote. Before the launch is forwarded, the host
//!   memory its kernel nodes reach is recorded as before a plain launch
//!   (`host_write`, then `host_read` at the stream's next synchronisation).
//!
//! * **Copy nodes** are read from their `hipMemcpy3DParms`: linear ones as
//!   `memcpy` nodes, one naming an array (`srcArray`/`dstArray`) as a
//!   `memcpy_array` node in the geometry of a `memcpy_array` event.
//! * **Host nodes** (`hipGraphAddHostNode`, the setters, and
//!   `hipLaunchHostFunc` into a capturing stream) get this library's graph
//!   trampoline in place of the application's function (`host_funcs`):
//!   at each run it has the recorder read the host side of the
//!   device-to-host nodes upstream of it, before the application's function
//!   may rewrite them, and those bytes are the launch's recorded results
//!   (replay runs an empty node in the function's place).
//!
//! Building a graph (creating it, adding nodes and dependencies, setting a
//! node's parameters) changes nothing on the device until it is
//! instantiated, which reads the graph as it then stands: those calls are
//! forwarded unrecorded and uncounted.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use api_table::Entry;
use hip_api::args;
use hip_api::array::Side;
use hip_api::graph::{capture_status, node_type};
use hip_api::types::*;
use hrr_core::error_chain::chain;
use hrr_core::graph::NodeOp;
use hrr_core::{Addr, Dir, Op};

use super::resolve_dir;
use crate::capture::Guard;
use crate::hip::types::{self as hip, HipError};
use crate::launch_params::with_params;
use hrr_interpose::call_args::bytes;
use hrr_interpose::exports::missing;
use hrr_interpose::real_fn::Real;
use hrr_recorder::record::code_objects::FatBin;
use hrr_recorder::record::graph_execs::{self, ExecRecord, execs};
use hrr_recorder::record::graph_walk::{self, GraphSource};
use hrr_recorder::record::kernel_args::ArgValues;
use hrr_recorder::record::recorder::{LaunchDims, Recorder};

/// Stream captures in progress (begun and not yet ended, as this library saw them).
static CAPTURES: AtomicUsize = AtomicUsize::new(0);

/// Whether work issued to `stream` now goes into a capture (a graph)
/// rather than running: then it is not recorded.
#[inline(always)]
pub fn captured(stream: u64) -> bool {
    CAPTURES.load(Ordering::Acquire) != 0 && stream_is_capturing(stream)
}

#[cold]
fn stream_is_capturing(stream: u64) -> bool {
    static REAL: Real<args::hipStreamIsCapturing> = Real::new();
    let Some(f) = REAL.get() else {
        return false;
    };
    let mut st: hipStreamCaptureStatus = capture_status::NONE;
    let a = args::hipStreamIsCapturing {
        stream: stream as hipStream_t,
        pCaptureStatus: &mut st,
    };
    // SAFETY: the application's stream handle, and our own status variable.
    let ret = unsafe { a.call(f) };
    ret == hip::err::SUCCESS && st != capture_status::NONE
}

// ---------------------------------------------------------------- capture

#[inline]
pub unsafe fn hipStreamBeginCapture(
    real: &'static Real<args::hipStreamBeginCapture>,
    a: args::hipStreamBeginCapture,
) -> HipError {
    let Some(f) = real.get() else {
        return missing::<args::hipStreamBeginCapture>();
    };
    // SAFETY: the export's contract: the application's arguments.
    let ret = unsafe { a.call(f) };
    if ret == hip::err::SUCCESS {
        CAPTURES.fetch_add(1, Ordering::AcqRel);
    }
    ret
}

#[inline]
pub unsafe fn hipStreamEndCapture(
    real: &'static Real<args::hipStreamEndCapture>,
    a: args::hipStreamEndCapture,
) -> HipError {
    let Some(f) = real.get() else {
        return missing::<args::hipStreamEndCapture>();
    };
    let was = captured(a.stream as u64);
    // SAFETY: the export's contract: the application's arguments.
    let ret = unsafe { a.call(f) };
    // A capture ends with the call, successful or not (an invalidated one too).
    if was && !stream_is_capturing(a.stream as u64) {
        CAPTURES.fetch_sub(1, Ordering::AcqRel);
    }
    ret
}

// ---------------------------------------------------------------- walking a graph

/// The runtime's graph queries, called directly (not through our exports).
macro_rules! real_call {
    ($name:ident { $($field:ident: $val:expr),* $(,)? }) => {{
        static REAL: Real<args::$name> = Real::new();
        match REAL.get() {
            // SAFETY: handles the runtime gave the application, and
            // out-parameters of our own, sized as the call writes them.
            Some(f) => unsafe { args::$name { $($field: $val),* }.call(f) },
            None => hip::err::NOT_SUPPORTED,
        }
    }};
}

/// Why a graph could not be read back: a query the runtime failed.
#[derive(Debug, thiserror::Error)]
#[error("{what} returned {ret}")]
struct QueryFailed {
    /// The query.
    what: &'static str,
    /// What it returned.
    ret: HipError,
}

fn query_failed(what: &'static str, ret: HipError) -> QueryFailed {
    QueryFailed { what, ret }
}

/// A node list through HIP's two-call convention.
fn node_list(
    mut call: impl FnMut(*mut hipGraphNode_t, *mut usize) -> HipError,
    what: &'static str,
) -> Result<Vec<u64>, QueryFailed> {
    let mut n = 0usize;
    let ret = call(std::ptr::null_mut(), &mut n);
    if ret != hip::err::SUCCESS {
        return Err(query_failed(what, ret));
    }
    let mut v: Vec<hipGraphNode_t> = vec![std::ptr::null_mut(); n];
    let ret = call(v.as_mut_ptr(), &mut n);
    if ret != hip::err::SUCCESS {
        return Err(query_failed(what, ret));
    }
    v.truncate(n);
    Ok(v.into_iter().map(|p| p as u64).collect())
}

/// HIP's graphs as `record::graph_walk` reads them, through the runtime's
/// query API.
struct Walk<'r> {
    r: &'r Recorder,
    api: &'static str,
    /// Each node's type, asked once (by `child`, then used by `ops`).
    types: HashMap<u64, hipGraphNodeType>,
    host_nodes: usize,
    /// Each host node's trampoline id, in the order the walk lists them.
    host_ids: Vec<Option<u64>>,
}

impl GraphSource for Walk<'_> {
    type Error = QueryFailed;

    fn nodes(&mut self, graph: u64) -> Result<Vec<u64>, QueryFailed> {
        let g = graph as hipGraph_t;
        node_list(
            |p, n| {
                real_call!(hipGraphGetNodes {
                    graph: g,
                    nodes: p,
                    numNodes: n
                })
            },
            "hipGraphGetNodes",
        )
    }

    fn deps(&mut self, node: u64) -> Result<Vec<u64>, QueryFailed> {
        node_list(
            |p, c| {
                real_call!(hipGraphNodeGetDependencies {
                    node: node as hipGraphNode_t,
                    pDependencies: p,
                    pNumDependencies: c
                })
            },
            "hipGraphNodeGetDependencies",
        )
    }

    fn child(&mut self, node: u64) -> Result<Option<u64>, QueryFailed> {
        let mut t: hipGraphNodeType = 0;
        let ret = real_call!(hipGraphNodeGetType {
            node: node as hipGraphNode_t,
            pType: &mut t
        });
        if ret != hip::err::SUCCESS {
            return Err(query_failed("hipGraphNodeGetType", ret));
        }
        self.types.insert(node, t);
        if t != node_type::GRAPH {
            return Ok(None);
        }
        let mut child: hipGraph_t = std::ptr::null_mut();
        let ret = real_call!(hipGraphChildGraphNodeGetGraph {
            node: node as hipGraphNode_t,
            pGraph: &mut child
        });
        if ret != hip::err::SUCCESS {
            return Err(query_failed("hipGraphChildGraphNodeGetGraph", ret));
        }
        Ok(Some(child as u64))
    }

    fn ops(&mut self, node: u64) -> Result<Vec<NodeOp>, QueryFailed> {
        // The walk asks `child` first, for every node.
        let t = self.types[&node];
        Ok(vec![self.node(node, t)?])
    }
}

impl Walk<'_> {
    /// One node's parameters.
    fn node(&mut self, n: u64, t: hipGraphNodeType) -> Result<NodeOp, QueryFailed> {
        let node = n as hipGraphNode_t;
        match t {
            node_type::KERNEL => {
                // SAFETY: a zeroed params struct is valid (null pointers, zero dims).
                let mut p: hipKernelNodeParams = unsafe { std::mem::zeroed() };
                let ret = real_call!(hipGraphKernelNodeGetParams {
                    node: node,
                    pNodeParams: &mut p
                });
                if ret != hip::err::SUCCESS {
                    return Err(query_failed("hipGraphKernelNodeGetParams", ret));
                }
                // SAFETY: the runtime handed these parameters out for its node.
                Ok(unsafe { kernel_op(self.r, self.api, &p) })
            }
            node_type::MEMCPY | node_type::MEMCPY_1D => {
                // SAFETY: a zeroed params struct is valid (null pointers).
                let mut p: hipMemcpy3DParms = unsafe { std::mem::zeroed() };
                let ret = real_call!(hipGraphMemcpyNodeGetParams {
                    node: node,
                    pNodeParams: &mut p
                });
                if ret != hip::err::SUCCESS {
                    return Err(query_failed("hipGraphMemcpyNodeGetParams", ret));
                }
                Ok(memcpy_op(self.r, &p))
            }
            node_type::MEMSET => {
                // SAFETY: a zeroed params struct is valid (null pointer).
                let mut p: hipMemsetParams = unsafe { std::mem::zeroed() };
                let ret = real_call!(hipGraphMemsetNodeGetParams {
                    node: node,
                    pNodeParams: &mut p
                });
                if ret != hip::err::SUCCESS {
                    return Err(query_failed("hipGraphMemsetNodeGetParams", ret));
                }
                Ok(memset_op(&p))
            }
            node_type::EMPTY => Ok(NodeOp::Empty),
            node_type::EVENT_RECORD | node_type::WAIT_EVENT => {
                let mut e: hipEvent_t = std::ptr::null_mut();
                let ret = if t == node_type::EVENT_RECORD {
                    real_call!(hipGraphEventRecordNodeGetEvent {
                        node: node,
                        event_out: &mut e
                    })
                } else {
                    real_call!(hipGraphEventWaitNodeGetEvent {
                        node: node,
                        event_out: &mut e
                    })
                };
                if ret != hip::err::SUCCESS {
                    return Err(query_failed("hipGraph*EventNodeGetEvent", ret));
                }
                let event = Addr(e as u64);
                Ok(if t == node_type::EVENT_RECORD {
                    NodeOp::EventRecord { event }
                } else {
                    NodeOp::EventWait { event }
                })
            }
            node_type::HOST => {
                self.host_nodes += 1;
                let mut p = hipHostNodeParams {
                    fn_: None,
                    userData: std::ptr::null_mut(),
                };
                let ret = real_call!(hipGraphHostNodeGetParams {
                    node: node,
                    pNodeParams: &mut p
                });
                let id = (ret == hip::err::SUCCESS)
                    .then(|| crate::host_funcs::graph_host_fn_id(p.fn_, p.userData))
                    .flatten();
                self.host_ids.push(id);
                Ok(NodeOp::Host)
            }
            other => Ok(NodeOp::Unsupported {
                what: format!("node type {other}"),
            }),
        }
    }
}

/// A kernel node's launch, read as a launch of the same kernel is.
///
/// # Safety
/// `p` holds a kernel node's parameters as the runtime (or the application,
/// in a call the runtime accepted) gave them: `kernelParams` has one
/// readable pointer per argument, or `extra` is a well-formed list.
unsafe fn kernel_op(r: &Recorder, api: &'static str, p: &hipKernelNodeParams) -> NodeOp {
    let func = p.func as u64;
    let dims = LaunchDims {
        grid: p.gridDim.to_array(),
        block: p.blockDim.to_array(),
        shmem: p.sharedMemBytes,
        stream: 0,
    };
    let load = |f: &FatBin| super::launch::load_fatbin(r, f);
    let build = |kernel: Option<&hrr_recorder::record::code_objects::Kernel>| {
        let layout = kernel
            .and_then(|k| k.resolve(load).ok())
            .and_then(|res| res.layout);
        let op = |values: ArgValues<'_, '_>| r.launch_op(api, kernel, load, func, &dims, &values);
        if !p.kernelParams.is_null() {
            // SAFETY: per this function's contract.
            unsafe { with_params(layout, p.kernelParams, op) }
        } else if !p.extra.is_null() {
            // SAFETY: per this function's contract.
            op(unsafe { super::launch::extra_buffer(p.extra) })
        } else {
            op(ArgValues::None)
        }
    };
    // The module path names a hipFunction_t, the compiler path a host stub.
    let launch = match r.code().function(func) {
        Some(k) => build(Some(&*k)),
        None => r.code().with_stub(func, build),
    };
    launch
        .and_then(graph_execs::kernel_node)
        .unwrap_or_else(|| NodeOp::Unsupported {
            what: format!("kernel node of function {func:#x}, whose launch could not be read"),
        })
}

/// A copy node: linear 1D copies and copies naming an array are
/// recorded, others are `unsupported`.
fn memcpy_op(r: &Recorder, p: &hipMemcpy3DParms) -> NodeOp {
    let e = p.extent;
    if !p.srcArray.is_null() || !p.dstArray.is_null() {
        return array_copy_op(r, p);
    }
    if e.height > 1
        || e.depth > 1
        || p.srcPos.y != 0
        || p.srcPos.z != 0
        || p.dstPos.y != 0
        || p.dstPos.z != 0
    {
        return NodeOp::Unsupported {
            what: format!(
                "a {}x{}x{} copy (2D and 3D copy nodes are not recorded)",
                e.width, e.height, e.depth
            ),
        };
    }
    let dst = p.dstPtr.ptr as u64 + p.dstPos.x as u64;
    let src = p.srcPtr.ptr as u64 + p.srcPos.x as u64;
    NodeOp::Memcpy {
        dir: resolve_dir(r, p.kind, dst, src),
        dst: Addr(dst),
        src: Addr(src),
        size: e.width as u64,
    }
}

/// A copy node naming an array, in the geometry of a `memcpy_array` event:
/// the array's handle and position (x in bytes), a linear side's first
/// byte and pitches, the extent in bytes, rows and slices.
fn array_copy_op(r: &Recorder, p: &hipMemcpy3DParms) -> NodeOp {
    let Ok(c) = p.array_copy(|a| r.array_element(a as u64).map(|e| e as usize)) else {
        return NodeOp::Unsupported {
            what: "a copy naming an array this library did not see created".into(),
        };
    };
    // As the copy outside a graph is recorded (`arrays::copy`): an array is
    // device memory; `hipMemcpyDefault` asks where a linear side lies.
    let dir = match c.kind {
        hip::MEMCPY_DEFAULT => {
            let dev = |s: Side| match s {
                Side::Array { .. } => true,
                Side::Linear { ptr, .. } => r.is_device(ptr as u64).unwrap_or(true),
            };
            Dir::between(dev(c.src), dev(c.dst))
        }
        k => {
            let addr = |s: Side| match s {
                Side::Linear { ptr, .. } => ptr as u64,
                Side::Array { .. } => 0,
            };
            resolve_dir(r, k, addr(c.dst), addr(c.src))
        }
    };
    let parts = |s: Side| match s {
        Side::Array { array, pos } => (Addr(array as u64), None, Some(pos.map(|v| v as u64))),
        Side::Linear { ptr, pitch } => (Addr(ptr as u64), Some(pitch.map(|v| v as u64)), None),
    };
    let (dst, dpitch, dpos) = parts(c.dst);
    let (src, spitch, spos) = parts(c.src);
    NodeOp::MemcpyArray {
        dir,
        dst,
        dpitch,
        dpos,
        src,
        spitch,
        spos,
        extent: c.extent.map(|v| v as u64),
    }
}

fn memset_op(p: &hipMemsetParams) -> NodeOp {
    let width = u8::try_from(p.elementSize).unwrap_or(0);
    NodeOp::Memset {
        dst: Addr(p.dst as u64),
        value: p.value,
        size: (p.width as u64).saturating_mul(u64::from(p.elementSize)),
        width,
        rows: p.height.max(1) as u64,
        pitch: if p.height > 1 { p.pitch as u64 } else { 0 },
    }
}

/// Reads `graph` back and records `exec`'s topology under `api`.
fn record_exec(r: &Recorder, api: &'static str, exec: u64, graph: u64) {
    let mut src = Walk {
        r,
        api,
        types: HashMap::new(),
        host_nodes: 0,
        host_ids: Vec::new(),
    };
    match graph_walk::walk(&mut src, graph) {
        Ok(w) => {
            let mut rec = ExecRecord::from(w);
            r.graph_host_nodes(api, &mut rec, &src.host_ids);
            r.graph_exec(api, exec, graph, src.host_nodes, rec);
        }
        Err(e) => r.lose(
            api,
            &format!("graph {graph:#x} could not be read back: {}", chain(&e)),
        ),
    }
}

// ---------------------------------------------------------------- handlers

/// Forwards `a`; on a first-level successful call, `record`s.
///
/// # Safety
/// `a` holds the application's arguments for `A`.
unsafe fn forward<A: Entry<Ret = HipError>>(
    real: &Real<A>,
    a: A,
    record: impl FnOnce(&'static Recorder, &'static str, HipError),
) -> HipError {
    // SAFETY: forwarded contract.
    unsafe { super::intercept(real, a, super::Order::Lifecycle, record) }
}

/// Instantiations (`NAME(pGraphExec, graph, …)`): the new exec's topology.
macro_rules! instantiations {
    ($($name:ident),*) => {$(
        #[inline]
        pub unsafe fn $name(real: &'static Real<args::$name>, a: args::$name) -> HipError {
            // SAFETY: the export's contract: the application's arguments.
            unsafe {
                forward(real, a, |r, api, ret| {
                    if ret == hip::err::SUCCESS {
                        // SAFETY: the runtime wrote the handle on success.
                        let exec = hrr_interpose::call_args::out_addr(ret, a.pGraphExec);
                        record_exec(r, api, exec, a.graph as u64);
                    }
                })
            }
        }
    )*};
}

instantiations!(hipGraphInstantiate, hipGraphInstantiateWithFlags);

#[inline]
pub unsafe fn hipGraphExecUpdate(
    real: &'static Real<args::hipGraphExecUpdate>,
    a: args::hipGraphExecUpdate,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        forward(real, a, |r, api, ret| {
            if ret == hip::err::SUCCESS {
                record_exec(r, api, a.hGraphExec as u64, a.hGraph as u64);
            }
        })
    }
}

#[inline]
pub unsafe fn hipGraphExecKernelNodeSetParams(
    real: &'static Real<args::hipGraphExecKernelNodeSetParams>,
    a: args::hipGraphExecKernelNodeSetParams,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        forward(real, a, |r, api, ret| {
            if ret == hip::err::SUCCESS && !a.pNodeParams.is_null() {
                // SAFETY: the runtime accepted these parameters, reading them.
                let op = kernel_op(r, api, &*a.pNodeParams);
                r.graph_node_set(api, a.hGraphExec as u64, a.node as u64, op);
            }
        })
    }
}

#[inline]
pub unsafe fn hipGraphExecMemcpyNodeSetParams1D(
    real: &'static Real<args::hipGraphExecMemcpyNodeSetParams1D>,
    a: args::hipGraphExecMemcpyNodeSetParams1D,
) -> HipError {
    let dir = Guard::enter("hipGraphExecMemcpyNodeSetParams1D")
        .and_then(|g| g.run(|r| resolve_dir(r, a.kind, a.dst as u64, a.src as u64)));
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        forward(real, a, |r, api, ret| {
            if ret == hip::err::SUCCESS {
                let op = NodeOp::Memcpy {
                    dir: dir.unwrap_or(Dir::D2d),
                    dst: Addr(a.dst as u64),
                    src: Addr(a.src as u64),
                    size: a.count as u64,
                };
                r.graph_node_set(api, a.hGraphExec as u64, a.node as u64, op);
            }
        })
    }
}

#[inline]
pub unsafe fn hipGraphExecMemsetNodeSetParams(
    real: &'static Real<args::hipGraphExecMemsetNodeSetParams>,
    a: args::hipGraphExecMemsetNodeSetParams,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        forward(real, a, |r, api, ret| {
            if ret == hip::err::SUCCESS && !a.pNodeParams.is_null() {
                // SAFETY: the runtime accepted these parameters, reading them.
                let op = memset_op(&*a.pNodeParams);
                r.graph_node_set(api, a.hGraphExec as u64, a.node as u64, op);
            }
        })
    }
}

#[inline]
pub unsafe fn hipGraphExecDestroy(
    real: &'static Real<args::hipGraphExecDestroy>,
    a: args::hipGraphExecDestroy,
) -> HipError {
    // SAFETY: the export's contract: the application's arguments.
    unsafe {
        forward(real, a, |r, api, ret| {
            if ret == hip::err::SUCCESS {
                execs().remove(&(a.graphExec as u64));
            }
            r.op(
                api,
                ret,
                &Op::GraphExecDestroy {
                    exec: Addr(a.graphExec as u64),
                },
            );
        })
    }
}

#[inline]
pub unsafe fn hipGraphLaunch(
    real: &'static Real<args::hipGraphLaunch>,
    a: args::hipGraphLaunch,
) -> HipError {
    let Some(f) = real.get() else {
        return missing::<args::hipGraphLaunch>();
    };
    let Some(g) = Guard::enter("hipGraphLaunch") else {
        // SAFETY: the export's contract: the application's arguments.
        return unsafe { a.call(f) };
    };
    let exec = a.graphExec as u64;
    let stream = a.stream as u64;
    // Host memory its kernel nodes may read, before they run (one load when
    // none is tracked); a launch into a capture runs nothing now.
    if g.recorder().watches_host_memory() && !captured(stream) {
        g.run(|r| r.host_writes_before_graph_launch("hipGraphLaunch", exec, stream));
    }
    // SAFETY: the export's contract: the application's arguments.
    let ret = unsafe { a.call(f) };
    g.run(|r| {
        if ret == hip::err::SUCCESS && captured(stream) {
            // Launched into a capture: part of another graph, not run now.
            return;
        }
        r.graph_launch(
            "hipGraphLaunch",
            (ret, ret == hip::err::SUCCESS),
            exec,
            stream,
            // SAFETY: the runtime accepted the launch: each host copy node's
            // range is the application's (read now, or written once `sync`
            // returned).
            |p, n| unsafe { bytes(p as *const c_void, n as usize) },
            || super::memory::sync_stream(a.stream),
        );
    });
    ret
}

// ---------------------------------------------------------------- host nodes

/// Host node parameters with the function replaced by this library's graph
/// trampoline (`host_funcs::wrap_graph_host_fn`), so that its runs first
/// have the recorder read the device-to-host copies before it. The copy
/// lives as long as the process (the runtime reads it during the call
/// only, but it is small and made once per node). Parameters already
/// carrying the trampoline (a runtime calling its own export) are kept.
///
/// # Safety
/// `p` is null or the application's parameters of the call.
unsafe fn wrap_host_params(p: *const hipHostNodeParams) -> *const hipHostNodeParams {
    // SAFETY: per the contract.
    let Some(&hipHostNodeParams {
        fn_: Some(f),
        userData,
    }) = (unsafe { p.as_ref() })
    else {
        return p;
    };
    if crate::host_funcs::graph_host_fn_id(Some(f), userData).is_some() {
        return p;
    }
    let (t, data) = crate::host_funcs::wrap_graph_host_fn(f, userData);
    Box::leak(Box::new(hipHostNodeParams {
        fn_: Some(t),
        userData: data,
    }))
}

/// Host node builders and setters of a graph (`NAME(…, pNodeParams)`):
/// forwarded with the function wrapped ([`wrap_host_params`]); the graph
/// is read back at instantiation.
macro_rules! host_node_builders {
    ($($name:ident),*) => {$(
        #[inline]
        pub unsafe fn $name(real: &'static Real<args::$name>, a: args::$name) -> HipError {
            let Some(f) = real.get() else {
                return missing::<args::$name>();
            };
            let mut b = a;
            // SAFETY: the application's parameters of this call.
            b.pNodeParams = unsafe { wrap_host_params(a.pNodeParams) };
            // SAFETY: the application's arguments, the function and its
            // data possibly replaced by the trampoline's.
            unsafe { b.call(f) }
        }
    )*};
}

host_node_builders!(hipGraphAddHostNode, hipGraphHostNodeSetParams);

/// `hipGraphExecHostNodeSetParams`: forwarded with the function wrapped;
/// the new function's trampoline snapshots the device-to-host nodes
/// upstream of the node, as the one it replaces did.
#[inline]
pub unsafe fn hipGraphExecHostNodeSetParams(
    real: &'static Real<args::hipGraphExecHostNodeSetParams>,
    a: args::hipGraphExecHostNodeSetParams,
) -> HipError {
    let mut b = a;
    // SAFETY: the application's parameters of this call.
    b.pNodeParams = unsafe { wrap_host_params(a.pNodeParams) };
    // SAFETY: the export's contract: the application's arguments, the
    // function and its data possibly replaced by the trampoline's.
    unsafe {
        forward(real, b, |r, api, ret| {
            if ret == hip::err::SUCCESS
                && let Some(p) = b.pNodeParams.as_ref()
            {
                let id = crate::host_funcs::graph_host_fn_id(p.fn_, p.userData);
                r.graph_host_node_set(api, b.hGraphExec as u64, b.node as u64, id);
            }
        })
    }
}
