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

use hrr_archive::api::{memcpy3d, ApiDesc, CopyDir, ParamKind, COPY_DIR_FIELD};
use hrr_archive::payload::Payload;
use hrr_archive::Event;

use super::{Ctx, EvResult, EventError};
use crate::runtime::{call_row, RuntimeError};

/// What replay passes for one parameter: its kind's policy applied to the captured value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ArgPlan {
    /// Passed as captured (values, copy kinds).
    Value(u64),
    /// A captured device or pinned-host address, translated to the replay allocation.
    Address(u64),
    /// A captured stream or event, mapped to the replay handle created for it.
    Handle(u64),
    /// An out parameter: a slot the call writes.
    OutSlot,
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
    /// direction, the device side translated.
    Copy3D { parms: memcpy3d::Parms, total: u64 },
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
fn plan_copy3d(p: &Payload, i: usize, max_host_bytes: u64) -> Result<ArgPlan, EventError> {
    let raw = p.bytes(ApiDesc::field_id(i), "3D copy parameters")?;
    let raw: &[u8; memcpy3d::SIZE] = raw.try_into().map_err(|_| {
        EventError::Inconsistent(format!(
            "3D copy parameters are {} bytes, not {}",
            raw.len(),
            memcpy3d::SIZE
        ))
    })?;
    let parms = memcpy3d::Parms::decode(raw);
    if parms.src_array != 0 || parms.dst_array != 0 {
        return Err(EventError::Unsupported(
            "3D copies to or from arrays are not replayable",
        ));
    }
    let total = parms
        .box_bytes()
        .filter(|&t| t <= max_host_bytes)
        .ok_or_else(|| EventError::TooLarge {
            what: format!("a {:?} box", parms.extent),
            limit: None,
        })?;
    Ok(ArgPlan::Copy3D { parms, total })
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
            ParamKind::DevPtr | ParamKind::FreeDevPtr | ParamKind::FreeHostPtr => {
                ArgPlan::Address(captured(p, i, param.name)?)
            }
            ParamKind::Stream | ParamKind::Event => ArgPlan::Handle(captured(p, i, param.name)?),
            ParamKind::OutDevPtr(_)
            | ParamKind::OutHostPtr(_)
            | ParamKind::OutStream
            | ParamKind::OutEvent
            | ParamKind::OutValue
            | ParamKind::OutStruct
            | ParamKind::OutSize
            | ParamKind::OutPitchedDevPtr(..) => ArgPlan::OutSlot,
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
            ParamKind::Copy3DParms => plan_copy3d(p, i, max_host_bytes)?,
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
                let ((pi, _), (_, w), (_, h)) = (geo(pitch)?, geo(width)?, geo(height)?);
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
                    _ => ArgPlan::Address(value),
                }
            }
            ParamKind::CopySrc(len) | ParamKind::CopyDst(len) => {
                let value = captured(p, i, param.name)?;
                let is_dst = matches!(param.kind, ParamKind::CopyDst(_));
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
                    _ => ArgPlan::Address(value),
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
    /// A D2H copy whose output is compared when its `CopyOutput` record arrives.
    pub(super) deferred: Option<super::deferred::Staged<'a>>,
    /// The row has a stream (its copy may still run after the call returns).
    pub(super) streamed: bool,
    /// Out parameters' slots, and which parameter each belongs to.
    pub(super) slots: Vec<Box<[u64; 2048]>>,
    pub(super) slot_of: HashMap<usize, usize>,
    /// Encoded 3D copy parameters.
    keep: Vec<Vec<u8>>,
    /// A D2H copy's (result length, expected length), both in the staging buffers.
    pub(super) d2h: Option<(usize, usize)>,
    /// The copy reads a page-locked source after an asynchronous call returns.
    pub(super) source_in_flight: bool,
    /// The stand-in buffer being registered.
    pub(super) registering: Option<u64>,
}

