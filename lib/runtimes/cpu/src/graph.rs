//! Graphs: nodes with dependencies, built node by node or by stream
//! capture; instantiated into an executable graph (an ordered list of
//! steps, child graphs flattened) whose launch submits every step, in
//! dependency order, to one stream.
//!
//! Handles (`hipGraph_t`, `hipGraphNode_t`, `hipGraphExec_t`) are the
//! addresses of the `Arc`s the runtime's maps hold, as for streams.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hip_api::graph::{hipMemcpy3DParms, node_type};
use hip_api::types::{hipExtent, hipPitchedPtr};

use crate::exec::KernArgs;
use crate::ffi::{Dim3, HipError, err};
use crate::module::Function;
use crate::runtime::lock;

/// A kernel node's launch: the kernel, its configuration and its packed
/// argument segment (copied when the node was made).
#[derive(Clone)]
pub struct KernelNode {
    /// The kernel.
    pub func: Arc<Function>,
    /// The handle the application named it by, reported back by queries.
    pub handle: usize,
    /// Grid dimensions, in blocks.
    pub grid: Dim3,
    /// Block dimensions, in threads.
    pub block: Dim3,
    /// Dynamic shared memory, in bytes.
    pub shmem: u32,
    /// The argument segment, laid out per the kernel's metadata.
    pub args: Vec<u8>,
}

/// A copy node, kept as the `hipMemcpy3DParms` it was given (1D copies as
/// a one-row extent), so queries hand it back as it came.
#[derive(Clone, Copy)]
pub struct MemcpyNode(pub hipMemcpy3DParms);

// SAFETY: the raw pointers inside are addresses the application owns and
// names; this runtime never dereferences them outside a copy it was asked
// to perform, from whichever thread runs it.
unsafe impl Send for MemcpyNode {}
// SAFETY: as above; shared references only read the addresses.
unsafe impl Sync for MemcpyNode {}

impl MemcpyNode {
    /// A plain copy of `len` bytes.
    pub fn linear(dst: usize, src: usize, len: usize, kind: i32) -> MemcpyNode {
        let ptr = |p: usize| hipPitchedPtr {
            ptr: p as *mut _,
            pitch: len,
            xsize: len,
            ysize: 1,
        };
        MemcpyNode(hipMemcpy3DParms {
            srcArray: std::ptr::null_mut(),
            srcPos: Default::default(),
            srcPtr: ptr(src),
            dstArray: std::ptr::null_mut(),
            dstPos: Default::default(),
            dstPtr: ptr(dst),
            extent: hipExtent {
                width: len,
                height: 1,
                depth: 1,
            },
            kind,
        })
    }

    /// The rows the copy is made of: `(dst, src, len)`; a side that is an
    /// array is the array's memory as it is now (a live array's, checked
    /// to hold the extent).
    pub fn rows(&self) -> Result<Vec<(usize, usize, usize)>, HipError> {
        let p = &self.0;
        if !p.srcArray.is_null() || !p.dstArray.is_null() {
            let r = crate::hip_api::graph_array_rect(p)?;
            let [w, h, d] = r.extent;
            if w == 0 {
                return Ok(Vec::new());
            }
            let at = |base: usize, pitch: [usize; 2], y: usize, z: usize| {
                base + z * pitch[1] + y * pitch[0]
            };
            return Ok((0..d.max(1))
                .flat_map(|z| (0..h.max(1)).map(move |y| (y, z)))
                .map(|(y, z)| (at(r.dst, r.dpitch, y, z), at(r.src, r.spitch, y, z), w))
                .collect());
        }
        let e = p.extent;
        let mut rows = Vec::new();
        if e.width == 0 {
            return Ok(rows);
        }
        let at = |pp: &hipPitchedPtr, pos: &hip_api::graph::hipPos, y: usize, z: usize| {
            let pitch = pp.pitch.max(e.width);
            let ysize = pp.ysize.max(1);
            (pp.ptr as usize) + ((pos.z + z) * ysize + pos.y + y) * pitch + pos.x
        };
        for z in 0..e.depth.max(1) {
            for y in 0..e.height.max(1) {
                rows.push((
                    at(&p.dstPtr, &p.dstPos, y, z),
                    at(&p.srcPtr, &p.srcPos, y, z),
                    e.width,
                ));
            }
        }
        Ok(rows)
    }
}

