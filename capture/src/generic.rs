//! Recording one call of a generic table row: the shared capture path for every table
//! API (values, device pointers, handles, allocations, memcpy, memset).
//!
//! Before the call, the copy's direction is resolved and an H2D copy's source bytes are
//! stored. After it, each parameter is decoded and planned (`params`, pure), then what
//! the plan names is read from the program's memory and encoded here ([`Recorder`]).

mod before;
mod recorder;

use hrr_archive::api::row_hooks::{self, RowHook};
use std::borrow::Cow;
use std::cell::Cell;
use std::os::raw::c_int;

use hrr_archive::api::polls::{self, Poll, PollRun};
use hrr_archive::api::{
    copy_node, hip_abi, ApiDesc, CopyDir, ParamKind, Vendor, CAPTURE_FIELD, COPY_DIR_FIELD,
    POLLS_SKIPPED_FIELD,
};
use hrr_archive::payload::{BlobRef, PayloadWriter};
use hrr_archive::ArchiveError;

use crate::capturing::{read_plan, stream_capture, ReadPlan, StreamCapture};
use crate::graph_io::{self, NodeIo};
use crate::outputs;
use crate::params;
use crate::regions::{HostRegion, RegionError};
use crate::runtime_info::note_runtime_once;
use crate::state::{self, Capture};
use before::{before_call, BeforeCall};
use recorder::Recorder;

/// Why a copy's host bytes were not recorded.
#[derive(Debug)]
enum BytesError {
    Region(RegionError),
    Store(ArchiveError),
    /// More device pointers in the bytes than a record holds offsets for.
    TooManyPointers(usize),
}

impl std::fmt::Display for BytesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BytesError::Region(e) => e.fmt(f),
            BytesError::Store(e) => e.fmt(f),
            BytesError::TooManyPointers(n) => write!(
                f,
                "the bytes hold more than {MAX_SOURCE_POINTER_WORDS} device pointers ({n} found)"
            ),
        }
    }
}

/// Gathers a copy's host bytes (an H2D source, a D2H result), stores them as a blob and
/// finds the device pointers in them: replay translates those words in what it copies
/// to the device, and expects replay's own pointers there in what it copies back.
///
/// # Safety
/// As [`HostRegion::gather`].
unsafe fn store_with_pointers(
    cap: &Capture,
    region: HostRegion,
) -> Result<(BlobRef, Vec<u64>), BytesError> {
    // SAFETY: the caller's contract.
    let bytes: Cow<[u8]> = unsafe { region.gather() }.map_err(BytesError::Region)?;
    let words = cap
        .allocs
        .pointer_words_in(&bytes, MAX_SOURCE_POINTER_WORDS)
        .map_err(BytesError::TooManyPointers)?;
    let r = cap.writer().put_blob(&bytes).map_err(BytesError::Store)?;
    Ok((r, words))
}

/// The most device pointers one copy's source bytes may hold (8 MiB of offsets).
const MAX_SOURCE_POINTER_WORDS: usize = 1 << 20;

/// The stream parameter of a row, if it has one.
fn stream_of(desc: &ApiDesc, args: &[u64]) -> Option<u64> {
    desc.params
        .iter()
        .position(|p| p.kind == ParamKind::Stream)
        .map(|i| args[i])
}

/// The capture sequence a stream-ordered allocation was made into, if its stream was
/// capturing: the memory is then the graph's, allocated again at the same address at each
/// launch, and replay keeps its translation across frees outside the graph.
fn graph_allocation(vendor: Vendor, desc: &ApiDesc, args: &[u64], ret: c_int) -> Option<u64> {
    let allocates = desc
        .params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::OutDevPtr(_)));
    let s = stream_of(desc, args).filter(|_| ret == 0 && allocates)?;
    match stream_capture(vendor, s) {
        StreamCapture::Active { id } => Some(id),
        _ => None,
    }
}

/// Whether a successful copy's host side is read now or belongs to a graph: decided by
/// the stream's capture state before any wait (a copy without a stream ran already).
fn host_side_plan(
    vendor: Vendor,
    desc: &ApiDesc,
    args: &[u64],
    ret: c_int,
    dir: Option<CopyDir>,
) -> ReadPlan {
    let host_side = matches!(dir, Some(CopyDir::HostToDevice | CopyDir::DeviceToHost));
    if copy_node::adds_node(desc.id) {
        return match ret == 0 && host_side {
            true => ReadPlan::GraphNode { graph: args[1] },
            false => ReadPlan::ReadNow,
        };
    }
    if let Some(u) = copy_node::update(desc.id) {
        // The node's new host side, read or checked at each launch where it applies.
        return match (ret == 0 && host_side, copy_node_target(u, args)) {
            (false, _) => ReadPlan::ReadNow,
            (true, Some(at)) => ReadPlan::GraphNode { graph: at },
            (true, None) => ReadPlan::Refuse(UNKNOWN_COPY_NODE.into()),
        };
    }
    match stream_of(desc, args).filter(|_| ret == 0 && host_side) {
        Some(s) => read_plan(stream_capture(vendor, s), s),
        None => ReadPlan::ReadNow,
    }
}

