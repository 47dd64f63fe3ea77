//! The host side of each graph, as capture learnt it: which nodes read host memory when
//! the graph runs (H2D copies' sources, pinned memory a kernel reads) and which write it
//! (D2H copies' destinations), from the calls captured into a stream (`generic`,
//! `launch`), then followed through end of capture, instantiation and destruction. A
//! graph launch (`graph_launch`) snapshots the inputs before it and reads the outputs
//! after it completes, as for any copy.
//!
//! A node is named by the sequence id of the call that created it; replay keeps a host
//! buffer per such node for the life of its graph. The registry's lock is a leaf: nothing
//! is called while it is held.

use std::collections::HashMap;
use std::sync::Arc;

use hrr_archive::api::{id, Vendor, CAPTURE_INVALIDATED};
use hrr_archive::sync::{ForkLock, Mutex};

use crate::capturing::{stream_capture, StreamCapture};
use crate::ffi::read_at;
use crate::regions::HostRegion;

/// One node's host side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeIo {
    /// An H2D copy node reads `region` at each launch.
    Input { seq: u64, region: HostRegion },
    /// A D2H copy node writes `region` at each launch.
    Output { seq: u64, region: HostRegion },
    /// A kernel node reads `len` bytes of pinned host memory at `start`.
    Pinned { start: u64, len: u64 },
    /// A host node runs the program's host code (`host_fns`).
    Host,
}

impl NodeIo {
    /// The node as made by the call recorded at `seq`.
    pub fn at(self, seq: u64) -> NodeIo {
        match self {
            NodeIo::Input { region, .. } => NodeIo::Input { seq, region },
            NodeIo::Output { region, .. } => NodeIo::Output { seq, region },
            pinned => pinned,
        }
    }
}

/// What a node was made in: a capture sequence (by its id), or an explicit graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeOf {
    Capture(u64),
    Graph(u64),
}

/// Capture sequences being built, graphs, and executable graphs, each with its nodes'
/// host side.
#[derive(Default, Debug)]
pub struct Registry {
    building: HashMap<u64, Vec<NodeIo>>,
    graphs: HashMap<u64, Vec<NodeIo>>,
    execs: HashMap<u64, Arc<[NodeIo]>>,
    /// Explicit memcpy nodes by (graph or executable graph, node handle): the sequence id
    /// of the call whose host side the node has there now.
    copy_nodes: HashMap<(u64, u64), u64>,
    /// Each explicit memcpy node's graph.
    node_graph: HashMap<u64, u64>,
    /// Each child-graph node: its graph and the host side of the child it was given.
    child_nodes: HashMap<u64, (u64, Vec<NodeIo>)>,
    /// A child-graph node's own graph (`cudaGraphChildGraphNodeGetGraph`): the node that
    /// holds it, whose graph gains every node added to it.
    parents: HashMap<u64, u64>,
    /// The host side a child-graph node has in an executable graph since its child was
    /// replaced there (`cudaGraphExecChildGraphNodeSetParams`), by (exec, node).
    exec_children: HashMap<(u64, u64), Vec<NodeIo>>,
}