/// A memset node (`hipMemsetParams`): `height` rows of `width` elements of
/// `element_size` bytes, `pitch` bytes apart.
#[derive(Clone, Copy)]
pub struct MemsetNode {
    /// Destination.
    pub dst: usize,
    /// Pattern value.
    pub value: u32,
    /// Element size: 1, 2 or 4.
    pub element_size: u32,
    /// Elements per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Bytes between rows.
    pub pitch: usize,
}

/// What a node does.
#[derive(Clone)]
pub enum NodeKind {
    /// A kernel launch.
    Kernel(KernelNode),
    /// A copy.
    Memcpy(MemcpyNode),
    /// A memset.
    Memset(MemsetNode),
    /// A host function.
    Host {
        /// The function.
        func: hip_api::graph::HostFn,
        /// Its argument.
        data: usize,
    },
    /// A child graph (the graph the node was given is cloned into it).
    Child(Arc<Graph>),
    /// Nothing: a dependency point.
    Empty,
    /// Records an event.
    EventRecord(usize),
    /// Waits for an event.
    EventWait(usize),
}

impl NodeKind {
    /// The `hipGraphNodeType` reported for it.
    pub fn node_type(&self) -> i32 {
        match self {
            NodeKind::Kernel(_) => node_type::KERNEL,
            NodeKind::Memcpy(_) => node_type::MEMCPY,
            NodeKind::Memset(_) => node_type::MEMSET,
            NodeKind::Host { .. } => node_type::HOST,
            NodeKind::Child(_) => node_type::GRAPH,
            NodeKind::Empty => node_type::EMPTY,
            NodeKind::EventRecord(_) => node_type::EVENT_RECORD,
            NodeKind::EventWait(_) => node_type::WAIT_EVENT,
        }
    }
}

/// One node of a graph.
pub struct Node {
    /// What it does.
    pub kind: Mutex<NodeKind>,
    /// The nodes it depends on (handles, in the same graph).
    pub deps: Mutex<Vec<usize>>,
    /// Argument pointers into the kernel node's segment, one per host
    /// argument, which `hipGraphKernelNodeGetParams` hands out as
    /// `kernelParams` (valid until the node's parameters change).
    pub params: Mutex<Vec<usize>>,
}

impl Node {
    /// A node of `kind` depending on `deps`.
    pub fn new(kind: NodeKind, deps: Vec<usize>) -> Arc<Node> {
        let n = Arc::new(Node {
            kind: Mutex::new(NodeKind::Empty),
            deps: Mutex::new(deps),
            params: Mutex::new(Vec::new()),
        });
        n.set_kind(kind);
        n
    }

    /// Replaces what the node does.
    pub fn set_kind(&self, kind: NodeKind) {
        let mut k = lock(&self.kind);
        *k = kind;
        let mut params = lock(&self.params);
        params.clear();
        if let NodeKind::Kernel(kn) = &*k {
            let base = kn.args.as_ptr() as usize;
            params.extend(kn.func.meta.host_args().map(|a| base + a.offset as usize));
        }
    }

    /// The node's handle.
    pub fn handle(self: &Arc<Node>) -> usize {
        Arc::as_ptr(self) as usize
    }
}

/// A graph: its nodes in creation order.
#[derive(Default)]
pub struct Graph {
    /// The nodes.
    pub nodes: Mutex<Vec<Arc<Node>>>,
}

impl Graph {
    /// The node of `handle` in this graph.
    pub fn node(&self, handle: usize) -> Option<Arc<Node>> {
        lock(&self.nodes)
            .iter()
            .find(|n| n.handle() == handle)
            .cloned()
    }

    /// Adds a node depending on `deps` (handles of this graph's nodes).
    pub fn add(&self, kind: NodeKind, deps: &[usize]) -> Result<Arc<Node>, HipError> {
        let mut nodes = lock(&self.nodes);
        if deps.iter().any(|d| !nodes.iter().any(|n| n.handle() == *d)) {
            return Err(err::INVALID_VALUE);
        }
        let n = Node::new(kind, deps.to_vec());
        nodes.push(n.clone());
        Ok(n)
    }

