//! Recording one call of a generic table row: the shared capture path for every table
//! API (values, device pointers, handles, allocations, memcpy, memset).
//!
//! Before the call, the copy's direction is resolved and an H2D copy's source bytes are
//! stored. After it, each parameter is decoded and planned (`params`, pure), then what
//! the plan names is read from the program's memory and encoded here ([`Recorder`]).

use std::borrow::Cow;
use std::os::raw::c_int;

use hrr_archive::api::{
    memcpy3d, ApiDesc, CopyDir, ParamKind, Vendor, BLOB_FIELD, COPY_DIR_FIELD, OUTPUT_PENDING_FIELD,
};
use hrr_archive::payload::{BlobRef, FieldType, PayloadWriter};
use hrr_archive::{ArchiveError, ProcessWriter};

use crate::alloc::Space;
use crate::ffi::{host_bytes, read_at};
use crate::outputs::{self, Deferred};
use crate::params::{self, Param, Plan};
use crate::real::stream_synchronize;
use crate::regions::{HostRegion, RegionError};
use crate::runtime_info::note_runtime_once;
use crate::state::{self, Capture};

/// Why a copy's host bytes were not recorded.
#[derive(Debug)]
enum BytesError {
    Region(RegionError),
    Store(ArchiveError),
}

impl std::fmt::Display for BytesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BytesError::Region(e) => e.fmt(f),
            BytesError::Store(e) => e.fmt(f),
        }
    }
}

/// Gathers a region's bytes and stores them as a blob.
///
/// # Safety
/// As [`HostRegion::gather`].
unsafe fn store(writer: &ProcessWriter, region: HostRegion) -> Result<BlobRef, BytesError> {
    // SAFETY: the caller's contract.
    let bytes: Cow<[u8]> = unsafe { region.gather() }.map_err(BytesError::Region)?;
    writer.put_blob(&bytes).map_err(BytesError::Store)
}

/// The 3D-copy parameter struct a row's `Copy3DParms` argument points at, decoded and raw.
///
/// # Safety
/// A row's non-null `Copy3DParms` argument must point at a cudaMemcpy3DParms /
/// hipMemcpy3DParms, which the runtime reads in full.
unsafe fn parms_3d(
    desc: &ApiDesc,
    args: &[u64],
) -> Option<(memcpy3d::Parms, [u8; memcpy3d::SIZE])> {
    let i = desc
        .params
        .iter()
        .position(|p| p.kind == ParamKind::Copy3DParms)?;
    if args[i] == 0 {
        return None;
    }
    // SAFETY: the caller's contract.
    let raw: [u8; memcpy3d::SIZE] = unsafe { host_bytes(args[i], memcpy3d::SIZE as u64) }
        .try_into()
        .ok()?;
    Some((memcpy3d::Parms::decode(&raw), raw))
}

/// The stream parameter of a row, if it has one.
fn stream_of(desc: &ApiDesc, args: &[u64]) -> Option<u64> {
    desc.params
        .iter()
        .position(|p| p.kind == ParamKind::Stream)
        .map(|i| args[i])
}

/// Waits for an asynchronous copy's stream, so its host destination holds the result
/// before capture reads it; Some(why) when waiting failed.
fn wait_for_copy(vendor: Vendor, desc: &ApiDesc, args: &[u64]) -> Option<String> {
    let s = stream_of(desc, args)?;
    let r = stream_synchronize(vendor, s);
    (r != 0).then(|| format!("waiting for stream {s:#x} before reading the copy failed ({r})"))
}

/// What capture took before the call.
struct BeforeCall {
    dir: Option<CopyDir>,
    parms: Option<(memcpy3d::Parms, [u8; memcpy3d::SIZE])>,
    /// An H2D copy's source bytes, stored.
    source: Option<Result<BlobRef, BytesError>>,
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
    let decoded = parms.as_ref().map(|(p, _)| p);
    let dir = params::copy_dir(desc, args, decoded, |a| cap.allocs.is_device(a));
    // A pending read of these host bytes (or of memory being released) goes first.
    outputs::before_row(cap, desc, dir, || host_side(desc, args, dir, decoded), args);
    let source = if dir == Some(CopyDir::HostToDevice) {
        // The last source parameter's (every row has at most one).
        (0..desc.params.len())
            .rev()
            .find_map(|i| params::source(params::decode(desc, i, args), decoded))
            // SAFETY: an H2D copy reads this region at its source (API contract).
            .map(|region| unsafe { store(cap.writer(), region) })
    } else {
        None
    };
    BeforeCall { dir, parms, source }
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
                    Some(Ok(r)) => {
                        self.p.blob(BLOB_FIELD | fid, *r);
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
        }
    }

    /// A 3D copy's parameters, field by field as the raw struct, with its boxes.
    fn parms_3d(&mut self, fid: u16, expect_output: bool) {
        let Some((parms, raw)) = &self.before.parms else {
            self.p.null(fid, FieldType::Bytes);
            return;
        };
        self.p.bytes(fid, raw, false);
        if parms.src_array != 0 || parms.dst_array != 0 {
            self.failure = Some(
                "3D copy to or from an array (cudaArray/hipArray): arrays are not captured".into(),
            );
        }
        match &self.before.source {
            Some(Ok(r)) => {
                self.p.blob(BLOB_FIELD | fid, *r);
            }
            Some(Err(e)) => self.failure = Some(format!("source box not recorded: {e}")),
            None => {}
        }
        if expect_output {
            self.expected_output(fid, params::destination_box(parms));
        }
    }

    /// The bytes a completed D2H copy wrote: into page-locked memory, recorded by a reader
    /// thread once the copy completed (the record says its output is pending); otherwise
    /// read here, once the copy's stream is done.
    fn expected_output(&mut self, fid: u16, region: HostRegion) {
        if let Some(d) = outputs::defer(self.cap, self.vendor, self.desc, self.args, region) {
            self.p.u64(OUTPUT_PENDING_FIELD, fid as u64);
            self.deferred = Some((fid, d));
            return;
        }
        if let Some(why) = wait_for_copy(self.vendor, self.desc, self.args) {
            self.failure = Some(why);
        }
        // SAFETY: the completed D2H copy wrote this region.
        match unsafe { store(self.cap.writer(), region) } {
            Ok(r) => {
                self.p.blob(BLOB_FIELD | fid, r);
            }
            Err(e) => self.failure = Some(format!("expected output not recorded: {e}")),
        }
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
    let before = state::guarded(desc.name, || before_call(cap, desc, args));
    let ret = call();
    let Some(before) = before else {
        return ret;
    };
    state::guarded(desc.name, || {
        let mut rec = Recorder {
            cap,
            vendor,
            desc,
            args,
            before: &before,
            p: PayloadWriter::new(),
            failure: None,
            deferred: None,
        };
        // A synchronisation the program observes: the pending reads it covers first.
        outputs::after_row(desc, args, ret);
        for i in 0..desc.params.len() {
            let plan = params::plan(params::decode(desc, i, args), ret, before.dir);
            rec.encode(ApiDesc::field_id(i), plan);
        }
        if let Some(d) = before.dir {
            rec.p.u64(COPY_DIR_FIELD, d as u64);
        }
        let api = desc.symbol(vendor).unwrap_or(desc.name);
        let seq = cap.record(desc.id, ret, &rec.p, rec.failure.as_deref(), api);
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
