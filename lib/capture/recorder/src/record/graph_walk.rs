//! Reading a graph back into the archive's flat node list
//! (`hrr_core::graph`), for either family: [`walk`] orders any graph a
//! [`GraphSource`] describes (dependencies first, child graphs inlined, a
//! node that becomes several — a CUDA copy of separate rows — joined by an
//! `empty` node). The sources are the runtimes' query APIs (CUDA's driver
//! in `cuda::driver::graphs`, HIP's in `hip::exports::graph`); the logic
//! here is unit-tested with fake graphs.

#![deny(unsafe_code)]

use std::collections::HashMap;

use hrr_core::graph::{GraphNode, NodeOp};

/// A graph as the walk reads it: node and graph handles are integers.
pub trait GraphSource {
    /// Why a query of the runtime failed.
    type Error: std::error::Error + 'static;
    /// The nodes of `graph`, in the driver's order.
    fn nodes(&mut self, graph: u64) -> Result<Vec<u64>, Self::Error>;
    /// The nodes `node` depends on.
    fn deps(&mut self, node: u64) -> Result<Vec<u64>, Self::Error>;
    /// The graph a child-graph node runs; `None` for any other node.
    fn child(&mut self, node: u64) -> Result<Option<u64>, Self::Error>;
    /// What `node` does: usually one op; several (run in parallel, joined
    /// by an `empty` node) or none (an `empty` node) where one node is
    /// not one op of the format.
    fn ops(&mut self, node: u64) -> Result<Vec<NodeOp>, Self::Error>;
}

/// Why a graph could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum WalkError<E: std::error::Error + 'static> {
    /// Child graphs nest deeper than the walk follows.
    #[error("child graphs nest deeper than {MAX_DEPTH}")]
    TooDeep,
    /// A dependency cycle (which no runtime allows).
    #[error("the graph has a cycle")]
    Cycle,
    /// A node depends on one outside its graph.
    #[error("node {0:#x} depends on a node outside its graph")]
    Foreign(u64),
    /// The runtime's query failed.
    #[error(transparent)]
    Query(E),
}

/// A graph read back: the flat nodes and, for the top-level graph's node
/// handles, the index that stands for each (for node setters).
#[derive(Debug, Default, PartialEq)]
pub struct Walked {
    /// Every node, dependencies first.
    pub nodes: Vec<GraphNode>,
    /// The index in `nodes` standing for each top-level node handle.
    pub index: HashMap<u64, u32>,
    /// The first index of the nodes each top-level node handle became (its
    /// own index, unless it became several: a child graph's nodes or a
    /// copy's pieces, which lie just before the one standing for it).
    pub first: HashMap<u64, u32>,
}

/// Reads `graph` (and its child graphs) through `src`.
pub fn walk<S: GraphSource>(src: &mut S, graph: u64) -> Result<Walked, WalkError<S::Error>> {
    let mut w = Walked::default();
    walk_into(src, &mut w, graph, &[], true, 0)?;
    Ok(w)
}

/// How deep child graphs may nest before the walk gives up (a cycle of
/// child graphs, which the driver does not allow, would not end).
const MAX_DEPTH: usize = 64;

fn push(w: &mut Walked, op: NodeOp, deps: Vec<u32>) -> u32 {
    w.nodes.push(GraphNode { op, deps });
    (w.nodes.len() - 1) as u32
}

