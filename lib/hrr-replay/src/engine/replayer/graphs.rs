//! Graph events: `graph_exec` keeps an executable graph's recorded
//! topology; `graph_launch` rebuilds it with live operands (pointers and
//! kernel arguments translated as for launches, host copy nodes through
//! buffers the engine keeps per graph), launches it through the device's
//! graph API (or node by node with `--no-graphs`), and checks its
//! device-to-host nodes like D2H copies.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use hrr_core::event::{Dir, Event, Op};
use hrr_core::graph::{GraphNode, NodeBlob, NodeOp, check_topology};
use hrr_core::hex::{Addr, BlobId};

use super::Replayer;
use crate::device::{Launch, LaunchArg};
use crate::engine::error::{EventFailure, Operand, ReplayError};
use crate::engine::launch_check;
use crate::graph::{GraphNodeSpec, GraphSpec, HostRange, NodeSpec};

/// One executable graph of the capture.
struct ExecState {
    nodes: Vec<GraphNode>,
    /// Host buffers of its host copy nodes (and wide memset patterns), by
    /// recorded node index; kept in place while the graph may be launched.
    host: HashMap<u32, Box<[u8]>>,
    /// The id of the graph last launched, released when it changes.
    launched: Option<u64>,
}

/// The executable graphs of a replay, by recorded handle.
#[derive(Default)]
pub(in crate::engine) struct Graphs {
    execs: HashMap<u64, ExecState>,
    /// Host nodes warned about, once per graph.
    host_warned: std::collections::HashSet<u64>,
}

/// A spec node under construction: its operation, with kernel arguments
/// held by index into the launch's argument buffers.
enum Pending {
    Kernel {
        func: u64,
        grid: [u32; 3],
        block: [u32; 3],
        shmem: u32,
        args: usize,
    },
    Ready(NodeSpec<'static>),
}

impl Replayer<'_> {
    /// `graph_exec`: an executable graph made or changed.
    pub(super) fn graph_exec(
        &mut self,
        e: &Event,
        exec: Addr,
        nodes: &[GraphNode],
    ) -> Result<(), ReplayError> {
        check_topology(nodes)
            .map_err(|err| Self::fatal(e, EventFailure::Graph(err.to_string())))?;
        if let Some(old) = self.graphs.execs.remove(&exec.0) {
            self.release_graph(e, old)?;
        }
        self.graphs.execs.insert(
            exec.0,
            ExecState {
                nodes: nodes.to_vec(),
                host: HashMap::new(),
                launched: None,
            },
        );
        Ok(())
    }

    /// `graph_exec_destroy`.
    pub(super) fn graph_exec_destroy(&mut self, e: &Event, exec: Addr) -> Result<(), ReplayError> {
        if let Some(old) = self.graphs.execs.remove(&exec.0) {
            self.release_graph(e, old)?;
        }
        Ok(())
    }

    /// Releases every graph the device built (teardown: `--loop` starts clean).
    pub(super) fn release_graphs(&mut self) {
        for (_, st) in self.graphs.execs.drain() {
            if let Some(id) = st.launched {
                let _ = self.dev.graph_release(id);
            }
        }
    }

    fn release_graph(&mut self, e: &Event, old: ExecState) -> Result<(), ReplayError> {
        if let Some(id) = old.launched {
            self.dev.graph_release(id).map_err(Self::dev_err(e))?;
        }
        Ok(())
    }

    /// `graph_launch`: rebuilds, launches and checks.
    pub(super) fn graph_launch(
        &mut self,
        e: &Event,
        exec: Addr,
        stream: Addr,
        blobs: &[NodeBlob],
    ) -> Result<(), ReplayError> {
        let stream = self.stream(e, Some(stream))?.unwrap_or(0);
        let mut st = self.graphs.execs.remove(&exec.0).ok_or_else(|| {
            Self::fatal(
                e,
                EventFailure::Graph(format!("executable graph {exec} was never instantiated")),
            )
        })?;
        let r = self.graph_launch_of(e, exec, &mut st, stream, blobs);
        self.graphs.execs.insert(exec.0, st);
        r
    }

