//! What a row's capture takes before the real call: the copy struct a row passes by
//! pointer (the runtime's 3D parameters or the driver's), the copy's direction, the
//! pending reads that must go first, and an H2D copy's source bytes, stored.

use std::cell::Cell;

use hrr_archive::api::{drv_memcpy, hip_abi, id, memcpy3d, ApiDesc, CopyDir, ParamKind, Vendor};
use hrr_archive::payload::BlobRef;

use super::{store_with_pointers, BytesError};
use crate::capturing::{stream_capture, StreamCapture};
use crate::ffi::host_bytes;
use crate::graph_io;
use crate::outputs;
use crate::params::{self, Param};
use crate::regions::HostRegion;
use crate::source_reads::{self, SourceRead};
use crate::state::Capture;

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
pub(super) fn runtime_copy_struct(desc: &ApiDesc) -> bool {
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

/// A copy source's read for `source_reads`, on the runtime's callback thread.
fn reader(region: HostRegion) -> source_reads::Reader {
    Box::new(move || {
        let cap = crate::state::current().ok_or("capture had stopped")?;
        // SAFETY: the copy about to run reads this region at its source (API contract),
        // and the program may not change it before the copy completes.
        unsafe { store_with_pointers(cap, region) }.map_err(|e| e.to_string())
    })
}

/// What capture took before the call.
pub(super) struct BeforeCall {
    pub(super) dir: Option<CopyDir>,
    pub(super) parms: Option<(memcpy3d::Parms, Vec<u8>)>,
    /// An H2D copy's source bytes, stored, and the offsets of the device pointers in
    /// them (`AllocTable::pointer_words_in`).
    pub(super) source: Option<Result<(BlobRef, Vec<u64>), BytesError>>,
    /// The host region an H2D copy reads (a graph node reads it again at each launch).
    pub(super) source_region: Option<HostRegion>,
    /// Why the source bytes read now may not be the ones the copy reads (a host function
    /// queued earlier may still run: `host_fns`), for a copy that runs when issued.
    pub(super) source_unknown: Option<&'static str>,
    /// Behind such a host function: an asynchronous copy's source, read when the copy
    /// runs (`source_reads`), taken once the copy is recorded.
    pub(super) source_later: Cell<Option<SourceRead>>,
    /// Whether `source_later` was queued.
    pub(super) source_is_later: bool,
    /// Behind such a host function: a synchronous copy's source, read once the call
    /// returned (it ran after what it waited for, and the copy changed none of it).
    pub(super) source_after: bool,
    /// What a graph row needs from before its call.
    pub(super) graph_row: graph_io::BeforeRow,
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

pub(super) fn before_call(
    cap: &Capture,
    vendor: Vendor,
    desc: &ApiDesc,
    args: &[u64],
) -> BeforeCall {
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
    // HIP's event calls invalidate a capture of the stream an event was last recorded on
    // (clr's hip_event.cpp): before a stream begins capturing, capture's own events
    // recorded there are done with.
    // A stream that waits for an event recorded in a capture joins it.
    if vendor == Vendor::Hip {
        match hip_abi::base_row(desc.id) {
            id::StreamBeginCapture => {
                outputs::before_hip_capture(args[0]);
                crate::mapped::before_hip_capture(args[0]);
            }
            id::StreamWaitEvent => outputs::before_hip_wait(args[0], args[1]),
            _ => {}
        }
    }
    let source_region = if dir == Some(CopyDir::HostToDevice) {
        // The last source parameter's (every row has at most one).
        (0..desc.params.len())
            .rev()
            .find_map(|i| params::source(params::decode(desc, i, args), decoded))
    } else {
        None
    };
    let (mut source_later, mut source_after, mut source_unknown) = (None, false, None);
    if let (Some(region), true) = (source_region, crate::host_fns::pending()) {
        // A host function queued before may still write the source.
        let stream =
            (desc.params.iter().position(|p| p.kind == ParamKind::Stream)).map(|i| args[i]);
        let pageable = cap.allocs.lookup(region.ptr()).is_none();
        match stream {
            // Staged by the runtime at the call, as read now.
            Some(_) if pageable => {}
            // Read in the stream's order, just before the copy.
            Some(s) if parms.is_none() && stream_capture(vendor, s) == StreamCapture::Idle => {
                source_later = source_reads::defer(vendor, s, reader(region));
            }
            None => source_after = true,
            Some(_) => {}
        }
        if source_later.is_none() && !source_after {
            source_unknown = crate::host_fns::source_unknown(stream.is_some(), pageable);
        }
    }
    // SAFETY: an H2D copy reads this region at its source (API contract).
    let source = (source_later.is_none() && !source_after)
        .then(|| source_region.map(|region| unsafe { store_with_pointers(cap, region) }))
        .flatten();
    BeforeCall {
        dir,
        parms,
        source,
        source_region,
        source_unknown,
        source_is_later: source_later.is_some(),
        source_later: Cell::new(source_later),
        source_after,
        graph_row: graph_io::BeforeRow::default(),
    }
}
