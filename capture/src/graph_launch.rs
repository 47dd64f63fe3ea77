//! Graph launches (`cudaGraphLaunch`, `hipGraphLaunch`): one `GRAPH_LAUNCH` record per
//! launch with the host side of the executable graph's nodes (`graph_io`). Before the
//! launch, the host bytes each H2D node will read and the pinned memory its kernels read
//! are stored (they are read when the graph runs, not when it was captured); after it,
//! the bytes each D2H node wrote, as for any D2H copy: into page-locked memory, by a
//! reader once an event after the launch completed (`outputs`; the program's thread never
//! waits for the launch, so a host node or host function that waits for the program
//! still runs); otherwise once the stream completed the launch. The mapped and managed
//! memory its kernels' arguments reach is noted with the launch (`mapped`), so what
//! those kernels wrote there is recorded at the
//! synchronisation that completes the launch, as for a kernel launched alone. A launch
//! into a capturing stream ran nothing yet (it is a node of that capture's graph): its
//! outputs are not read and the record says why.

use std::os::raw::{c_int, c_void};

use hrr_archive::api::sigs;
use hrr_archive::api::{fid, semantic, Vendor};
use hrr_archive::payload::PayloadWriter;

use crate::alloc::Space;
use crate::capturing::{read_plan, relaxed, stream_capture, ReadPlan, StreamCapture};
use crate::graph_io::{self, NodeIo};
use crate::outputs::{self, Deferred};
use crate::pinned::snapshot_pinned;
use crate::real::{driver_stream_synchronize, stream_synchronize, NO_REAL_FUNCTION};
use crate::regions::HostRegion;
use crate::state::{self, guarded, Capture};

/// One node's bytes as a nested {NODE_SEQ, NODE_BYTES} field `field`; Err(why) when they
/// could not be stored.
fn node_bytes(
    cap: &Capture,
    p: &mut PayloadWriter,
    field: u16,
    seq: u64,
    region: HostRegion,
) -> Result<(), String> {
    // SAFETY: a node's host region, which the program keeps valid while it launches the
    // graph that reads or writes it (the runtime reads or has written it).
    let bytes = unsafe { region.gather() }.map_err(|e| format!("graph node seq {seq}: {e}"))?;
    let r = cap
        .writer()
        .put_blob(&bytes)
        .map_err(|e| format!("graph node seq {seq}: {e}"))?;
    let mut n = PayloadWriter::new();
    n.u64(fid::NODE_SEQ, seq).blob(fid::NODE_BYTES, r);
    p.nested(field, &n);
    Ok(())
}

/// What `before_launch` hands to `after_launch`.
struct Before {
    p: PayloadWriter,
    nodes: std::sync::Arc<[NodeIo]>,
    /// Pinned, mapped and managed allocations the graph's kernels reach (start, size).
    reached: Vec<(u64, u64)>,
    failure: Option<String>,
}

/// Whether `[start, start + len)` is still one page-locked or managed allocation of the
/// program's.
fn still_held(cap: &Capture, start: u64, len: u64) -> bool {
    matches!(
        cap.allocs.lookup(start),
        Some((s, size, Space::PinnedHost | Space::Managed)) if s == start && len <= size
    )
}

