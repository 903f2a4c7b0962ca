//! Executable graphs as recorded, for both families: each one's topology
//! (what its `graph_exec` event holds) and the index standing for each node
//! of the graph it was made from, kept for its launches (the host memory its
//! kernel nodes reach, [`Recorder::host_writes_before_graph_launch`]; the
//! host bytes its copy nodes read and write, [`Recorder::graph_launch`]) and
//! its node setters ([`Recorder::graph_node_set`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use hrr_core::graph::{GraphNode, NodeBlob, NodeOp};
use hrr_core::{Addr, Dir, Op};

use super::graph_walk::Walked;
use super::recorder::Recorder;

/// What the recorder knows of an executable graph.
#[derive(Default)]
pub struct ExecRecord {
    /// Its recorded topology.
    pub nodes: Vec<GraphNode>,
    /// The index in `nodes` standing for each node handle of its graph.
    pub index: HashMap<u64, u32>,
    /// The first index of the nodes each node handle became (see
    /// [`Walked::first`]).
    pub first: HashMap<u64, u32>,
    /// The ops of disabled nodes (`cuGraphNodeSetEnabled`), by index: the
    /// topology holds `empty` nodes in their place until they are enabled.
    pub disabled: HashMap<u32, NodeOp>,
    /// Device-to-host nodes upstream of a host node whose function runs
    /// through this library's trampoline: their bytes are those the
    /// trampoline read before the application's function ran (which may
    /// rewrite them), not those the launch left.
    pub snapshotted: HashSet<u32>,
    /// Device-to-host nodes upstream of a host node whose function does not
    /// run through the trampoline: what the launch left may be the host
    /// function's doing, which replay does not run, so it is not recorded
    /// (replay leaves such a node unchecked).
    pub unverifiable: HashSet<u32>,
}

impl From<Walked> for ExecRecord {
    fn from(w: Walked) -> Self {
        ExecRecord {
            nodes: w.nodes,
            index: w.index,
            first: w.first,
            ..ExecRecord::default()
        }
    }
}

/// The recorded executable graphs, by handle.
pub fn execs() -> MutexGuard<'static, HashMap<u64, ExecRecord>> {
    static EXECS: OnceLock<Mutex<HashMap<u64, ExecRecord>>> = OnceLock::new();
    EXECS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// The kernel node standing for a launch `op` (as `Recorder::launch_op`
/// reads a node's launch); `None` for any other op.
pub fn kernel_node(op: Op) -> Option<NodeOp> {
    match op {
        Op::Launch {
            name,
            code,
            func,
            grid,
            block,
            shmem,
            args,
            ..
        } => Some(NodeOp::Kernel {
            name,
            code,
            func,
            grid,
            block,
            shmem,
            args,
        }),
        _ => None,
    }
}

/// The host side of every copy node of `nodes` in direction `dir` (linear
/// or naming an array): (index, first byte, row and slice pitch, extent).
fn host_copies(
    nodes: &[GraphNode],
    dir: Dir,
) -> impl Iterator<Item = (u32, u64, [u64; 2], [u64; 3])> + '_ {
    nodes
        .iter()
        .enumerate()
        .filter_map(move |(i, n)| match n.op {
            NodeOp::Memcpy {
                dir: d,
                dst,
                src,
                size,
            } if d == dir => {
                let host = if dir == Dir::H2d { src } else { dst };
                Some((i as u32, host.0, [size, size], [size, 1, 1]))
            }
            NodeOp::MemcpyArray {
                dir: d,
                dst,
                dpitch,
                src,
                spitch,
                extent,
                ..
            } if d == dir => {
                let (host, pitch) = if dir == Dir::H2d {
                    (src, spitch)
                } else {
                    (dst, dpitch)
                };
                let packed = [extent[0], extent[0].saturating_mul(extent[1])];
                Some((i as u32, host.0, pitch.unwrap_or(packed), extent))
            }
            _ => None,
        })
}