impl Registry {
    /// A node captured into a sequence, or added to a graph.
    pub fn add(&mut self, of: NodeOf, io: NodeIo) {
        match of {
            NodeOf::Capture(CAPTURE_INVALIDATED) => {}
            NodeOf::Capture(id) => self.building.entry(id).or_default().push(io),
            NodeOf::Graph(g) => {
                // A child-graph node's own graph: its node's graph runs what it gains.
                let mut at = Some(g);
                for _ in 0..64 {
                    let Some(g) = at else { break };
                    self.graphs.entry(g).or_default().push(io);
                    at = None;
                    if let Some((parent, held)) =
                        (self.parents.get(&g)).and_then(|node| self.child_nodes.get_mut(node))
                    {
                        held.push(io);
                        at = Some(*parent);
                    }
                }
            }
        }
    }
    /// Child-graph node `node`: `parent` runs a copy of `child`'s nodes (their buffers are
    /// the child's: the same host memory).
    pub fn add_child(&mut self, parent: u64, node: u64, child: u64) {
        let nodes = self.graphs.get(&child).cloned().unwrap_or_default();
        self.graphs
            .entry(parent)
            .or_default()
            .extend(nodes.iter().copied());
        self.child_nodes.insert(node, (parent, nodes));
    }
    /// `inner` is child-graph node `node`'s own graph: what it gains, the node's graph runs.
    pub fn child_graph(&mut self, node: u64, inner: u64) {
        if matches!(self.child_nodes.get(&node), Some((parent, _)) if *parent != inner) {
            self.parents.insert(inner, node);
        }
    }
    /// Child-graph node `node` of executable graph `exec` now runs a copy of `child`: the
    /// host side of the child it had is gone from `exec`, `child`'s joins it.
    pub fn replace_exec_child(&mut self, exec: u64, node: u64, child: u64) {
        let new = self.graphs.get(&child).cloned().unwrap_or_default();
        let old = (self.exec_children.get(&(exec, node)))
            .or_else(|| self.child_nodes.get(&node).map(|(_, io)| io))
            .cloned()
            .unwrap_or_default();
        let mut all = self
            .execs
            .get(&exec)
            .map(|v| v.to_vec())
            .unwrap_or_default();
        for n in &old {
            if let Some(i) = all.iter().position(|x| x == n) {
                all.remove(i);
            }
        }
        all.extend(new.iter().copied());
        self.execs.insert(exec, all.into());
        self.exec_children.insert((exec, node), new);
    }
    /// Sequence `id` ended; `graph` is what it returned (0: none, it was invalidated). A
    /// capture into the program's own graph (`cudaStreamBeginCaptureToGraph`) adds to the
    /// nodes it had.
    pub fn end_capture(&mut self, id: u64, graph: u64) {
        let nodes = self.building.remove(&id).unwrap_or_default();
        if graph != 0 {
            self.graphs.entry(graph).or_default().extend(nodes);
        }
    }
    /// Memcpy node `node` was added to `graph` by the call recorded at `seq`.
    pub fn name_copy_node(&mut self, graph: u64, node: u64, seq: u64) {
        self.copy_nodes.insert((graph, node), seq);
        self.node_graph.insert(node, graph);
    }
    /// Where an update of `node` applies: executable graph `exec`, or the node's graph;
    /// None for a node capture did not see added explicitly (captured from a stream, in
    /// a clone or a child graph).
    pub fn copy_node_in(&self, exec: Option<u64>, node: u64) -> Option<u64> {
        let at = exec.or_else(|| self.node_graph.get(&node).copied())?;
        self.copy_nodes.contains_key(&(at, node)).then_some(at)
    }
    /// The memcpy node `node` of `at` (a graph or an executable graph) now has the host
    /// side `nodes` of the update recorded at `seq`; its former one is gone.
    pub fn replace_copy_node(&mut self, at: u64, node: u64, seq: u64, nodes: &[NodeIo]) {
        let Some(old) = self.copy_nodes.insert((at, node), seq) else {
            return;
        };
        let keep = |n: &NodeIo| !matches!(n, NodeIo::Input { seq: s, .. } | NodeIo::Output { seq: s, .. } if *s == old);
        if let Some(list) = self.graphs.get_mut(&at) {
            list.retain(keep);
            list.extend_from_slice(nodes);
        } else if let Some(list) = self.execs.get(&at) {
            let mut all: Vec<NodeIo> = list.iter().copied().filter(keep).collect();
            all.extend_from_slice(nodes);
            self.execs.insert(at, all.into());
        }
    }
    /// The explicit memcpy nodes of `from` are those of `to` too (an instantiation).
    fn copy_node_names(&mut self, from: u64, to: u64) {
        self.copy_nodes.retain(|(at, _), _| *at != to);
        let named: Vec<(u64, u64)> = self
            .copy_nodes
            .iter()
            .filter(|((at, _), _)| *at == from)
            .map(|((_, n), s)| (*n, *s))
            .collect();
        for (n, s) in named {
            self.copy_nodes.insert((to, n), s);
        }
    }
    /// `clone` is a copy of `graph`: the same nodes, reading and writing the same host
    /// memory.
    pub fn clone_graph(&mut self, graph: u64, clone: u64) {
        let nodes = self.graphs.get(&graph).cloned().unwrap_or_default();
        self.graphs.insert(clone, nodes);
    }
    /// `exec` was updated from `graph` (`cudaGraphExecUpdate`): it now runs `graph`'s
    /// nodes.
    pub fn update(&mut self, exec: u64, graph: u64) {
        self.instantiate(graph, exec);
    }
    /// `exec` was instantiated from `graph`: it keeps the graph's nodes as they are now.
    pub fn instantiate(&mut self, graph: u64, exec: u64) {
        let nodes: Arc<[NodeIo]> = self
            .graphs
            .get(&graph)
            .map(|v| v.as_slice().into())
            .unwrap_or_default();
        self.execs.insert(exec, nodes);
        self.copy_node_names(graph, exec);
    }
    /// Nodes an executable graph gained in place (a kernel node's parameters updated in
    /// it: the pinned memory its new arguments point into).
    pub fn add_to_exec(&mut self, exec: u64, nodes: &[NodeIo]) {
        let mut all = self
            .execs
            .get(&exec)
            .map(|v| v.to_vec())
            .unwrap_or_default();
        for n in nodes {
            // Each update of the same node names the same memory again: kept once.
            if !all.contains(n) {
                all.push(*n);
            }
        }
        self.execs.insert(exec, all.into());
    }
    pub fn destroy_graph(&mut self, graph: u64) {
        self.graphs.remove(&graph);
        self.child_nodes.retain(|_, (parent, _)| *parent != graph);
        let nodes = &self.child_nodes;
        self.parents
            .retain(|inner, node| *inner != graph && nodes.contains_key(node));
        self.copy_nodes.retain(|(at, _), _| *at != graph);
        self.node_graph.retain(|_, g| *g != graph);
    }
    pub fn destroy_exec(&mut self, exec: u64) {
        self.execs.remove(&exec);
        self.exec_children.retain(|(at, _), _| *at != exec);
        self.copy_nodes.retain(|(at, _), _| *at != exec);
    }
    /// The host side of executable graph `exec` (empty for one capture never saw built).
    pub fn of_exec(&self, exec: u64) -> Arc<[NodeIo]> {
        self.execs.get(&exec).cloned().unwrap_or_default()
    }
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    f(REGISTRY.lock().get_or_insert_with(Registry::default))
}

