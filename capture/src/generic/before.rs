//! What a row's capture takes before the real call: the copy struct a row passes by
//! pointer (the runtime's 3D parameters or the driver's), the copy's direction, the
//! pending reads that must go first, and an H2D copy's source bytes, stored.

use hrr_archive::api::{drv_memcpy, memcpy3d, ApiDesc, CopyDir, ParamKind};
use hrr_archive::payload::BlobRef;

use super::{store_with_pointers, BytesError};
use crate::ffi::host_bytes;
use crate::graph_io;
use crate::outputs;
use crate::params::{self, Param};
use crate::regions::HostRegion;
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

pub(super) fn before_call(cap: &Capture, desc: &ApiDesc, args: &[u64]) -> BeforeCall {
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
    let source_unknown = source_region.and_then(|region| {
        let asynchronous = desc.params.iter().any(|p| p.kind == ParamKind::Stream);
        let pageable = cap.allocs.lookup(region.ptr()).is_none();
        crate::host_fns::source_unknown(asynchronous, pageable)
    });
    BeforeCall {
        dir,
        parms,
        source,
        source_region,
        source_unknown,
        graph_row: graph_io::BeforeRow::default(),
    }
}
