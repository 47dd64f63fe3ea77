//! After the real call: [`Recorder`] reads what each parameter's plan names from the
//! program's memory and encodes it (values, handles, allocations entering or leaving
//! the table, a copy's source blob, a D2H copy's expected output read now, deferred to a
//! reader or to the copy's graph), keeping the last failure.

use hrr_archive::api::{
    ApiDesc, Vendor, BLOB_FIELD, OUTPUT_PENDING_FIELD, POINTER_WORDS_FIELD, SOURCE_PENDING_FIELD,
};
use hrr_archive::payload::{FieldType, PayloadWriter};

use super::before::{runtime_copy_struct, BeforeCall};
use super::{store_with_pointers, stream_of};
use crate::alloc::Space;
use crate::capturing::{relaxed, ReadPlan};
use crate::ffi::{host_bytes, read_at};
use crate::graph_io::NodeIo;
use crate::outputs::{self, Deferred};
use crate::params::{self, Plan};
use crate::real::{driver_stream_synchronize, stream_synchronize};
use crate::regions::HostRegion;
use crate::state::Capture;

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

/// Encodes a call's parameters once it returned: reads what each plan names, writes the
/// fields, stores expected outputs, updates the allocation table, and keeps the last
/// failure (the record is then incomplete).
pub(super) struct Recorder<'a> {
    pub(super) cap: &'a Capture,
    pub(super) vendor: Vendor,
    pub(super) desc: &'a ApiDesc,
    pub(super) args: &'a [u64],
    pub(super) before: &'a BeforeCall,
    /// Read now, or deferred to the graph the copy was captured into.
    pub(super) read: ReadPlan,
    /// The graph nodes this call made (their sequence id set once it is recorded).
    pub(super) nodes: Vec<NodeIo>,
    pub(super) p: PayloadWriter,
    pub(super) failure: Option<String>,
    /// A D2H copy whose output a reader reads once it completed: (field id, the copy).
    pub(super) deferred: Option<(u16, Deferred)>,
    /// An H2D copy whose source is read when it runs (`source_reads`): its field id.
    pub(super) source_later: Option<u16>,
}

impl Recorder<'_> {
    pub(super) fn encode(&mut self, fid: u16, plan: Plan) {
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
                    None if self.before.source_is_later => {
                        self.p.u64(SOURCE_PENDING_FIELD, fid as u64);
                        self.source_later = Some(fid);
                    }
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
        // A copy into page-locked memory is read off the program's thread once it
        // completed. A driver row is, only where capture's events are the driver's (no
        // shared runtime: `events::serve_driver_rows`); beside a shared runtime its stream
        // may belong to a context the runtime's events cannot use: read here.
        if !self.desc.is_driver(self.vendor) || crate::events::serve_driver_rows() {
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
