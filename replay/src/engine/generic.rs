//! Generic table rows, in three steps per parameter kind:
//!
//! 1. decode and policy (`plan_call`, pure): from the payload alone, what replay passes
//!    for each parameter: a value as captured, an address to translate, a handle to map,
//!    an out slot, a staged copy source or result, a stand-in host buffer, 3D copy
//!    parameters; limits and inconsistent records are refused here;
//! 2. encode (`Ctx::encode`): each plan turned into the argument word the typed call
//!    takes (translation, staging, slots);
//! 3. after the call: what it created is recorded (`outputs`: addresses, handles, live
//!    resources) and a D2H result compared with the captured bytes (`copies`).

use std::collections::HashMap;

use hrr_archive::api::launch_config::{self, RecordedAttr};
use hrr_archive::api::ranges;
use hrr_archive::api::{
    drv_memcpy, memcpy3d, mempool, ApiDesc, CopyDir, ParamKind, COPY_DIR_FIELD,
    HIP_MEMSET_PARAMS_SIZE, INSTANTIATE_PARAMS_SIZE, MEMSET_PARAMS_SIZE,
};
use hrr_archive::payload::Payload;
use hrr_archive::Event;

use super::{Ctx, EvResult, EventError};
use crate::runtime::{call_row, RuntimeError};
use crate::translate::Translated;

/// The words of one out slot (a struct, a value, a list of handles the call writes).
pub(super) const OUT_SLOT_WORDS: usize = 2048;

/// `cudaStreamCaptureModeRelaxed` / `hipStreamCaptureModeRelaxed`.
const CAPTURE_MODE_RELAXED: u64 = 2;

