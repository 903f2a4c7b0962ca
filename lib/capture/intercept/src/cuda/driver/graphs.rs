//! CUDA graphs and stream capture at the driver layer (what the runtime's
//! `cudaStreamBeginCapture`/`cudaGraphInstantiate`/`cudaGraphLaunch` reach
//! too), recorded with the HIP family's ops (`graph_exec`, `graph_launch`,
//! `graph_exec_destroy`):
//!
//! * **Stream capture** (`cuStreamBeginCapture_v2`, `cuStreamEndCapture`,
//!   any depth) is tracked, not recorded: while a capture is active, work
//!   issued to a capturing stream joins a graph instead of running, so the
//!   driver and runtime wrappers of launches, copies, memsets and event
//!   calls ask [`captured`] and record nothing for it. Without an active
//!   capture the question is one atomic load.
//! * **Instantiation** (`cuGraphInstantiateWithFlags`, `…WithParams`,
//!   `cuGraphInstantiate_v2`) and **exec updates** (`cuGraphExecUpdate_v2`;
//!   the kernel, memcpy, memset and child graph node setters, the generic
//!   `cuGraphExecNodeSetParams`, and `cuGraphNodeSetEnabled`, a disabled
//!   node written `empty`) write `graph_exec`: the graph read back
//!   through the driver's query API (`record::graph_walk`), kernel nodes
//!   read as launches of the same function are. A dependency with edge
//!   data (a programmatic one) is read as an ordinary dependency: replay
//!   waits for the whole upstream node, a schedule the program allows.
//! * **Launches** write `graph_launch` with the bytes each host-to-device
//!   node reads and, once the stream has finished, each device-to-host
//!   node wrote; a launch into a capturing stream is part of that capture.
//!   Before the launch is forwarded, the host memory its kernel nodes reach
//!   is recorded as before a plain launch ([`host_writes`]).
//!
//! Building a graph changes nothing on the device until it is instantiated,
//! so those calls pass through unwrapped (`routes::has_no_device_effect`);
//! the generic `cuGraphAddNode` (`_v2`) is wrapped to count the nodes the
//! walk cannot describe ([`node_added`]: conditional and memory nodes),
//! whose graphs replay refuses. Every call that gives a node a host
//! function (`cuGraphAddHostNode`, `cuLaunchHostFunc` into a capturing
//! stream, a host node of `cuGraphAddNode` or `cuGraphNodeSetParams`, the
//! host node setters and `cuGraphExecNodeSetParams`) hands the driver this
//! library's graph trampoline in its place ([`wrap_host_node`],
//! [`wrap_node_params`]), which snapshots the device-to-host nodes before
//! it.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use cuda_api::graph::{
    CUDA_HOST_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, CUDA_MEMSET_NODE_PARAMS, CUgraphEdgeData,
    CUgraphNodeParams, capture_status, node_type,
};
use cuda_api::rect::{CUDA_MEMCPY3D, CopySide, RectError};
use cuda_api::{CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, CUDA_SUCCESS, CUresult, CUstream};
use hrr_core::error_chain::chain;
use hrr_core::graph::NodeOp;
use hrr_core::{Addr, Dir, Op};

use super::copy_pieces::copy_pieces;
use super::libcuda::{self, GraphQueries};
use super::record::on_device;
use hrr_interpose::call_args::bytes;
use hrr_interpose::unrecorded::Counter;
use hrr_recorder::record::graph_execs::{ExecRecord, execs};
use hrr_recorder::record::graph_walk::{self, GraphSource};
use hrr_recorder::record::recorder::Recorder;

// ---------------------------------------------------------------- capture

/// Streams this library saw begin a capture that has not ended.
static CAPTURING: Mutex<Vec<u64>> = Mutex::new(Vec::new());
/// Their number: the fast path's one load.
static CAPTURES: AtomicUsize = AtomicUsize::new(0);

