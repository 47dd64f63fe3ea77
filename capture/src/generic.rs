//! Recording one call of a generic table row: the shared capture path for every table
//! API (values, device pointers, handles, allocations, memcpy, memset).
//!
//! Before the call, the copy's direction is resolved and an H2D copy's source bytes are
//! stored. After it, each parameter is decoded and planned (`params`, pure), then what
//! the plan names is read from the program's memory and encoded here ([`Recorder`]).

use std::borrow::Cow;
use std::cell::Cell;
use std::os::raw::c_int;

use hrr_archive::api::polls::{self, Poll, PollRun};
use hrr_archive::api::{
    copy_node, drv_memcpy, hip_abi, memcpy3d, ApiDesc, CopyDir, ParamKind, Vendor, BLOB_FIELD,
    CAPTURE_FIELD, COPY_DIR_FIELD, OUTPUT_PENDING_FIELD, POINTER_WORDS_FIELD, POLLS_SKIPPED_FIELD,
};
use hrr_archive::payload::{BlobRef, FieldType, PayloadWriter};
use hrr_archive::ArchiveError;

use crate::alloc::Space;
use crate::capturing::{read_plan, relaxed, stream_capture, ReadPlan, StreamCapture};
use crate::ffi::{host_bytes, read_at};
use crate::graph_io::{self, NodeIo};
use crate::outputs::{self, Deferred};
use crate::params::{self, Param, Plan};
use crate::real::{driver_stream_synchronize, stream_synchronize};
use crate::regions::{HostRegion, RegionError};
use crate::runtime_info::note_runtime_once;
use crate::state::{self, Capture};

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

/// The copy struct a row passes by pointer: the runtime's 3D parameters or the driver's
/// `CUDA_MEMCPY2D` / `CUDA_MEMCPY3D`, by the parameter's kind.
#[derive(Clone, Copy)]
enum CopyStruct {
    Runtime3D,
    Driver(drv_memcpy::Layout),
}

impl CopyStruct {
    fn of(kind: ParamKind) -> Option<CopyStruct> {
        match kind {
            ParamKind::Copy3DParms => Some(CopyStruct::Runtime3D),
            ParamKind::DrvMemcpy2D => Some(CopyStruct::Driver(drv_memcpy::Layout::Memcpy2D)),
            ParamKind::DrvMemcpy3D => Some(CopyStruct::Driver(drv_memcpy::Layout::Memcpy3D)),
            _ => None,
        }
    }
    fn size(self) -> usize {
        match self {
            CopyStruct::Runtime3D => memcpy3d::SIZE,
            CopyStruct::Driver(l) => l.size(),
        }
    }
    fn decode(self, raw: &[u8]) -> Option<memcpy3d::Parms> {
        match self {
            CopyStruct::Runtime3D => raw.try_into().ok().map(memcpy3d::Parms::decode),
            CopyStruct::Driver(l) => l.decode(raw),
        }
    }
}

/// Whether `desc` takes the runtime's `cudaMemcpy3DParms` (widths in an array's
/// elements), not one of the driver's copy structs (widths in bytes).
fn runtime_copy_struct(desc: &ApiDesc) -> bool {
    desc.params
        .iter()
        .any(|p| matches!(CopyStruct::of(p.kind), Some(CopyStruct::Runtime3D)))
}

/// The copy struct a row's copy-struct argument points at, decoded and raw.
///
/// # Safety
/// A row's non-null copy-struct argument must point at the struct its kind names, which
/// the runtime or driver reads in full.
unsafe fn parms_3d(desc: &ApiDesc, args: &[u64]) -> Option<(memcpy3d::Parms, Vec<u8>)> {
    let (i, layout) = desc
        .params
        .iter()
        .enumerate()
        .find_map(|(i, p)| CopyStruct::of(p.kind).map(|l| (i, l)))?;
    if args[i] == 0 {
        return None;
    }
    // SAFETY: the caller's contract.
    let raw: Vec<u8> = unsafe { host_bytes(args[i], layout.size() as u64) }.to_vec();
    Some((layout.decode(&raw)?, raw))
}

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