    /// A deep copy (child graph nodes own their graphs), with the map from
    /// this graph's node handles to the copy's.
    pub fn deep_clone(&self) -> (Arc<Graph>, HashMap<usize, usize>) {
        let nodes = lock(&self.nodes);
        let mut map = HashMap::new();
        let mut out = Vec::with_capacity(nodes.len());
        for n in nodes.iter() {
            let kind = match &*lock(&n.kind) {
                NodeKind::Child(g) => NodeKind::Child(g.deep_clone().0),
                k => k.clone(),
            };
            let deps = lock(&n.deps).clone();
            let c = Node::new(kind, deps);
            map.insert(n.handle(), c.handle());
            out.push(c);
        }
        for c in &out {
            let mut d = lock(&c.deps);
            for h in d.iter_mut() {
                *h = map[h];
            }
        }
        (
            Arc::new(Graph {
                nodes: Mutex::new(out),
            }),
            map,
        )
    }

    /// The nodes in an order where each comes after its dependencies
    /// (creation order where that already holds); an error on a cycle.
    pub fn topo_order(&self) -> Result<Vec<Arc<Node>>, HipError> {
        let nodes = lock(&self.nodes).clone();
        let index: HashMap<usize, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.handle(), i))
            .collect();
        let mut state = vec![0u8; nodes.len()];
        let mut out = Vec::with_capacity(nodes.len());
        fn visit(
            i: usize,
            nodes: &[Arc<Node>],
            index: &HashMap<usize, usize>,
            state: &mut [u8],
            out: &mut Vec<Arc<Node>>,
        ) -> Result<(), HipError> {
            match state[i] {
                2 => return Ok(()),
                1 => return Err(err::INVALID_VALUE),
                _ => {}
            }
            state[i] = 1;
            for d in lock(&nodes[i].deps).iter() {
                let j = *index.get(d).ok_or(err::INVALID_VALUE)?;
                visit(j, nodes, index, state, out)?;
            }
            state[i] = 2;
            out.push(nodes[i].clone());
            Ok(())
        }
        for i in 0..nodes.len() {
            visit(i, &nodes, &index, &mut state, &mut out)?;
        }
        Ok(out)
    }
}

/// An executable graph: the steps a launch submits, in order, each with
/// the handle of the node it came from (child graphs flattened, their
/// nodes under the handles of the instantiated graph's own copy).
pub struct Exec {
    /// `(node handle in the source graph, what to do)`; child graph nodes
    /// contribute their own nodes' steps.
    pub steps: Mutex<Vec<(usize, NodeKind)>>,
}

impl Exec {
    /// Instantiates `g`.
    pub fn new(g: &Graph) -> Result<Exec, HipError> {
        Ok(Exec {
            steps: Mutex::new(steps_of(g)?),
        })
    }
}

/// The steps of `g`, in dependency order, child graphs expanded in place.
pub fn steps_of(g: &Graph) -> Result<Vec<(usize, NodeKind)>, HipError> {
    let mut out = Vec::new();
    for n in g.topo_order()? {
        let kind = lock(&n.kind).clone();
        match kind {
            NodeKind::Child(c) => out.extend(steps_of(&c)?),
            k => out.push((n.handle(), k)),
        }
    }
    Ok(out)
}

/// The argument segment of a kernel node, from `kernelParams` (one
/// pointer per host argument) or an `extra` buffer, as a launch packs it.
pub fn kernarg_bytes(args: &KernArgs) -> Vec<u8> {
    let n = args.len();
    // SAFETY: `as_ptr` points at `len` initialised bytes of the segment.
    unsafe { std::slice::from_raw_parts(args.as_ptr().cast::<u8>(), n) }.to_vec()
}

// ------------------------------------------------------------ the runtime's side

/// A stream capture in progress: the graph being built and the nodes the
/// next captured work depends on.
pub struct Capture {
    /// The graph captured into.
    pub graph: Arc<Graph>,
    /// Its handle.
    pub graph_handle: usize,
    /// The nodes the next one depends on (the last captured).
    pub last: Vec<usize>,
    /// The capture's id (`hipStreamGetCaptureInfo`).
    pub id: u64,
}