/// A stream handle as the driver takes it from entry point `api`: the
/// null stream of a `_ptsz` variant is the calling thread's.
pub fn raw(api: &str, stream: CUstream) -> u64 {
    match stream as u64 {
        0 if api.ends_with("_ptsz") => CU_STREAM_PER_THREAD,
        h => h,
    }
}

/// Whether work issued to `stream` (a handle as the driver takes it) now
/// joins a capture rather than running: then it is not recorded.
#[inline(always)]
pub fn captured(stream: u64) -> bool {
    CAPTURES.load(Ordering::Acquire) != 0 && stream_is_capturing(stream)
}

/// Whether any stream of the process is capturing now (the device hash
/// then keeps off the device: work on the legacy stream could end a
/// capture).
pub fn any_capture() -> bool {
    CAPTURES.load(Ordering::Acquire) != 0
}

#[cold]
fn stream_is_capturing(stream: u64) -> bool {
    // The legacy default stream never captures, and asking about it while
    // another stream captures is an error the driver reports (implicit
    // synchronisation): it is not asked.
    if stream == 0 || stream == CU_STREAM_LEGACY {
        return false;
    }
    let Some(f) = queries().and_then(|q| q.stream_is_capturing) else {
        return false;
    };
    let mut st = capture_status::NONE;
    // SAFETY: the application's stream handle (or a default-stream one),
    // and our own status variable.
    let ret = unsafe { f(stream as CUstream, &mut st) };
    ret == CUDA_SUCCESS && st != capture_status::NONE
}

fn capturing() -> MutexGuard<'static, Vec<u64>> {
    CAPTURING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `cuStreamBeginCapture_v2` returned `ret` for `stream` (any depth).
pub fn capture_begun(ret: CUresult, stream: u64) {
    if ret == CUDA_SUCCESS {
        let mut c = capturing();
        c.push(stream);
        CAPTURES.store(c.len(), Ordering::Release);
    }
}

/// `cuStreamEndCapture` returned for `stream` (any depth): the capture
/// ends with the call, successful or not (an invalidated one too).
pub fn capture_ended(stream: u64) {
    let mut c = capturing();
    if let Some(i) = c.iter().position(|&s| s == stream)
        && !stream_is_capturing(stream)
    {
        c.swap_remove(i);
        CAPTURES.store(c.len(), Ordering::Release);
    }
}

// ---------------------------------------------------------------- reading a graph back

fn queries() -> Option<&'static GraphQueries> {
    libcuda::get().map(|l| &l.queries.graph)
}

/// Why a graph could not be read back: a query the driver lacks or that
/// failed.
#[derive(Debug, thiserror::Error)]
enum QueryError {
    /// The driver lacks the query.
    #[error("libcuda.so.1 has no {0}")]
    Missing(&'static str),
    /// The query failed.
    #[error("{what} returned {ret}")]
    Failed {
        /// The query.
        what: &'static str,
        /// What it returned.
        ret: CUresult,
    },
}

fn failed(what: &'static str, ret: CUresult) -> QueryError {
    QueryError::Failed { what, ret }
}

/// Calls the query `f` (`None`: the driver lacks it) and checks its result.
macro_rules! query {
    ($q:expr, $field:ident, $name:literal, |$f:ident| $call:expr) => {{
        let $f = $q.$field.ok_or(QueryError::Missing($name))?;
        // SAFETY: a handle of the application's graph (it just passed it to
        // the driver, which accepted it) and out-parameters of our own,
        // sized as the call writes them.
        let ret = unsafe { $call };
        if ret != CUDA_SUCCESS {
            return Err(failed($name, ret));
        }
    }};
}

/// The driver as a [`GraphSource`].
struct DriverGraph<'r> {
    r: &'r Recorder,
    api: &'static str,
    q: &'static GraphQueries,
    host_nodes: usize,
    /// Each host node's trampoline id, in the order the walk lists them.
    host_ids: Vec<Option<u64>>,
}

