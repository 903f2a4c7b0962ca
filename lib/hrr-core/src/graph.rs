//! Recorded GPU graphs: the topology a `graph_exec` event holds (nodes,
//! each with its kind, parameters and dependencies) and the per-launch
//! blobs a `graph_launch` event carries.
//!
//! A graph is recorded flat: a child graph's nodes are inlined into its
//! parent (the child node becomes an `empty` node depending on the child's
//! nodes, and the child's root nodes take the child node's dependencies),
//! and nodes are listed so that every dependency comes before its
//! dependent. Node indices (`deps`, a launch blob's `node`) count from 0 in
//! that list.

use serde::{Deserialize, Serialize};

use crate::event::{Dir, KernelArg};
use crate::hex::{Addr, BlobId};

/// What one graph node does, with its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NodeOp {
    /// A kernel launch, with the fields of a `launch` event (the stream is
    /// the graph launch's).
    Kernel {
        /// The kernel's name.
        name: String,
        /// Its code object's blob.
        code: BlobId,
        /// The function handle, when the node named one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        func: Option<Addr>,
        /// Grid dimensions, in blocks.
        grid: [u32; 3],
        /// Block dimensions, in threads.
        block: [u32; 3],
        /// Dynamic shared memory, in bytes.
        #[serde(default)]
        shmem: u32,
        /// The arguments, pointers marked, as a launch's.
        args: Vec<KernelArg>,
    },
    /// A linear copy. An `h2d` node's source bytes and a `d2h` node's
    /// results are per launch: blobs of the `graph_launch` event.
    Memcpy {
        /// Its direction, resolved at capture.
        dir: Dir,
        /// Destination.
        dst: Addr,
        /// Source.
        src: Addr,
        /// Bytes.
        size: u64,
    },
    /// A memset of `rows` rows of `size` bytes, `pitch` bytes apart.
    Memset {
        /// Destination.
        dst: Addr,
        /// Pattern value.
        value: u32,
        /// Bytes per row.
        size: u64,
        /// Pattern element width in bytes (1, 2 or 4).
        #[serde(default = "one_u8", skip_serializing_if = "is_one_u8")]
        width: u8,
        /// Rows.
        #[serde(default = "one_u64", skip_serializing_if = "is_one_u64")]
        rows: u64,
        /// Bytes from one row's start to the next's.
        #[serde(default, skip_serializing_if = "is_zero")]
        pitch: u64,
    },
    /// A 2D/3D copy with an array on at least one side, in the geometry of
    /// a `memcpy_array` event: a side with a position is an array (its
    /// handle in `dst`/`src`), a side with pitches linear memory. The host
    /// side's packed bytes (an `h2d` node's source, a `d2h` node's result)
    /// are per launch: blobs of the `graph_launch` event.
    MemcpyArray {
        /// Its direction, an array counting as device memory.
        dir: Dir,
        /// First byte written, or the destination array.
        dst: Addr,
        /// Row and slice pitch of a linear destination.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dpitch: Option<[u64; 2]>,
        /// Position in a destination array: x in bytes, row, slice.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dpos: Option<[u64; 3]>,
        /// First byte read, or the source array.
        src: Addr,
        /// Row and slice pitch of a linear source.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        spitch: Option<[u64; 2]>,
        /// Position in a source array.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        spos: Option<[u64; 3]>,
        /// Width in bytes, rows, slices.
        extent: [u64; 3],
    },
    /// Nothing: a dependency point (also what a child graph node becomes).
    Empty,
    /// Records an event.
    EventRecord {
        /// The event.
        event: Addr,
    },
    /// Waits for an event.
    EventWait {
        /// The event.
        event: Addr,
    },
    /// A host function: not replayable (replay runs nothing for it, and
    /// says so).
    Host,
    /// A node the recorder could not record (a HIP copy from or to an
    /// array, a 3D copy, a symbol copy): replay refuses the graph.
    Unsupported {
        /// What it was, for the message.
        what: String,
    },
}

fn one_u8() -> u8 {
    1
}
fn one_u64() -> u64 {
    1
}
fn is_one_u8(v: &u8) -> bool {
    *v == 1
}
fn is_one_u64(v: &u64) -> bool {
    *v == 1
}
fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl NodeOp {
    /// The `kind` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            NodeOp::Kernel { .. } => "kernel",
            NodeOp::Memcpy { .. } => "memcpy",
            NodeOp::Memset { .. } => "memset",
            NodeOp::MemcpyArray { .. } => "memcpy_array",
            NodeOp::Empty => "empty",
            NodeOp::EventRecord { .. } => "event_record",
            NodeOp::EventWait { .. } => "event_wait",
            NodeOp::Host => "host",
            NodeOp::Unsupported { .. } => "unsupported",
        }
    }
}