/// Before the launch: the graph's inputs as they are now.
fn before_launch(cap: &Capture, exec: u64, stream: u64) -> Before {
    let nodes = graph_io::of_exec(exec);
    // Host bytes capture reads now, or the launch writes, wait for the pending reads they
    // overlap (an earlier launch's outputs a reader has not stored yet).
    for n in nodes.iter() {
        let (start, end) = match *n {
            NodeIo::Input { region, .. } | NodeIo::Output { region, .. } => {
                crate::pending::span(&region)
            }
            NodeIo::Pinned { start, len } => (start, start.saturating_add(len)),
            _ => continue,
        };
        outputs::wait_overlapping(start, end);
    }
    let mut p = PayloadWriter::new();
    p.handle(fid::HANDLE, exec).handle(fid::STREAM, stream);
    let mut failure = None;
    let mut pinned: Vec<(u64, u64)> = Vec::new();
    for n in nodes.iter() {
        match *n {
            NodeIo::Input { seq, region } => {
                if let Err(why) = node_bytes(cap, &mut p, fid::GRAPH_INPUT, seq, region) {
                    failure = Some(why);
                }
            }
            // Still the program's (an updated kernel node may have left memory the
            // program freed since on the graph's list: never read).
            NodeIo::Pinned { start, len }
                if !pinned.contains(&(start, len)) && still_held(cap, start, len) =>
            {
                pinned.push((start, len))
            }
            _ => {}
        }
    }
    // Host bytes read now that a host node of the graph, or a host function queued before
    // it, may write before the graph reads them.
    let reads = !pinned.is_empty() || nodes.iter().any(|n| matches!(n, NodeIo::Input { .. }));
    if reads && nodes.contains(&NodeIo::Host) {
        failure = Some(crate::host_fns::HOST_NODE_INPUTS.to_string());
    } else if reads && crate::host_fns::pending() {
        failure = Some(crate::host_fns::PENDING_SOURCE.to_string());
    }
    if let Err(e) = snapshot_pinned(cap, crate::mapped::in_flight, &mut p, &pinned) {
        failure = Some(e.to_string());
    }
    Before {
        p,
        nodes,
        reached: pinned,
        failure,
    }
}

/// Whether the wait's result `r` leaves the graph's outputs to read (no kernel fault).
fn outputs_written(r: c_int, vendor: Vendor) -> bool {
    r == 0 || !hrr_archive::api::faults::is_sticky(r, vendor)
}

/// Readers for every D2H node's output (`outputs::defer_node`), or None when one cannot
/// have one (those made are given back).
fn defer_outputs(
    cap: &Capture,
    vendor: Vendor,
    stream: u64,
    nodes: &[NodeIo],
    driver: bool,
) -> Option<Vec<(u64, Deferred)>> {
    let mut later = Vec::new();
    for n in nodes {
        if let NodeIo::Output { seq, region } = *n {
            match outputs::defer_node(cap, vendor, stream, region, driver) {
                Some(d) => later.push((seq, d)),
                None => {
                    later.into_iter().for_each(|(_, d)| outputs::cancel(d));
                    return None;
                }
            }
        }
    }
    Some(later)
}

/// After the launch: its outputs (read by readers, or once the stream completed it),
/// then the record.
fn after_launch(
    cap: &Capture,
    vendor: Vendor,
    api: &'static str,
    stream: u64,
    ret: c_int,
    b: Before,
) {
    let Before {
        mut p,
        nodes,
        reached,
        mut failure,
    } = b;
    let nodes = &nodes[..];
    let has_outputs = nodes.iter().any(|n| matches!(n, NodeIo::Output { .. }));
    let runs_host = nodes.contains(&NodeIo::Host);
    // The stream's capture state, asked once and only when something depends on it.
    let capture = (ret == 0 && (has_outputs || runs_host || !reached.is_empty()))
        .then(|| stream_capture(vendor, stream));
    // Launched into a capturing stream, the graph ran nothing: there is nothing to note.
    let ran = capture == Some(StreamCapture::Idle);
    if ran && runs_host {
        crate::host_fns::graph_launched(vendor, stream);
    }
    let mut later = Vec::new();
    // `cuGraphLaunch`'s stream is the driver's (the program may hold no runtime, or a
    // context of its own).
    let driver = hrr_archive::api::driver::is_driver_symbol(api);
    if let (Some(capture), true) = (capture, has_outputs) {
        match read_plan(capture, stream) {
            ReadPlan::ReadNow => match defer_outputs(cap, vendor, stream, nodes, driver) {
                Some(l) => {
                    let seqs: Vec<u64> = l.iter().map(|(s, _)| *s).collect();
                    p.u64_array(fid::GRAPH_OUTPUT_PENDING, &seqs);
                    later = l;
                }
                None => read_outputs_now(cap, vendor, driver, stream, nodes, &mut p, &mut failure),
            },
            ReadPlan::DeferToGraph { .. } | ReadPlan::GraphNode { .. } => {
                p.str(
                    fid::GRAPH_UNCHECKED,
                    "launched into a capturing stream: the graph runs only as a node of that capture's graph",
                );
            }
            ReadPlan::Refuse(why) => failure = Some(why),
        }
    }
    let seq = cap.record(semantic::GRAPH_LAUNCH, ret, &p, failure.as_deref(), api);
    for (node, d) in later {
        match seq {
            Some(seq) => outputs::submit(cap, d, seq, fid::GRAPH_OUTPUT, Some(node), api),
            None => outputs::cancel(d),
        }
    }
    if ran {
        crate::mapped::note_launch(api, stream, seq, &reached);
    }
}

