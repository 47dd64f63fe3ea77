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
use std::os::raw::{c_int, c_void};

use hrr_archive::api::sigs;
use hrr_archive::api::{
    self, fid, semantic, ApiDesc, RetPolicy, Vendor, BLOB_FIELD, CAPTURE_FIELD,
};
use hrr_archive::payload::{BlobRef, Payload};
use hrr_archive::Event;

use super::error::{EvResult, EventError};
use super::Ctx;
use crate::compare::Want;

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
fn node_blobs(p: &Payload, field: u16) -> Result<Vec<(u64, BlobRef)>, EventError> {
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

impl Ctx<'_> {
    /// Before a capture begins: loads the module and function of every kernel launched
    /// until the next end of capture. Replay loads code when a launch first needs it;
    /// inside a capture that would be a module load among captured work, which the
    /// program's own runtime never made there (its kernels were registered at start).
    /// A kernel that does not load is left for its launch to report.
    pub(super) fn preload_captured_kernels(&mut self, seq: u64) {
        let events = &self.proc_.events;
        let Ok(start) = events.binary_search_by_key(&seq, |e| e.header.seq) else {
            return;
        };
        let mut wanted: Vec<(String, String)> = Vec::new();
        for e in &events[start + 1..] {
            match api::hip_abi::base_row(e.header.api_id) {
                api::id::StreamEndCapture => break,
                semantic::LAUNCH_KERNEL
                | semantic::LAUNCH_KERNEL_BY_HANDLE
                | semantic::MODULE_LAUNCH_KERNEL => {
                    let Ok(p) = Payload::parse(&e.payload) else {
                        continue;
                    };
                    if let (Ok(co), Ok(name)) = (
                        p.str(fid::CODE_OBJECT, "code object"),
                        p.str(fid::NAME, "kernel name"),
                    ) {
                        let k = (co.to_string(), name.to_string());
                        if !wanted.contains(&k) {
                            wanted.push(k);
                        }
                    }
                }
                _ => {}
            }
        }
        for (co, name) in wanted {
            let _ = self.code.function(self.rt, self.proc_, &co, &name);
        }
    }

    /// A host buffer of `len` bytes for node `seq` (page-locked where the runtime allows:
    /// a graph's copies run asynchronously at each launch), made once.
    pub(super) fn node_buffer(&mut self, seq: u64, len: u64) -> Result<NodeBuffer, EventError> {
        let n = self.host_len(len, "a graph copy node's host side")?;
        if let Some(b) = self.graphs.nodes.get(&seq) {
            return Ok(*b);
        }
        let buf = crate::pages::Pages::new(n)?;
        let at = buf.addr();
        // SAFETY: HostRegister of `n` bytes inside `buf`, which `registered` keeps alive
        // until release_all unregisters it. A refusal leaves it pageable, which copies
        // accept.
        let _ = unsafe {
            self.rt
                .call_table(api::id::HostRegister, &[at, n as u64, 0])
        };
        self.owned.registered.insert(at, buf);
        let b = NodeBuffer { at, len: n };
        self.graphs.nodes.insert(seq, b);
        Ok(b)
    }

    /// An H2D node's source: its buffer, holding the bytes capture stored with the call
    /// (each launch restores what the node reads then).
    pub(super) fn node_source(
        &mut self,
        seq: u64,
        p: &Payload,
        id: u16,
        what: &'static str,
        len: Option<u64>,
    ) -> Result<u64, EventError> {
        let r = p.blob(BLOB_FIELD | id, what)?;
        if let Some(n) = len.filter(|&n| n != r.len) {
            return Err(EventError::BlobLength {
                what,
                blob: r.len,
                copy: n,
            });
        }
        let b = self.node_buffer(seq, r.len)?;
        let _t = crate::profile::span(crate::profile::Part::Load);
        self.proc_.load_blob_into(&r, self.node_bytes(b))?;
        Ok(b.at)
    }

    fn node_bytes(&mut self, b: NodeBuffer) -> &mut [u8] {
        // SAFETY: `b` lies inside a buffer `registered` owns (node_buffer made it), and
        // the returned borrow of `self` keeps it from being released meanwhile.
        unsafe { std::slice::from_raw_parts_mut(b.at as usize as *mut u8, b.len) }
    }

    /// The node a graph launch names, which replay must have built.
    fn launched_node(&self, seq: u64, r: &BlobRef) -> Result<NodeBuffer, EventError> {
        let b = self.graphs.nodes.get(&seq).copied().ok_or_else(|| {
            EventError::Inconsistent(format!(
                "the graph launch names node seq {seq}, which replay never built as a graph copy"
            ))
        })?;
        if b.len as u64 != r.len {
            return Err(EventError::BlobLength {
                what: "graph node bytes",
                blob: r.len,
                copy: b.len as u64,
            });
        }
        Ok(b)
    }

    pub(super) fn replay_graph_launch(&mut self, ev: &Event) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let captured_exec = p.handle(fid::HANDLE, "graph exec")?;
        let exec = self.handle(captured_exec)?;
        let stream = self.handle(p.handle(fid::STREAM, "stream")?)?;
        for (seq, r) in node_blobs(&p, fid::GRAPH_INPUT)? {
            let b = self.launched_node(seq, &r)?;
            let _t = crate::profile::span(crate::profile::Part::Load);
            self.proc_.load_blob_into(&r, self.node_bytes(b))?;
        }
        self.restore_pinned_snapshots(&p)?;
        let mut outputs = Vec::new();
        for (seq, r) in node_blobs(&p, fid::GRAPH_OUTPUT)? {
            let b = self.launched_node(seq, &r)?;
            let expected = self.proc_.load_blob(&r)?;
            for (d, e) in self.node_bytes(b).iter_mut().zip(&expected) {
                *d = !e;
            }
            outputs.push((seq, b, expected));
        }
        let name = match self.rt.vendor {
            Vendor::Cuda => "cudaGraphLaunch",
            Vendor::Hip => "hipGraphLaunch",
        };
        // SAFETY: cudaGraphLaunch / hipGraphLaunch have this C type.
        let f = unsafe { self.rt.typed::<sigs::GraphLaunch>(name) }?;
        let timed = self.timing_start(stream)?;
        // SAFETY: an executable graph and a stream this replay created (or 0..2).
        let ret = unsafe { f(exec as usize as *mut c_void, stream as usize as *mut c_void) };
        if ret == 0 {
            // Named by the executable graph, so its launches add up.
            self.timing_stop(
                &format!("graph {captured_exec:#x} (captured executable graph)"),
                timed,
                stream,
            )?;
        }
        let want = ev.header.ret;
        if ret == 0 && want != 0 && api::faults::is_sticky(want, self.rt.vendor) {
            // The launch returned a kernel fault at capture: it waited for its own kernels
            // there (a copy node with pageable host memory makes the call wait; H200:
            // graph_fault's launch returned 700). Replay's node buffers are its own, so its
            // launch returns at once: the same fault must come from waiting for it.
            let got = self.wait_stream(stream)?;
            if got != want {
                return Err(EventError::LaunchReturnCode {
                    call: "the launch, waited for",
                    kernel: "the graph's kernels".into(),
                    got,
                    want,
                });
            }
            self.checks.counts.failed_as_captured += 1;
            return Ok(());
        }
        self.checks.check_ret(ev, RetPolicy::Exact, ret)?;
        if let (0, Some(f)) = (ret, p.get(fid::GRAPH_FAULT)) {
            // A kernel of the graph faulted at capture: the wait returns that sticky error
            // here too, or the replay has diverged; no output was written either time.
            let want = f.as_u64()? as c_int;
            let got = self.wait_stream(stream)?;
            if got != want {
                return Err(EventError::LaunchReturnCode {
                    call: "waiting for the launch",
                    kernel: "the graph's kernels".into(),
                    got,
                    want,
                });
            }
            return Ok(());
        }
        if ret != 0 || outputs.is_empty() {
            return Ok(());
        }
        if p.get(fid::GRAPH_UNCHECKED).is_some() {
            // Launched into a capturing stream: the graph has not run.
            return Ok(());
        }
        self.stream_sync(stream, "graph outputs")?;
        for (seq, b, expected) in outputs {
            let found = self.node_bytes(b).to_vec();
            let key = (ev.header.seq, seq);
            let v = self.checks.judge(key, Want::Bytes(&expected), &found)?;
            let api = format!("{name} (D2H node seq {seq})");
            self.checks.record(ev.header.seq, api, expected.len(), v);
        }
        Ok(())
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