    fn graph_launch_of(
        &mut self,
        e: &Event,
        exec: Addr,
        st: &mut ExecState,
        stream: u64,
        blobs: &[NodeBlob],
    ) -> Result<(), ReplayError> {
        let graph_err = |msg: String| Self::fatal(e, EventFailure::Graph(msg));
        let blob_of: HashMap<u32, BlobId> = blobs.iter().map(|b| (b.node, b.blob)).collect();
        for b in blobs {
            if hrr_core::graph::host_copy_dir(&st.nodes, b.node).is_none() {
                return Err(graph_err(format!(
                    "a blob for node {}, which is no host copy node",
                    b.node
                )));
            }
        }
        // Operands first (every translation can fail), then the spec.
        let mut pending: Vec<(Pending, Vec<u32>)> = Vec::with_capacity(st.nodes.len());
        // Spec index standing for each recorded node (a multi-row memset
        // becomes several nodes and a join).
        let mut last: Vec<u32> = Vec::with_capacity(st.nodes.len());
        let mut kernargs: Vec<Vec<u8>> = Vec::new();
        let mut d2h: Vec<(u32, Option<BlobId>)> = Vec::new();
        let archive = self.archive;
        for (i, n) in st.nodes.iter().enumerate() {
            let i = i as u32;
            let deps: Vec<u32> = n.deps.iter().map(|d| last[*d as usize]).collect();
            let push = |p: Pending, deps: Vec<u32>, pending: &mut Vec<(Pending, Vec<u32>)>| {
                pending.push((p, deps));
                (pending.len() - 1) as u32
            };
            let at = match &n.op {
                NodeOp::Kernel {
                    name,
                    code,
                    grid,
                    block,
                    shmem,
                    args,
                    ..
                } => {
                    let platform = self.archive.manifest().platform;
                    launch_check::check_launch_grid(platform, *grid, *block)
                        .map_err(|why| Self::fatal(e, why))?;
                    let (offsets, end) =
                        launch_check::kernarg_layout(args).map_err(|why| Self::fatal(e, why))?;
                    let func = self
                        .code
                        .function(self.dev, *code, name, |id| {
                            archive.blobs().get(id).map(|b| b.to_vec())
                        })
                        .map_err(|source| {
                            let name = name.to_string();
                            Self::fatal(e, EventFailure::Kernel { name, source })
                        })?;
                    let mut kernarg = vec![0u8; end];
                    // An untranslatable pointer is fatal, as for a launch.
                    self.translate_args(e, args, &offsets, &mut kernarg)?;
                    kernargs.push(kernarg);
                    push(
                        Pending::Kernel {
                            func,
                            grid: *grid,
                            block: *block,
                            shmem: *shmem,
                            args: kernargs.len() - 1,
                        },
                        deps,
                        &mut pending,
                    )
                }
                NodeOp::Memcpy {
                    dir,
                    dst,
                    src,
                    size,
                } => {
                    let spec = match dir {
                        Dir::H2d => {
                            let live = self.device_operand(e, Operand::H2dDst, *dst, *size)?;
                            let id = blob_of.get(&i).ok_or_else(|| {
                                graph_err(format!("h2d node {i} has no source blob at this launch"))
                            })?;
                            let bytes = self
                                .blobs
                                .get(archive.blobs(), id)
                                .map_err(|err| Self::fatal(e, err))?;
                            if bytes.len() as u64 != *size {
                                let len = bytes.len() as u64;
                                return Err(Self::fatal(
                                    e,
                                    EventFailure::BlobSize {
                                        id: *id,
                                        len,
                                        size: *size,
                                    },
                                ));
                            }
                            let buf = st
                                .host
                                .entry(i)
                                .or_insert_with(|| vec![0u8; *size as usize].into_boxed_slice());
                            buf.copy_from_slice(&bytes);
                            NodeSpec::H2d {
                                dst: live,
                                src: HostRange::of(&mut buf[..]),
                            }
                        }
                        Dir::D2h => {
                            let live = self.device_operand(e, Operand::D2hSrc, *src, *size)?;
                            let buf = st
                                .host
                                .entry(i)
                                .or_insert_with(|| vec![0u8; *size as usize].into_boxed_slice());
                            d2h.push((i, blob_of.get(&i).copied()));
                            NodeSpec::D2h {
                                dst: HostRange::of(&mut buf[..]),
                                src: live,
                            }
                        }
                        Dir::D2d => NodeSpec::D2d {
                            dst: self.device_operand(e, Operand::D2dDst, *dst, *size)?,
                            src: self.device_operand(e, Operand::D2dSrc, *src, *size)?,
                            size: *size,
                        },
                        // Host to host touches no device state.
                        Dir::H2h => NodeSpec::Empty,
                    };
                    push(Pending::Ready(spec), deps, &mut pending)
                }
                NodeOp::Memset {
                    dst,
                    value,
                    size,
                    width,
                    rows,
                    pitch,
                } => {
                    if !matches!(width, 1 | 2 | 4) || (*rows > 1 && *pitch < *size) {
                        return Err(graph_err(format!(
                            "memset node {i}: width {width}, {rows} rows of {size} bytes {pitch} apart"
                        )));
                    }
                    let mut row_nodes = Vec::new();
                    for r in 0..(*rows).max(1) {
                        let row = Addr(dst.0.wrapping_add(r * pitch));
                        let live = self.device_operand(e, Operand::MemsetDst, row, *size)?;
                        let spec = if *width == 1 {
                            NodeSpec::Memset {
                                dst: live,
                                value: *value as u8,
                                size: *size,
                            }
                        } else {
                            // A wider pattern: a copy from a pattern buffer.
                            let pattern = value.to_le_bytes();
                            let w = usize::from(*width);
                            let buf = st.host.entry(i).or_insert_with(|| {
                                (0..*size as usize).map(|k| pattern[k % w]).collect()
                            });
                            NodeSpec::H2d {
                                dst: live,
                                src: HostRange::of(&mut buf[..]),
                            }
                        };
                        row_nodes.push(push(Pending::Ready(spec), deps.clone(), &mut pending));
                    }
                    if row_nodes.len() == 1 {
                        row_nodes[0]
                    } else {
                        push(Pending::Ready(NodeSpec::Empty), row_nodes, &mut pending)
                    }
                }
                NodeOp::MemcpyArray {
                    dir,
                    dst,
                    dpitch,
                    dpos,
                    src,
                    spitch,
                    spos,
                    extent,
                } => {
                    let spec = self.array_node(
                        e,
                        i,
                        (&mut st.host, &blob_of, &mut d2h),
                        *dir,
                        ((*dst, *dpitch, *dpos), (*src, *spitch, *spos)),
                        *extent,
                    )?;
                    push(Pending::Ready(spec), deps, &mut pending)
                }
                NodeOp::Empty => push(Pending::Ready(NodeSpec::Empty), deps, &mut pending),
                NodeOp::EventRecord { event } | NodeOp::EventWait { event } => {
                    let ev = self
                        .events
                        .get(event.0)
                        .ok_or_else(|| Self::fatal(e, EventFailure::UnknownEvent(*event)))?;
                    let spec = if matches!(n.op, NodeOp::EventRecord { .. }) {
                        NodeSpec::EventRecord(ev)
                    } else {
                        NodeSpec::EventWait(ev)
                    };
                    push(Pending::Ready(spec), deps, &mut pending)
                }
                NodeOp::Host => {
                    if self.graphs.host_warned.insert(exec.0) {
                        self.summary.warnings.push(format!(
                            "event {} ({}): graph {exec} has a host node (node {i}): host functions are not replayed",
                            e.seq, e.api
                        ));
                    }
                    push(Pending::Ready(NodeSpec::Empty), deps, &mut pending)
                }
                NodeOp::Unsupported { what } => {
                    return Err(graph_err(format!(
                        "node {i} ({what}) was not recorded; this graph cannot be replayed"
                    )));
                }
            };
            last.push(at);
        }
        // Every argument buffer is in place: the spec borrows them.
        let launch_args: Vec<[LaunchArg<'_>; 1]> = kernargs
            .iter()
            .map(|k| {
                [LaunchArg {
                    offset: 0,
                    bytes: k,
                }]
            })
            .collect();
        let nodes: Vec<GraphNodeSpec<'_>> = pending
            .into_iter()
            .map(|(p, deps)| GraphNodeSpec {
                op: match p {
                    Pending::Kernel {
                        func,
                        grid,
                        block,
                        shmem,
                        args,
                    } => NodeSpec::Kernel(Launch {
                        event: e.seq,
                        func,
                        grid,
                        block,
                        shmem,
                        stream,
                        args: &launch_args[args],
                        attrs: &[],
                    }),
                    Pending::Ready(s) => s,
                },
                deps,
            })
            .collect();
        let id = spec_id(exec.0, &nodes);
        if let Some(old) = st.launched.filter(|old| *old != id) {
            self.dev.graph_release(old).map_err(Self::dev_err(e))?;
        }
        st.launched = Some(id);
        let spec = GraphSpec { id, nodes: &nodes };
        let r = if self.opts.no_graphs {
            crate::graph::run_in_order(self.dev, &spec, stream)
        } else {
            self.dev.graph_launch(&spec, stream)
        };
        r.map_err(Self::dev_err(e))?;
        self.summary.launches += nodes
            .iter()
            .filter(|n| matches!(n.op, NodeSpec::Kernel(_)))
            .count() as u64;
        drop(nodes);
        if d2h.is_empty() {
            return Ok(());
        }
        // The device-to-host nodes' bytes, once the launch has completed.
        self.dev.stream_sync(stream).map_err(Self::dev_err(e))?;
        let mut written = Vec::new();
        for (i, expected) in d2h {
            let actual = &st.host[&i];
            if let Some(out) = self.out.as_deref_mut() {
                written.push(NodeBlob {
                    node: i,
                    blob: out.put_blob(actual)?,
                });
            }
            self.check_bytes(e, Some(i), expected, actual)?;
        }
        if let Some(out) = self.out.as_deref_mut() {
            let mut rec = e.clone();
            if let Op::GraphLaunch { blobs, .. } = &mut rec.op {
                *blobs = written;
            }
            out.append_timed(&rec, None)?;
            // On disk at once, as a D2H copy's line (`check_d2h`).
            out.flush()?;
        }
        Ok(())
    }
}

/// One side of a recorded array copy: handle or first byte, pitches of a
/// linear side, position in an array.
type RecordedSide = (Addr, Option<[u64; 2]>, Option<[u64; 3]>);

/// What a graph launch keeps per node: host buffers (by recorded node
/// index), the launch's blobs, and the device-to-host nodes to check.
type LaunchBufs<'a> = (
    &'a mut HashMap<u32, Box<[u8]>>,
    &'a HashMap<u32, BlobId>,
    &'a mut Vec<(u32, Option<BlobId>)>,
);