/// A handle list through the driver's two-call convention: `call(handles,
/// edge data, count)`, first with null arrays for the count. Every call
/// gets an edge-data array with its handles: a dependency query without
/// one fails (`CUDA_ERROR_LOSSY_QUERY`) where an edge has edge data.
fn handle_list(
    mut call: impl FnMut(*mut *mut c_void, *mut CUgraphEdgeData, *mut usize) -> CUresult,
    what: &'static str,
) -> Result<Vec<u64>, QueryError> {
    let mut n = 0usize;
    let ret = call(std::ptr::null_mut(), std::ptr::null_mut(), &mut n);
    if ret != CUDA_SUCCESS {
        return Err(failed(what, ret));
    }
    // The driver refuses an array with a count of 0 (CUDA_ERROR_INVALID_VALUE).
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut v: Vec<*mut c_void> = vec![std::ptr::null_mut(); n];
    let mut edges = vec![CUgraphEdgeData::default(); n];
    let ret = call(v.as_mut_ptr(), edges.as_mut_ptr(), &mut n);
    if ret != CUDA_SUCCESS {
        return Err(failed(what, ret));
    }
    v.truncate(n);
    Ok(v.into_iter().map(|p| p as u64).collect())
}

impl GraphSource for DriverGraph<'_> {
    type Error = QueryError;

    fn nodes(&mut self, graph: u64) -> Result<Vec<u64>, QueryError> {
        let f = self
            .q
            .get_nodes
            .ok_or(QueryError::Missing("cuGraphGetNodes"))?;
        handle_list(
            // SAFETY: the application's graph; our own array of `*n` handles.
            |p, _, n| unsafe { f(graph as *mut c_void, p, n) },
            "cuGraphGetNodes",
        )
    }

    fn deps(&mut self, node: u64) -> Result<Vec<u64>, QueryError> {
        let f = self
            .q
            .node_deps
            .ok_or(QueryError::Missing("cuGraphNodeGetDependencies_v2"))?;
        handle_list(
            // SAFETY: a node of the application's graph; our own arrays of
            // `*n` handles and edge data (or both null).
            |p, e, n| unsafe { f(node as *mut c_void, p, e, n) },
            "cuGraphNodeGetDependencies_v2",
        )
    }

    fn child(&mut self, node: u64) -> Result<Option<u64>, QueryError> {
        if self.kind(node)? != node_type::GRAPH {
            return Ok(None);
        }
        let mut g: *mut c_void = std::ptr::null_mut();
        query!(self.q, child_graph, "cuGraphChildGraphNodeGetGraph", |f| f(
            node as *mut c_void,
            &mut g
        ));
        Ok(Some(g as u64))
    }

    fn ops(&mut self, node: u64) -> Result<Vec<NodeOp>, QueryError> {
        let n = node as *mut c_void;
        Ok(match self.kind(node)? {
            node_type::KERNEL => {
                let mut p = CUDA_KERNEL_NODE_PARAMS::default();
                query!(
                    self.q,
                    kernel_params,
                    "cuGraphKernelNodeGetParams_v2",
                    |f| f(n, &mut p)
                );
                // SAFETY: the driver's own description of its node: its
                // kernelParams hold one readable pointer per parameter, or
                // `extra` is a well-formed list.
                vec![unsafe { super::record::kernel_node(self.r, self.api, &p) }]
            }
            node_type::MEMCPY => {
                // SAFETY: all-zero is a valid CUDA_MEMCPY3D (null pointers).
                let mut p: CUDA_MEMCPY3D = unsafe { std::mem::zeroed() };
                query!(self.q, memcpy_params, "cuGraphMemcpyNodeGetParams", |f| f(
                    n,
                    (&mut p as *mut CUDA_MEMCPY3D).cast()
                ));
                copy_ops(self.r, &p)
            }
            node_type::MEMSET => {
                let mut p = CUDA_MEMSET_NODE_PARAMS::default();
                query!(self.q, memset_params, "cuGraphMemsetNodeGetParams", |f| f(
                    n, &mut p
                ));
                vec![memset_op(&p)]
            }
            node_type::EMPTY => vec![NodeOp::Empty],
            t @ (node_type::EVENT_RECORD | node_type::WAIT_EVENT) => {
                let mut e: *mut c_void = std::ptr::null_mut();
                if t == node_type::EVENT_RECORD {
                    query!(
                        self.q,
                        record_event,
                        "cuGraphEventRecordNodeGetEvent",
                        |f| f(n, &mut e)
                    );
                    vec![NodeOp::EventRecord {
                        event: Addr(e as u64),
                    }]
                } else {
                    query!(self.q, wait_event, "cuGraphEventWaitNodeGetEvent", |f| f(
                        n, &mut e
                    ));
                    vec![NodeOp::EventWait {
                        event: Addr(e as u64),
                    }]
                }
            }
            node_type::HOST => {
                self.host_nodes += 1;
                self.host_ids.push(self.host_fn_id(n));
                vec![NodeOp::Host]
            }
            other => vec![NodeOp::Unsupported {
                what: not_described(other).unwrap_or_default(),
            }],
        })
    }
}