/// The bytes of a host side's rows, packed: one read when they are back to
/// back, else row by row.
fn gather<'m>(
    read: &impl Fn(u64, u64) -> &'m [u8],
    ptr: u64,
    pitch: [u64; 2],
    [w, h, d]: [u64; 3],
) -> std::borrow::Cow<'m, [u8]> {
    if (h <= 1 || pitch[0] == w) && (d <= 1 || pitch[1] == w.saturating_mul(h)) {
        return read(ptr, w.saturating_mul(h).saturating_mul(d)).into();
    }
    let mut out = Vec::new();
    for z in 0..d {
        for y in 0..h {
            out.extend_from_slice(read(ptr + z * pitch[1] + y * pitch[0], w));
        }
    }
    out.into()
}

/// A copy node's host side: first byte, row and slice pitch, extent.
type HostSide = (u64, [u64; 2], [u64; 3]);

/// What graph host nodes snapshot: by the id of their trampoline, the host
/// sides of the device-to-host nodes upstream of them (in any executable
/// graph holding them); by host side, the bytes read at the last run of a
/// host node that snapshots it, until a launch's record takes them.
#[derive(Default)]
struct HostNodeSnaps {
    sides: HashMap<u64, Vec<HostSide>>,
    taken: HashMap<HostSide, Vec<u8>>,
}

fn snaps() -> MutexGuard<'static, HostNodeSnaps> {
    static SNAPS: OnceLock<Mutex<HostNodeSnaps>> = OnceLock::new();
    SNAPS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// A graph host node whose trampoline carries `id` is about to call the
/// application's function: the host sides of the device-to-host nodes
/// upstream of it (complete, as the node depends on them) are read now
/// (`read(address, length)`), before the function can change them.
pub fn host_node_runs<'m>(id: u64, read: impl Fn(u64, u64) -> &'m [u8]) {
    let mut s = snaps();
    let Some(sides) = s.sides.get(&id).cloned() else {
        return;
    };
    for side @ (ptr, pitch, extent) in sides {
        let bytes = gather(&read, ptr, pitch, extent).into_owned();
        s.taken.insert(side, bytes);
    }
}

/// Every node `i` depends on, directly or not.
fn ancestors(nodes: &[GraphNode], i: usize) -> HashSet<u32> {
    let mut seen = HashSet::new();
    let mut todo: Vec<u32> = nodes[i].deps.clone();
    while let Some(d) = todo.pop() {
        if seen.insert(d)
            && let Some(n) = nodes.get(d as usize)
        {
            todo.extend(&n.deps);
        }
    }
    seen
}

/// The aligned 8-byte words of the arguments of every kernel node of
/// `nodes`: what a graph launch's kernels may use as pointers.
fn kernel_words(nodes: &[GraphNode]) -> Vec<u64> {
    nodes
        .iter()
        .filter_map(|n| match &n.op {
            NodeOp::Kernel { args, .. } => Some(args),
            _ => None,
        })
        .flatten()
        .flat_map(|a| a.hex.0.chunks_exact(8))
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
        .collect()
}