/// The runtime's graph state: every live graph, node and executable
/// graph by handle, and the captures in progress by stream.
#[derive(Default)]
pub struct Registry {
    graphs: Mutex<HashMap<usize, Arc<Graph>>>,
    nodes: Mutex<HashMap<usize, Arc<Node>>>,
    execs: Mutex<HashMap<usize, Arc<Exec>>>,
    captures: Mutex<HashMap<usize, Capture>>,
    /// Captures in progress: checked before the map, so that issuing work
    /// costs one atomic load when nothing is captured.
    capturing: std::sync::atomic::AtomicUsize,
    next_id: std::sync::atomic::AtomicU64,
}

use crate::runtime::{Runtime, Target};
use crate::stream::{Captured, Op};
use std::sync::atomic::Ordering;

impl Runtime {
    fn reg(&self) -> &Registry {
        &self.graphs
    }

    /// Registers `g` and its nodes (child graphs' too); returns its handle.
    pub fn register_graph(&self, g: Arc<Graph>) -> usize {
        let h = Arc::as_ptr(&g) as usize;
        for n in lock(&g.nodes).iter() {
            self.register_node(n);
        }
        lock(&self.reg().graphs).insert(h, g);
        h
    }

    fn register_node(&self, n: &Arc<Node>) {
        if let NodeKind::Child(c) = &*lock(&n.kind) {
            self.register_graph(c.clone());
        }
        lock(&self.reg().nodes).insert(n.handle(), n.clone());
    }

    /// The graph of a handle.
    pub fn graph(&self, h: usize) -> Result<Arc<Graph>, HipError> {
        lock(&self.reg().graphs)
            .get(&h)
            .cloned()
            .ok_or(err::INVALID_VALUE)
    }

    /// The node of a handle.
    pub fn node(&self, h: usize) -> Result<Arc<Node>, HipError> {
        lock(&self.reg().nodes)
            .get(&h)
            .cloned()
            .ok_or(err::INVALID_VALUE)
    }

    /// Adds a node to graph `g` and registers it.
    pub fn add_node(&self, g: usize, kind: NodeKind, deps: &[usize]) -> Result<usize, HipError> {
        let n = self.graph(g)?.add(kind, deps)?;
        self.register_node(&n);
        Ok(n.handle())
    }

    /// `hipGraphDestroy`: the graph, its nodes and child graphs.
    pub fn destroy_graph(&self, h: usize) -> Result<(), HipError> {
        let g = lock(&self.reg().graphs)
            .remove(&h)
            .ok_or(err::INVALID_VALUE)?;
        for n in lock(&g.nodes).iter() {
            lock(&self.reg().nodes).remove(&n.handle());
            if let NodeKind::Child(c) = &*lock(&n.kind) {
                let _ = self.destroy_graph(Arc::as_ptr(c) as usize);
            }
        }
        Ok(())
    }

    /// `hipGraphInstantiate`.
    pub fn instantiate(&self, g: usize) -> Result<usize, HipError> {
        let e = Arc::new(Exec::new(&*self.graph(g)?)?);
        let h = Arc::as_ptr(&e) as usize;
        lock(&self.reg().execs).insert(h, e);
        Ok(h)
    }

    /// The executable graph of a handle.
    pub fn exec(&self, h: usize) -> Result<Arc<Exec>, HipError> {
        lock(&self.reg().execs)
            .get(&h)
            .cloned()
            .ok_or(err::INVALID_VALUE)
    }

    /// `hipGraphExecDestroy`.
    pub fn destroy_exec(&self, h: usize) -> Result<(), HipError> {
        lock(&self.reg().execs)
            .remove(&h)
            .map(|_| ())
            .ok_or(err::INVALID_VALUE)
    }