impl Replayer<'_> {
    /// An array copy node `i` with live sides, its host side (if any) an
    /// engine buffer: filled from the launch's blob (`h2d`), or noted in
    /// `d2h` to be checked once the launch completed.
    fn array_node(
        &mut self,
        e: &Event,
        i: u32,
        (host_bufs, blob_of, d2h): LaunchBufs<'_>,
        dir: Dir,
        (dst, src): (RecordedSide, RecordedSide),
        extent: [u64; 3],
    ) -> Result<NodeSpec<'static>, ReplayError> {
        let graph_err = |msg: String| Self::fatal(e, EventFailure::Graph(msg));
        let len = hrr_core::event::rect_len(extent)
            .filter(|&n| usize::try_from(n).is_ok())
            .ok_or_else(|| {
                graph_err(format!("array copy node {i}: extent {extent:?} overflows"))
            })?;
        if len == 0 {
            return Ok(NodeSpec::Empty);
        }
        let (dst_dev, src_dev, droll, sroll) = match dir {
            Dir::H2d => (true, false, Operand::H2dDst, Operand::H2dDst),
            Dir::D2h => (false, true, Operand::D2hSrc, Operand::D2hSrc),
            Dir::D2d => (true, true, Operand::D2dDst, Operand::D2dSrc),
            Dir::H2h => return Ok(NodeSpec::Empty), // nothing reaches the device
        };
        let dst = self.array_side(e, dst, (dst_dev, droll), extent)?;
        let src = self.array_side(e, src, (src_dev, sroll), extent)?;
        let host = match dir {
            Dir::H2d => {
                let id = blob_of.get(&i).ok_or_else(|| {
                    graph_err(format!("h2d node {i} has no source blob at this launch"))
                })?;
                let bytes = self.source_blob(e, *id, len)?;
                let buf = host_bufs
                    .entry(i)
                    .or_insert_with(|| vec![0u8; len as usize].into_boxed_slice());
                buf.copy_from_slice(&bytes);
                Some(HostRange::of(&mut buf[..]))
            }
            Dir::D2h => {
                d2h.push((i, blob_of.get(&i).copied()));
                let buf = host_bufs
                    .entry(i)
                    .or_insert_with(|| vec![0u8; len as usize].into_boxed_slice());
                Some(HostRange::of(&mut buf[..]))
            }
            _ => None,
        };
        Ok(NodeSpec::Array {
            dst,
            src,
            extent,
            host,
        })
    }
}

