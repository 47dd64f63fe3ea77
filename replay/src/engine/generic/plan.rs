//! Decode and policy, pure (`plan_call`): from the payload alone, what replay passes for
//! each parameter of a table row, by its kind: a value as captured, an address to
//! translate, a handle to map, an out slot, a staged copy source or result, a stand-in
//! host buffer, 3D copy parameters; limits and inconsistent records are refused here.

use hrr_archive::api::launch_config::{self, RecordedAttr};
use hrr_archive::api::ranges;
use hrr_archive::api::{
    drv_memcpy, memcpy3d, mempool, ApiDesc, CopyDir, ParamKind, COPY_DIR_FIELD,
    HIP_MEMSET_PARAMS_SIZE, INSTANTIATE_PARAMS_SIZE, MEMSET_PARAMS_SIZE,
};
use hrr_archive::payload::Payload;

use crate::engine::call_buffers::OUT_SLOT_WORDS;
use crate::engine::error::EventError;
use crate::engine::textures;

/// `cudaStreamCaptureModeRelaxed` / `hipStreamCaptureModeRelaxed`.
const CAPTURE_MODE_RELAXED: u64 = 2;

/// What replay passes for one parameter: its kind's policy applied to the captured value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ArgPlan {
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
pub(super) struct CallPlan {
    pub(super) args: Vec<ArgPlan>,
    pub(super) pitch_override: Vec<(usize, u64)>,
}

/// The copy direction capture resolved, if the row is a copy.
pub(super) fn copy_dir(p: &Payload) -> Result<Option<CopyDir>, EventError> {
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
        textures::host_extent(p, &parms)?
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
pub(super) fn plan_call(
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
            ParamKind::OutGraph
            | ParamKind::OutGraphRef
            | ParamKind::OutGraphExec
            | ParamKind::OutGraphNode => ArgPlan::OutSlot,
            ParamKind::MemLocation => match p.get(ApiDesc::field_id(i)) {
                Some(f) if !f.is_null() => {
                    let raw = p.bytes(ApiDesc::field_id(i), param.name)?;
                    if raw.len() != 8 {
                        return Err(EventError::Inconsistent(format!(
                            "{} is {} bytes, not a memory location's 8",
                            param.name,
                            raw.len()
                        )));
                    }
                    ArgPlan::HostBytes(raw.to_vec())
                }
                _ => ArgPlan::Value(0),
            },
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
            | ParamKind::OutArrayPlane(_)
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
            ParamKind::ByLayout(name) => match textures::captured_layout(p, i, name)? {
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
            ParamKind::AccessDescs(_) | ParamKind::DeviceList(_) => {
                match p.get(ApiDesc::field_id(i)) {
                    Some(f) if !f.is_null() => ArgPlan::HostBytes(
                        p.bytes(ApiDesc::field_id(i), "access descriptors")?
                            .to_vec(),
                    ),
                    _ => ArgPlan::Value(0),
                }
            }
            ParamKind::MemPoolProps => plan_pool_props(p, i)?,
            // Host code: replay's own, which does nothing, in the program's place.
            ParamKind::HostFn => ArgPlan::Value(crate::engine::host_fns::host_fn()),
            ParamKind::StreamCallback => ArgPlan::Value(crate::engine::host_fns::stream_callback()),
            ParamKind::HostFnData => ArgPlan::Value(0),
            ParamKind::HostNodeParams => match p.get(ApiDesc::field_id(i)) {
                Some(f) if !f.is_null() => {
                    ArgPlan::HostBytes(crate::engine::host_fns::node_params())
                }
                _ => ArgPlan::Value(0),
            },
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
pub(super) fn packed_side(ptr: u64, extent: [u64; 3]) -> memcpy3d::Side {
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

#[cfg(test)]
mod tests;