impl DriverGraph<'_> {
    /// The trampoline id of host node `n`'s function, when it runs through
    /// this library's (`None` too where the driver cannot say).
    fn host_fn_id(&self, n: *mut c_void) -> Option<u64> {
        let f = self.q.host_params?;
        let mut p = CUDA_HOST_NODE_PARAMS {
            fn_: None,
            user_data: std::ptr::null_mut(),
        };
        // SAFETY: a host node of the application's graph, and our own
        // out-parameter.
        let ret = unsafe { f(n, &mut p) };
        (ret == CUDA_SUCCESS)
            .then(|| crate::host_funcs::graph_host_fn_id(p.fn_, p.user_data))
            .flatten()
    }

    fn kind(&self, node: u64) -> Result<i32, QueryError> {
        let mut t = 0;
        query!(self.q, node_type, "cuGraphNodeGetType", |f| f(
            node as *mut c_void,
            &mut t
        ));
        Ok(t)
    }
}

/// `CUgraphNodeType`'s names for the kinds the format has no op for.
fn type_name(t: i32) -> &'static str {
    match t {
        node_type::EXT_SEMAS_SIGNAL => "external semaphore signal",
        node_type::EXT_SEMAS_WAIT => "external semaphore wait",
        node_type::MEM_ALLOC => "memory allocation",
        node_type::MEM_FREE => "memory free",
        node_type::BATCH_MEM_OP => "batch memory operation",
        node_type::CONDITIONAL => "conditional",
        _ => "unknown",
    }
}

/// A node the walk writes as `unsupported`, by type: `None` for the kinds
/// it describes.
fn not_described(t: i32) -> Option<String> {
    match t {
        node_type::KERNEL
        | node_type::MEMCPY
        | node_type::MEMSET
        | node_type::HOST
        | node_type::GRAPH
        | node_type::EMPTY
        | node_type::WAIT_EVENT
        | node_type::EVENT_RECORD => None,
        other => Some(format!("a node of type {other} ({})", type_name(other))),
    }
}

// ---------------------------------------------------------------- the generic node API

/// The `unrecorded` count of `cuGraphAddNode` (`_v2`) calls that added a
/// node of type `t` the walk cannot describe, named after the kind.
fn undescribed_counter(t: i32) -> &'static Counter {
    static CONDITIONAL: Counter = Counter::new("cuGraphAddNode (conditional node)");
    static MEMORY: Counter = Counter::new("cuGraphAddNode (memory node)");
    static OTHER: Counter = Counter::new("cuGraphAddNode (other node)");
    match t {
        node_type::CONDITIONAL => &CONDITIONAL,
        node_type::MEM_ALLOC | node_type::MEM_FREE => &MEMORY,
        _ => &OTHER,
    }
}