/// Waits for an asynchronous copy's stream, so its host destination holds the result
/// before capture reads it; Some(why) when waiting failed. Only for a stream that is not
/// capturing ([`ReadPlan::ReadNow`]); in relaxed mode, so another thread's global capture
/// does not forbid it (`capturing`).
fn wait_for_copy(vendor: Vendor, desc: &ApiDesc, args: &[u64]) -> Option<String> {
    let s = stream_of(desc, args)?;
    let r = relaxed(vendor, || stream_synchronize(vendor, s));
    (r != 0).then(|| format!("waiting for stream {s:#x} before reading the copy failed ({r})"))
}

/// As [`wait_for_copy`], for a driver row: with the driver's `cuStreamSynchronize` (the
/// program may hold no runtime, and its stream may belong to a context of its own), also
/// in relaxed mode (a static-runtime program's global capture on another stream would
/// otherwise be invalidated by the wait: H200, graph_capture built with nvcc's default).
fn wait_for_driver_copy(desc: &ApiDesc, args: &[u64]) -> Option<String> {
    let s = stream_of(desc, args)?;
    let r = relaxed(Vendor::Cuda, || driver_stream_synchronize(s));
    (r != 0).then(|| format!("waiting for stream {s:#x} before reading the copy failed ({r})"))
}

/// What capture took before the call.
struct BeforeCall {
    dir: Option<CopyDir>,
    parms: Option<(memcpy3d::Parms, Vec<u8>)>,
    /// An H2D copy's source bytes, stored, and the offsets of the device pointers in
    /// them (`AllocTable::pointer_words_in`).
    source: Option<Result<(BlobRef, Vec<u64>), BytesError>>,
    /// The host region an H2D copy reads (a graph node reads it again at each launch).
    source_region: Option<HostRegion>,
    /// What a graph row needs from before its call.
    graph_row: graph_io::BeforeRow,
}

/// The host side of a copy in direction `dir`: an H2D copy's source, a D2H copy's
/// destination.
fn host_side(
    desc: &ApiDesc,
    args: &[u64],
    dir: Option<CopyDir>,
    parms: Option<&memcpy3d::Parms>,
) -> Option<HostRegion> {
    (0..desc.params.len())
        .rev()
        .find_map(|i| match (dir?, params::decode(desc, i, args)) {
            (CopyDir::HostToDevice, p) => params::source(p, parms),
            (CopyDir::DeviceToHost, Param::CopyDst { region }) => Some(region),
            (CopyDir::DeviceToHost, Param::Parms3D { .. }) => parms.map(params::destination_box),
            _ => None,
        })
}

