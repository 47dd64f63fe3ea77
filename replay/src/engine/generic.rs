//! Generic table rows, in three steps per parameter kind:
//!
//! 1. decode and policy (`plan::plan_call`, pure): from the payload alone, what replay
//!    passes for each parameter: a value as captured, an address to translate, a handle
//!    to map, an out slot, a staged copy source or result, a stand-in host buffer, 3D
//!    copy parameters; limits and inconsistent records are refused there;
//! 2. encode (`Ctx::encode`, here): each plan turned into the argument word the typed
//!    call takes (translation, staging, slots), and the call;
//! 3. after the call: what it created is recorded (`outputs`: addresses, handles, live
//!    resources) and a D2H result compared with the captured bytes (`copies`).

mod plan;

use hrr_archive::api::row_hooks::{self, RowHook};

use hrr_archive::api::{ApiDesc, CopyDir, ParamKind, INSTANTIATE_PARAMS_SIZE};
use hrr_archive::payload::Payload;
use hrr_archive::Event;

use super::call_buffers::{CallBuffers, OUT_SLOT_WORDS};
use super::ctx::Ctx;
use super::error::{EvResult, EventError};
use crate::runtime::{call_row, RuntimeError};
use crate::translate::Translated;
use plan::{copy_dir, packed_side, plan_call, ArgPlan};

impl<'a> Ctx<'a> {
    pub(super) fn replay_generic(&mut self, ev: &Event, desc: &'static ApiDesc) -> EvResult {
        let p = Payload::parse(&ev.payload)?;
        let f = self.rt.require_row(desc)?;
        let dir = copy_dir(&p)?;
        if dir == Some(CopyDir::HostToHost) {
            return Ok(()); // host memory of the captured process: nothing to re-execute
        }
        let plan = plan_call(desc, &p, dir, self.proc_.limits.max_host_bytes)?;
        self.graphs.refuse_broken_graph(self.rt.vendor, desc, &p)?;
        for hook in row_hooks::of(hrr_archive::api::hip_abi::base_row(desc.id)) {
            match hook {
                RowHook::TextureObjectNumbering => {
                    self.owned.offset_object_numbering(self.rt, false)
                }
                RowHook::SurfaceObjectNumbering => {
                    self.owned.offset_object_numbering(self.rt, true)
                }
                RowHook::PreloadCapturedKernels => self.preload_captured_kernels(ev.header.seq),
                RowHook::NoteRuntime
                | RowHook::DevicePoolSet(_)
                | RowHook::Destroys
                | RowHook::SharesWithOtherProcesses
                | RowHook::ClosesExportedDescriptor => {}
            }
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
                    self.checks.counts.failed_as_captured += 1;
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
                self.owned.registered.remove(&buf);
            }
        }
        // What the call created or released follows replay's result, also when it differs
        // from capture's (a free the archive says failed but replay's succeeded is
        // forgotten now, never freed again at teardown: issue 20's double free).
        let checked = self.checks.check_ret(ev, desc.ret, ret);
        super::outputs::record(
            &mut self.tr,
            &mut self.owned,
            &mut self.code,
            desc,
            &p,
            ret,
            &args,
            &bufs,
        )?;
        for hook in row_hooks::of(hrr_archive::api::hip_abi::base_row(desc.id)) {
            match (hook, ret) {
                (RowHook::DevicePoolSet(from), 0) => {
                    self.owned.note_device_pool(desc, from, &p, &args)
                }
                (RowHook::SharesWithOtherProcesses, 0) => {
                    let api = desc.symbol(self.rt.vendor).unwrap_or(desc.name);
                    self.checks.note_shared(ev.header.seq, api)
                }
                (RowHook::ClosesExportedDescriptor, 0) => close_exported(&args),
                (RowHook::Destroys, 0) => {
                    if let Some(handle) = args.first() {
                        self.owned.live.remove(handle);
                    }
                }
                _ => {}
            }
        }
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
            ArgPlan::Range { what, addr, len } => match self.tr.addrs.translate_range(addr, len) {
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
                .tr
                .handles
                .get(&h)
                .copied()
                .ok_or(EventError::UnknownHandle(h))?,
            ArgPlan::Context(0) => 0,
            ArgPlan::Context(h) => match self.handle(h) {
                Err(EventError::UnknownHandle(_)) => self.tr.adopt_primary_context(self.rt, h)?,
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
                self.owned.registered.insert(aligned, buf);
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
                self.stage_source(p, bufs.seq, id, what, len)?
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
                        self.tr.device_side(&mut m.dst_array, &mut m.dst.ptr)?;
                    }
                    Some(CopyDir::DeviceToHost) if bufs.node.is_some() => {
                        let seq = bufs.node.unwrap_or_default();
                        m.dst = packed_side(self.node_buffer(seq, total)?.at, host_extent);
                        self.tr.device_side(&mut m.src_array, &mut m.src.ptr)?;
                    }
                    Some(CopyDir::HostToDevice) => {
                        let src = self.stage_source(p, bufs.seq, id, "source box", Some(total))?;
                        bufs.source_in_flight = true;
                        m.src = packed_side(src, host_extent);
                        self.tr.device_side(&mut m.dst_array, &mut m.dst.ptr)?;
                    }
                    Some(CopyDir::DeviceToHost) => {
                        let dst = self.stage_d2h(p, id, "expected box", total, bufs)?;
                        m.dst = packed_side(dst, host_extent);
                        self.tr.device_side(&mut m.src_array, &mut m.src.ptr)?;
                    }
                    _ => {
                        self.tr.device_side(&mut m.src_array, &mut m.src.ptr)?;
                        self.tr.device_side(&mut m.dst_array, &mut m.dst.ptr)?;
                    }
                }
                bufs.keep.push(match layout {
                    None => parms.encode().to_vec(),
                    Some(l) => l.encode(&raw, &parms),
                });
                bufs.keep.last().map(|d| d.as_ptr() as u64).unwrap_or(0)
            }
            ArgPlan::LaunchAttr(a) => {
                let addrs = &self.tr.addrs;
                let handles = &self.tr.handles;
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
            ArgPlan::Object { surface, captured } => self.owned.objects.get(surface, captured)?,
            ArgPlan::Layout { name, raw } => {
                bufs.keep.push(super::textures::rebuild_layout(
                    &mut self.tr,
                    self.rt.vendor,
                    name,
                    &raw,
                )?);
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

/// `cudaMemAllocationHandleTypePosixFileDescriptor` / the driver's, the one handle type
/// that is a file descriptor.
const POSIX_FILE_DESCRIPTOR: u64 = 1;

/// Closes the file descriptor an export wrote at `args[0]` when `args[2]` names the POSIX
/// type: replay's own, which nothing receives.
fn close_exported(args: &[u64]) {
    let (Some(&at), Some(&POSIX_FILE_DESCRIPTOR)) = (args.first(), args.get(2)) else {
        return;
    };
    if at == 0 {
        return;
    }
    // SAFETY: the call succeeded and wrote an int at its handle argument, replay's out
    // slot, which lives until the event is done.
    let fd = unsafe { std::ptr::read_unaligned(at as *const i32) };
    if fd >= 0 {
        // SAFETY: a descriptor the runtime just opened for replay, owned by no one else.
        unsafe { libc::close(fd) };
    }
}