impl Recorder {
    /// The host nodes of `rec` (their trampolines' ids, in list order;
    /// `None` for a function that does not run through one): each one's
    /// upstream device-to-host nodes are snapshotted by its trampoline, or
    /// — without one — not recorded, with a warning.
    pub fn graph_host_nodes(&self, api: &str, rec: &mut ExecRecord, host_ids: &[Option<u64>]) {
        let hosts: Vec<usize> = rec
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.op == NodeOp::Host)
            .map(|(i, _)| i)
            .collect();
        for (h, id) in hosts.into_iter().zip(host_ids) {
            self.host_node_fn(api, rec, h, *id);
        }
    }

    /// Host node `h` of `rec` runs the function whose trampoline id is `id`
    /// (`None`: not through a trampoline): its upstream device-to-host
    /// nodes are snapshotted by the trampoline, or not recorded.
    fn host_node_fn(&self, api: &str, rec: &mut ExecRecord, h: usize, id: Option<u64>) {
        let d2h: HashMap<u32, HostSide> = host_copies(&rec.nodes, Dir::D2h)
            .map(|(i, ptr, pitch, extent)| (i, (ptr, pitch, extent)))
            .collect();
        let upstream: Vec<u32> = ancestors(&rec.nodes, h)
            .into_iter()
            .filter(|i| d2h.contains_key(i))
            .collect();
        match id {
            Some(id) => {
                let mut s = snaps();
                let sides = s.sides.entry(id).or_default();
                for i in &upstream {
                    if !sides.contains(&d2h[i]) {
                        sides.push(d2h[i]);
                    }
                }
                rec.snapshotted.extend(upstream);
            }
            None => {
                for i in &upstream {
                    self.warn(&format!(
                        "{api}: device-to-host node {i} comes before a host function this library could not wrap: its bytes are not recorded"
                    ));
                }
                rec.unverifiable.extend(upstream);
            }
        }
        rec.snapshotted.retain(|i| !rec.unverifiable.contains(i));
    }

    /// A host node setter the runtime accepted on executable graph `exec`:
    /// host node `node` now runs the function whose trampoline id is `id`
    /// (`None`: not through a trampoline), which snapshots the device-to-host
    /// nodes upstream of it as the instantiation's did (see
    /// [`Recorder::graph_host_nodes`]). The topology is unchanged.
    pub fn graph_host_node_set(&self, api: &'static str, exec: u64, node: u64, id: Option<u64>) {
        let mut execs = execs();
        let Some((rec, _, i)) = self.exec_span(api, &mut execs, exec, node) else {
            return;
        };
        if rec.nodes[i as usize].op == NodeOp::Host {
            self.host_node_fn(api, rec, i as usize, id);
        }
    }

    /// Executable graph `exec`, made from `graph`, read back as `rec`
    /// (`host_nodes` of its nodes run host functions): a warning for those
    /// and for each node recorded as `unsupported`, the `graph_exec` event,
    /// and the record kept for its launches and setters.
    pub fn graph_exec(&self, api: &str, exec: u64, graph: u64, host_nodes: usize, rec: ExecRecord) {
        if host_nodes > 0 {
            self.warn(&format!(
                "{api}: graph {graph:#x} has {host_nodes} host node(s): host functions are not replayed, an empty node keeps their place"
            ));
        }
        for n in &rec.nodes {
            if let NodeOp::Unsupported { what } = &n.op {
                self.warn(&format!(
                    "{api}: graph {graph:#x}: {what}: not recorded; replay refuses this graph"
                ));
            }
        }
        self.op(
            api,
            0,
            &Op::GraphExec {
                exec: Addr(exec),
                graph: Addr(graph),
                nodes: rec.nodes.clone(),
            },
        );
        execs().insert(exec, rec);
    }

    /// Before a launch of executable graph `exec` on `stream` (its id) is
    /// forwarded: records (`host_write`) the bytes the application changed
    /// in host memory its kernel nodes reach through their arguments, or
    /// always (managed memory), as before a plain launch; those ranges are
    /// then pending until `stream` is synchronised. An executable graph
    /// that was not recorded reaches managed memory only (its launch says
    /// it was not recorded). Callers check [`HostMemory::any`] first.
    ///
    /// [`HostMemory::any`]: super::host_memory::HostMemory::any
    #[cold]
    pub fn host_writes_before_graph_launch(&self, api: &str, exec: u64, stream: u64) {
        // Out of the table's lock: recording takes the host memory's.
        let words = execs()
            .get(&exec)
            .map(|rec| kernel_words(&rec.nodes))
            .unwrap_or_default();
        self.host_writes(api, stream, words.into_iter());
    }

    /// A node setter the runtime accepted: node `node` of executable graph
    /// `exec` is now `op`; recorded as the whole topology again
    /// (`graph_exec`; `true`), or lost with the reason when the graph or
    /// the node was not recorded (`false`).
    pub fn graph_node_set(&self, api: &'static str, exec: u64, node: u64, op: NodeOp) -> bool {
        let mut execs = execs();
        let Some((rec, _, i)) = self.exec_span(api, &mut execs, exec, node) else {
            return false;
        };
        // A disabled node takes its new parameters and stays disabled.
        match rec.disabled.get_mut(&i) {
            Some(kept) => *kept = op,
            None => rec.nodes[i as usize].op = op,
        }
        self.exec_changed(api, exec, &rec.nodes);
        true
    }

    /// The whole topology of `exec` again, after a change.
    fn exec_changed(&self, api: &str, exec: u64, nodes: &[GraphNode]) {
        self.op(
            api,
            0,
            &Op::GraphExec {
                exec: Addr(exec),
                graph: Addr(0),
                nodes: nodes.to_vec(),
            },
        );
    }

    /// The recorded executable graph `exec` and the span of nodes `node`
    /// became (`first..=standing`), or the loss recorded under `api`.
    fn exec_span<'e>(
        &self,
        api: &str,
        execs: &'e mut HashMap<u64, ExecRecord>,
        exec: u64,
        node: u64,
    ) -> Option<(&'e mut ExecRecord, u32, u32)> {
        let Some(rec) = execs.get_mut(&exec) else {
            self.lose(api, &format!("executable graph {exec:#x} was not recorded"));
            return None;
        };
        let Some(&i) = rec.index.get(&node) else {
            self.lose(
                api,
                &format!("node {node:#x} is not a recorded node of executable graph {exec:#x}"),
            );
            return None;
        };
        let first = rec.first.get(&node).copied().unwrap_or(i);
        Some((rec, first, i))
    }

    /// `cuGraphNodeSetEnabled` accepted: node `node` of `exec` (each node it
    /// became) is `empty` while disabled and its op again once enabled; the
    /// whole topology again when that changed it (`true`).
    pub fn graph_node_enabled(&self, api: &str, exec: u64, node: u64, enabled: bool) -> bool {
        let mut execs = execs();
        let Some((rec, first, last)) = self.exec_span(api, &mut execs, exec, node) else {
            return false;
        };
        let mut changed = false;
        for i in first..=last {
            let n = &mut rec.nodes[i as usize];
            if enabled {
                if let Some(op) = rec.disabled.remove(&i) {
                    n.op = op;
                    changed = true;
                }
            } else if !rec.disabled.contains_key(&i) && n.op != NodeOp::Empty {
                rec.disabled
                    .insert(i, std::mem::replace(&mut n.op, NodeOp::Empty));
                changed = true;
            }
        }
        if changed {
            self.exec_changed(api, exec, &rec.nodes);
        }
        changed
    }

    /// `cuGraphExecChildGraphNodeSetParams` accepted: the child graph node
    /// `node` of `exec` now runs the graph read back as `child`, whose
    /// topology the driver requires to be the one instantiated: its ops
    /// replace those of the nodes inlined for `node`, and the whole topology
    /// is recorded again (`true`). A child whose shape differs is recorded
    /// `unsupported`, which replay refuses.
    pub fn graph_child_set(&self, api: &str, exec: u64, node: u64, child: Walked) -> bool {
        let mut execs = execs();
        let Some((rec, first, last)) = self.exec_span(api, &mut execs, exec, node) else {
            return false;
        };
        // The inlined nodes are `first..last`; `last` is the child node's
        // own `empty` node.
        let inner = &mut rec.nodes[first as usize..last as usize];
        let same_shape = inner.len() == child.nodes.len()
            && inner.iter().zip(&child.nodes).all(|(old, new)| {
                // The child's roots took the child node's dependencies.
                let shifted: Vec<u32> = new.deps.iter().map(|d| d + first).collect();
                new.deps.is_empty() || old.deps == shifted
            });
        if same_shape {
            for (old, new) in inner.iter_mut().zip(child.nodes) {
                old.op = new.op;
            }
        } else {
            let what = "a child graph node set to a graph of another shape".to_string();
            self.warn(&format!(
                "{api}: executable graph {exec:#x}: {what}: not recorded; replay refuses this graph"
            ));
            rec.nodes[last as usize].op = NodeOp::Unsupported { what };
        }
        self.exec_changed(api, exec, &rec.nodes);
        true
    }

    /// A launch of executable graph `exec` on `stream` (its id) returned
    /// `ret` (`ok`: success): a `graph_launch` event with the bytes each
    /// host-to-device copy node reads (`read(address, length)`, now), then,
    /// after `sync()` has waited for the launch, those each device-to-host
    /// copy node wrote.
    #[allow(clippy::too_many_arguments)]
    pub fn graph_launch<'m>(
        &self,
        api: &'static str,
        (ret, ok): (i32, bool),
        exec: u64,
        stream: u64,
        read: impl Fn(u64, u64) -> &'m [u8],
        sync: impl FnOnce(),
    ) {
        if !self.recording() {
            return;
        }
        let mut blobs = Vec::new();
        if ok {
            let execs = execs();
            match execs.get(&exec) {
                None => self.warn(&format!(
                    "{api}: executable graph {exec:#x} was not recorded; its launch has no host data"
                )),
                Some(rec) => {
                    for (i, src, pitch, extent) in host_copies(&rec.nodes, Dir::H2d) {
                        let bytes = gather(&read, src, pitch, extent);
                        if let Some(blob) = self.blob(&format!("{api} h2d node"), &bytes) {
                            blobs.push(NodeBlob { node: i, blob });
                        }
                    }
                    let mut d2h = host_copies(&rec.nodes, Dir::D2h)
                        .filter(|(i, ..)| !rec.unverifiable.contains(i))
                        .peekable();
                    if d2h.peek().is_some() {
                        sync();
                        for (i, dst, pitch, extent) in d2h {
                            // Read before a host node downstream ran, when
                            // one did: what replay reproduces.
                            let taken = rec
                                .snapshotted
                                .contains(&i)
                                .then(|| snaps().taken.remove(&(dst, pitch, extent)))
                                .flatten();
                            let bytes = match taken {
                                Some(b) => b.into(),
                                None => gather(&read, dst, pitch, extent),
                            };
                            if let Some(blob) = self.blob(&format!("{api} d2h node"), &bytes) {
                                blobs.push(NodeBlob { node: i, blob });
                            }
                        }
                    }
                }
            }
        }
        blobs.sort_by_key(|b| b.node);
        self.op(
            api,
            ret,
            &Op::GraphLaunch {
                exec: Addr(exec),
                stream: Addr(stream),
                blobs,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::recorder::Closing;
    use crate::sink::event_sink::LockMode;
    use hrr_core::manifest::Platform;

    /// A copy of 8 bytes at `dst` to the host, then a host node.
    fn copy_then_host(dst: u64) -> Vec<GraphNode> {
        vec![
            GraphNode {
                op: NodeOp::Memcpy {
                    dir: Dir::D2h,
                    dst: Addr(dst),
                    src: Addr(0x7f00_0000_0000),
                    size: 8,
                },
                deps: vec![],
            },
            GraphNode {
                op: NodeOp::Host,
                deps: vec![0],
            },
        ]
    }

    #[test]
    fn d2h_nodes_before_a_host_node_are_its_snapshot_or_not_recorded() {
        let t = tempfile::tempdir().unwrap();
        let r = Recorder::create(
            t.path(),
            Platform::Nvidia,
            vec!["app".into()],
            Default::default(),
        )
        .unwrap();
        // Host memory: what the copies wrote at 0..8 and 8..16, and what the
        // host functions left (zeros) at 16..24.
        let mem: Vec<u8> = (1..=16).chain([0; 8]).collect();
        let (wrapped, unwrapped) = (0xe1a0_0001, 0xe1a0_0002);
        for (exec, dst, id) in [(wrapped, 0, Some(0x77)), (unwrapped, 8, None)] {
            let mut rec = ExecRecord {
                nodes: copy_then_host(dst),
                ..ExecRecord::default()
            };
            r.graph_host_nodes("cuGraphInstantiateWithFlags", &mut rec, &[id]);
            r.graph_exec("cuGraphInstantiateWithFlags", exec, 0x9, 1, rec);
        }
        // The wrapped host node runs: the trampoline reads the copy's bytes
        // before the application's function zeroes them.
        host_node_runs(0x77, |p, n| &mem[p as usize..(p + n) as usize]);
        let zeroed = |_: u64, n: u64| &mem[16..16 + n as usize];
        for exec in [wrapped, unwrapped] {
            r.graph_launch("cuGraphLaunch", (0, true), exec, 0, zeroed, || {});
        }
        r.finish("exit", LockMode::Block, Closing::default);
        let events: Vec<_> = hrr_core::archive::Archive::open(t.path())
            .unwrap()
            .events(Default::default())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let archive = hrr_core::archive::Archive::open(t.path()).unwrap();
        let blobs: Vec<Vec<Vec<u8>>> = events
            .iter()
            .filter_map(|e| match &e.op {
                Op::GraphLaunch { blobs, .. } => Some(
                    blobs
                        .iter()
                        .map(|b| archive.blobs().get(&b.blob).unwrap().to_vec())
                        .collect(),
                ),
                _ => None,
            })
            .collect();
        // The snapshot, not the zeros; and nothing for the copy before a
        // host function the library did not wrap.
        assert_eq!(blobs, [vec![(1..=8).collect::<Vec<u8>>()], vec![]]);
    }
}