const UNKNOWN_COPY_NODE: &str = "updates a memcpy node capture did not see added explicitly (captured from a stream, in a clone or a child graph): its host side at each launch is not known";

/// Where a memcpy-node update applies: (graph or executable graph, node), if capture
/// followed the node.
fn copy_node_target(u: copy_node::Update, args: &[u64]) -> Option<u64> {
    match u {
        copy_node::Update::Graph { node } => graph_io::copy_node_in(None, args[node]),
        copy_node::Update::Exec { exec, node } => {
            graph_io::copy_node_in(Some(args[exec]), args[node])
        }
    }
}

/// After a memcpy-node row was recorded at `seq`: the node named, or its host side
/// replaced (a device-to-device update leaves it none); an update of a node capture did
/// not follow is refused when recorded (see `host_side_plan`).
fn follow_copy_node(desc: &ApiDesc, args: &[u64], ret: c_int, seq: u64, nodes: &[NodeIo]) {
    if ret != 0 {
        return;
    }
    if copy_node::adds_node(desc.id) && args[0] != 0 {
        // SAFETY: on success the call stored the new node's handle at its first argument.
        let node = unsafe { crate::ffi::read_at::<u64>(args[0]) };
        graph_io::name_copy_node(args[1], node, seq);
    }
    if let Some(u) = copy_node::update(desc.id) {
        let node = match u {
            copy_node::Update::Graph { node } | copy_node::Update::Exec { node, .. } => args[node],
        };
        if let Some(at) = copy_node_target(u, args) {
            let nodes: Vec<NodeIo> = nodes.iter().map(|n| n.at(seq)).collect();
            graph_io::replace_copy_node(at, node, seq, &nodes);
        }
    }
}

thread_local! {
    /// This thread's run of polls (`api::polls`).
    static POLL_RUN: Cell<PollRun> = Cell::new(PollRun::default());
}

/// Whether a call of `desc` is recorded: a poll that repeats its thread's not-ready poll
/// of the same handle is only counted (`api::polls::PollRun`); every other call is.
fn poll_run(desc: &ApiDesc, args: &[u64], ret: c_int) -> Poll {
    let row = hip_abi::base_row(desc.id);
    if polls::completion_of(row).is_none() {
        return Poll::Record { skipped: 0 };
    }
    let handle = args.first().copied().unwrap_or(0);
    POLL_RUN
        .try_with(|r| {
            let mut run = r.get();
            let d = run.observe(row, handle, ret);
            r.set(run);
            d
        })
        .unwrap_or(Poll::Record { skipped: 0 })
}

/// [`capture_row`] for the generated shims: `recorded` are the arguments as recorded,
/// `raw` the program's own, which `call` passes on, except where a host function is
/// wrapped (`host_fns::wrap`: capture's trampoline in its place).
pub fn capture_row_passing(
    desc: &'static ApiDesc,
    vendor: Vendor,
    recorded: &[u64],
    raw: &[u64],
    call: impl FnOnce(&[u64]) -> c_int,
) -> c_int {
    match crate::host_fns::wrap(desc, vendor, recorded, raw) {
        Some(w) => capture_row(desc, vendor, recorded, || {
            let ret = call(w.args());
            w.settle(ret);
            ret
        }),
        None => capture_row(desc, vendor, recorded, || call(raw)),
    }
}