/// `cuGraphAddNode` (`_v2`) returned `ret` for `p`: a graph-building call
/// (the node is read back at instantiation), counted as unrecorded when
/// it added a node the walk cannot describe (its graph's instantiation
/// says so again, and replay refuses the graph).
///
/// # Safety
/// `p` is null or the node description the application handed the driver.
pub unsafe fn node_added(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    p: *const CUgraphNodeParams,
) {
    // SAFETY: per the contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return;
    };
    if ret != CUDA_SUCCESS {
        return;
    }
    if let Some(what) = not_described(p.type_) {
        undescribed_counter(p.type_).bump();
        r.warn(&format!(
            "{api}: {what}: not recorded; a graph holding it cannot be replayed"
        ));
    }
}

/// A copy node's ops: its linear pieces with their directions, one
/// `memcpy_array` node for a copy naming an array, or `unsupported` (more
/// rows than `copy_pieces::MAX_PIECES`, an unknown memory type).
fn copy_ops(r: &Recorder, p: &CUDA_MEMCPY3D) -> Vec<NodeOp> {
    let c = match p.rect() {
        Ok(c) => c,
        Err(RectError::Array) => return vec![array_copy_op(r, p)],
        Err(RectError::Invalid) => {
            return vec![NodeOp::Unsupported {
                what: "a copy of an unknown memory type".into(),
            }];
        }
    };
    let pieces = match copy_pieces(&c) {
        Ok(p) => p,
        Err(e) => {
            return vec![NodeOp::Unsupported {
                what: e.to_string(),
            }];
        }
    };
    pieces
        .into_iter()
        .map(|(dst, src, size)| NodeOp::Memcpy {
            dir: Dir::between(on_device(r, c.src_side, src), on_device(r, c.dst_side, dst)),
            dst: Addr(dst),
            src: Addr(src),
            size,
        })
        .collect()
}

/// A copy node naming an array, in the geometry of a `memcpy_array` event
/// (`arrays::copy`): the array's handle and position, a linear side's
/// first byte and pitches.
fn array_copy_op(r: &Recorder, p: &CUDA_MEMCPY3D) -> NodeOp {
    let c = match p.array_copy() {
        Ok(c) => c,
        Err(_) => {
            return NodeOp::Unsupported {
                what: "a copy of an unknown memory type".into(),
            };
        }
    };
    let on_dev = |side: CopySide| match side {
        CopySide::Array { .. } => true,
        CopySide::Linear { ptr, side, .. } => on_device(r, side, ptr),
    };
    let parts = |side: CopySide| match side {
        CopySide::Array { array, pos } => (Addr(array), None, Some(pos)),
        CopySide::Linear { ptr, pitch, .. } => (Addr(ptr), Some(pitch), None),
    };
    let (dst, dpitch, dpos) = parts(c.dst);
    let (src, spitch, spos) = parts(c.src);
    NodeOp::MemcpyArray {
        dir: Dir::between(on_dev(c.src), on_dev(c.dst)),
        dst,
        dpitch,
        dpos,
        src,
        spitch,
        spos,
        extent: c.extent,
    }
}

fn memset_op(p: &CUDA_MEMSET_NODE_PARAMS) -> NodeOp {
    NodeOp::Memset {
        dst: Addr(p.dst),
        value: p.value,
        size: (p.width as u64).saturating_mul(u64::from(p.element_size)),
        width: u8::try_from(p.element_size).unwrap_or(0),
        rows: p.height.max(1) as u64,
        pitch: if p.height > 1 { p.pitch as u64 } else { 0 },
    }
}

// ---------------------------------------------------------------- host nodes