/// Nodes captured into a sequence or added to a graph.
pub fn add_nodes(of: NodeOf, nodes: impl IntoIterator<Item = NodeIo>) {
    with(|r| nodes.into_iter().for_each(|n| r.add(of, n)));
}

/// A kernel launched into `stream` read these pinned allocations: if the stream is
/// capturing, its graph reads them at each launch, and true is returned (the kernel is a
/// node of that graph: it runs at the graph's launches, not now).
pub fn note_kernel_pinned(vendor: Vendor, stream: u64, pinned: &[(u64, u64)]) -> bool {
    match stream_capture(vendor, stream) {
        StreamCapture::Active { id } => {
            let nodes = pinned
                .iter()
                .map(|&(start, len)| NodeIo::Pinned { start, len });
            add_nodes(NodeOf::Capture(id), nodes);
            true
        }
        _ => false,
    }
}

/// Pinned allocations a graph's kernel node reads (`kernel_node`): at each launch of an
/// executable graph made from it.
pub fn add_graph_pinned(graph: u64, pinned: &[(u64, u64)]) {
    let nodes = pinned
        .iter()
        .map(|&(start, len)| NodeIo::Pinned { start, len });
    add_nodes(NodeOf::Graph(graph), nodes);
}

/// Pinned allocations a kernel node of executable graph `exec` reads after an update.
pub fn add_exec_pinned(exec: u64, pinned: &[(u64, u64)]) {
    let nodes: Vec<NodeIo> = pinned
        .iter()
        .map(|&(start, len)| NodeIo::Pinned { start, len })
        .collect();
    with(|r| r.add_to_exec(exec, &nodes));
}

/// An explicit memcpy node, added by the call recorded at `seq`.
pub fn name_copy_node(graph: u64, node: u64, seq: u64) {
    with(|r| r.name_copy_node(graph, node, seq));
}

/// Where an update of memcpy node `node` applies (`Registry::copy_node_in`).
pub fn copy_node_in(exec: Option<u64>, node: u64) -> Option<u64> {
    with(|r| r.copy_node_in(exec, node))
}

/// A memcpy node's host side replaced by an update's.
pub fn replace_copy_node(at: u64, node: u64, seq: u64, nodes: &[NodeIo]) {
    with(|r| r.replace_copy_node(at, node, seq, nodes));
}

/// The host side of executable graph `exec`.
pub fn of_exec(exec: u64) -> Arc<[NodeIo]> {
    with(|r| r.of_exec(exec))
}

/// What a graph row needs from before its call: the capture sequence an end of capture
/// closes.
#[derive(Clone, Copy, Debug, Default)]
pub struct BeforeRow {
    ending: Option<u64>,
}