    /// `hipGraphExecUpdate`: the executable graph takes `g`'s parameters
    /// when `g` has its shape (as many steps, of the same types, in the same
    /// order); else the `hipGraphExecUpdateResult` saying why not.
    pub fn exec_update(&self, e: usize, g: usize) -> Result<Result<(), i32>, HipError> {
        let exec = self.exec(e)?;
        let new = steps_of(&*self.graph(g)?)?;
        let mut steps = lock(&exec.steps);
        if new.len() != steps.len() {
            return Ok(Err(hip_api::graph::update_result::TOPOLOGY_CHANGED));
        }
        if new
            .iter()
            .zip(steps.iter())
            .any(|(a, b)| a.1.node_type() != b.1.node_type())
        {
            return Ok(Err(hip_api::graph::update_result::NODE_TYPE_CHANGED));
        }
        *steps = new;
        Ok(Ok(()))
    }

    /// Sets the parameters of the step of node `node` in executable graph `e`
    /// (`hipGraphExec*NodeSetParams`); the node type must not change.
    pub fn exec_set(&self, e: usize, node: usize, kind: NodeKind) -> Result<(), HipError> {
        let exec = self.exec(e)?;
        let mut steps = lock(&exec.steps);
        let step = steps
            .iter_mut()
            .find(|(h, _)| *h == node)
            .ok_or(err::INVALID_VALUE)?;
        if step.1.node_type() != kind.node_type() {
            return Err(err::INVALID_VALUE);
        }
        step.1 = kind;
        Ok(())
    }

    /// `hipGraphLaunch`: every step, in order, submitted to `stream`.
    pub fn launch_graph(&self, e: usize, stream: usize) -> Result<(), HipError> {
        let exec = self.exec(e)?;
        if self.is_capturing(stream) {
            // Launching a graph into a capture (a child graph node) is not
            // supported by this runtime.
            return Err(err::STREAM_CAPTURE_UNSUPPORTED);
        }
        let target = self.target(stream)?;
        let steps = lock(&exec.steps).clone();
        for (_, kind) in steps {
            match kind {
                NodeKind::Kernel(k) => {
                    let mut ka = KernArgs::zeroed(k.args.len());
                    ka.bytes_mut().copy_from_slice(&k.args);
                    // SAFETY: the segment was packed per the kernel's metadata
                    // when the node was made.
                    let op = unsafe {
                        Op::launch(crate::stream::LaunchOp {
                            func: k.func,
                            handle: k.handle,
                            grid: k.grid,
                            block: k.block,
                            shmem: k.shmem as usize,
                            args: ka,
                        })
                    };
                    self.submit(&target, op)?;
                }
                NodeKind::Memcpy(m) => {
                    for (dst, src, len) in m.rows()? {
                        self.check_copy(dst, src, len, crate::ffi::MEMCPY_DEFAULT)?;
                        // SAFETY: both operands checked against the live
                        // allocations (device) or the application's contract (host).
                        self.submit(&target, unsafe { Op::copy(dst, src, len) })?;
                    }
                }
                NodeKind::Memset(m) => {
                    let width = u8::try_from(m.element_size).map_err(|_| err::INVALID_VALUE)?;
                    if !matches!(width, 1 | 2 | 4) {
                        return Err(err::INVALID_VALUE);
                    }
                    for row in 0..m.height.max(1) {
                        let dst = m.dst + row * m.pitch;
                        self.check_fill(dst, m.width * width as usize)?;
                        // SAFETY: the row was checked to lie in a live allocation.
                        self.submit(&target, unsafe { Op::fill(dst, m.value, m.width, width) })?;
                    }
                }
                NodeKind::Host { func, data } => {
                    // SAFETY: the application's host node: `func(data)` is its contract.
                    self.submit(&target, unsafe { Op::host(func, data) })?;
                }
                NodeKind::Child(_) => unreachable!("child graphs are flattened at instantiation"),
                NodeKind::Empty => {}
                NodeKind::EventRecord(ev) => self.record_event(ev, stream)?,
                NodeKind::EventWait(ev) => self.stream_wait_event(stream, ev)?,
            }
        }
        Ok(())
    }

    // -------------------------------------------------------- stream capture

    /// Whether stream `h` is capturing.
    pub fn is_capturing(&self, h: usize) -> bool {
        self.reg().capturing.load(Ordering::Acquire) > 0
            && lock(&self.reg().captures).contains_key(&h)
    }