/// `cuGraphAddHostNode`'s parameters with the function replaced by this
/// library's graph trampoline (`host_funcs`), so that its run first has
/// the recorder read the device-to-host copies before it. The copy lives
/// as long as the process (the driver reads it during the call only, but
/// it is small and made once per node).
///
/// # Safety
/// `p` is null or the application's parameters of the call.
pub unsafe fn wrap_host_node(p: *const CUDA_HOST_NODE_PARAMS) -> *const CUDA_HOST_NODE_PARAMS {
    // SAFETY: per the contract.
    let Some(&CUDA_HOST_NODE_PARAMS {
        fn_: Some(f),
        user_data,
    }) = (unsafe { p.as_ref() })
    else {
        return p;
    };
    let (t, data) = crate::host_funcs::wrap_graph_host_fn(f, user_data);
    Box::leak(Box::new(CUDA_HOST_NODE_PARAMS {
        fn_: Some(t),
        user_data: data,
    }))
}

/// The generic API's node description (`cuGraphAddNode`,
/// `cuGraphNodeSetParams`, `cuGraphExecNodeSetParams`) with a host node's
/// function replaced by the graph trampoline, as [`wrap_host_node`] does;
/// any other node's, or one already carrying the trampoline, unchanged.
/// The copy lives as long as the process, as there.
///
/// # Safety
/// `p` is null or the application's description of the call.
pub unsafe fn wrap_node_params(p: *mut CUgraphNodeParams) -> *mut CUgraphNodeParams {
    // SAFETY: per the contract.
    let Some(np) = (unsafe { p.as_ref() }) else {
        return p;
    };
    if np.type_ != node_type::HOST {
        return p;
    }
    // SAFETY: `type_` names the host member, which the application filled in.
    let CUDA_HOST_NODE_PARAMS { fn_, user_data } = unsafe { np.params.host };
    let Some(f) = fn_ else {
        return p;
    };
    if crate::host_funcs::graph_host_fn_id(fn_, user_data).is_some() {
        return p;
    }
    let (t, data) = crate::host_funcs::wrap_graph_host_fn(f, user_data);
    let mut copy = *np;
    copy.params.host = CUDA_HOST_NODE_PARAMS {
        fn_: Some(t),
        user_data: data,
    };
    Box::leak(Box::new(copy))
}

/// `cuGraphExecHostNodeSetParams` returned `ret`: node `node` of `exec`
/// now runs the function of `p` (the trampoline's, when wrapped), which
/// snapshots the device-to-host nodes before it as the instantiation's
/// did.
///
/// # Safety
/// `p` is null or the parameters the driver was handed.
pub unsafe fn host_node_set(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    exec: u64,
    node: u64,
    p: *const CUDA_HOST_NODE_PARAMS,
) {
    // SAFETY: per the contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return;
    };
    if ret == CUDA_SUCCESS {
        let id = crate::host_funcs::graph_host_fn_id(p.fn_, p.user_data);
        r.graph_host_node_set(api, exec, node, id);
    }
}

// ---------------------------------------------------------------- executable graphs

/// Instantiation or `cuGraphExecUpdate_v2` returned `ret`: on success,
/// `graph` read back and recorded as `exec`'s topology.
pub fn instantiated(r: &Recorder, api: &'static str, ret: CUresult, exec: u64, graph: u64) {
    if ret != CUDA_SUCCESS {
        return;
    }
    let Some(q) = queries() else {
        return r.lose(api, "libcuda.so.1 is not loaded");
    };
    let mut src = DriverGraph {
        r,
        api,
        q,
        host_nodes: 0,
        host_ids: Vec::new(),
    };
    let w = match graph_walk::walk(&mut src, graph) {
        Ok(w) => w,
        Err(e) => {
            return r.lose(
                api,
                &format!("graph {graph:#x} could not be read back: {}", chain(&e)),
            );
        }
    };
    let mut rec = ExecRecord::from(w);
    r.graph_host_nodes(api, &mut rec, &src.host_ids);
    r.graph_exec(api, exec, graph, src.host_nodes, rec);
}

