//! What one parameter of a generic table row contributes to its record, decided without
//! touching memory. [`decode`] turns a row's raw argument into a typed [`Param`] (its
//! length references resolved); [`plan`] decides, from the call's result and the copy's
//! direction, what the record gets ([`Plan`]); `generic` then reads what the plan names
//! and encodes it. Both are pure: the tests below state capture's policy per kind.

use std::os::raw::c_int;

use hrr_archive::api::{mem_alloc_node, memcpy3d, mempool, ApiDesc, CopyDir, ParamKind};
use hrr_archive::payload::FieldType;

use crate::alloc::Space;
use crate::regions::HostRegion;

/// One argument of a call, by what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// An integer passed through (flags, sizes, a copy kind).
    Value(u64),
    DevPtr(u64),
    /// Memory being freed or unregistered.
    Freed(u64),
    /// A stream or event.
    Handle(u64),
    /// `T**` out: a new allocation of `len` bytes in `space`.
    OutAlloc {
        at: u64,
        len: u64,
        space: Space,
    },
    /// `stream*` / `event*` out.
    OutHandle {
        at: u64,
    },
    /// A 4-byte int or float out.
    OutU32 {
        at: u64,
    },
    /// A `size_t` out.
    OutSize {
        at: u64,
    },
    /// `T**` out of a pitched allocation whose pitch the call writes at `pitch_at`.
    OutPitched {
        at: u64,
        pitch_at: u64,
        height: u64,
    },
    /// A struct the call fills; not recorded.
    OutStruct,
    /// Host memory being page-locked.
    Pinned {
        ptr: u64,
        len: u64,
    },
    /// A copy's source; its host bytes, for an H2D copy.
    CopySrc {
        region: HostRegion,
    },
    /// A copy's destination; its host bytes, for a D2H copy.
    CopyDst {
        region: HostRegion,
    },
    /// A pointer to a 3D copy's parameters (or a driver 2D/3D copy struct).
    Parms3D {
        at: u64,
    },
    /// `CUdeviceptr*` out: the device address of mapped pinned host memory at `host`.
    OutMapped {
        at: u64,
        host: u64,
    },
    /// An input struct capture does not record (null, or the record is incomplete).
    Unrecorded(u64),
    /// A struct the call reads, `len` bytes at `at` (memory pool properties).
    InStruct {
        at: u64,
        len: u64,
    },
    /// A value the call reads through a pointer, `width` bytes (None: a width capture
    /// does not know, for an attribute it does not know).
    InValue {
        at: u64,
        width: Option<usize>,
    },
    /// A graph memory allocation node's parameters at `at`.
    AllocNode {
        at: u64,
    },
    /// `n` node handles at `at` (a graph node's dependencies).
    Handles {
        at: u64,
        n: u64,
    },
    /// `T*` out of handles, as many as the `size_t` at `count_at` says after the call
    /// (at most `MAX_NODE_HANDLES`).
    HandleList {
        at: u64,
        count_at: u64,
    },
    /// A pointer to a struct of `len` bytes recorded as it is (graph instantiation
    /// parameters, memset node parameters).
    Struct {
        at: u64,
        len: u64,
    },
    /// `array*` out: a new array (or a mipmapped array's level, or a mipmapped array);
    /// `format` is where its element format comes from.
    OutArray {
        at: u64,
        format: ArrayFormat,
    },
    /// An array or mipmapped array being freed.
    FreedArray(u64),
    /// `object*` out: a new texture or surface object.
    OutObject {
        at: u64,
    },
    /// A texture or surface object being destroyed.
    FreedObject(u64),
    /// A descriptor of the named `api::texture` layout, passed by pointer.
    Layout {
        at: u64,
        name: &'static str,
    },
    /// An unused register before a struct passed on the stack: nothing to record.
    Spilled,
}