/// Appends `graph`'s nodes, its root nodes depending on `root_deps`;
/// returns the indices of all of them.
fn walk_into<S: GraphSource>(
    src: &mut S,
    w: &mut Walked,
    graph: u64,
    root_deps: &[u32],
    top: bool,
    depth: usize,
) -> Result<Vec<u32>, WalkError<S::Error>> {
    if depth > MAX_DEPTH {
        return Err(WalkError::TooDeep);
    }
    let nodes = src.nodes(graph).map_err(WalkError::Query)?;
    let mut deps: HashMap<u64, Vec<u64>> = HashMap::new();
    for &n in &nodes {
        deps.insert(n, src.deps(n).map_err(WalkError::Query)?);
    }
    // Dependencies first; the driver's order where it already is.
    let mut order = Vec::with_capacity(nodes.len());
    let mut state: HashMap<u64, bool> = HashMap::new();
    for &n in &nodes {
        visit(n, &deps, &mut state, &mut order)?;
    }
    let mut local: HashMap<u64, u32> = HashMap::new();
    let mut all = Vec::with_capacity(order.len());
    for n in order {
        let mut d: Vec<u32> = deps[&n].iter().map(|h| local[h]).collect();
        if d.is_empty() {
            d = root_deps.to_vec();
        }
        let start = w.nodes.len() as u32;
        let i = match src.child(n).map_err(WalkError::Query)? {
            Some(child) => {
                let inner = walk_into(src, w, child, &d, false, depth + 1)?;
                all.extend(&inner);
                let join = if inner.is_empty() { d } else { inner };
                push(w, NodeOp::Empty, join)
            }
            None => {
                let mut ops = src.ops(n).map_err(WalkError::Query)?;
                match ops.len() {
                    0 => push(w, NodeOp::Empty, d),
                    1 => push(w, ops.remove(0), d),
                    _ => {
                        let parts: Vec<u32> =
                            ops.into_iter().map(|op| push(w, op, d.clone())).collect();
                        all.extend(&parts);
                        push(w, NodeOp::Empty, parts)
                    }
                }
            }
        };
        local.insert(n, i);
        if top {
            w.index.insert(n, i);
            w.first.insert(n, start);
        }
        all.push(i);
    }
    Ok(all)
}