/// An identity for a graph as it stands: its recorded handle, and every
/// node's operation and operands (live addresses, arguments, host buffer
/// addresses), so that a change of any makes a new graph.
fn spec_id(exec: u64, nodes: &[GraphNodeSpec<'_>]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    exec.hash(&mut h);
    for n in nodes {
        n.deps.hash(&mut h);
        match &n.op {
            NodeSpec::Kernel(l) => {
                (0u8, l.func, l.grid, l.block, l.shmem).hash(&mut h);
                for a in l.args {
                    (a.offset, a.bytes).hash(&mut h);
                }
            }
            NodeSpec::H2d { dst, src } => (1u8, dst, src).hash(&mut h),
            NodeSpec::D2h { dst, src } => (2u8, dst, src).hash(&mut h),
            NodeSpec::D2d { dst, src, size } => (3u8, dst, src, size).hash(&mut h),
            NodeSpec::Memset { dst, value, size } => (4u8, dst, value, size).hash(&mut h),
            NodeSpec::Array {
                dst,
                src,
                extent,
                host,
            } => (8u8, dst, src, extent, host).hash(&mut h),
            NodeSpec::Empty => 5u8.hash(&mut h),
            NodeSpec::EventRecord(ev) => (6u8, ev).hash(&mut h),
            NodeSpec::EventWait(ev) => (7u8, ev).hash(&mut h),
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::address_space::AddressSpace;
    use crate::engine::mem_device::MemDevice;
    use crate::engine::options::ReplayOptions;
    use crate::engine::pinned_host::PinnedHost;
    use crate::engine::summary::ReplaySummary;
    use hrr_core::archive::Archive;
    use hrr_core::error_chain::chain;
    use hrr_core::graph::GraphNode;
    use hrr_core::manifest::Platform;
    use hrr_core::testkit::{ArchiveBuilder, ptr_arg};

    const DEV: u64 = 0x7f00_0000_0000;
    const EXEC: Addr = Addr(0xe0);

    fn node(op: NodeOp, deps: &[u32]) -> GraphNode {
        GraphNode {
            op,
            deps: deps.to_vec(),
        }
    }

    /// Upload 16 bytes, a kernel given the buffer, download them.
    fn graph(kernel_ptr: u64) -> Vec<GraphNode> {
        vec![
            node(
                NodeOp::Memcpy {
                    dir: Dir::H2d,
                    dst: Addr(DEV),
                    src: Addr(0x1000),
                    size: 16,
                },
                &[],
            ),
            node(
                NodeOp::Kernel {
                    name: "k".into(),
                    code: BlobId::of(b"code"),
                    func: None,
                    grid: [1, 1, 1],
                    block: [1, 1, 1],
                    shmem: 0,
                    args: vec![ptr_arg(kernel_ptr)],
                },
                &[0],
            ),
            node(
                NodeOp::Memcpy {
                    dir: Dir::D2h,
                    dst: Addr(0x2000),
                    src: Addr(DEV),
                    size: 16,
                },
                &[1],
            ),
        ]
    }

    fn archive(nodes: Vec<GraphNode>, data: &[u8], expected: &[u8]) -> ArchiveBuilder {
        ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 4096)
            .event(
                "hipModuleLoadData",
                Op::ModuleLoad {
                    module: Addr(1),
                    code: BlobId::of(b"code"),
                },
                vec![b"code".to_vec()],
            )
            .event(
                "hipGraphInstantiate",
                Op::GraphExec {
                    exec: EXEC,
                    graph: Addr(0xa0),
                    nodes,
                },
                vec![],
            )
            .event(
                "hipGraphLaunch",
                Op::GraphLaunch {
                    exec: EXEC,
                    stream: Addr(0),
                    blobs: vec![
                        NodeBlob {
                            node: 0,
                            blob: BlobId::of(data),
                        },
                        NodeBlob {
                            node: 2,
                            blob: BlobId::of(expected),
                        },
                    ],
                },
                vec![data.to_vec(), expected.to_vec()],
            )
    }

    fn run(b: ArchiveBuilder, no_graphs: bool) -> (MemDevice, ReplaySummary, Option<String>) {
        let t = tempfile::tempdir().unwrap();
        let a = Archive::open(b.write(t.path().join("a.hrr")).unwrap()).unwrap();
        let mut dev = MemDevice::new(false);
        dev.accept_code = true;
        let opts = ReplayOptions {
            no_graphs,
            ..ReplayOptions::default()
        };
        let mut pinned = PinnedHost::new(0);
        let (s, e) = Replayer::new(
            &mut dev,
            &a,
            &opts,
            AddressSpace::default(),
            None,
            &mut pinned,
        )
        .run(|_| {});
        (dev, s, e.map(|e| chain(&e).to_string()))
    }

    #[test]
    fn a_graph_uploads_its_launch_bytes_translates_and_checks_its_d2h_nodes() {
        let data: Vec<u8> = (0..16).collect();
        for no_graphs in [false, true] {
            let (dev, s, e) = run(archive(graph(DEV + 8), &data, &data), no_graphs);
            assert_eq!(e, None);
            assert_eq!((s.d2h_exact, s.d2h_fail, s.launches), (1, 0, 1));
            // The kernel got the live address of the recorded one.
            assert_eq!(dev.launches, [(0x1000_0000u64 + 8).to_le_bytes().to_vec()]);
        }
        // Bytes that differ from what the capture read back fail the check.
        let (_, s, e) = run(archive(graph(DEV), &data, &[9; 16]), false);
        assert_eq!(e, None);
        assert_eq!(s.d2h_fail, 1);
    }

    /// Upload 16 bytes into an 8×2 array, copy the array to device memory,
    /// download that and the array's last 4 bytes.
    fn array_archive(data: &[u8], expected: (&[u8], &[u8])) -> ArchiveBuilder {
        let a = Addr(0xa1);
        let whole =
            |dir, dst, dpos: Option<[u64; 3]>, src, spos: Option<[u64; 3]>| NodeOp::MemcpyArray {
                dir,
                dst,
                dpitch: dpos.is_none().then_some([8, 16]),
                dpos,
                src,
                spitch: spos.is_none().then_some([8, 16]),
                spos,
                extent: [8, 2, 1],
            };
        let nodes = vec![
            node(whole(Dir::H2d, a, Some([0; 3]), Addr(0x1000), None), &[]),
            node(whole(Dir::D2d, Addr(DEV), None, a, Some([0; 3])), &[0]),
            node(
                NodeOp::Memcpy {
                    dir: Dir::D2h,
                    dst: Addr(0x2000),
                    src: Addr(DEV),
                    size: 16,
                },
                &[1],
            ),
            node(
                NodeOp::MemcpyArray {
                    dir: Dir::D2h,
                    dst: Addr(0x3000),
                    dpitch: Some([4, 4]),
                    dpos: None,
                    src: a,
                    spitch: None,
                    spos: Some([4, 1, 0]),
                    extent: [4, 1, 1],
                },
                &[0],
            ),
        ];
        let blob = |node, b: &[u8]| NodeBlob {
            node,
            blob: BlobId::of(b),
        };
        ArchiveBuilder::new(Platform::Cpu)
            .alloc(DEV, 4096)
            .event(
                "cuArray3DCreate_v2",
                Op::ArrayCreate {
                    array: a,
                    format: 0x01,
                    channels: 1,
                    extent: [8, 2, 0],
                    flags: 0,
                },
                vec![],
            )
            .event(
                "cuGraphInstantiateWithFlags",
                Op::GraphExec {
                    exec: EXEC,
                    graph: Addr(0xa0),
                    nodes,
                },
                vec![],
            )
            .event(
                "cuGraphLaunch",
                Op::GraphLaunch {
                    exec: EXEC,
                    stream: Addr(0),
                    blobs: vec![blob(0, data), blob(2, expected.0), blob(3, expected.1)],
                },
                vec![data.to_vec(), expected.0.to_vec(), expected.1.to_vec()],
            )
    }

    #[test]
    fn array_copy_nodes_upload_copy_and_check_their_host_sides() {
        let data: Vec<u8> = (0..16).map(|i| 3 * i + 1).collect();
        for no_graphs in [false, true] {
            let (_, s, e) = run(array_archive(&data, (&data, &data[12..])), no_graphs);
            assert_eq!(e, None);
            assert_eq!((s.d2h_exact, s.d2h_fail), (2, 0));
        }
        // The array's bytes are what its node downloads: a wrong window fails.
        let (_, s, e) = run(array_archive(&data, (&data, &data[8..12])), false);
        assert_eq!(e, None);
        assert_eq!((s.d2h_exact, s.d2h_fail), (1, 1));
    }

    #[test]
    fn an_untranslatable_kernel_node_pointer_is_fatal() {
        let data = [1u8; 16];
        let (dev, _, e) = run(archive(graph(0x5000_0000), &data, &data), false);
        let e = e.expect("fatal");
        assert!(
            e.contains("event 3 (hipGraphLaunch)") && e.contains("not mapped"),
            "{e}"
        );
        assert!(dev.launches.is_empty(), "nothing ran");
    }

    #[test]
    fn bad_graphs_are_errors_naming_the_event_and_why() {
        let data = [1u8; 16];
        let mut nodes = graph(DEV);
        nodes[0].deps = vec![2];
        let (_, _, e) = run(archive(nodes, &data, &data), false);
        let e = e.expect("fatal");
        assert!(
            e.contains("event 2 (hipGraphInstantiate)")
                && e.contains("node 0 depends on node 2, which does not come before it"),
            "{e}"
        );
        let mut nodes = graph(DEV);
        nodes[1].op = NodeOp::Unsupported {
            what: "a copy from or to an array".into(),
        };
        let (_, _, e) = run(archive(nodes, &data, &data), false);
        assert!(
            e.expect("fatal")
                .contains("node 1 (a copy from or to an array) was not recorded"),
        );
        let b = ArchiveBuilder::new(Platform::Cpu).event(
            "hipGraphLaunch",
            Op::GraphLaunch {
                exec: EXEC,
                stream: Addr(0),
                blobs: vec![],
            },
            vec![],
        );
        let (_, _, e) = run(b, false);
        assert!(
            e.expect("fatal")
                .contains("executable graph 0xe0 was never instantiated")
        );
    }
}