/// Where a new array's element size comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayFormat {
    /// The descriptor at `at`, of the named layout (`api::texture`): a channel format
    /// descriptor, or one of the driver's array descriptors.
    Descriptor { at: u64, layout: &'static str },
    /// The mipmapped array it is a level of.
    LevelOf(u64),
    /// A plane of a multi-planar array: the driver says its element (`arrays`).
    Plane,
}

/// The most dependencies of one graph node capture reads.
pub const MAX_NODE_HANDLES: u64 = 1 << 16;

/// Parameter `i` of a call of `desc` with raw `args`.
pub fn decode(desc: &ApiDesc, i: usize, args: &[u64]) -> Param {
    let a = args[i];
    let arg = |name: &str| desc.param_index(name).map(|j| args[j]).unwrap_or(0);
    let rows = |pitch, width, height| HostRegion::Rows {
        ptr: a,
        pitch: arg(pitch),
        width: arg(width),
        height: arg(height),
    };
    match desc.params[i].kind {
        ParamKind::Value | ParamKind::CopyKind | ParamKind::CaptureMode => Param::Value(a),
        ParamKind::DevPtr => Param::DevPtr(a),
        ParamKind::FreeDevPtr | ParamKind::FreeHostPtr => Param::Freed(a),
        ParamKind::Stream
        | ParamKind::Event
        | ParamKind::Context
        | ParamKind::FreeContext
        | ParamKind::Graph
        | ParamKind::GraphExec
        | ParamKind::FreeGraph
        | ParamKind::FreeGraphExec
        | ParamKind::GraphNode => Param::Handle(a),
        ParamKind::OutGraph
        | ParamKind::OutGraphRef
        | ParamKind::OutGraphExec
        | ParamKind::OutGraphNode => Param::OutHandle { at: a },
        ParamKind::MemLocation => Param::Struct { at: a, len: 8 },
        // The program's host code and its data: their addresses, for the reader.
        ParamKind::HostFn | ParamKind::StreamCallback | ParamKind::HostFnData => Param::Value(a),
        ParamKind::HostNodeParams => Param::Struct { at: a, len: 16 },
        ParamKind::GraphNodes(count) => Param::Handles {
            at: a,
            n: arg(count),
        },
        ParamKind::MemsetNodeParams => Param::Struct {
            at: a,
            len: hrr_archive::api::MEMSET_PARAMS_SIZE,
        },
        ParamKind::MemAllocNodeParams => Param::AllocNode { at: a },
        ParamKind::HipMemsetNodeParams => Param::Struct {
            at: a,
            len: hrr_archive::api::HIP_MEMSET_PARAMS_SIZE,
        },
        // A reserved range is where kernels' and copies' device addresses will point.
        ParamKind::OutDevPtr(len) | ParamKind::OutAddressRange(len) => Param::OutAlloc {
            at: a,
            len: arg(len),
            space: Space::Device,
        },
        ParamKind::OutHostPtr(len) => Param::OutAlloc {
            at: a,
            len: arg(len),
            space: Space::PinnedHost,
        },
        ParamKind::OutManagedPtr(len) => Param::OutAlloc {
            at: a,
            len: arg(len),
            space: Space::Managed,
        },
        ParamKind::OutStream
        | ParamKind::OutEvent
        | ParamKind::OutContext
        | ParamKind::OutContextRef => Param::OutHandle { at: a },
        ParamKind::OutValue => Param::OutU32 { at: a },
        ParamKind::OutStruct => Param::OutStruct,
        ParamKind::OutSize => Param::OutSize { at: a },
        ParamKind::OutPitchedDevPtr(pitch, height) => Param::OutPitched {
            at: a,
            pitch_at: arg(pitch),
            height: arg(height),
        },
        ParamKind::RegisterHostPtr(len) => Param::Pinned {
            ptr: a,
            len: arg(len),
        },
        ParamKind::CopySrc(len) | ParamKind::HostSrc(len) => Param::CopySrc {
            region: HostRegion::Linear {
                ptr: a,
                len: arg(len),
            },
        },
        ParamKind::CopySrc2D(pitch, width, height) => Param::CopySrc {
            region: rows(pitch, width, height),
        },
        ParamKind::CopyDst(len) | ParamKind::HostDst(len) => Param::CopyDst {
            region: HostRegion::Linear {
                ptr: a,
                len: arg(len),
            },
        },
        ParamKind::CopyDst2D(pitch, width, height) => Param::CopyDst {
            region: rows(pitch, width, height),
        },
        ParamKind::Copy3DParms | ParamKind::DrvMemcpy2D | ParamKind::DrvMemcpy3D => {
            Param::Parms3D { at: a }
        }
        ParamKind::OutMappedDevPtr(host) => Param::OutMapped {
            at: a,
            host: arg(host),
        },
        ParamKind::UnrecordedStructIn => Param::Unrecorded(a),
        ParamKind::OutMemPool | ParamKind::OutDevicePool => Param::OutHandle { at: a },
        ParamKind::MemPool | ParamKind::FreeMemPool => Param::Handle(a),
        ParamKind::MemPoolProps => Param::InStruct {
            at: a,
            len: mempool::PROPS_SIZE as u64,
        },
        ParamKind::PoolAttrValue(attr) => Param::InValue {
            at: a,
            width: mempool::pool_attribute(arg(attr)).map(|(_, w)| w),
        },
        ParamKind::OutPoolAttrValue(attr) => match mempool::pool_attribute(arg(attr)) {
            Some((_, 4)) => Param::OutU32 { at: a },
            Some(_) => Param::OutSize { at: a },
            None => Param::OutStruct,
        },
        ParamKind::InstantiateParams => Param::Struct {
            at: a,
            len: hrr_archive::api::INSTANTIATE_PARAMS_SIZE,
        },
        ParamKind::OutDevicePropsR0600 => Param::Struct {
            at: a,
            len: hrr_archive::api::hip_abi::layout::DEVICE_PROP_R0600 as u64,
        },
        ParamKind::OutArray(d) | ParamKind::OutMipmappedArray(d) => Param::OutArray {
            at: a,
            format: ArrayFormat::Descriptor {
                at: arg(d),
                layout: desc
                    .param_index(d)
                    .and_then(|j| match desc.params[j].kind {
                        ParamKind::ByLayout(l) => Some(l),
                        _ => None,
                    })
                    .unwrap_or("channel_desc"),
            },
        },
        ParamKind::OutArrayLevel(mipmap) => Param::OutArray {
            at: a,
            format: ArrayFormat::LevelOf(arg(mipmap)),
        },
        ParamKind::OutArrayPlane(_) => Param::OutArray {
            at: a,
            format: ArrayFormat::Plane,
        },
        ParamKind::Array | ParamKind::TexObject | ParamKind::SurfObject => Param::Handle(a),
        ParamKind::FreeArray | ParamKind::FreeMipmappedArray => Param::FreedArray(a),
        ParamKind::OutTextureObject | ParamKind::OutSurfaceObject => Param::OutObject { at: a },
        ParamKind::FreeTextureObject | ParamKind::FreeSurfaceObject => Param::FreedObject(a),
        ParamKind::ByLayout(name) => Param::Layout { at: a, name },
        ParamKind::SpilledRegister => Param::Spilled,
        ParamKind::LaunchAttrValue(_) => Param::Struct {
            at: a,
            len: hrr_archive::api::launch_config::ATTR_VALUE_SIZE as u64,
        },
        ParamKind::OutGraphNodeList(count) => Param::HandleList {
            at: a,
            count_at: arg(count),
        },
        ParamKind::InOutCount => Param::OutSize { at: a },
        ParamKind::OutMemHandle => Param::OutHandle { at: a },
        ParamKind::MemHandle | ParamKind::FreeMemHandle => Param::Handle(a),
        ParamKind::MapAt(_) | ParamKind::UnmapAt => Param::DevPtr(a),
        ParamKind::DeviceList(count) => match arg(count) {
            n if n <= hrr_archive::api::MAX_DEVICE_LIST => Param::Struct { at: a, len: n * 4 },
            // A count no machine has: not recorded, so the record is incomplete.
            _ => Param::Unrecorded(a),
        },
        ParamKind::AccessDescs(count) => match arg(count) {
            n if n <= mem_alloc_node::MAX_ACCESS_DESCS => Param::Struct {
                at: a,
                len: n * mem_alloc_node::ACCESS_DESC_SIZE as u64,
            },
            // More descriptors than GPUs in any machine: not recorded, so the record is
            // incomplete rather than cut short.
            _ => Param::Unrecorded(a),
        },
    }
}

