//! Graphs at replay: the host side of copy nodes, and graph launches.
//!
//! A copy capture recorded into a capturing stream (`CAPTURE_FIELD`) is re-issued into
//! replay's capturing stream, so replay's runtime builds the same node; it runs at each
//! launch of the graph, not now. Its host side is a buffer of replay's own, one per node
//! (named by the copy's sequence id), page-locked where the runtime allows and kept until
//! the process's replay ends (past the life of every graph that uses it): nothing is
//! waited for or compared when the copy is issued. A `GRAPH_LAUNCH` event restores the
//! H2D nodes' sources and the pinned memory the graph's kernels read as they were at
//! that launch, fills each D2H node's buffer with the complement of its expected bytes
//! (a byte the launch never writes cannot pass), launches, waits for the stream and
//! compares every D2H node, as for any D2H copy.

use std::collections::HashMap;

use hrr_archive::api::{self, fid, ApiDesc, Vendor, CAPTURE_FIELD};
use hrr_archive::payload::{BlobRef, Payload};
use hrr_archive::Event;

use super::error::{EvResult, EventError};

/// One copy node's host buffer: its address and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct NodeBuffer {
    pub(super) at: u64,
    pub(super) len: usize,
}

/// Graphs' state at replay: the host buffers of copy nodes, and the graphs missing a node.
#[derive(Default)]
pub(super) struct Graphs {
    /// Host buffers of graph copy nodes, by the sequence id of the call that made the
    /// node (page-locked in `Owned::registered`).
    pub(super) nodes: HashMap<u64, NodeBuffer>,
    /// Graphs (by captured handle) missing a node replay could not rebuild, and which.
    pub(super) broken: HashMap<u64, String>,
}

/// The node a call was captured into a graph as, from its payload (None: it ran when it
/// was issued).
pub(super) fn captured_node(p: &Payload, seq: u64) -> Option<u64> {
    p.get(CAPTURE_FIELD).map(|_| seq)
}

/// A node's bytes in a graph launch: (node seq, blob).
pub(super) fn node_blobs(p: &Payload, field: u16) -> Result<Vec<(u64, BlobRef)>, EventError> {
    p.all(field)
        .map(|f| {
            let n = f.as_nested()?;
            Ok((
                n.u64(fid::NODE_SEQ, "node seq")?,
                n.blob(fid::NODE_BYTES, "node bytes")?,
            ))
        })
        .collect()
}

impl Graphs {
    /// An unreplayable call that added a node to a graph (field 2: the graph) leaves that
    /// graph short of the node: it is marked, so its instantiation fails naming the node
    /// instead of running without it (`--continue-on-error` goes past the call itself).
    pub(super) fn note_missing_node(&mut self, ev: &Event, p: &Payload) {
        let Ok(api) = p.str(fid::API_NAME, "api") else {
            return;
        };
        if !api.contains("GraphAdd") {
            return;
        }
        if let Some(graph) = p.get(2).and_then(|f| f.as_u64().ok()) {
            let why = format!("node seq {} ({api}) could not be rebuilt", ev.header.seq);
            self.broken.entry(graph).or_insert(why);
        }
    }

    /// Refuses to instantiate a graph missing a node, naming it; a child-graph node of such
    /// a graph passes the mark on to its parent.
    pub(super) fn refuse_broken_graph(
        &mut self,
        vendor: Vendor,
        desc: &ApiDesc,
        p: &Payload,
    ) -> EvResult {
        let graph_param = |name: &str| {
            desc.param_index(name)
                .and_then(|i| p.get(ApiDesc::field_id(i)))
                .and_then(|f| f.as_u64().ok())
        };
        match desc.id {
            api::id::GraphClone => {
                if let Some(why) = graph_param("graph").and_then(|g| self.broken.get(&g)) {
                    let why = why.clone();
                    if let Some(clone) = graph_param("clone") {
                        self.broken.entry(clone).or_insert(why);
                    }
                }
                Ok(())
            }
            api::id::GraphAddChildGraphNode => {
                if let (Some(parent), Some(child)) = (graph_param("graph"), graph_param("child")) {
                    if let Some(why) = self.broken.get(&child).cloned() {
                        self.broken.entry(parent).or_insert(why);
                    }
                }
                Ok(())
            }
            api::id::GraphInstantiate
            | api::id::HipGraphInstantiate
            | api::id::GraphInstantiateWithFlags
            | api::id::GraphInstantiateWithParams => {
                let Some(graph) = graph_param("graph") else {
                    return Ok(());
                };
                match self.broken.get(&graph) {
                    Some(why) => Err(EventError::Unreplayable {
                        api: desc.symbol(vendor).unwrap_or(desc.name).to_string(),
                        reason: format!(
                            "graph {graph:#x} is missing a node: {why}; it is not run short of it"
                        ),
                    }),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_archive::payload::PayloadWriter;
    use hrr_archive::ContentHash;

    #[test]
    fn a_launch_names_its_nodes_bytes_and_a_captured_call_its_node() {
        let r = BlobRef {
            hash: ContentHash::of(b"abcd"),
            len: 4,
        };
        let mut w = PayloadWriter::new();
        w.handle(fid::HANDLE, 0xe0);
        for seq in [12u64, 15] {
            let mut n = PayloadWriter::new();
            n.u64(fid::NODE_SEQ, seq).blob(fid::NODE_BYTES, r);
            w.nested(fid::GRAPH_OUTPUT, &n);
        }
        let bytes = w.finish();
        let p = Payload::parse(&bytes).unwrap();
        let outs = node_blobs(&p, fid::GRAPH_OUTPUT).unwrap();
        assert_eq!(outs, vec![(12, r), (15, r)]);
        assert!(node_blobs(&p, fid::GRAPH_INPUT).unwrap().is_empty());
        assert_eq!(captured_node(&p, 3), None);
        let mut w = PayloadWriter::new();
        w.u64(CAPTURE_FIELD, 77);
        let bytes = w.finish();
        assert_eq!(captured_node(&Payload::parse(&bytes).unwrap(), 3), Some(3));
    }
}