/// One node of a recorded graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    /// What it does.
    #[serde(flatten)]
    pub op: NodeOp,
    /// The indices of the nodes it depends on, all smaller than its own.
    #[serde(default)]
    pub deps: Vec<u32>,
}

/// A blob of one node at one launch: an `h2d` node's source bytes, or a
/// `d2h` node's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeBlob {
    /// The node's index.
    pub node: u32,
    /// The bytes.
    pub blob: BlobId,
}

/// Why a recorded topology cannot be replayed as it stands.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TopologyError {
    /// A dependency that does not come before its node.
    #[error("node {node} depends on node {dep}, which does not come before it")]
    ForwardDep {
        /// The node.
        node: u32,
        /// Its dependency.
        dep: u32,
    },
    /// A launch blob naming no node, or one of the wrong kind.
    #[error("launch blob for node {node}: {reason}")]
    Blob {
        /// The node index given.
        node: u32,
        /// Why it does not fit.
        reason: &'static str,
    },
}

/// Checks that every dependency comes before its node.
pub fn check_topology(nodes: &[GraphNode]) -> Result<(), TopologyError> {
    for (i, n) in nodes.iter().enumerate() {
        if let Some(d) = n.deps.iter().find(|d| **d as usize >= i) {
            return Err(TopologyError::ForwardDep {
                node: i as u32,
                dep: *d,
            });
        }
    }
    Ok(())
}

impl NodeOp {
    /// A host copy's direction (`h2d` or `d2h`) and the bytes of its host
    /// side (packed rows for an array copy); `None` for any other node.
    pub fn host_copy(&self) -> Option<(Dir, u64)> {
        let (dir, bytes) = match *self {
            NodeOp::Memcpy { dir, size, .. } => (dir, size),
            NodeOp::MemcpyArray { dir, extent, .. } => {
                (dir, crate::event::rect_len(extent).unwrap_or(u64::MAX))
            }
            _ => return None,
        };
        matches!(dir, Dir::H2d | Dir::D2h).then_some((dir, bytes))
    }
}