impl<'a> Ctx<'a> {
    pub(super) fn replay_generic(&mut self, ev: &Event, desc: &'static ApiDesc) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let f = self.rt.require(self.rt.symbol_of(desc)?)?;
        let dir = copy_dir(&p)?;
        if dir == Some(CopyDir::HostToHost) {
            return Ok(()); // host memory of the captured process: nothing to re-execute
        }
        let plan = plan_call(desc, &p, dir, self.proc_.limits.max_host_bytes)?;
        let mut bufs = CallBuffers {
            seq: ev.header.seq,
            streamed: desc.params.iter().any(|p| p.kind == ParamKind::Stream),
            ..CallBuffers::default()
        };
        let mut args = Vec::with_capacity(plan.args.len());
        for (i, arg) in plan.args.into_iter().enumerate() {
            args.push(self.encode(&p, i, arg, dir, &mut bufs)?);
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
        self.check_ret(ev, desc.ret, ret)?;
        self.record_outputs(desc, &p, ret, &args, &bufs)?;
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
            ArgPlan::Handle(h) => self.handle(h)?,
            ArgPlan::OutSlot => {
                bufs.slots.push(Box::new([0u64; 2048]));
                bufs.slot_of.insert(i, bufs.slots.len() - 1);
                bufs.slots.last().map(|s| s.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::RegisterHost(n) => {
                // A page-aligned buffer of our own stands in for the program's memory; a
                // size the system refuses fails the event instead of aborting replay.
                let bytes = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_add(4096))
                    .unwrap_or(usize::MAX);
                let mut probe: Vec<u8> = Vec::new();
                probe
                    .try_reserve_exact(bytes)
                    .map_err(|_| crate::staging::NoMemory { bytes })?;
                drop(probe);
                let mut buf = vec![0u8; bytes];
                let base = buf.as_mut_ptr() as u64;
                let aligned = (base + 4095) & !4095;
                self.registered.insert(aligned, buf);
                bufs.registering = Some(aligned);
                aligned
            }
            ArgPlan::Source { what, len } => {
                bufs.source_in_flight = true;
                self.stage_source(p, id, what, len)?
            }
            ArgPlan::Result { what, len } => self.stage_d2h(p, id, what, len, bufs)?,
            ArgPlan::Copy3D { mut parms, total } => {
                match dir {
                    Some(CopyDir::HostToDevice) => {
                        let src = self.stage_source(p, id, "source box", Some(total))?;
                        bufs.source_in_flight = true;
                        parms.src = packed_side(src, parms.extent);
                        parms.dst.ptr = self.translate(parms.dst.ptr);
                    }
                    Some(CopyDir::DeviceToHost) => {
                        let dst = self.stage_d2h(p, id, "expected box", total, bufs)?;
                        parms.dst = packed_side(dst, parms.extent);
                        parms.src.ptr = self.translate(parms.src.ptr);
                    }
                    _ => {
                        parms.src.ptr = self.translate(parms.src.ptr);
                        parms.dst.ptr = self.translate(parms.dst.ptr);
                    }
                }
                bufs.keep.push(parms.encode().to_vec());
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
        })
    }
}

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
                ArgPlan::Address(0x2000),
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
        assert_eq!(plan.args[0], ArgPlan::Address(0x1000));
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
        assert_eq!(
            plan.args[..2],
            [ArgPlan::Address(0x1000), ArgPlan::Address(0x2000)]
        );
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
        assert_eq!(plan.args[2], ArgPlan::Address(0x2000));
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
        assert_eq!(plan.args[0], ArgPlan::Address(0));
        let bytes = payload(|w| {
            w.devptr(1, 0x1000).u64(3, 1).u64(4, 3);
        });
        let p = Payload::parse(&bytes).unwrap();
        let e = plan_of(id::Memcpy, &p, 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "payload: parameter src (field 2) is absent");
        assert_eq!(e.kind(), hrr_contract::FailureKind::Error);
    }

    #[test]
    fn a_3d_copy_of_arrays_or_of_a_box_over_the_limit_is_refused() {
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
            ArgPlan::Copy3D { total, .. } => assert_eq!(total, 128),
            ref other => panic!("{other:?}"),
        }
        let e = plan_of(id::Memcpy3D, &p, 127).unwrap_err();
        assert!(e.to_string().ends_with("box exceeds max_host_bytes"), "{e}");
        parms.src_array = 1;
        let bytes = encoded(&parms);
        let p = Payload::parse(&bytes).unwrap();
        let e = plan_of(id::Memcpy3D, &p, 1 << 20).unwrap_err();
        assert!(matches!(e, EventError::Unsupported(_)), "{e:?}");
    }

    #[test]
    fn the_packed_side_of_a_box_has_the_box_width_as_pitch() {
        let s = packed_side(0x9000, [32, 5, 7]);
        assert_eq!((s.ptr, s.pitch, s.xsize, s.ysize), (0x9000, 32, 32, 5));
        assert_eq!((s.x, s.y, s.z), (0, 0, 0));
    }
}