/// Captures one call of a generic table row. `call` makes the real call exactly once.
pub fn capture_row(
    desc: &'static ApiDesc,
    vendor: Vendor,
    args: &[u64],
    call: impl FnOnce() -> c_int,
) -> c_int {
    let Some((cap, _guard)) = state::enter(vendor) else {
        return call();
    };
    // Work outside a range capture's range: the snapshot holds its effect.
    if !crate::range_gate::keeps(desc.id) {
        return call();
    }
    let before = state::guarded(desc.name, || BeforeCall {
        graph_row: graph_io::before_row(vendor, hip_abi::base_row(desc.id), args),
        ..before_call(cap, vendor, desc, args)
    });
    let ret = call();
    crate::range_gate::after_row(desc.id, ret);
    let Some(mut before) = before else {
        return ret;
    };
    if let (true, 0, Some(region)) = (before.source_after, ret, before.source_region) {
        // A synchronous copy behind a host function: its source once it ran.
        // SAFETY: the copy just read this region at its source (API contract).
        before.source = state::guarded(desc.name, || unsafe { store_with_pointers(cap, region) });
    }
    let skipped_polls = match poll_run(desc, args, ret) {
        Poll::Skip => return ret,
        Poll::Record { skipped } => skipped,
    };
    state::guarded(desc.name, || {
        let mut rec = Recorder {
            cap,
            vendor,
            desc,
            args,
            before: &before,
            read: host_side_plan(vendor, desc, args, ret, before.dir),
            nodes: Vec::new(),
            p: PayloadWriter::new(),
            failure: None,
            deferred: None,
            source_later: None,
        };
        if let (ReadPlan::Refuse(why), Some(_)) = (&rec.read, copy_node::update(desc.id)) {
            // Either direction: the node's host side is unknown.
            rec.failure = Some(why.clone());
        }
        if let (ReadPlan::ReadNow, Some(why), 0) = (&rec.read, before.source_unknown, ret) {
            rec.failure = Some(why.to_string());
        }
        crate::host_fns::after_row(desc, args, ret);
        // A synchronisation the program observes: the pending reads it covers first.
        outputs::after_row(desc, args, ret);
        for i in 0..desc.params.len() {
            let plan = params::plan(params::decode(desc, i, args), ret, before.dir);
            rec.encode(ApiDesc::field_id(i), plan);
        }
        if let Some(d) = before.dir {
            rec.p.u64(COPY_DIR_FIELD, d as u64);
        }
        if skipped_polls > 0 {
            rec.p.u64(POLLS_SKIPPED_FIELD, skipped_polls);
        }
        let node_of = match rec.read {
            ReadPlan::DeferToGraph { id } => Some(graph_io::NodeOf::Capture(id)),
            ReadPlan::GraphNode { graph } => Some(graph_io::NodeOf::Graph(graph)),
            _ => None,
        };
        if let Some(graph_io::NodeOf::Capture(id)) = node_of {
            rec.p.u64(CAPTURE_FIELD, id);
        } else if let Some(id) = graph_allocation(vendor, desc, args, ret) {
            rec.p.u64(CAPTURE_FIELD, id);
        }
        if let (Some(_), Some(region)) = (node_of, before.source_region) {
            rec.nodes.push(NodeIo::Input { seq: 0, region });
        }
        let api = desc.symbol(vendor).unwrap_or(desc.name);
        let seq = cap.record(desc.id, ret, &rec.p, rec.failure.as_deref(), api);
        // Kernels' outputs in mapped and managed memory this synchronisation completed.
        crate::mapped::after_row(cap, api, desc, args, ret, seq);
        let update = copy_node::update(desc.id).is_some();
        if let (Some(of), Some(seq), false) = (node_of, seq, update) {
            graph_io::add_nodes(of, rec.nodes.iter().map(|n| n.at(seq)));
        }
        if let Some(seq) = seq {
            follow_copy_node(desc, args, ret, seq, &rec.nodes);
        }
        graph_io::after_row(before.graph_row, hip_abi::base_row(desc.id), args, ret);
        if let Some(later) = before.source_later.take() {
            match (rec.source_later, seq, ret) {
                (Some(field), Some(seq), 0) => later.recorded(seq, field, api),
                _ => later.cancel(),
            }
        }
        match (rec.deferred.take(), seq) {
            (Some((fid, d)), Some(seq)) => outputs::submit(cap, d, seq, fid, None, api),
            (Some((_, d)), None) => outputs::cancel(d),
            (None, _) => {}
        }
        for hook in row_hooks::of(desc.id) {
            match hook {
                RowHook::NoteRuntime if ret == 0 => note_runtime_once(vendor),
                // Replay's steps.
                RowHook::NoteRuntime
                | RowHook::TextureObjectNumbering
                | RowHook::SurfaceObjectNumbering
                | RowHook::PreloadCapturedKernels
                | RowHook::Destroys
                | RowHook::DevicePoolSet(_)
                | RowHook::SharesWithOtherProcesses
                | RowHook::ClosesExportedDescriptor => {}
            }
        }
    });
    ret
}