/// What the record gets for one parameter, and what memory must be read for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// No field (an out value the call did not write, a struct not replayed).
    Skip,
    U64(u64),
    DevPtr(u64),
    Handle(u64),
    /// A typed null: the out parameter received nothing.
    Null(FieldType),
    /// The pointer; its allocation leaves the table.
    Forget(u64),
    /// The pointer; `len` bytes there enter the table as pinned host memory.
    Pin {
        ptr: u64,
        len: u64,
    },
    /// The new allocation's address read at `at`; it enters the table.
    NewAlloc {
        at: u64,
        len: u64,
        space: Space,
    },
    /// The new pitched allocation read at `at`, its pitch at `pitch_at`: it enters the
    /// table as pitch x height bytes.
    NewPitchedAlloc {
        at: u64,
        pitch_at: u64,
        height: u64,
    },
    /// A handle read at `at`.
    ReadHandle {
        at: u64,
    },
    /// A 4-byte value read at `at`.
    ReadU32 {
        at: u64,
    },
    /// An 8-byte value read at `at`.
    ReadU64 {
        at: u64,
    },
    /// The pointer, and the source bytes stored before the call (if it was H2D).
    Source {
        ptr: u64,
    },
    /// The pointer, and when `expected` is set the bytes the completed copy wrote there,
    /// read once its stream was waited for.
    Destination {
        ptr: u64,
        expected: Option<HostRegion>,
    },
    /// The 3D parameters read at `at` (with the source box stored before the call), and
    /// when `expect_output` the destination box the completed copy wrote.
    Parms3D {
        at: u64,
        expect_output: bool,
    },
    /// The device address read at `at`, which stands for the pinned host memory at
    /// `host`: it enters the table as an alias of that allocation.
    NewMapping {
        at: u64,
        host: u64,
    },
    /// The pointer of an input struct capture does not record: the record is incomplete.
    Unrecorded(u64),
    /// `len` bytes read at `at`, recorded verbatim.
    ReadBytes {
        at: u64,
        len: u64,
    },
    /// A memory allocation node's parameters read at `at` after the call: its new
    /// allocation enters the table.
    NewAllocNode {
        at: u64,
    },
    /// `n` handles read at `at`.
    ReadHandles {
        at: u64,
        n: u64,
    },
    /// The handles at `at`, as many as the count at `count_at` holds (bounded).
    ReadHandleList {
        at: u64,
        count_at: u64,
    },
    /// `len` bytes read at `at`, as they are after the call.
    StructBytes {
        at: u64,
        len: u64,
    },
    /// The new array's handle read at `at`; it enters the object table.
    NewArray {
        at: u64,
        format: ArrayFormat,
    },
    /// The handle; the array leaves the object table.
    ForgetArray(u64),
    /// The new object's handle read at `at`; it enters the live objects.
    NewObject {
        at: u64,
    },
    /// The handle; the object leaves the live objects.
    ForgetObject(u64),
    /// The descriptor at `at`, by the named layout (the vendor fixes its size).
    LayoutBytes {
        at: u64,
        name: &'static str,
    },
}