/// A node setter the driver accepted: `node` of `exec` is now `ops` (a
/// topology change — a copy that now takes several pieces — is recorded
/// as `unsupported`); the whole topology again.
fn record_set(r: &Recorder, api: &'static str, exec: u64, node: u64, mut ops: Vec<NodeOp>) {
    let op = match ops.len() {
        0 => NodeOp::Empty,
        1 => ops.remove(0),
        n => NodeOp::Unsupported {
            what: format!("a copy node set to {n} pitched rows after instantiation"),
        },
    };
    let unsupported = match &op {
        NodeOp::Unsupported { what } => Some(what.clone()),
        _ => None,
    };
    if r.graph_node_set(api, exec, node, op)
        && let Some(what) = unsupported
    {
        r.warn(&format!(
            "{api}: executable graph {exec:#x}: {what}: not recorded; replay refuses this graph"
        ));
    }
}

/// `cuGraphExecKernelNodeSetParams_v2`.
///
/// # Safety
/// `p` is null or the parameters the driver just accepted (see
/// `record::kernel_node`).
pub unsafe fn set_kernel(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    exec: u64,
    node: u64,
    p: *const CUDA_KERNEL_NODE_PARAMS,
) {
    // SAFETY: per the contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return;
    };
    if ret == CUDA_SUCCESS {
        // SAFETY: per the contract.
        let op = unsafe { super::record::kernel_node(r, api, p) };
        record_set(r, api, exec, node, vec![op]);
    }
}

/// `cuGraphExecMemcpyNodeSetParams`.
///
/// # Safety
/// `p` is null or the description the driver just accepted.
pub unsafe fn set_memcpy(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    exec: u64,
    node: u64,
    p: *const c_void,
) {
    // SAFETY: per the contract.
    let Some(p) = (unsafe { p.cast::<CUDA_MEMCPY3D>().as_ref() }) else {
        return;
    };
    if ret == CUDA_SUCCESS {
        record_set(r, api, exec, node, copy_ops(r, p));
    }
}

/// `cuGraphExecMemsetNodeSetParams`.
///
/// # Safety
/// `p` is null or the parameters the driver just accepted.
pub unsafe fn set_memset(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    exec: u64,
    node: u64,
    p: *const CUDA_MEMSET_NODE_PARAMS,
) {
    // SAFETY: per the contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return;
    };
    if ret == CUDA_SUCCESS {
        record_set(r, api, exec, node, vec![memset_op(p)]);
    }
}

/// `cuGraphExecNodeSetParams`: by the node type `p` names, what the typed
/// setters record (a child graph's as `cuGraphExecChildGraphNodeSetParams`).
///
/// # Safety
/// `p` is null or the parameters the driver just accepted (a kernel's as
/// `record::kernel_node` requires).
pub unsafe fn set_node(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    exec: u64,
    node: u64,
    p: *const CUgraphNodeParams,
) {
    // SAFETY: per the contract.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return;
    };
    if ret != CUDA_SUCCESS {
        return;
    }
    // Each union read: `type_` names the member the application filled
    // in, and the driver accepted it so.
    let u = &p.params;
    let ops = match p.type_ {
        node_type::KERNEL => {
            // SAFETY: a kernel node's parameters (see above), which
            // `kernel_node` may read per the contract.
            vec![unsafe { super::record::kernel_node(r, api, &u.kernel) }]
        }
        // SAFETY: a copy node's parameters (see above).
        node_type::MEMCPY => copy_ops(r, &unsafe { u.memcpy.copy_params }),
        // SAFETY: a memset node's parameters (see above).
        node_type::MEMSET => vec![memset_op(&unsafe { u.memset }.params)],
        node_type::EMPTY => vec![NodeOp::Empty],
        node_type::HOST => {
            // SAFETY: a host node's parameters (see above), the function
            // the trampoline's when `wrap_node_params` wrapped it.
            let CUDA_HOST_NODE_PARAMS { fn_, user_data } = unsafe { u.host };
            record_set(r, api, exec, node, vec![NodeOp::Host]);
            let id = crate::host_funcs::graph_host_fn_id(fn_, user_data);
            return r.graph_host_node_set(api, exec, node, id);
        }
        t @ (node_type::EVENT_RECORD | node_type::WAIT_EVENT) => {
            // SAFETY: an event node's parameters, its event (see above).
            let event = Addr(unsafe { u.event } as u64);
            vec![if t == node_type::EVENT_RECORD {
                NodeOp::EventRecord { event }
            } else {
                NodeOp::EventWait { event }
            }]
        }
        node_type::GRAPH => {
            // SAFETY: a child graph node's parameters (see above).
            let child = unsafe { u.graph }.graph as u64;
            return set_child(r, api, ret, exec, node, child);
        }
        other => vec![NodeOp::Unsupported {
            what: not_described(other).unwrap_or_default(),
        }],
    };
    record_set(r, api, exec, node, ops);
}