/// The D2H nodes' outputs read on the program's thread, once the stream completed the
/// launch (waited for through the driver for `cuGraphLaunch`).
fn read_outputs_now(
    cap: &Capture,
    vendor: Vendor,
    driver: bool,
    stream: u64,
    nodes: &[NodeIo],
    p: &mut PayloadWriter,
    failure: &mut Option<String>,
) {
    let r = relaxed(vendor, || match driver {
        true => driver_stream_synchronize(stream),
        false => stream_synchronize(vendor, stream),
    });
    if r != 0 && hrr_archive::api::faults::is_sticky(r, vendor) {
        // A kernel of the graph faulted: the program's failure, not capture's. Its outputs
        // were never written; replay waits for the same error.
        p.u64(fid::GRAPH_FAULT, r as u64);
    } else if r != 0 {
        *failure = Some(format!(
            "waiting for stream {stream:#x} after the graph launch failed ({r})"
        ));
    }
    for n in nodes.iter().filter(|_| outputs_written(r, vendor)) {
        if let NodeIo::Output { seq, region } = *n {
            if let Err(why) = node_bytes(cap, p, fid::GRAPH_OUTPUT, seq, region) {
                *failure = Some(why);
            }
        }
    }
}

/// The shim body both vendors share.
///
/// # Safety
/// The program's own arguments, for the runtime's `f`.
unsafe fn graph_launch(
    f: sigs::GraphLaunch,
    vendor: Vendor,
    api: &'static str,
    exec: *mut c_void,
    stream: *mut c_void,
) -> c_int {
    let Some((cap, _g)) = state::enter(vendor) else {
        // SAFETY: the program's own arguments.
        return unsafe { f(exec, stream) };
    };
    // A graph launch outside a range capture's range: the snapshot holds its effect.
    if !crate::range_gate::keeps(semantic::GRAPH_LAUNCH) {
        // SAFETY: the program's own arguments.
        return unsafe { f(exec, stream) };
    }
    let before = guarded(api, || before_launch(cap, exec as u64, stream as u64));
    // SAFETY: the program's own arguments.
    let ret = unsafe { f(exec, stream) };
    if let Some(b) = before {
        guarded(api, || {
            after_launch(cap, vendor, api, stream as u64, ret, b)
        });
    }
    ret
}

macro_rules! graph_launch_shim {
    ($name:ident, $vendor:expr) => {
        /// # Safety
        /// Called by the program in place of the runtime's function of this name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(exec: *mut c_void, stream: *mut c_void) -> c_int {
            let Some(f) = real!($name: sigs::GraphLaunch).for_shim() else {
                return NO_REAL_FUNCTION;
            };
            // SAFETY: the program's own arguments, for the runtime's function.
            unsafe { graph_launch(f, $vendor, stringify!($name), exec, stream) }
        }
    };
}

graph_launch_shim!(cudaGraphLaunch, Vendor::Cuda);
// The driver's twin, which nvcc's static runtime calls: the same record.
graph_launch_shim!(cuGraphLaunch, Vendor::Cuda);
graph_launch_shim!(hipGraphLaunch, Vendor::Hip);