/// What replay passes for one parameter: its kind's policy applied to the captured value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ArgPlan {
    /// Passed as captured (values, copy kinds).
    Value(u64),
    /// A captured device or pinned-host address, translated to the replay allocation.
    Address(u64),
    /// A captured address the call reads or writes `len` bytes from: translated when the
    /// replay allocation holding it holds all of them, else refused before the call.
    Range {
        what: &'static str,
        addr: u64,
        len: u64,
    },
    /// A captured stream or event, mapped to the replay handle created for it.
    Handle(u64),
    /// A captured physical memory handle (`cuMemCreate`), mapped to replay's.
    MemHandle(u64),
    /// A stream or kernel-node attribute's value as captured: its address or event
    /// translated as the attribute says (`launchcfg::plan_attrs`), passed by pointer.
    LaunchAttr(RecordedAttr),
    /// A captured context: as `Handle`, or, when no recorded call created it, the
    /// device's primary context (`Ctx::adopt_primary_context`).
    Context(u64),
    /// An out parameter: a slot the call writes.
    OutSlot,
    /// An in-and-out count: a slot holding this value, which the call rewrites.
    InOutSlot(u64),
    /// A page-aligned host buffer of this many bytes stands in for the program's
    /// registered memory.
    RegisterHost(u64),
    /// An H2D copy's source: this parameter's blob, of `len` bytes where the copy's
    /// geometry fixes it.
    Source {
        what: &'static str,
        len: Option<u64>,
    },
    /// A D2H copy's destination: a staging buffer of `len` bytes, compared after the
    /// call with this parameter's blob.
    Result { what: &'static str, len: u64 },
    /// 3D copy parameters (passed by pointer); the host side is staged by the copy's
    /// direction, the device side translated. `layout` is the driver struct they came
    /// from (None: the runtime's), written back over the captured bytes `raw`.
    Copy3D {
        parms: memcpy3d::Parms,
        /// The host side's box (in bytes; an array side counts the width in elements).
        host_extent: [u64; 3],
        total: u64,
        layout: Option<drv_memcpy::Layout>,
        raw: Vec<u8>,
    },
    /// Bytes passed by pointer (pool properties, a pool attribute's value).
    HostBytes(Vec<u8>),
    /// Graph instantiation parameters: the captured flags and upload stream, passed by
    /// pointer with the outputs cleared.
    Instantiate { flags: u64, upload_stream: u64 },
    /// Graph node handles (a node's dependencies), each mapped, passed as an array.
    Handles(Vec<u64>),
    /// Memset node parameters as captured, `dst` translated, passed by pointer.
    MemsetParams(Vec<u8>),
    /// Memory allocation node parameters as captured (the struct, then its access
    /// descriptors): passed with replay's own descriptor array and no address.
    AllocNode(Vec<u8>),
    /// A texture or surface object, mapped to replay's (`textures`).
    Object { surface: bool, captured: u64 },
    /// A descriptor of the named layout as captured, rebuilt around replay's arrays and
    /// allocations and passed by pointer (`textures`).
    Layout { name: &'static str, raw: Vec<u8> },
}

/// A decoded call: one plan per parameter, and pitch arguments to replace because the
/// host side of a 2D copy is recorded packed (pitch = width).
#[derive(Debug, PartialEq, Eq)]
struct CallPlan {
    args: Vec<ArgPlan>,
    pitch_override: Vec<(usize, u64)>,
}

/// The copy direction capture resolved, if the row is a copy.
fn copy_dir(p: &Payload) -> Result<Option<CopyDir>, EventError> {
    Ok(p.get(COPY_DIR_FIELD)
        .map(|f| f.as_u64())
        .transpose()?
        .and_then(CopyDir::from_u64))
}

/// Parameter `i`'s captured value; a null pointer is 0.
fn captured(p: &Payload, i: usize, name: &str) -> Result<u64, EventError> {
    let id = ApiDesc::field_id(i);
    match p.get(id) {
        Some(f) if f.is_null() => Ok(0),
        Some(f) => Ok(f.as_u64()?),
        None => Err(EventError::Inconsistent(format!(
            "payload: parameter {name} (field {id}) is absent"
        ))),
    }
}

/// The value of the parameter a kind names for a length (0 when the row has none).
fn named_length(
    desc: &ApiDesc,
    p: &Payload,
    name: &str,
    what: &'static str,
) -> Result<u64, EventError> {
    Ok(desc
        .param_index(name)
        .map(|j| p.u64(ApiDesc::field_id(j), what))
        .transpose()?
        .unwrap_or(0))
}

/// The 3D copy parameters as captured, refused when they name arrays or a box larger
/// than `max_host_bytes`.
fn plan_copy3d(
    p: &Payload,
    i: usize,
    layout: Option<drv_memcpy::Layout>,
    max_host_bytes: u64,
) -> Result<ArgPlan, EventError> {
    let raw = p.bytes(ApiDesc::field_id(i), "3D copy parameters")?;
    let size = layout.map(|l| l.size()).unwrap_or(memcpy3d::SIZE);
    let wrong_size = || {
        EventError::Inconsistent(format!(
            "copy parameters are {} bytes, not {size}",
            raw.len()
        ))
    };
    let parms = match layout {
        None => memcpy3d::Parms::decode(raw.try_into().map_err(|_| wrong_size())?),
        Some(l) => l.decode(raw).ok_or_else(wrong_size)?,
    };
    let host_extent = if layout.is_none() {
        super::textures::host_extent(p, &parms)?
    } else {
        parms.extent
    };
    let total = host_extent[0]
        .checked_mul(host_extent[1])
        .and_then(|t| t.checked_mul(host_extent[2]))
        .filter(|&t| t <= max_host_bytes)
        .ok_or_else(|| EventError::TooLarge {
            what: format!("a {:?} box", parms.extent),
            limit: None,
        })?;
    Ok(ArgPlan::Copy3D {
        parms,
        host_extent,
        total,
        layout,
        raw: raw.to_vec(),
    })
}

/// Pool properties as captured (null stays null), with the captured host pointer cleared.
fn plan_pool_props(p: &Payload, i: usize) -> Result<ArgPlan, EventError> {
    let id = ApiDesc::field_id(i);
    if p.get(id).is_some_and(|f| f.is_null()) {
        return Ok(ArgPlan::Value(0));
    }
    let raw = p.bytes(id, "pool properties")?;
    let raw: &[u8; mempool::PROPS_SIZE] = raw.try_into().map_err(|_| {
        EventError::Inconsistent(format!(
            "pool properties are {} bytes, not {}",
            raw.len(),
            mempool::PROPS_SIZE
        ))
    })?;
    Ok(ArgPlan::HostBytes(mempool::props_for_replay(raw).to_vec()))
}

/// A pool attribute's value, passed by pointer at its attribute's width (null stays null).
fn plan_pool_attr_value(p: &Payload, i: usize, attr: u64) -> Result<ArgPlan, EventError> {
    let id = ApiDesc::field_id(i);
    if p.get(id).is_some_and(|f| f.is_null()) {
        return Ok(ArgPlan::Value(0));
    }
    let Some((_, width)) = mempool::pool_attribute(attr) else {
        return Err(EventError::CannotHonour {
            what: format!("memory pool attribute {attr}"),
            why: "an attribute this replay does not know; its value's width is unknown".into(),
        });
    };
    let v = p.u64(id, "pool attribute value")?;
    Ok(ArgPlan::HostBytes(v.to_le_bytes()[..width].to_vec()))
}

/// Graph instantiation parameters as captured: flags and upload stream.
fn plan_instantiate(p: &Payload, i: usize) -> Result<ArgPlan, EventError> {
    if p.get(ApiDesc::field_id(i)).is_some_and(|f| f.is_null()) {
        return Ok(ArgPlan::Value(0));
    }
    let raw = p.bytes(ApiDesc::field_id(i), "instantiation parameters")?;
    if raw.len() as u64 != INSTANTIATE_PARAMS_SIZE {
        return Err(EventError::Inconsistent(format!(
            "instantiation parameters are {} bytes, not {INSTANTIATE_PARAMS_SIZE}",
            raw.len()
        )));
    }
    let word = |k: usize| u64::from_le_bytes(raw[k * 8..k * 8 + 8].try_into().unwrap_or([0; 8]));
    Ok(ArgPlan::Instantiate {
        flags: word(0),
        upload_stream: word(1),
    })
}

/// A memory allocation node's parameters as captured, checked against their layout.
fn plan_alloc_node(p: &Payload, i: usize) -> Result<ArgPlan, EventError> {
    use hrr_archive::api::mem_alloc_node as m;
    if p.get(ApiDesc::field_id(i)).is_none_or(|f| f.is_null()) {
        return Ok(ArgPlan::Value(0));
    }
    let raw = p.bytes(ApiDesc::field_id(i), "memory allocation node parameters")?;
    let count = raw
        .get(m::ACCESS_COUNT..m::ACCESS_COUNT + 8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
    let descs = raw.len().checked_sub(m::SIZE);
    match (count, descs) {
        (Some(c), Some(d))
            if c <= m::MAX_ACCESS_DESCS
                && (d == 0 || d as u64 == c * m::ACCESS_DESC_SIZE as u64) =>
        {
            Ok(ArgPlan::AllocNode(raw.to_vec()))
        }
        _ => Err(EventError::Inconsistent(format!(
            "memory allocation node parameters of {} bytes do not match their layout",
            raw.len()
        ))),
    }
}

/// Decodes a call's payload and decides, per parameter kind, what replay passes; `dir`
/// is the copy direction capture resolved (`copy_dir`).
fn plan_call(
    desc: &ApiDesc,
    p: &Payload,
    dir: Option<CopyDir>,
    max_host_bytes: u64,
) -> Result<CallPlan, EventError> {
    let mut pitch_override = Vec::new();
    let mut args = Vec::with_capacity(desc.params.len());
    for (i, param) in desc.params.iter().enumerate() {
        let plan = match param.kind {
            ParamKind::Value | ParamKind::CopyKind => ArgPlan::Value(captured(p, i, param.name)?),
            ParamKind::DevPtr => {
                let addr = captured(p, i, param.name)?;
                match ranges::device_range(desc.id, param.name) {
                    Some(extent) => {
                        let value = |n: &str| {
                            let j = desc.param_index(n)?;
                            p.u64(ApiDesc::field_id(j), "extent").ok()
                        };
                        let len = extent.bytes(value).ok_or_else(|| {
                            EventError::Inconsistent(format!(
                                "{}: the extent of {} is not recorded",
                                desc.name, param.name
                            ))
                        })?;
                        ArgPlan::Range {
                            what: param.name,
                            addr,
                            len,
                        }
                    }
                    None => ArgPlan::Address(addr),
                }
            }
            ParamKind::FreeDevPtr | ParamKind::FreeHostPtr => {
                ArgPlan::Address(captured(p, i, param.name)?)
            }
            ParamKind::Context => ArgPlan::Context(captured(p, i, param.name)?),
            ParamKind::Stream
            | ParamKind::Event
            | ParamKind::FreeContext
            | ParamKind::Graph
            | ParamKind::GraphExec
            | ParamKind::FreeGraph
            | ParamKind::FreeGraphExec
            | ParamKind::GraphNode => ArgPlan::Handle(captured(p, i, param.name)?),
            // Recorded only when null (otherwise the record is incomplete).
            ParamKind::UnrecordedStructIn => ArgPlan::Value(0),
            ParamKind::OutContext | ParamKind::OutContextRef | ParamKind::OutMappedDevPtr(_) => {
                ArgPlan::OutSlot
            }
            // Replay runs every thread's calls on one thread: a captured global or
            // thread-local mode would forbid the other threads' calls now made beside
            // the capture. The mode never changes what the graph holds.
            ParamKind::CaptureMode => ArgPlan::Value(CAPTURE_MODE_RELAXED),
            ParamKind::OutGraph | ParamKind::OutGraphExec | ParamKind::OutGraphNode => {
                ArgPlan::OutSlot
            }
            ParamKind::GraphNodes(_) => match p.get(ApiDesc::field_id(i)) {
                Some(f) if !f.is_null() => ArgPlan::Handles(f.as_u64_array()?),
                _ => ArgPlan::Handles(Vec::new()),
            },
            ParamKind::MemAllocNodeParams => plan_alloc_node(p, i)?,
            ParamKind::MemsetNodeParams | ParamKind::HipMemsetNodeParams => {
                match p.get(ApiDesc::field_id(i)) {
                    Some(f) if !f.is_null() => {
                        let raw = p.bytes(ApiDesc::field_id(i), "memset node parameters")?;
                        let size = match param.kind {
                            ParamKind::MemsetNodeParams => MEMSET_PARAMS_SIZE,
                            _ => HIP_MEMSET_PARAMS_SIZE,
                        };
                        if raw.len() as u64 != size {
                            return Err(EventError::Inconsistent(format!(
                                "memset node parameters are {} bytes, not {size}",
                                raw.len()
                            )));
                        }
                        ArgPlan::MemsetParams(raw.to_vec())
                    }
                    _ => ArgPlan::Value(0),
                }
            }
            ParamKind::OutDevPtr(_)
            | ParamKind::OutHostPtr(_)
            | ParamKind::OutManagedPtr(_)
            | ParamKind::OutStream
            | ParamKind::OutEvent
            | ParamKind::OutValue
            | ParamKind::OutStruct
            | ParamKind::OutDevicePropsR0600
            | ParamKind::OutSize
            | ParamKind::OutPitchedDevPtr(..)
            | ParamKind::OutMemPool
            | ParamKind::OutDevicePool
            | ParamKind::OutPoolAttrValue(_) => ArgPlan::OutSlot,
            ParamKind::MemPool | ParamKind::FreeMemPool => {
                ArgPlan::Handle(captured(p, i, param.name)?)
            }
            ParamKind::OutArray(_)
            | ParamKind::OutMipmappedArray(_)
            | ParamKind::OutArrayLevel(_)
            | ParamKind::OutTextureObject
            | ParamKind::OutSurfaceObject => ArgPlan::OutSlot,
            ParamKind::Array | ParamKind::FreeArray | ParamKind::FreeMipmappedArray => {
                ArgPlan::Handle(captured(p, i, param.name)?)
            }
            ParamKind::TexObject | ParamKind::FreeTextureObject => ArgPlan::Object {
                surface: false,
                captured: captured(p, i, param.name)?,
            },
            ParamKind::SurfObject | ParamKind::FreeSurfaceObject => ArgPlan::Object {
                surface: true,
                captured: captured(p, i, param.name)?,
            },
            ParamKind::ByLayout(name) => match super::textures::captured_layout(p, i, name)? {
                Some(raw) => ArgPlan::Layout { name, raw },
                None => ArgPlan::Value(0),
            },
            ParamKind::SpilledRegister => ArgPlan::Value(0),
            ParamKind::LaunchAttrValue(attr) => match p.get(ApiDesc::field_id(i)) {
                Some(f) if !f.is_null() => {
                    let raw = p.bytes(ApiDesc::field_id(i), "attribute value")?;
                    let value: [u8; launch_config::ATTR_VALUE_SIZE] =
                        raw.try_into().map_err(|_| {
                            EventError::Inconsistent(format!(
                                "an attribute value of {} bytes, not {}",
                                raw.len(),
                                launch_config::ATTR_VALUE_SIZE
                            ))
                        })?;
                    let id = named_length(desc, p, attr, "attribute")?;
                    let id = u32::try_from(id).map_err(|_| {
                        EventError::Inconsistent(format!("attribute id {id} does not fit 32 bits"))
                    })?;
                    ArgPlan::LaunchAttr(RecordedAttr { id, value })
                }
                _ => ArgPlan::Value(0),
            },
            ParamKind::OutAddressRange(_) | ParamKind::OutMemHandle => ArgPlan::OutSlot,
            // A null list stays null (the call then only counts).
            ParamKind::OutGraphNodeList(_) => match p.get(ApiDesc::field_id(i)) {
                Some(f) if !f.is_null() => ArgPlan::OutSlot,
                _ => ArgPlan::Value(0),
            },
            ParamKind::InOutCount => match p.get(ApiDesc::field_id(i)) {
                Some(f) if !f.is_null() => {
                    let n = f.as_u64()?;
                    if n > OUT_SLOT_WORDS as u64 {
                        return Err(EventError::TooLarge {
                            what: format!("a list of {n} handles"),
                            limit: Some(OUT_SLOT_WORDS as u64),
                        });
                    }
                    ArgPlan::InOutSlot(n)
                }
                _ => ArgPlan::Value(0),
            },
            ParamKind::MemHandle | ParamKind::FreeMemHandle => {
                ArgPlan::MemHandle(captured(p, i, param.name)?)
            }
            // The whole mapping must lie inside the range replay reserved for it.
            ParamKind::MapAt(len) => ArgPlan::Range {
                what: "mapping",
                addr: captured(p, i, param.name)?,
                len: named_length(desc, p, len, "size")?,
            },
            ParamKind::UnmapAt => ArgPlan::Address(captured(p, i, param.name)?),
            ParamKind::AccessDescs(_) => match p.get(ApiDesc::field_id(i)) {
                Some(f) if !f.is_null() => ArgPlan::HostBytes(
                    p.bytes(ApiDesc::field_id(i), "access descriptors")?
                        .to_vec(),
                ),
                _ => ArgPlan::Value(0),
            },
            ParamKind::MemPoolProps => plan_pool_props(p, i)?,
            ParamKind::PoolAttrValue(attr) => {
                plan_pool_attr_value(p, i, named_length(desc, p, attr, "attribute")?)?
            }
            ParamKind::RegisterHostPtr(len) => {
                let n = named_length(desc, p, len, "size")?;
                if n > max_host_bytes {
                    return Err(EventError::TooLarge {
                        what: format!("registering {n} bytes"),
                        limit: None,
                    });
                }
                ArgPlan::RegisterHost(n)
            }
            ParamKind::Copy3DParms => plan_copy3d(p, i, None, max_host_bytes)?,
            ParamKind::DrvMemcpy2D => {
                plan_copy3d(p, i, Some(drv_memcpy::Layout::Memcpy2D), max_host_bytes)?
            }
            ParamKind::DrvMemcpy3D => {
                plan_copy3d(p, i, Some(drv_memcpy::Layout::Memcpy3D), max_host_bytes)?
            }
            ParamKind::InstantiateParams => plan_instantiate(p, i)?,
            ParamKind::CopySrc2D(pitch, width, height)
            | ParamKind::CopyDst2D(pitch, width, height) => {
                let value = captured(p, i, param.name)?;
                let is_dst = matches!(param.kind, ParamKind::CopyDst2D(..));
                let geo = |name: &str| -> Result<(usize, u64), EventError> {
                    let j = desc.param_index(name).ok_or_else(|| {
                        EventError::Inconsistent(format!("{} has no parameter {name}", desc.name))
                    })?;
                    Ok((j, p.u64(ApiDesc::field_id(j), "geometry")?))
                };
                let ((pi, pitch), (_, w), (_, h)) = (geo(pitch)?, geo(width)?, geo(height)?);
                let total = w
                    .checked_mul(h)
                    .filter(|&t| t <= max_host_bytes)
                    .ok_or_else(|| EventError::TooLarge {
                        what: format!("2D copy of {w} x {h} bytes"),
                        limit: None,
                    })?;
                match (dir, is_dst) {
                    (Some(CopyDir::HostToDevice), false) => {
                        pitch_override.push((pi, w));
                        ArgPlan::Source {
                            what: "source rows",
                            len: Some(total),
                        }
                    }
                    (Some(CopyDir::DeviceToHost), true) => {
                        pitch_override.push((pi, w));
                        ArgPlan::Result {
                            what: "expected rows",
                            len: total,
                        }
                    }
                    // The device side (or a host side replay maps): its last row must
                    // end inside the allocation.
                    _ => ArgPlan::Range {
                        what: param.name,
                        addr: value,
                        len: if h == 0 || w == 0 {
                            0
                        } else {
                            pitch.saturating_mul(h - 1).saturating_add(w)
                        },
                    },
                }
            }
            ParamKind::CopySrc(len)
            | ParamKind::CopyDst(len)
            | ParamKind::HostSrc(len)
            | ParamKind::HostDst(len) => {
                let value = captured(p, i, param.name)?;
                let is_dst = matches!(param.kind, ParamKind::CopyDst(_) | ParamKind::HostDst(_));
                let n = named_length(desc, p, len, "length")?;
                match (dir, is_dst) {
                    // The count must be the blob's length (checked when staged).
                    (Some(CopyDir::HostToDevice), false) => ArgPlan::Source {
                        what: "source bytes",
                        len: Some(n),
                    },
                    (Some(CopyDir::DeviceToHost), true) => ArgPlan::Result {
                        what: "expected output",
                        len: n,
                    },
                    _ => ArgPlan::Range {
                        what: param.name,
                        addr: value,
                        len: n,
                    },
                }
            }
        };
        args.push(plan);
    }
    Ok(CallPlan {
        args,
        pitch_override,
    })
}

/// The packed host side of a 3D copy: rows of the box's width, one after another.
fn packed_side(ptr: u64, extent: [u64; 3]) -> memcpy3d::Side {
    let [w, h, _] = extent;
    memcpy3d::Side {
        ptr,
        pitch: w,
        xsize: w,
        ysize: h,
        x: 0,
        y: 0,
        z: 0,
    }
}

/// What the encoded arguments point at, kept alive until the call's results are read.
#[derive(Default)]
pub(super) struct CallBuffers<'a> {
    /// The event's sequence id.
    pub(super) seq: u64,
    /// The call failed at capture: a D2H copy of it wrote no result there, so its
    /// destination is a scratch buffer and nothing is compared (a faulted program's copy).
    pub(super) failed_at_capture: bool,
    /// A scratch destination's bytes.
    pub(super) scratch: Vec<u8>,
    /// A D2H copy whose output is compared when its `CopyOutput` record arrives.
    pub(super) deferred: Option<super::deferred::Staged<'a>>,
    /// The row has a stream (its copy may still run after the call returns).
    pub(super) streamed: bool,
    /// Out parameters' slots, and which parameter each belongs to. A slot is larger than
    /// any runtime's struct a row fills (ROCm 6+'s `hipDeviceProp_tR0600` included).
    pub(super) slots: Vec<Box<[u64; OUT_SLOT_WORDS]>>,
    pub(super) slot_of: HashMap<usize, usize>,
    /// Encoded 3D copy parameters.
    keep: Vec<Vec<u8>>,
    /// A D2H copy's (result length, expected length), both in the staging buffers.
    pub(super) d2h: Option<(usize, usize)>,
    /// The copy reads a page-locked source after an asynchronous call returns.
    pub(super) source_in_flight: bool,
    /// The stand-in buffer being registered.
    pub(super) registering: Option<u64>,
    /// A memory allocation node's parameters as passed (the runtime writes the address
    /// at `mem_alloc_node::DPTR`), and its access descriptors.
    pub(super) alloc_node: Option<(Vec<u8>, Vec<u8>)>,
    /// The call is captured into a graph as the node of this sequence id: its host side
    /// is the node's buffer, and nothing runs until the graph is launched (`graphs`).
    node: Option<u64>,
}

impl<'a> Ctx<'a> {
    pub(super) fn replay_generic(&mut self, ev: &Event, desc: &'static ApiDesc) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let f = self.rt.require_row(desc)?;
        let dir = copy_dir(&p)?;
        if dir == Some(CopyDir::HostToHost) {
            return Ok(()); // host memory of the captured process: nothing to re-execute
        }
        let plan = plan_call(desc, &p, dir, self.proc_.limits.max_host_bytes)?;
        self.refuse_broken_graph(desc, &p)?;
        match hrr_archive::api::hip_abi::base_row(desc.id) {
            hrr_archive::api::id::CreateTextureObject => self.offset_object_numbering(false),
            hrr_archive::api::id::CreateSurfaceObject => self.offset_object_numbering(true),
            _ => {}
        }
        if matches!(
            hrr_archive::api::hip_abi::base_row(desc.id),
            hrr_archive::api::id::StreamBeginCapture
                | hrr_archive::api::id::StreamBeginCaptureToGraph
        ) {
            self.preload_captured_kernels(ev.header.seq);
        }
        // A memcpy node added or updated: its host side is a buffer of its own.
        let explicit_node = hrr_archive::api::copy_node::node_host_side(desc.id);
        let mut bufs = CallBuffers {
            node: super::graphs::captured_node(&p, ev.header.seq)
                .or(explicit_node.then_some(ev.header.seq)),
            seq: ev.header.seq,
            failed_at_capture: ev.header.ret != 0,
            streamed: desc.params.iter().any(|p| p.kind == ParamKind::Stream),
            ..CallBuffers::default()
        };
        let mut args = Vec::with_capacity(plan.args.len());
        for (i, arg) in plan.args.into_iter().enumerate() {
            match self.encode(&p, i, arg, dir, &mut bufs) {
                Ok(a) => args.push(a),
                // The program's own call failed at capture on a range no allocation
                // holds: it changed nothing, and replay does not hand the range to the
                // runtime to fail again (or corrupt memory).
                Err(EventError::OutOfRange { .. }) if ev.header.ret != 0 => {
                    self.counts.failed_as_captured += 1;
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
        for &(i, v) in &plan.pitch_override {
            args[i] = v;
        }
        // SAFETY: `f` is the runtime's definition of this row's symbol; pointers are
        // translated replay addresses or buffers that live until after the call.
        let ret = unsafe { call_row(desc.id, f, &args) }.ok_or(RuntimeError::Arity {
            count: args.len(),
            api: desc.name.to_string(),
        })?;
        if let Some(buf) = bufs.registering {
            if ret != 0 {
                self.registered.remove(&buf);
            }
        }
        // What the call created or released follows replay's result, also when it differs
        // from capture's (a free the archive says failed but replay's succeeded is
        // forgotten now, never freed again at teardown: issue 20's double free).
        let checked = self.check_ret(ev, desc.ret, ret);
        self.record_outputs(desc, &p, ret, &args, &bufs)?;
        self.note_device_pool(desc, ret, &args);
        checked?;
        if bufs.node.is_some() {
            // Not run yet: each launch of its graph checks it.
            return Ok(());
        }
        self.finish_copies(ev, desc, ret, &args, &mut bufs)
    }

    /// The argument word the typed call takes for parameter `i`'s plan.
    fn encode(
        &mut self,
        p: &Payload,
        i: usize,
        plan: ArgPlan,
        dir: Option<CopyDir>,
        bufs: &mut CallBuffers<'a>,
    ) -> Result<u64, EventError> {
        let id = ApiDesc::field_id(i);
        Ok(match plan {
            ArgPlan::Value(v) => v,
            ArgPlan::Address(a) => self.translate(a),
            ArgPlan::Range { what, addr, len } => match self.addrs.translate_range(addr, len) {
                Ok(_) => self.translate(addr),
                Err(holder) => {
                    return Err(EventError::OutOfRange {
                        what,
                        addr,
                        len,
                        holder,
                    })
                }
            },
            ArgPlan::Handle(h) => self.handle(h)?,
            // Null stays null (the driver refuses it, as it did at capture); no number
            // is a default stream here.
            ArgPlan::MemHandle(0) => 0,
            ArgPlan::MemHandle(h) => self
                .handles
                .get(&h)
                .copied()
                .ok_or(EventError::UnknownHandle(h))?,
            ArgPlan::Context(0) => 0,
            ArgPlan::Context(h) => match self.handle(h) {
                Err(EventError::UnknownHandle(_)) => self.adopt_primary_context(h)?,
                other => other?,
            },
            ArgPlan::OutSlot | ArgPlan::InOutSlot(_) => {
                let mut slot = Box::new([0u64; OUT_SLOT_WORDS]);
                if let ArgPlan::InOutSlot(v) = plan {
                    slot[0] = v;
                }
                bufs.slots.push(slot);
                bufs.slot_of.insert(i, bufs.slots.len() - 1);
                bufs.slots.last().map(|s| s.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::RegisterHost(n) => {
                // A page-aligned buffer of our own stands in for the program's memory
                // (faulted in ahead when large: registering would fault it on one
                // thread); a size the system refuses fails the event instead of
                // aborting replay.
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                let buf = crate::pages::Pages::new(n)?;
                let aligned = buf.addr();
                self.registered.insert(aligned, buf);
                bufs.registering = Some(aligned);
                aligned
            }
            ArgPlan::Source { what, len } if bufs.node.is_some() => {
                let seq = bufs.node.unwrap_or_default();
                self.node_source(seq, p, id, what, len)?
            }
            ArgPlan::Result { len, .. } if bufs.node.is_some() => {
                self.node_buffer(bufs.node.unwrap_or_default(), len)?.at
            }
            ArgPlan::Source { what, len } => {
                bufs.source_in_flight = true;
                self.stage_source(p, id, what, len)?
            }
            ArgPlan::Result { what, len } => self.stage_d2h(p, id, what, len, bufs)?,
            ArgPlan::Copy3D {
                mut parms,
                host_extent,
                total,
                layout,
                raw,
            } => {
                let m = &mut parms;
                match dir {
                    Some(CopyDir::HostToDevice) if bufs.node.is_some() => {
                        let seq = bufs.node.unwrap_or_default();
                        let src = self.node_source(seq, p, id, "source box", Some(total))?;
                        m.src = packed_side(src, host_extent);
                        self.device_side(&mut m.dst_array, &mut m.dst.ptr)?;
                    }
                    Some(CopyDir::DeviceToHost) if bufs.node.is_some() => {
                        let seq = bufs.node.unwrap_or_default();
                        m.dst = packed_side(self.node_buffer(seq, total)?.at, host_extent);
                        self.device_side(&mut m.src_array, &mut m.src.ptr)?;
                    }
                    Some(CopyDir::HostToDevice) => {
                        let src = self.stage_source(p, id, "source box", Some(total))?;
                        bufs.source_in_flight = true;
                        m.src = packed_side(src, host_extent);
                        self.device_side(&mut m.dst_array, &mut m.dst.ptr)?;
                    }
                    Some(CopyDir::DeviceToHost) => {
                        let dst = self.stage_d2h(p, id, "expected box", total, bufs)?;
                        m.dst = packed_side(dst, host_extent);
                        self.device_side(&mut m.src_array, &mut m.src.ptr)?;
                    }
                    _ => {
                        self.device_side(&mut m.src_array, &mut m.src.ptr)?;
                        self.device_side(&mut m.dst_array, &mut m.dst.ptr)?;
                    }
                }
                bufs.keep.push(match layout {
                    None => parms.encode().to_vec(),
                    Some(l) => l.encode(&raw, &parms),
                });
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::LaunchAttr(a) => {
                let addrs = &self.addrs;
                let handles = &self.handles;
                let planned = super::launchcfg::plan_attrs(
                    vec![a],
                    |v| match addrs.translate(v) {
                        Translated::Mapped(t) => Some(t),
                        Translated::Null => Some(0),
                        Translated::Unmapped => None,
                    },
                    |e| handles.get(&e).copied(),
                )?;
                let value = planned
                    .first()
                    .map(|a| a.value.to_vec())
                    .unwrap_or_default();
                bufs.keep.push(value);
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::HostBytes(bytes) => {
                bufs.keep.push(bytes);
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::Handles(captured) if captured.is_empty() => 0,
            ArgPlan::Handles(captured) => {
                let mut raw = Vec::with_capacity(captured.len() * 8);
                for h in captured {
                    raw.extend_from_slice(&self.handle(h)?.to_le_bytes());
                }
                bufs.keep.push(raw);
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::MemsetParams(mut raw) => {
                let dst = u64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
                raw[..8].copy_from_slice(&self.translate(dst).to_le_bytes());
                bufs.keep.push(raw);
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::AllocNode(raw) => {
                use hrr_archive::api::mem_alloc_node as m;
                let mut head = raw[..m::SIZE].to_vec();
                let descs = raw[m::SIZE..].to_vec();
                let at = if descs.is_empty() {
                    0
                } else {
                    descs.as_ptr() as u64
                };
                head[m::ACCESS_DESCS..m::ACCESS_DESCS + 8].copy_from_slice(&at.to_le_bytes());
                head[m::DPTR..m::DPTR + 8].copy_from_slice(&0u64.to_le_bytes());
                let ptr = head.as_ptr() as u64;
                // Moving the vectors into `bufs` keeps their heap buffers where they are.
                bufs.alloc_node = Some((head, descs));
                ptr
            }
            ArgPlan::Object { surface, captured } => self.objects.get(surface, captured)?,
            ArgPlan::Layout { name, raw } => {
                bufs.keep.push(self.rebuild_layout(name, &raw)?);
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::Instantiate {
                flags,
                upload_stream,
            } => {
                let mut raw = vec![0u8; INSTANTIATE_PARAMS_SIZE as usize];
                raw[..8].copy_from_slice(&flags.to_le_bytes());
                raw[8..16].copy_from_slice(&self.handle(upload_stream)?.to_le_bytes());
                bufs.keep.push(raw);
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
        })
    }
}

/// No runtime's struct outgrows an out slot (`CallBuffers::slots`).
const _: () = assert!(
    OUT_SLOT_WORDS * 8 >= hrr_archive::api::hip_abi::layout::DEVICE_PROP_R0600
        && OUT_SLOT_WORDS * 8 >= hrr_archive::api::hip_abi::layout::DEVICE_PROP_R0000
);

#[cfg(test)]
mod tests {
    use super::*;
    use hrr_archive::api::{self, id};
    use hrr_archive::payload::{FieldType, PayloadWriter};

    fn desc(id: u16) -> &'static ApiDesc {
        api::desc(id).unwrap()
    }

    /// Plans a call as `replay_generic` does: the direction from the payload first.
    fn plan_of(id: u16, p: &Payload, max_host_bytes: u64) -> Result<CallPlan, EventError> {
        plan_call(desc(id), p, copy_dir(p)?, max_host_bytes)
    }

    fn payload(fill: impl FnOnce(&mut PayloadWriter)) -> Vec<u8> {
        let mut w = PayloadWriter::new();
        fill(&mut w);
        w.finish()
    }

    fn memcpy(dir: CopyDir, count: u64) -> Vec<u8> {
        payload(|w| {
            w.devptr(1, 0x1000)
                .devptr(2, 0x2000)
                .u64(3, count)
                .u64(4, 0);
            w.u64(COPY_DIR_FIELD, dir as u64);
        })
    }

    #[test]
    fn vmm_calls_map_ranges_handles_and_access_and_an_attribute_keeps_its_id() {
        // cuMemMap(ptr, size, offset, handle, flags): the mapping must lie in one range.
        let bytes = payload(|w| {
            w.devptr(1, 0x7000_0000)
                .u64(2, 2 << 20)
                .u64(3, 0)
                .handle(4, 0x55)
                .u64(5, 0);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemMap, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args[..4],
            [
                ArgPlan::Range {
                    what: "mapping",
                    addr: 0x7000_0000,
                    len: 2 << 20
                },
                ArgPlan::Value(2 << 20),
                ArgPlan::Value(0),
                ArgPlan::MemHandle(0x55),
            ]
        );
        // cuMemSetAccess(ptr, size, desc, count): the descriptors' bytes as captured.
        let descs = [1u8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0];
        let bytes = payload(|w| {
            w.devptr(1, 0x7000_0000).u64(2, 2 << 20);
            w.bytes(3, &descs, false);
            w.u64(4, 1);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemSetAccess, &p, 1 << 20).unwrap();
        assert_eq!(plan.args[2], ArgPlan::HostBytes(descs.to_vec()));
        // cudaStreamSetAttribute(stream, AccessPolicyWindow, value).
        let mut value = [0u8; 64];
        value[..8].copy_from_slice(&0x9000u64.to_le_bytes());
        let bytes = payload(|w| {
            w.handle(1, 0xa0).u64(2, 1);
            w.bytes(3, &value, false);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::StreamSetAttribute, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args[2],
            ArgPlan::LaunchAttr(RecordedAttr { id: 1, value })
        );
    }

    #[test]
    fn a_d2h_copy_stages_its_destination_and_translates_its_source() {
        let bytes = memcpy(CopyDir::DeviceToHost, 64);
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::Memcpy, &p, 1 << 20).unwrap();
        assert_eq!(copy_dir(&p).unwrap(), Some(CopyDir::DeviceToHost));
        assert_eq!(
            plan.args,
            vec![
                ArgPlan::Result {
                    what: "expected output",
                    len: 64
                },
                ArgPlan::Range {
                    what: "src",
                    addr: 0x2000,
                    len: 64
                },
                ArgPlan::Value(64),
                ArgPlan::Value(0),
            ]
        );
        assert!(plan.pitch_override.is_empty());
    }

    #[test]
    fn an_h2d_copy_stages_its_source_and_a_d2d_copy_translates_both() {
        let bytes = memcpy(CopyDir::HostToDevice, 8);
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::Memcpy, &p, 1 << 20).unwrap();
        let range = |what, addr| ArgPlan::Range { what, addr, len: 8 };
        assert_eq!(plan.args[0], range("dst", 0x1000));
        assert_eq!(
            plan.args[1],
            ArgPlan::Source {
                what: "source bytes",
                len: Some(8)
            }
        );
        let bytes = memcpy(CopyDir::DeviceToDevice, 8);
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::Memcpy, &p, 1 << 20).unwrap();
        assert_eq!(plan.args[..2], [range("dst", 0x1000), range("src", 0x2000)]);
    }

    /// The host side of a 2D copy is recorded packed: its pitch becomes the width.
    #[test]
    fn a_2d_d2h_copy_is_packed_and_refused_above_the_limit() {
        // dst, dpitch, src, spitch, width, height, kind
        let bytes = payload(|w| {
            w.devptr(1, 0x1000)
                .u64(2, 512)
                .devptr(3, 0x2000)
                .u64(4, 256);
            w.u64(5, 100).u64(6, 3).u64(7, 2);
            w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::Memcpy2D, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args[0],
            ArgPlan::Result {
                what: "expected rows",
                len: 300
            }
        );
        // The device side's last row ends 2 pitches and a width from its start.
        assert_eq!(
            plan.args[2],
            ArgPlan::Range {
                what: "src",
                addr: 0x2000,
                len: 2 * 256 + 100
            }
        );
        assert_eq!(plan.pitch_override, vec![(1, 100)]);
        let e = plan_of(id::Memcpy2D, &p, 299).unwrap_err();
        assert_eq!(
            e.to_string(),
            "2D copy of 100 x 3 bytes exceeds max_host_bytes"
        );
    }

    #[test]
    fn out_parameters_get_slots_and_registration_a_stand_in() {
        let bytes = payload(|w| {
            w.devptr(1, 0x7000).u64(2, 4096);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::Malloc, &p, 1 << 20).unwrap();
        assert_eq!(plan.args, vec![ArgPlan::OutSlot, ArgPlan::Value(4096)]);
        assert_eq!(copy_dir(&p).unwrap(), None);
        let bytes = payload(|w| {
            w.u64(1, 0x5000).u64(2, 4096).u64(3, 0);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::HostRegister, &p, 1 << 20).unwrap();
        assert_eq!(plan.args[0], ArgPlan::RegisterHost(4096));
        let e = plan_of(id::HostRegister, &p, 4095).unwrap_err();
        assert_eq!(
            e.to_string(),
            "registering 4096 bytes exceeds max_host_bytes"
        );
    }

    #[test]
    fn null_pointers_are_zero_and_absent_parameters_refused() {
        let bytes = payload(|w| {
            w.null(1, FieldType::DevPtr)
                .devptr(2, 0x2000)
                .u64(3, 1)
                .u64(4, 3);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::Memcpy, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args[0],
            ArgPlan::Range {
                what: "dst",
                addr: 0,
                len: 1
            }
        );
        let bytes = payload(|w| {
            w.devptr(1, 0x1000).u64(3, 1).u64(4, 3);
        });
        let p = Payload::parse(&bytes).unwrap();
        let e = plan_of(id::Memcpy, &p, 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "payload: parameter src (field 2) is absent");
        assert_eq!(e.kind(), hrr_contract::FailureKind::Error);
    }

    #[test]
    fn a_3d_copy_of_a_box_over_the_limit_is_refused_and_an_array_side_needs_its_row_bytes() {
        let mut parms = memcpy3d::Parms {
            extent: [16, 4, 2],
            ..Default::default()
        };
        let encoded = |parms: &memcpy3d::Parms| {
            let raw = parms.encode();
            payload(|w| {
                w.bytes(1, &raw, false);
                w.u64(COPY_DIR_FIELD, CopyDir::DeviceToDevice as u64);
            })
        };
        let bytes = encoded(&parms);
        let p = Payload::parse(&bytes).unwrap();
        match plan_of(id::Memcpy3D, &p, 1 << 20).unwrap().args[0] {
            ArgPlan::Copy3D { total, layout, .. } => assert_eq!((total, layout), (128, None)),
            ref other => panic!("{other:?}"),
        }
        let e = plan_of(id::Memcpy3D, &p, 127).unwrap_err();
        assert!(e.to_string().ends_with("box exceeds max_host_bytes"), "{e}");
        // An array side: the host rows are the captured row length (the width counts
        // the array's elements); a record without it is inconsistent.
        parms.src_array = 0xa0;
        let bytes = encoded(&parms);
        let p = Payload::parse(&bytes).unwrap();
        let e = plan_of(id::Memcpy3D, &p, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("row bytes"), "{e}");
        let raw = parms.encode();
        let bytes = payload(|w| {
            w.bytes(1, &raw, false);
            w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
            w.u64(hrr_archive::api::fid::ARRAY_ROW_BYTES, 64);
        });
        let p = Payload::parse(&bytes).unwrap();
        match plan_of(id::Memcpy3D, &p, 1 << 20).unwrap().args[0] {
            ArgPlan::Copy3D {
                total, host_extent, ..
            } => assert_eq!((total, host_extent), (512, [64, 4, 2])),
            ref other => panic!("{other:?}"),
        }
    }

    #[test]
    fn descriptors_are_passed_rebuilt_and_objects_mapped_by_class() {
        // cudaCreateTextureObject(&t, &res, &tex, NULL).
        let res = vec![0u8; 144];
        let bytes = payload(|w| {
            w.handle(1, 0x3);
            w.bytes(2, &res, false);
            w.bytes(3, &[0u8; 72], false);
            w.null(4, FieldType::Bytes);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::CreateTextureObject, &p, 1 << 20).unwrap();
        assert_eq!(plan.args[0], ArgPlan::OutSlot);
        assert_eq!(
            plan.args[1],
            ArgPlan::Layout {
                name: "resource_desc",
                raw: res
            }
        );
        assert_eq!(plan.args[3], ArgPlan::Value(0), "a null view stays null");
        let bytes = payload(|w| {
            w.handle(1, 0x3);
        });
        let p = Payload::parse(&bytes).unwrap();
        assert_eq!(
            plan_of(id::DestroySurfaceObject, &p, 1 << 20).unwrap().args,
            [ArgPlan::Object {
                surface: true,
                captured: 3
            }]
        );
        // cudaMalloc3DArray: the spilled registers pass nothing the callee reads.
        let bytes = payload(|w| {
            w.handle(1, 0xa0);
            w.bytes(2, &[0u8; 20], false);
            w.u64(3, 0);
            w.u64(7, 16).u64(8, 8).u64(9, 4);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::Malloc3DArray, &p, 1 << 20).unwrap();
        assert_eq!(plan.args[3..6], [0, 0, 0].map(ArgPlan::Value));
        assert_eq!(plan.args[6..], [16, 8, 4].map(ArgPlan::Value));
    }

    #[test]
    fn driver_copies_stage_by_their_apis_direction() {
        // cuMemcpyDtoH_v2(dstHost, srcDevice, count): the host side is the result.
        let bytes = payload(|w| {
            w.devptr(1, 0x10).devptr(2, 0x2000).u64(3, 32);
            w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemcpyDtoH, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args,
            vec![
                ArgPlan::Result {
                    what: "expected output",
                    len: 32
                },
                ArgPlan::Address(0x2000),
                ArgPlan::Value(32),
            ]
        );
        // cuMemcpyHtoDAsync_v2(dstDevice, srcHost, count, stream).
        let bytes = payload(|w| {
            w.devptr(1, 0x2000)
                .devptr(2, 0x10)
                .u64(3, 8)
                .handle(4, 0x55);
            w.u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemcpyHtoDAsync, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args[1],
            ArgPlan::Source {
                what: "source bytes",
                len: Some(8)
            }
        );
        assert_eq!(plan.args[3], ArgPlan::Handle(0x55));
    }

    #[test]
    fn contexts_are_handles_and_out_slots() {
        // cuCtxCreate_v4(&ctx, NULL, flags, dev).
        let bytes = payload(|w| {
            w.handle(1, 0xc0)
                .null(2, FieldType::Bytes)
                .u64(3, 0)
                .u64(4, 0);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::CtxCreate, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args,
            vec![
                ArgPlan::OutSlot,
                ArgPlan::Value(0),
                ArgPlan::Value(0),
                ArgPlan::Value(0)
            ]
        );
        let bytes = payload(|w| {
            w.handle(1, 0xc0);
        });
        let p = Payload::parse(&bytes).unwrap();
        // A context argument: mapped like a handle, or adopted as the primary context
        // when no recorded call created it.
        assert_eq!(
            plan_of(id::CtxSetCurrent, &p, 1 << 20).unwrap().args,
            vec![ArgPlan::Context(0xc0)]
        );
        assert_eq!(
            plan_of(id::CtxDestroy, &p, 1 << 20).unwrap().args,
            vec![ArgPlan::Handle(0xc0)]
        );
    }

    #[test]
    fn a_driver_2d_copy_is_planned_by_its_layout() {
        let l = drv_memcpy::Layout::Memcpy2D;
        let mut raw = vec![0u8; l.size()];
        let mut put = |i: usize, v: u64| raw[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        put(2, drv_memcpy::MEMORYTYPE_DEVICE);
        put(4, 0xd000);
        put(6, 256);
        put(9, drv_memcpy::MEMORYTYPE_HOST);
        put(10, 0x5000);
        put(13, 100);
        put(14, 64);
        put(15, 3);
        let bytes = payload(|w| {
            w.bytes(1, &raw, false);
            w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        });
        let p = Payload::parse(&bytes).unwrap();
        match &plan_of(id::DrvMemcpy2D, &p, 1 << 20).unwrap().args[0] {
            ArgPlan::Copy3D {
                parms,
                total,
                layout,
                ..
            } => {
                assert_eq!((*total, *layout), (192, Some(l)));
                assert_eq!(
                    (parms.src.ptr, parms.dst.ptr, parms.kind),
                    (0xd000, 0x5000, 2)
                );
            }
            other => panic!("{other:?}"),
        }
        let e = plan_of(id::DrvMemcpy2D, &p, 191).unwrap_err();
        assert!(e.to_string().ends_with("box exceeds max_host_bytes"), "{e}");
        // A 3D struct's bytes under the 2D row: refused, naming both sizes.
        let bytes = payload(|w| {
            w.bytes(1, &[0u8; 200], false);
        });
        let p = Payload::parse(&bytes).unwrap();
        let e = plan_of(id::DrvMemcpy2D, &p, 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "copy parameters are 200 bytes, not 128");
    }

    #[test]
    fn pools_map_as_handles_and_their_inputs_pass_by_pointer() {
        // cudaMemPoolCreate(&pool, &props): an out slot, and the props without the
        // captured host pointer.
        let mut props = [0u8; 88];
        props[0] = 1;
        props[16..24].fill(0x55);
        let bytes = payload(|w| {
            w.handle(1, 0x9000);
            w.bytes(2, &props, false);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemPoolCreate, &p, 1 << 20).unwrap();
        let mut want = props;
        want[16..24].fill(0);
        assert_eq!(
            plan.args,
            vec![ArgPlan::OutSlot, ArgPlan::HostBytes(want.to_vec())]
        );
        let short = payload(|w| {
            w.handle(1, 0x9000);
            w.bytes(2, &props[..80], false);
        });
        let p = Payload::parse(&short).unwrap();
        let e = plan_of(id::MemPoolCreate, &p, 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "pool properties are 80 bytes, not 88");
        // cudaMemPoolSetAttribute(pool, attr, &value): the value at its attribute's width.
        let set = |attr: u64| {
            payload(|w| {
                w.handle(1, 0x9000).u64(2, attr).u64(3, 0x1_0000_0007);
            })
        };
        let bytes = set(4);
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemPoolSetAttribute, &p, 1 << 20).unwrap();
        assert_eq!(plan.args[0], ArgPlan::Handle(0x9000));
        assert_eq!(
            plan.args[2],
            ArgPlan::HostBytes(0x1_0000_0007u64.to_le_bytes().to_vec())
        );
        let bytes = set(2);
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemPoolSetAttribute, &p, 1 << 20).unwrap();
        assert_eq!(plan.args[2], ArgPlan::HostBytes(vec![7, 0, 0, 0]));
        let bytes = set(42);
        let p = Payload::parse(&bytes).unwrap();
        let e = plan_of(id::MemPoolSetAttribute, &p, 1 << 20).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot honour memory pool attribute 42"),
            "{e}"
        );
        // cudaMemPoolGetAttribute's value is an out slot; destroy maps its handle.
        let bytes = payload(|w| {
            w.handle(1, 0x9000).u64(2, 7);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemPoolGetAttribute, &p, 1 << 20);
        assert_eq!(plan.unwrap().args[2], ArgPlan::OutSlot);
        let bytes = payload(|w| {
            w.handle(1, 0x9000);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::MemPoolDestroy, &p, 1 << 20).unwrap();
        assert_eq!(plan.args, vec![ArgPlan::Handle(0x9000)]);
    }

    #[test]
    fn the_packed_side_of_a_box_has_the_box_width_as_pitch() {
        let s = packed_side(0x9000, [32, 5, 7]);
        assert_eq!((s.ptr, s.pitch, s.xsize, s.ysize), (0x9000, 32, 32, 5));
        assert_eq!((s.x, s.y, s.z), (0, 0, 0));
    }

    #[test]
    fn instantiation_parameters_keep_flags_and_map_the_upload_stream() {
        let mut raw = vec![0u8; 32];
        raw[..8].copy_from_slice(&1u64.to_le_bytes());
        raw[8..16].copy_from_slice(&0x5100u64.to_le_bytes());
        raw[16..24].copy_from_slice(&0xdeadu64.to_le_bytes());
        let bytes = payload(|w| {
            w.devptr(1, 0x10).handle(2, 0xa0);
            w.bytes(3, &raw, false);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::GraphInstantiateWithParams, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args,
            vec![
                ArgPlan::OutSlot,
                ArgPlan::Handle(0xa0),
                ArgPlan::Instantiate {
                    flags: 1,
                    upload_stream: 0x5100
                }
            ]
        );
        let bytes = payload(|w| {
            w.bytes(3, &raw[..16], false);
        });
        let e = plan_instantiate(&Payload::parse(&bytes).unwrap(), 2).unwrap_err();
        assert!(e.to_string().contains("16 bytes, not 32"), "{e}");
        let bytes = payload(|w| {
            w.null(3, FieldType::Bytes);
        });
        let p = Payload::parse(&bytes).unwrap();
        assert_eq!(plan_instantiate(&p, 2).unwrap(), ArgPlan::Value(0));
    }

    #[test]
    fn graph_node_rows_plan_dependencies_and_parameters() {
        // cudaGraphAddMemcpyNode(&node, graph, deps, 2, &parms3d): a 3D copy node.
        let parms = memcpy3d::Parms {
            extent: [8, 2, 1],
            kind: 2,
            ..Default::default()
        };
        let raw = parms.encode();
        let bytes = payload(|w| {
            w.handle(1, 0x70).handle(2, 0xa0);
            w.u64_array(3, &[0x71, 0x72]).u64(4, 2);
            w.bytes(5, &raw, false);
            w.u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::GraphAddMemcpyNode, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args[..4],
            [
                ArgPlan::OutSlot,
                ArgPlan::Handle(0xa0),
                ArgPlan::Handles(vec![0x71, 0x72]),
                ArgPlan::Value(2)
            ]
        );
        assert!(matches!(plan.args[4], ArgPlan::Copy3D { total: 16, .. }));
        // cudaGraphExecMemsetNodeSetParams(exec, node, &params): handles and the struct.
        let bytes = payload(|w| {
            w.handle(1, 0xe0).handle(2, 0x71);
            w.bytes(3, &[0u8; 40], false);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::GraphExecMemsetNodeSetParams, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args,
            vec![
                ArgPlan::Handle(0xe0),
                ArgPlan::Handle(0x71),
                ArgPlan::MemsetParams(vec![0u8; 40])
            ]
        );
        // A HIP memset node's parameters are 48 bytes: 40 is refused.
        let e = plan_of(id::HipGraphExecMemsetNodeSetParams, &p, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("40 bytes, not 48"), "{e}");
    }

    #[test]
    fn a_capture_begins_relaxed_and_graph_handles_map() {
        let bytes = payload(|w| {
            w.handle(1, 0x5100).u64(2, 0);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::StreamBeginCapture, &p, 1 << 20).unwrap();
        assert_eq!(
            plan.args,
            vec![
                ArgPlan::Handle(0x5100),
                ArgPlan::Value(CAPTURE_MODE_RELAXED)
            ]
        );
        let bytes = payload(|w| {
            w.handle(1, 0xe0).handle(2, 0x5100);
        });
        let p = Payload::parse(&bytes).unwrap();
        let plan = plan_of(id::StreamEndCapture, &p, 1 << 20).unwrap();
        assert_eq!(plan.args, vec![ArgPlan::Handle(0xe0), ArgPlan::OutSlot]);
    }
}