/// Depth-first: `n` after everything it depends on (`state`: `false`
/// while being visited, `true` once placed).
fn visit<E: std::error::Error>(
    n: u64,
    deps: &HashMap<u64, Vec<u64>>,
    state: &mut HashMap<u64, bool>,
    order: &mut Vec<u64>,
) -> Result<(), WalkError<E>> {
    match state.get(&n) {
        Some(true) => return Ok(()),
        Some(false) => return Err(WalkError::Cycle),
        None => {}
    }
    state.insert(n, false);
    let Some(ds) = deps.get(&n) else {
        return Err(WalkError::Foreign(n));
    };
    for d in ds {
        visit(*d, deps, state, order)?;
    }
    state.insert(n, true);
    order.push(n);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_core::{Addr, Dir};

    /// A graph in maps: nodes per graph, deps per node, child graphs, ops.
    #[derive(Default)]
    struct Fake {
        graphs: HashMap<u64, Vec<u64>>,
        deps: HashMap<u64, Vec<u64>>,
        children: HashMap<u64, u64>,
        ops: HashMap<u64, Vec<NodeOp>>,
    }

    /// The fake's one failure.
    #[derive(Debug, thiserror::Error)]
    #[error("no such graph")]
    struct NoSuchGraph;

    impl GraphSource for Fake {
        type Error = NoSuchGraph;
        fn nodes(&mut self, graph: u64) -> Result<Vec<u64>, NoSuchGraph> {
            self.graphs.get(&graph).cloned().ok_or(NoSuchGraph)
        }
        fn deps(&mut self, node: u64) -> Result<Vec<u64>, NoSuchGraph> {
            Ok(self.deps.get(&node).cloned().unwrap_or_default())
        }
        fn child(&mut self, node: u64) -> Result<Option<u64>, NoSuchGraph> {
            Ok(self.children.get(&node).copied())
        }
        fn ops(&mut self, node: u64) -> Result<Vec<NodeOp>, NoSuchGraph> {
            Ok(self.ops.get(&node).cloned().unwrap_or_default())
        }
    }

    fn set(v: u64) -> NodeOp {
        NodeOp::Memset {
            dst: Addr(v),
            value: 0,
            size: 4,
            width: 1,
            rows: 1,
            pitch: 0,
        }
    }

    fn node(op: NodeOp, deps: &[u32]) -> GraphNode {
        GraphNode {
            op,
            deps: deps.to_vec(),
        }
    }

    #[test]
    fn dependencies_come_first_and_children_are_inlined() {
        // Graph 1: c (0x30) depends on the child node b (0x20), which
        // depends on a (0x10); listed by the driver in the order c, b, a.
        // The child graph 2 holds x (0x40) → y (0x50).
        let mut f = Fake::default();
        f.graphs.insert(1, vec![0x30, 0x20, 0x10]);
        f.graphs.insert(2, vec![0x40, 0x50]);
        f.deps.insert(0x30, vec![0x20]);
        f.deps.insert(0x20, vec![0x10]);
        f.deps.insert(0x50, vec![0x40]);
        f.children.insert(0x20, 2);
        for (n, v) in [(0x10, 1), (0x30, 3), (0x40, 4), (0x50, 5)] {
            f.ops.insert(n, vec![set(v)]);
        }
        let w = walk(&mut f, 1).unwrap();
        assert_eq!(
            w.nodes,
            [
                node(set(1), &[]),            // a
                node(set(4), &[0]),           // x: a root of the child, takes b's deps
                node(set(5), &[1]),           // y
                node(NodeOp::Empty, &[1, 2]), // b: joins the child's nodes
                node(set(3), &[3]),           // c
            ]
        );
        assert_eq!(w.index[&0x10], 0);
        assert_eq!(w.index[&0x20], 3);
        assert_eq!(w.index[&0x30], 4);
        assert!(
            !w.index.contains_key(&0x40),
            "child nodes have no setter index"
        );
    }

    #[test]
    fn a_node_of_several_ops_is_joined_and_one_of_none_is_empty() {
        let mut f = Fake::default();
        f.graphs.insert(1, vec![0x10, 0x20, 0x30]);
        f.deps.insert(0x20, vec![0x10]);
        f.deps.insert(0x30, vec![0x20]);
        f.ops.insert(0x10, vec![]);
        f.ops.insert(0x20, vec![set(1), set(2)]);
        f.ops.insert(0x30, vec![set(3)]);
        let w = walk(&mut f, 1).unwrap();
        assert_eq!(
            w.nodes,
            [
                node(NodeOp::Empty, &[]),
                node(set(1), &[0]),
                node(set(2), &[0]),
                node(NodeOp::Empty, &[1, 2]),
                node(set(3), &[3]),
            ]
        );
        assert_eq!(w.index[&0x20], 3);
    }

    #[test]
    fn cycles_and_foreign_dependencies_are_errors() {
        let mut f = Fake::default();
        f.graphs.insert(1, vec![0x10, 0x20]);
        f.deps.insert(0x10, vec![0x20]);
        f.deps.insert(0x20, vec![0x10]);
        assert_eq!(
            walk(&mut f, 1).unwrap_err().to_string(),
            "the graph has a cycle"
        );
        f.deps.insert(0x20, vec![0x99]);
        assert_eq!(
            walk(&mut f, 1).unwrap_err().to_string(),
            "node 0x99 depends on a node outside its graph"
        );
        assert_eq!(walk(&mut f, 2).unwrap_err().to_string(), "no such graph");
        // A child graph that contains itself.
        let mut g = Fake::default();
        g.graphs.insert(1, vec![0x10]);
        g.children.insert(0x10, 1);
        assert!(matches!(walk(&mut g, 1), Err(WalkError::TooDeep)));
    }

    #[test]
    fn ops_carry_their_direction_through() {
        // The walk never changes an op: what `ops` says is what is written.
        let op = NodeOp::Memcpy {
            dir: Dir::D2h,
            dst: Addr(1),
            src: Addr(2),
            size: 3,
        };
        let mut f = Fake::default();
        f.graphs.insert(7, vec![0x10]);
        f.ops.insert(0x10, vec![op.clone()]);
        assert_eq!(walk(&mut f, 7).unwrap().nodes, [node(op, &[])]);
    }
}