/// Capture's policy for one parameter: what a call with result `ret` and copy direction
/// `dir` records of it. An out parameter is read only when the call succeeded and the
/// program passed somewhere to write; a copy's expected output only when a D2H copy
/// succeeded; an allocation enters or leaves the table only on success.
pub fn plan(param: Param, ret: c_int, dir: Option<CopyDir>) -> Plan {
    let ok = ret == 0;
    let d2h_done = ok && dir == Some(CopyDir::DeviceToHost);
    match param {
        Param::Value(v) => Plan::U64(v),
        Param::DevPtr(p) => Plan::DevPtr(p),
        Param::Freed(p) if ok => Plan::Forget(p),
        Param::Freed(p) => Plan::DevPtr(p),
        Param::Handle(h) => Plan::Handle(h),
        Param::OutAlloc { at, len, space } if ok && at != 0 => Plan::NewAlloc { at, len, space },
        Param::OutAlloc { .. } => Plan::Null(FieldType::DevPtr),
        Param::OutHandle { at } if ok && at != 0 => Plan::ReadHandle { at },
        Param::OutHandle { .. } => Plan::Null(FieldType::Handle),
        Param::OutU32 { at } if ok && at != 0 => Plan::ReadU32 { at },
        Param::OutSize { at } if ok && at != 0 => Plan::ReadU64 { at },
        Param::OutU32 { .. } | Param::OutSize { .. } | Param::OutStruct => Plan::Skip,
        Param::OutPitched {
            at,
            pitch_at,
            height,
        } if ok && at != 0 && pitch_at != 0 => Plan::NewPitchedAlloc {
            at,
            pitch_at,
            height,
        },
        Param::OutPitched { .. } => Plan::Null(FieldType::DevPtr),
        Param::Pinned { ptr, len } if ok => Plan::Pin { ptr, len },
        Param::Pinned { ptr, .. } => Plan::DevPtr(ptr),
        Param::CopySrc { region } => Plan::Source { ptr: region.ptr() },
        Param::CopyDst { region } => Plan::Destination {
            ptr: region.ptr(),
            expected: d2h_done.then_some(region),
        },
        Param::OutMapped { at, host } if ok && at != 0 => Plan::NewMapping { at, host },
        Param::OutMapped { .. } => Plan::Null(FieldType::DevPtr),
        Param::Unrecorded(0) => Plan::Null(FieldType::Bytes),
        Param::Unrecorded(p) => Plan::Unrecorded(p),
        Param::Parms3D { at: 0 } => Plan::Null(FieldType::Bytes),
        Param::Parms3D { at } => Plan::Parms3D {
            at,
            expect_output: d2h_done,
        },
        // Inputs: read whatever the call returned (the runtime may have refused them).
        Param::InStruct { at, len } if at != 0 => Plan::ReadBytes { at, len },
        Param::InStruct { .. } => Plan::Null(FieldType::Bytes),
        Param::InValue { at, width: Some(4) } if at != 0 => Plan::ReadU32 { at },
        Param::InValue { at, width: Some(8) } if at != 0 => Plan::ReadU64 { at },
        Param::InValue { .. } => Plan::Null(FieldType::U64),
        // The runtime read the array only when the call succeeded; more nodes than any
        // graph holds is no array it accepted.
        Param::Handles { at, n } if ok && at != 0 && n > 0 && n <= MAX_NODE_HANDLES => {
            Plan::ReadHandles { at, n }
        }
        Param::Handles { .. } => Plan::Null(FieldType::U64Array),
        Param::HandleList { at, count_at } if ok && at != 0 && count_at != 0 => {
            Plan::ReadHandleList { at, count_at }
        }
        Param::HandleList { .. } => Plan::Null(FieldType::U64Array),
        Param::AllocNode { at } if ok && at != 0 => Plan::NewAllocNode { at },
        Param::AllocNode { .. } => Plan::Null(FieldType::Bytes),
        Param::Struct { at: 0, .. } => Plan::Null(FieldType::Bytes),
        Param::Struct { at, len } => Plan::StructBytes { at, len },
        Param::OutArray { at, format } if ok && at != 0 => Plan::NewArray { at, format },
        Param::OutArray { .. } => Plan::Null(FieldType::Handle),
        Param::FreedArray(h) if ok => Plan::ForgetArray(h),
        Param::OutObject { at } if ok && at != 0 => Plan::NewObject { at },
        Param::OutObject { .. } => Plan::Null(FieldType::Handle),
        Param::FreedObject(h) if ok => Plan::ForgetObject(h),
        Param::FreedArray(h) | Param::FreedObject(h) => Plan::Handle(h),
        // Read whatever the call returned: replay passes the same and expects the same.
        Param::Layout { at: 0, .. } => Plan::Null(FieldType::Bytes),
        Param::Layout { at, name } => Plan::LayoutBytes { at, name },
        Param::Spilled => Plan::Skip,
    }
}