/// Before a table row's call: an end of capture notes which sequence it ends.
pub fn before_row(vendor: Vendor, row: u16, args: &[u64]) -> BeforeRow {
    let ending = (row == id::StreamEndCapture)
        .then(|| match stream_capture(vendor, args[0]) {
            StreamCapture::Active { id } => Some(id),
            _ => None,
        })
        .flatten();
    BeforeRow { ending }
}

/// After a table row's call: graphs returned, instantiated and destroyed are followed.
pub fn after_row(before: BeforeRow, row: u16, args: &[u64], ret: i32) {
    // SAFETY (the reads below): on success each of these calls stored a handle at its
    // first parameter, a `T*` out.
    let out = |i: usize| (ret == 0 && args[i] != 0).then(|| unsafe { read_at::<u64>(args[i]) });
    match row {
        id::StreamEndCapture => {
            if let Some(seq) = before.ending {
                let graph = out(1).unwrap_or(0);
                with(|r| r.end_capture(seq, graph));
            }
        }
        id::GraphInstantiate
        | id::HipGraphInstantiate
        | id::GraphInstantiateWithFlags
        | id::GraphInstantiateWithParams => {
            if let Some(exec) = out(0) {
                with(|r| r.instantiate(args[1], exec));
            }
        }
        id::GraphAddChildGraphNode => {
            if let Some(node) = out(0) {
                with(|r| r.add_child(args[1], node, args[4]));
            }
        }
        id::GraphChildGraphNodeGetGraph => {
            if let Some(inner) = out(1) {
                with(|r| r.child_graph(args[0], inner));
            }
        }
        id::GraphExecChildGraphNodeSetParams if ret == 0 => {
            with(|r| r.replace_exec_child(args[0], args[1], args[2]))
        }
        id::GraphClone => {
            if let Some(clone) = out(0) {
                with(|r| r.clone_graph(args[1], clone));
            }
        }
        id::GraphExecUpdate | id::HipGraphExecUpdate if ret == 0 => {
            with(|r| r.update(args[0], args[1]))
        }
        id::GraphExecDestroy if ret == 0 => with(|r| r.destroy_exec(args[0])),
        id::GraphDestroy if ret == 0 => with(|r| r.destroy_graph(args[0])),
        _ => {}
    }
}

