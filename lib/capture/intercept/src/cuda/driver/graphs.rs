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
//!   the kernel, memcpy and memset node setters) write `graph_exec`: the
//!   graph read back through the driver's query API (`record::graph_walk`),
//!   kernel nodes read as launches of the same function are.
//! * **Launches** write `graph_launch` with the bytes each host-to-device
//!   node reads and, once the stream has finished, each device-to-host
//!   node wrote; a launch into a capturing stream is part of that capture.
//!   Before the launch is forwarded, the host memory its kernel nodes reach
//!   is recorded as before a plain launch ([`host_writes`]).
//!
//! Building a graph changes nothing on the device until it is instantiated,
//! so those calls pass through unwrapped (`routes::has_no_device_effect`);
//! host nodes (`cuGraphAddHostNode`, `cuLaunchHostFunc` in a capture) stay
//! counted as unrecorded, and a graph holding one says so.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use cuda_api::graph::{
    CUDA_KERNEL_NODE_PARAMS, CUDA_MEMSET_NODE_PARAMS, capture_status, node_type,
};
use cuda_api::rect::{CUDA_MEMCPY3D, Rect, RectError};
use cuda_api::{CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, CUDA_SUCCESS, CUresult, CUstream};
use hrr_core::error_chain::chain;
use hrr_core::graph::NodeOp;
use hrr_core::{Addr, Dir, Op};

use super::copy_pieces::copy_pieces;
use super::libcuda::{self, GraphQueries};
use super::record::on_device;
use hrr_interpose::call_args::bytes;
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
}

/// A handle list through the driver's two-call convention.
fn handle_list(
    mut call: impl FnMut(*mut *mut c_void, *mut usize) -> CUresult,
    what: &'static str,
) -> Result<Vec<u64>, QueryError> {
    let mut n = 0usize;
    let ret = call(std::ptr::null_mut(), &mut n);
    if ret != CUDA_SUCCESS {
        return Err(failed(what, ret));
    }
    // The driver refuses an array with a count of 0 (CUDA_ERROR_INVALID_VALUE).
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut v: Vec<*mut c_void> = vec![std::ptr::null_mut(); n];
    let ret = call(v.as_mut_ptr(), &mut n);
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
            |p, n| unsafe { f(graph as *mut c_void, p, n) },
            "cuGraphGetNodes",
        )
    }

    fn deps(&mut self, node: u64) -> Result<Vec<u64>, QueryError> {
        let f = self
            .q
            .node_deps
            .ok_or(QueryError::Missing("cuGraphNodeGetDependencies_v2"))?;
        handle_list(
            // SAFETY: a node of the application's graph; our own array; no
            // edge data asked for.
            |p, n| unsafe { f(node as *mut c_void, p, std::ptr::null_mut(), n) },
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
                copy_ops(self.r, p.rect())
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
                vec![NodeOp::Host]
            }
            other => vec![NodeOp::Unsupported {
                what: format!("a node of type {other} ({})", type_name(other)),
            }],
        })
    }
}

impl DriverGraph<'_> {
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
        8 => "external semaphore signal",
        9 => "external semaphore wait",
        node_type::MEM_ALLOC => "memory allocation",
        node_type::MEM_FREE => "memory free",
        12 => "batch memory operation",
        node_type::CONDITIONAL => "conditional",
        _ => "unknown",
    }
}

/// A copy node's ops: its linear pieces with their directions, or
/// `unsupported` (arrays, more rows than `copy_pieces::MAX_PIECES`).
fn copy_ops(r: &Recorder, rect: Result<Rect, RectError>) -> Vec<NodeOp> {
    let c = match rect {
        Ok(c) => c,
        Err(RectError::Array) => {
            return vec![NodeOp::Unsupported {
                what: "a copy from or to a CUDA array".into(),
            }];
        }
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
    let rec = ExecRecord {
        nodes: w.nodes,
        index: w.index,
    };
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
        record_set(r, api, exec, node, copy_ops(r, p.rect()));
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