/// The host bytes an H2D copy reads for this parameter (taken before the call), given
/// the 3D parameters when the row has them.
pub fn source(param: Param, parms: Option<&memcpy3d::Parms>) -> Option<HostRegion> {
    match param {
        Param::CopySrc { region } => Some(region),
        Param::Parms3D { .. } => parms.map(|p| HostRegion::Box {
            side: p.src,
            extent: p.extent,
        }),
        _ => None,
    }
}

/// The destination box a D2H 3D copy writes.
pub fn destination_box(parms: &memcpy3d::Parms) -> HostRegion {
    HostRegion::Box {
        side: parms.dst,
        extent: parms.extent,
    }
}

/// A copy's direction from its kind, or for "default" from where its pointers live
/// (`is_device`); the 3D parameters carry their own kind and pointers.
pub fn copy_dir(
    desc: &ApiDesc,
    args: &[u64],
    parms: Option<&memcpy3d::Parms>,
    is_device: impl Fn(u64) -> bool,
) -> Option<CopyDir> {
    if let Some(p) = parms {
        let dst = p.dst_array != 0 || is_device(p.dst.ptr);
        let src = p.src_array != 0 || is_device(p.src.ptr);
        return CopyDir::resolve(p.kind as i64, dst, src);
    }
    let find = |f: fn(&ParamKind) -> bool| desc.params.iter().position(|p| f(&p.kind));
    // A copy to or from an array (`cudaMemcpy2DToArray`, ...): the array is the device
    // side, standing for whichever side has no pointer.
    if find(|k| *k == ParamKind::Array).is_some() {
        let side = |f: fn(&ParamKind) -> bool| find(f).is_none_or(|i| is_device(args[i]));
        let dst = side(|k| matches!(k, ParamKind::CopyDst(_) | ParamKind::CopyDst2D(..)));
        let src = side(|k| matches!(k, ParamKind::CopySrc(_) | ParamKind::CopySrc2D(..)));
        let kind = find(|k| *k == ParamKind::CopyKind)?;
        return CopyDir::resolve(args[kind] as i64, dst, src);
    }
    // Driver copies have no kind: the API fixes the direction.
    if find(|k| matches!(k, ParamKind::HostSrc(_))).is_some() {
        return Some(CopyDir::HostToDevice);
    }
    if find(|k| matches!(k, ParamKind::HostDst(_))).is_some() {
        return Some(CopyDir::DeviceToHost);
    }
    let dst = find(|k| matches!(k, ParamKind::CopyDst(_) | ParamKind::CopyDst2D(..)))?;
    let src = find(|k| matches!(k, ParamKind::CopySrc(_) | ParamKind::CopySrc2D(..)))?;
    // A copy without a kind argument (`cuMemcpy`, unified addressing) goes where its
    // pointers live, as the runtime's "default" kind.
    let kind = find(|k| *k == ParamKind::CopyKind).map_or(4, |k| args[k] as i64);
    CopyDir::resolve(kind, is_device(args[dst]), is_device(args[src]))
}

#[cfg(test)]
mod tests;