fn before_call(cap: &Capture, desc: &ApiDesc, args: &[u64]) -> BeforeCall {
    // SAFETY: a Copy3DParms argument points at the struct the runtime is about to read.
    let parms = unsafe { parms_3d(desc, args) };
    // A runtime copy's array side counts the box's width in its elements: the host
    // side's rows are that many elements long (an unknown array leaves the record
    // incomplete). The driver's structs count bytes already.
    let parms = match runtime_copy_struct(desc) {
        true => parms.map(|(p, raw)| (crate::arrays::host_box(&cap.objects, p), raw)),
        false => parms,
    };
    let decoded = parms.as_ref().map(|(p, _)| p);
    let dir = params::copy_dir(desc, args, decoded, |a| cap.allocs.is_device(a));
    // A pending read of these host bytes (or of memory being released) goes first.
    outputs::before_row(cap, desc, dir, || host_side(desc, args, dir, decoded), args);
    let source_region = if dir == Some(CopyDir::HostToDevice) {
        // The last source parameter's (every row has at most one).
        (0..desc.params.len())
            .rev()
            .find_map(|i| params::source(params::decode(desc, i, args), decoded))
    } else {
        None
    };
    // SAFETY: an H2D copy reads this region at its source (API contract).
    let source = source_region.map(|region| unsafe { store_with_pointers(cap, region) });
    BeforeCall {
        dir,
        parms,
        source,
        source_region,
        graph_row: graph_io::BeforeRow::default(),
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

/// Encodes a call's parameters once it returned: reads what each plan names, writes the
/// fields, stores expected outputs, updates the allocation table, and keeps the last
/// failure (the record is then incomplete).
struct Recorder<'a> {
    cap: &'a Capture,
    vendor: Vendor,
    desc: &'a ApiDesc,
    args: &'a [u64],
    before: &'a BeforeCall,
    /// Read now, or deferred to the graph the copy was captured into.
    read: ReadPlan,
    /// The graph nodes this call made (their sequence id set once it is recorded).
    nodes: Vec<NodeIo>,
    p: PayloadWriter,
    failure: Option<String>,
    /// A D2H copy whose output a reader reads once it completed: (field id, the copy).
    deferred: Option<(u16, Deferred)>,
}

impl Recorder<'_> {
    fn encode(&mut self, fid: u16, plan: Plan) {
        let allocs = &self.cap.allocs;
        match plan {
            Plan::Skip => {}
            Plan::U64(v) => {
                self.p.u64(fid, v);
            }
            Plan::DevPtr(v) => {
                self.p.devptr(fid, v);
            }
            Plan::Handle(v) => {
                self.p.handle(fid, v);
            }
            Plan::Null(ty) => {
                self.p.null(fid, ty);
            }
            Plan::Forget(v) => {
                self.p.devptr(fid, v);
                allocs.remove(v);
                crate::mapped::forget(v);
            }
            Plan::Pin { ptr, len } => {
                self.p.devptr(fid, ptr);
                allocs.insert(ptr, len, Space::PinnedHost);
            }
            Plan::NewAlloc { at, len, space } => {
                // SAFETY: on success the call stored a pointer at `at` (T** out).
                let v = unsafe { read_at::<u64>(at) };
                self.p.devptr(fid, v);
                allocs.insert(v, len, space);
            }
            Plan::NewPitchedAlloc {
                at,
                pitch_at,
                height,
            } => {
                // SAFETY: on success the call stored the pointer at `at` and the pitch at
                // `pitch_at`.
                let (v, pitch) = unsafe { (read_at::<u64>(at), read_at::<u64>(pitch_at)) };
                self.p.devptr(fid, v);
                allocs.insert(v, pitch.saturating_mul(height), Space::Device);
            }
            Plan::ReadHandle { at } => {
                // SAFETY: on success the call stored a handle at `at`.
                self.p.handle(fid, unsafe { read_at::<u64>(at) });
            }
            Plan::ReadU32 { at } => {
                // SAFETY: every OutValue in the table is a 4-byte int or float out.
                self.p.u64(fid, unsafe { read_at::<u32>(at) } as u64);
            }
            Plan::ReadU64 { at } => {
                // SAFETY: a size_t out the call wrote.
                self.p.u64(fid, unsafe { read_at::<u64>(at) });
            }
            Plan::Source { ptr } => {
                self.p.devptr(fid, ptr);
                match &self.before.source {
                    Some(Ok((r, words))) => {
                        self.p.blob(BLOB_FIELD | fid, *r);
                        if !words.is_empty() {
                            self.p.u64_array(POINTER_WORDS_FIELD | fid, words);
                        }
                    }
                    Some(Err(e)) => self.failure = Some(format!("source bytes not recorded: {e}")),
                    None => {}
                }
            }
            Plan::Destination { ptr, expected } => {
                self.p.devptr(fid, ptr);
                if let Some(region) = expected {
                    self.expected_output(fid, region);
                }
            }
            Plan::Parms3D {
                at: _,
                expect_output,
            } => self.parms_3d(fid, expect_output),
            Plan::NewMapping { at, host } => {
                // SAFETY: on success the call stored the device address at `at`.
                let v = unsafe { read_at::<u64>(at) };
                self.p.devptr(fid, v);
                // The mapped address is the host allocation seen from the device: kernel
                // arguments holding it point into that allocation.
                if let Some((start, size, space)) = allocs.lookup(host) {
                    if v != host {
                        let off = host - start;
                        // Pinned memory seen from the device: read through its host
                        // address (the device address may not be readable here).
                        let space = match space {
                            Space::PinnedHost => Space::MappedAlias { host: start },
                            other => other,
                        };
                        allocs.insert(v.wrapping_sub(off), size, space);
                    }
                }
            }
            Plan::Unrecorded(ptr)
                if hrr_archive::api::driver::empty_means_null(self.desc.id).is_some_and(
                    // SAFETY: the struct the call read, its size by the row's table entry.
                    |len| unsafe { host_bytes(ptr, len) }.iter().all(|&b| b == 0),
                ) =>
            {
                // Every byte zero: the struct says what null says (api::driver).
                self.p.null(fid, FieldType::Bytes);
            }
            Plan::Unrecorded(ptr) => {
                self.p.devptr(fid, ptr);
                self.failure = Some(format!(
                    "{}: a struct passed by pointer ({}) is not recorded",
                    self.desc.name,
                    self.desc.params[(fid - 1) as usize].name
                ));
            }
            Plan::ReadBytes { at, len } => {
                // SAFETY: the plan's struct the call reads, `len` bytes by its layout.
                self.p.bytes(fid, unsafe { host_bytes(at, len) }, false);
            }
            Plan::NewAllocNode { at } => self.alloc_node(fid, at),
            Plan::NewArray { .. }
            | Plan::ForgetArray(_)
            | Plan::NewObject { .. }
            | Plan::ForgetObject(_)
            | Plan::LayoutBytes { .. } => {
                if let Err(why) =
                    crate::arrays::encode(&self.cap.objects, self.vendor, &mut self.p, fid, plan)
                {
                    self.failure = Some(why);
                }
            }
            Plan::ReadHandles { at, n } => {
                // SAFETY: the call succeeded, so it read `n` handles at `at`.
                let raw = unsafe { host_bytes(at, n * 8) };
                let handles: Vec<u64> = raw
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
                    .collect();
                self.p.u64_array(fid, &handles);
            }
            Plan::ReadHandleList { at, count_at } => {
                // SAFETY: the call succeeded, so it wrote its count at `count_at` and that
                // many handles at `at` (never more than the capacity the program gave).
                let n = u64::from_le_bytes(
                    unsafe { host_bytes(count_at, 8) }
                        .try_into()
                        .unwrap_or([0; 8]),
                )
                .min(crate::params::MAX_NODE_HANDLES);
                // SAFETY: as above: `n` handles the call wrote.
                let raw = unsafe { host_bytes(at, n * 8) };
                let handles: Vec<u64> = raw
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
                    .collect();
                self.p.u64_array(fid, &handles);
            }
            Plan::StructBytes { at, len } => {
                // SAFETY: a struct of this row's parameter kind, which the call read and
                // wrote in full.
                self.p.bytes(fid, unsafe { host_bytes(at, len) }, false);
            }
        }
    }

    /// A memory allocation node's parameters after the call, then its access descriptors;
    /// the graph's allocation enters the table (kernels and copies address it).
    fn alloc_node(&mut self, fid: u16, at: u64) {
        use hrr_archive::api::mem_alloc_node as m;
        // SAFETY: the call succeeded: it read the struct at `at` and wrote its address.
        let head = unsafe { host_bytes(at, m::SIZE as u64) }.to_vec();
        let word = |o: usize| u64::from_le_bytes(head[o..o + 8].try_into().unwrap_or([0; 8]));
        let (descs, count) = (word(m::ACCESS_DESCS), word(m::ACCESS_COUNT));
        let mut bytes = head.clone();
        if descs != 0 && count > 0 {
            if count > m::MAX_ACCESS_DESCS {
                self.failure = Some(format!("{count} memory access descriptors"));
                return;
            }
            // SAFETY: the runtime read `count` descriptors there.
            bytes.extend_from_slice(unsafe {
                host_bytes(descs, count * m::ACCESS_DESC_SIZE as u64)
            });
        }
        self.p.bytes(fid, &bytes, false);
        let (dptr, size) = (word(m::DPTR), word(m::BYTESIZE));
        if dptr != 0 {
            self.cap.allocs.insert(dptr, size, Space::Device);
        }
    }

    /// A 3D copy's parameters, field by field as the raw struct, with its boxes.
    fn parms_3d(&mut self, fid: u16, expect_output: bool) {
        let Some((parms, raw)) = &self.before.parms else {
            self.p.null(fid, FieldType::Bytes);
            return;
        };
        self.p.bytes(fid, raw, false);
        // The host rows' length where the struct counts an array's elements (replay reads
        // a driver struct's byte width itself).
        if runtime_copy_struct(self.desc) {
            let objects = &self.cap.objects;
            if let Some(why) = crate::arrays::record_row_bytes(objects, parms, &mut self.p) {
                self.failure = Some(why);
            }
        }
        match &self.before.source {
            Some(Ok((r, words))) => {
                self.p.blob(BLOB_FIELD | fid, *r);
                if !words.is_empty() {
                    self.failure = Some(format!(
                        "the source box holds {} device pointers, which replay does not \
                         translate in a 3D copy",
                        words.len()
                    ));
                }
            }
            Some(Err(e)) => self.failure = Some(format!("source box not recorded: {e}")),
            None => {}
        }
        if expect_output {
            self.expected_output(fid, params::destination_box(parms));
        }
    }

    /// The bytes a completed D2H copy wrote: read only once the copy's stream is done. A
    /// copy captured into a graph has not run: each launch of the graph reads them.
    fn expected_output(&mut self, fid: u16, region: HostRegion) {
        match &self.read {
            ReadPlan::ReadNow => {}
            ReadPlan::DeferToGraph { .. } | ReadPlan::GraphNode { .. } => {
                self.nodes.push(NodeIo::Output { seq: 0, region });
                return;
            }
            ReadPlan::Refuse(why) => {
                self.failure = Some(why.clone());
                return;
            }
        }
        // A runtime copy into page-locked memory is read off the program's thread once it
        // completed (a driver copy's stream may belong to a context the runtime's events
        // cannot use: read here).
        if !self.desc.is_driver(self.vendor) {
            if let Some(d) = outputs::defer(self.cap, self.vendor, self.desc, self.args, region) {
                self.p.u64(OUTPUT_PENDING_FIELD, fid as u64);
                self.deferred = Some((fid, d));
                return;
            }
        }
        let waited = if self.desc.is_driver(self.vendor) {
            wait_for_driver_copy(self.desc, self.args)
        } else {
            wait_for_copy(self.vendor, self.desc, self.args)
        };
        if let Some(why) = waited {
            self.failure = Some(why);
        }
        // SAFETY: the completed D2H copy wrote this region.
        match unsafe { store_with_pointers(self.cap, region) } {
            Ok((r, words)) => {
                self.p.blob(BLOB_FIELD | fid, r);
                if !words.is_empty() {
                    self.p.u64_array(POINTER_WORDS_FIELD | fid, &words);
                }
            }
            Err(e) => self.failure = Some(format!("expected output not recorded: {e}")),
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
        ..before_call(cap, desc, args)
    });
    let ret = call();
    crate::range_gate::after_row(desc.id, ret);
    let Some(before) = before else {
        return ret;
    };
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
        };
        if let (ReadPlan::Refuse(why), Some(_)) = (&rec.read, copy_node::update(desc.id)) {
            // Either direction: the node's host side is unknown.
            rec.failure = Some(why.clone());
        }
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
        match (rec.deferred.take(), seq) {
            (Some((fid, d)), Some(seq)) => outputs::submit(cap, d, seq, fid, api),
            (Some((_, d)), None) => outputs::cancel(d),
            (None, _) => {}
        }
        if desc.id == hrr_archive::api::id::Malloc && ret == 0 {
            note_runtime_once(vendor);
        }
    });
    ret
}