/// The lock of `REGISTRY`, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&REGISTRY]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(seq: u64) -> NodeIo {
        NodeIo::Output {
            seq,
            region: HostRegion::Linear {
                ptr: 0x1000,
                len: 8,
            },
        }
    }

    #[test]
    fn nodes_follow_their_capture_to_the_executable_graph() {
        let mut r = Registry::default();
        let c = NodeOf::Capture;
        r.add(c(7), out(10));
        r.add(c(8), out(11));
        r.add(
            c(7),
            NodeIo::Pinned {
                start: 0x9000,
                len: 64,
            },
        );
        r.add(c(CAPTURE_INVALIDATED), out(12));
        r.end_capture(7, 0xa0);
        r.instantiate(0xa0, 0xe0);
        r.instantiate(0xa0, 0xe1);
        assert_eq!(
            &*r.of_exec(0xe0),
            &[
                out(10),
                NodeIo::Pinned {
                    start: 0x9000,
                    len: 64
                }
            ]
        );
        // An executable graph keeps its nodes after its graph is destroyed.
        r.destroy_graph(0xa0);
        assert_eq!(r.of_exec(0xe1).len(), 2);
        r.destroy_exec(0xe1);
        assert!(r.of_exec(0xe1).is_empty());
        // A capture into an existing graph adds to its nodes.
        r.add(NodeOf::Graph(0xa2), out(20));
        r.add(c(9), out(21));
        r.end_capture(9, 0xa2);
        assert_eq!(r.graphs[&0xa2], vec![out(20), out(21)]);
        r.destroy_graph(0xa2);
        // An invalidated capture returns no graph: its nodes go with it.
        r.end_capture(8, 0);
        assert!(r.building.is_empty() && r.graphs.is_empty());
        // Nothing was ever added to the invalidated marker.
        assert!(!r.building.contains_key(&CAPTURE_INVALIDATED));
    }

    #[test]
    fn a_child_graph_edited_or_replaced_is_followed_into_its_parent() {
        let mut r = Registry::default();
        r.add(NodeOf::Graph(0xc0), out(3));
        r.add_child(0xa0, 0xb0, 0xc0);
        // The node's own graph (0xd0) gains a node: so does its parent, not the child given.
        r.child_graph(0xb0, 0xd0);
        r.add(NodeOf::Graph(0xd0), out(6));
        assert_eq!(r.graphs[&0xa0], vec![out(3), out(6)]);
        assert_eq!(r.graphs[&0xc0], vec![out(3)]);
        r.add(NodeOf::Graph(0xa0), out(4));
        r.instantiate(0xa0, 0xe0);
        // The child replaced in the executable graph: its host side out, the new one's in.
        r.add(NodeOf::Graph(0xc1), out(7));
        r.replace_exec_child(0xe0, 0xb0, 0xc1);
        assert_eq!(&*r.of_exec(0xe0), &[out(4), out(7)]);
        r.add(NodeOf::Graph(0xc2), out(8));
        r.replace_exec_child(0xe0, 0xb0, 0xc2);
        assert_eq!(&*r.of_exec(0xe0), &[out(4), out(8)]);
        r.destroy_exec(0xe0);
        assert!(r.exec_children.is_empty());
        r.destroy_graph(0xa0);
        assert!(r.parents.is_empty() && r.child_nodes.is_empty());
    }

    #[test]
    fn an_explicit_graph_gains_its_nodes_and_its_childrens() {
        let mut r = Registry::default();
        r.add(NodeOf::Graph(0xc0), out(3));
        r.add(NodeOf::Graph(0xa0), out(4));
        r.add_child(0xa0, 0xb0, 0xc0);
        r.instantiate(0xa0, 0xe0);
        assert_eq!(&*r.of_exec(0xe0), &[out(4), out(3)]);
        // A node added after instantiation is not in that executable graph.
        r.add(NodeOf::Graph(0xa0), out(5));
        assert_eq!(r.of_exec(0xe0).len(), 2);
        // An update in place adds to the executable graph only.
        r.add_to_exec(0xe0, &[NodeIo::Pinned { start: 1, len: 2 }]);
        assert_eq!(r.of_exec(0xe0).len(), 3);
        r.add_to_exec(0xe0, &[NodeIo::Pinned { start: 1, len: 2 }]);
        assert_eq!(r.of_exec(0xe0).len(), 3);
        r.add_to_exec(0xe0, &[NodeIo::Pinned { start: 3, len: 4 }]);
        assert_eq!(r.of_exec(0xe0).len(), 4);
        // A clone has its original's nodes.
        r.clone_graph(0xa0, 0xa1);
        r.instantiate(0xa1, 0xe1);
        assert_eq!(&*r.of_exec(0xe1), &[out(4), out(3), out(5)]);
    }

    #[test]
    fn a_memcpy_node_update_replaces_its_host_side_where_it_applies() {
        let mut r = Registry::default();
        let (g, node, other) = (0xa0, 0x51, 0x52);
        r.add(NodeOf::Graph(g), out(3));
        r.name_copy_node(g, node, 3);
        r.add(NodeOf::Graph(g), out(4));
        r.name_copy_node(g, other, 4);
        r.instantiate(g, 0xe0);
        // Unknown nodes (captured, cloned) are not followed.
        assert_eq!(r.copy_node_in(None, 0x99), None);
        assert_eq!(r.copy_node_in(Some(0xe9), node), None);
        // The graph's node: later instantiations see the update, earlier ones do not.
        assert_eq!(r.copy_node_in(None, node), Some(g));
        r.replace_copy_node(g, node, 9, &[out(9)]);
        assert_eq!(r.graphs[&g], vec![out(4), out(9)]);
        assert_eq!(&*r.of_exec(0xe0), &[out(3), out(4)]);
        r.instantiate(g, 0xe1);
        assert_eq!(&*r.of_exec(0xe1), &[out(4), out(9)]);
        // An executable graph's copy of the node: only that executable graph changes; a
        // device-to-device update leaves the node no host side.
        assert_eq!(r.copy_node_in(Some(0xe0), other), Some(0xe0));
        r.replace_copy_node(0xe0, other, 11, &[]);
        assert_eq!(&*r.of_exec(0xe0), &[out(3)]);
        assert_eq!(&*r.of_exec(0xe1), &[out(4), out(9)]);
        r.replace_copy_node(0xe0, other, 12, &[out(12)]);
        assert_eq!(&*r.of_exec(0xe0), &[out(3), out(12)]);
        // Destruction forgets the names.
        r.destroy_exec(0xe0);
        assert_eq!(r.copy_node_in(Some(0xe0), other), None);
        r.destroy_graph(g);
        assert_eq!(r.copy_node_in(None, node), None);
    }
}