    /// `hipStreamBeginCapture`: only created streams can capture.
    pub fn begin_capture(&self, stream: usize) -> Result<(), HipError> {
        if !matches!(self.target(stream)?, Target::Stream(_)) {
            return Err(err::STREAM_CAPTURE_UNSUPPORTED);
        }
        let mut caps = lock(&self.reg().captures);
        if caps.contains_key(&stream) {
            return Err(err::ILLEGAL_STATE);
        }
        let g = Arc::new(Graph::default());
        let graph_handle = self.register_graph(g.clone());
        let id = self.reg().next_id.fetch_add(1, Ordering::Relaxed) + 1;
        caps.insert(
            stream,
            Capture {
                graph: g,
                graph_handle,
                last: Vec::new(),
                id,
            },
        );
        self.reg().capturing.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// `hipStreamEndCapture`: the graph captured.
    pub fn end_capture(&self, stream: usize) -> Result<usize, HipError> {
        let c = lock(&self.reg().captures)
            .remove(&stream)
            .ok_or(err::STREAM_CAPTURE_UNMATCHED)?;
        self.reg().capturing.fetch_sub(1, Ordering::AcqRel);
        Ok(c.graph_handle)
    }

    /// `(id, graph handle, (last nodes' array, its length))` of stream
    /// `h`'s capture, if any; the array is the capture's own, valid until
    /// the next work is captured on `h`.
    pub fn capture_info(&self, h: usize) -> Option<(u64, usize, (*const usize, usize))> {
        if self.reg().capturing.load(Ordering::Acquire) == 0 {
            return None;
        }
        lock(&self.reg().captures)
            .get(&h)
            .map(|c| (c.id, c.graph_handle, (c.last.as_ptr(), c.last.len())))
    }

    /// Appends `kind` to stream `stream`'s capture, after its last node.
    fn capture_node(&self, stream: usize, kind: NodeKind) -> Result<bool, HipError> {
        let mut caps = lock(&self.reg().captures);
        let Some(c) = caps.get_mut(&stream) else {
            return Ok(false);
        };
        let n = c.graph.add(kind, &c.last)?;
        c.last = vec![n.handle()];
        drop(caps);
        self.register_node(&n);
        Ok(true)
    }

    /// An event record or wait issued to `stream`: captured as a node when
    /// the stream is capturing (then `true`).
    pub fn capture_event(&self, stream: usize, kind: NodeKind) -> Result<bool, HipError> {
        if self.reg().capturing.load(Ordering::Acquire) == 0 {
            return Ok(false);
        }
        self.capture_node(stream, kind)
    }

    /// Work issued to `target`: `Some(op)` to run it, `None` when a capture
    /// took it as a node.
    pub fn capture_op(&self, target: &Target, op: Op) -> Result<Option<Op>, HipError> {
        if self.reg().capturing.load(Ordering::Acquire) == 0 {
            return Ok(Some(op));
        }
        let Target::Stream(s) = target else {
            return Ok(Some(op));
        };
        let h = Arc::as_ptr(s) as usize;
        if !lock(&self.reg().captures).contains_key(&h) {
            return Ok(Some(op));
        }
        let kind = match op.into_captured() {
            Captured::Copy { dst, src, len } => NodeKind::Memcpy(MemcpyNode::linear(
                dst,
                src,
                len,
                crate::ffi::MEMCPY_DEFAULT,
            )),
            Captured::Fill {
                dst,
                value,
                count,
                width,
            } => NodeKind::Memset(MemsetNode {
                dst,
                value,
                element_size: u32::from(width),
                width: count,
                height: 1,
                pitch: 0,
            }),
            Captured::Launch(l) => NodeKind::Kernel(KernelNode {
                args: kernarg_bytes(&l.args),
                func: l.func,
                handle: l.handle,
                grid: l.grid,
                block: l.block,
                shmem: l.shmem as u32,
            }),
            Captured::Host { func, data } => NodeKind::Host { func, data },
            Captured::Event => return Err(err::STREAM_CAPTURE_UNSUPPORTED),
        };
        self.capture_node(h, kind)?;
        Ok(None)
    }
}
