//! Graph launches and the host side of graph copy nodes at replay (`graphs` holds the
//! state): kernels a capture will launch loaded before it begins, each copy node's
//! buffer made once, and at each launch the H2D nodes' sources and pinned memory
//! restored, the D2H nodes' buffers poisoned, the graph launched, waited for and every
//! D2H node compared.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::sigs;
use hrr_archive::api::{self, fid, semantic, RetPolicy, Vendor, BLOB_FIELD};
use hrr_archive::payload::{BlobRef, Payload};
use hrr_archive::Event;

use super::ctx::Ctx;
use super::error::{EvResult, EventError};
use super::graphs::{node_blobs, NodeBuffer};
use crate::compare::Want;

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
        self.snapshots
            .restore(self.rt, self.proc_, &self.tr, &self.owned, &p)?;
        let mut outputs = Vec::new();
        // Read at capture by a reader once the launch completed: each in a CopyOutput
        // record of its own (one capture could not read is refused by name there).
        let mut written = node_blobs(&p, fid::GRAPH_OUTPUT)?;
        if p.get(fid::GRAPH_OUTPUT_PENDING).is_some() {
            for node in p.u64_array(fid::GRAPH_OUTPUT_PENDING, "pending graph outputs")? {
                if let Some(r) = self.attached_node_output(ev.header.seq, node)? {
                    written.push((node, r));
                }
            }
        }
        for (seq, r) in written {
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
        let timed = super::timing::start(self.timing.as_mut(), self.rt, stream)?;
        // SAFETY: an executable graph and a stream this replay created (or 0..2).
        let ret = unsafe { f(exec as usize as *mut c_void, stream as usize as *mut c_void) };
        if ret == 0 {
            // Named by the executable graph, so its launches add up.
            super::timing::stop(
                self.timing.as_mut(),
                self.rt,
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