/// The direction of node `i` if it is a host copy (`h2d` or `d2h`).
pub fn host_copy_dir(nodes: &[GraphNode], i: u32) -> Option<Dir> {
    nodes.get(i as usize)?.op.host_copy().map(|(dir, _)| dir)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::event::{Event, Op};
    use crate::hex::HexBytes;

    /// One node of every kind, with dependencies.
    pub(crate) fn sample_nodes() -> Vec<GraphNode> {
        let a = Addr(0x7f00_0000_1000);
        let node = |op, deps: &[u32]| GraphNode {
            op,
            deps: deps.to_vec(),
        };
        vec![
            node(
                NodeOp::Memset {
                    dst: a,
                    value: 0x3f80_0000,
                    size: 4000,
                    width: 4,
                    rows: 1,
                    pitch: 0,
                },
                &[],
            ),
            node(
                NodeOp::Memcpy {
                    dir: Dir::H2d,
                    dst: a,
                    src: Addr(0x5555_0000),
                    size: 4000,
                },
                &[],
            ),
            node(
                NodeOp::Kernel {
                    name: "saxpy".into(),
                    code: BlobId::of(b"code"),
                    func: Some(Addr(0x77)),
                    grid: [4, 1, 1],
                    block: [256, 1, 1],
                    shmem: 0,
                    args: vec![KernelArg {
                        offset: Some(0),
                        size: 8,
                        hex: HexBytes(vec![0, 0x10, 0, 0, 0, 0x7f, 0, 0]),
                        ptrs: vec![0],
                        objs: Vec::new(),
                    }],
                },
                &[0, 1],
            ),
            node(NodeOp::Empty, &[2]),
            node(NodeOp::EventRecord { event: Addr(0x99) }, &[3]),
            node(NodeOp::EventWait { event: Addr(0x99) }, &[4]),
            node(NodeOp::Host, &[5]),
            node(
                NodeOp::Memcpy {
                    dir: Dir::D2h,
                    dst: Addr(0x5556_0000),
                    src: a,
                    size: 4000,
                },
                &[6],
            ),
            node(
                NodeOp::Memset {
                    dst: a,
                    value: 1,
                    size: 16,
                    width: 1,
                    rows: 3,
                    pitch: 64,
                },
                &[],
            ),
            node(
                NodeOp::Unsupported {
                    what: "hipMemcpy3DParms with an array".into(),
                },
                &[],
            ),
            node(
                NodeOp::MemcpyArray {
                    dir: Dir::H2d,
                    dst: Addr(0xa1),
                    dpitch: None,
                    dpos: Some([4, 1, 0]),
                    src: Addr(0x5557_0000),
                    spitch: Some([32, 128]),
                    spos: None,
                    extent: [16, 2, 1],
                },
                &[9],
            ),
            node(
                NodeOp::MemcpyArray {
                    dir: Dir::D2h,
                    dst: Addr(0x5558_0000),
                    dpitch: Some([16, 32]),
                    dpos: None,
                    src: Addr(0xa1),
                    spitch: None,
                    spos: Some([0, 0, 0]),
                    extent: [16, 2, 1],
                },
                &[10],
            ),
        ]
    }

    fn round_trip(op: Op) -> String {
        let e = Event {
            seq: 3,
            t: 4,
            tid: 5,
            api: "hipGraphInstantiate".into(),
            ret: 0,
            dev: 0,
            op,
        };
        let mut line = Vec::new();
        e.write_line(&mut line);
        assert_eq!(Event::parse(&line).unwrap(), e);
        String::from_utf8(line).unwrap()
    }

    #[test]
    fn graph_ops_round_trip() {
        let text = round_trip(Op::GraphExec {
            exec: Addr(0x10),
            graph: Addr(0x20),
            nodes: sample_nodes(),
        });
        assert!(
            text.contains(r#""nodes":[{"kind":"memset","dst":"0x7f0000001000","value":1065353216,"size":4000,"width":4,"deps":[]}"#),
            "{text}"
        );
        assert!(text.contains(r#""rows":3,"pitch":64"#), "{text}");
        assert!(text.contains(r#"{"kind":"empty","deps":[2]}"#), "{text}");
        let text = round_trip(Op::GraphLaunch {
            exec: Addr(0x10),
            stream: Addr(0),
            blobs: vec![NodeBlob {
                node: 1,
                blob: BlobId::of(b"x"),
            }],
        });
        assert!(text.contains(r#""blobs":[{"node":1,"blob":""#), "{text}");
        let text = round_trip(Op::GraphLaunch {
            exec: Addr(0x10),
            stream: Addr(0x30),
            blobs: vec![],
        });
        assert!(!text.contains("blobs"), "{text}");
        round_trip(Op::GraphExecDestroy { exec: Addr(0x10) });
    }

    #[test]
    fn a_node_without_its_fields_is_an_error_naming_them() {
        let err = Event::parse(
            br#"{"seq":1,"api":"hipGraphInstantiate","op":"graph_exec","exec":"0x1","nodes":[{"kind":"memcpy","dst":"0x1","size":4}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("dir"), "{err}");
        let err = Event::parse(
            br#"{"seq":1,"api":"hipGraphInstantiate","op":"graph_exec","exec":"0x1","nodes":[{"kind":"teleport"}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("teleport"), "{err}");
        let err =
            Event::parse(br#"{"seq":1,"api":"hipGraphLaunch","op":"graph_launch"}"#).unwrap_err();
        assert!(err.to_string().contains("exec"), "{err}");
    }

    #[test]
    fn topology_checks_name_the_node() {
        let mut nodes = sample_nodes();
        assert_eq!(check_topology(&nodes), Ok(()));
        nodes[1].deps = vec![1];
        assert_eq!(
            check_topology(&nodes).unwrap_err().to_string(),
            "node 1 depends on node 1, which does not come before it"
        );
        assert_eq!(host_copy_dir(&nodes, 1), Some(Dir::H2d));
        assert_eq!(host_copy_dir(&nodes, 7), Some(Dir::D2h));
        assert_eq!(host_copy_dir(&nodes, 2), None);
        assert_eq!(host_copy_dir(&nodes, 10), Some(Dir::H2d));
        assert_eq!(nodes[11].op.host_copy(), Some((Dir::D2h, 32)));
        assert_eq!(host_copy_dir(&nodes, 99), None);
    }
}