/// `cuGraphExecChildGraphNodeSetParams`: the child graph read back, its
/// nodes' ops in place of those inlined for `node`.
pub fn set_child(r: &Recorder, api: &'static str, ret: CUresult, exec: u64, node: u64, child: u64) {
    if ret != CUDA_SUCCESS {
        return;
    }
    let Some(q) = queries() else {
        return r.lose(api, "libcuda.so.1 is not loaded");
    };
    let mut src = DriverGraph {
        r,
        api,
        q,
        host_nodes: 0,
        host_ids: Vec::new(),
    };
    match graph_walk::walk(&mut src, child) {
        Ok(w) => {
            r.graph_child_set(api, exec, node, w);
        }
        Err(e) => r.lose(
            api,
            &format!("graph {child:#x} could not be read back: {}", chain(&e)),
        ),
    }
}

/// `cuGraphNodeSetEnabled`: a disabled node is an `empty` one until enabled.
pub fn set_enabled(
    r: &Recorder,
    api: &'static str,
    ret: CUresult,
    exec: u64,
    node: u64,
    enabled: bool,
) {
    if ret == CUDA_SUCCESS {
        r.graph_node_enabled(api, exec, node, enabled);
    }
}

/// `cuGraphExecDestroy`.
pub fn exec_destroyed(r: &Recorder, api: &'static str, ret: CUresult, exec: u64) {
    if ret == CUDA_SUCCESS {
        execs().remove(&exec);
    }
    r.op(api, ret, &Op::GraphExecDestroy { exec: Addr(exec) });
}

/// Before `cuGraphLaunch` of `exec` on `stream` (as the driver takes it)
/// is forwarded: the host memory its kernel nodes may read (see
/// `record::host_memory`). The table's `before` hook, which runs only when
/// host memory is tracked and the stream is not capturing.
pub fn host_writes(r: &Recorder, api: &'static str, exec: u64, stream: u64) {
    r.host_writes_before_graph_launch(api, exec, crate::cuda::types::stream_id(stream));
}

/// `cuGraphLaunch` of `exec` on `stream` (as the driver takes it) returned
/// `ret`: the host bytes its copy nodes read, and — once the launch has
/// completed — those they wrote.
pub fn launched(r: &Recorder, api: &'static str, ret: CUresult, exec: u64, stream: u64) {
    // (A launch into a capturing stream never gets here: see `api`.)
    r.graph_launch(
        api,
        (ret, ret == CUDA_SUCCESS),
        exec,
        crate::cuda::types::stream_id(stream),
        // SAFETY: the driver accepted the launch: each host copy node's
        // range is the application's (read now, or written once `sync`
        // returned).
        |p, n| unsafe { bytes(p as *const c_void, n as usize) },
        || libcuda::sync_stream(stream),
    );
}
