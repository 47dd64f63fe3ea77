//! After a generic call: what it created or released, recorded per out-parameter kind:
//! captured addresses mapped to replay allocations, captured handles to replay handles,
//! and the resources replay owns until the program releases them.

use hrr_archive::api::{self, ApiDesc, ParamKind};
use hrr_archive::payload::Payload;

use super::call_buffers::CallBuffers;
use super::code::Code;
use super::error::{EvResult, EventError};
use super::owned::Owned;
use super::resource::Resource;
use super::translation::Translation;

/// Records what the call created or released: captured addresses mapped to replay
/// allocations, captured handles to replay handles, and the resources replay owns.
#[allow(clippy::too_many_arguments)] // the parts it changes, each borrowed apart
pub(super) fn record(
    tr: &mut Translation,
    owned: &mut Owned,
    code: &mut Code,
    desc: &ApiDesc,
    p: &Payload,
    ret: i32,
    args: &[u64],
    bufs: &CallBuffers,
) -> EvResult {
    let slots = &bufs.slots;
    let mut slot = slots.iter();
    let captured_out = |id: u16| {
        p.get(id)
            .filter(|f| !f.is_null())
            .and_then(|f| f.as_u64().ok())
    };
    for (i, param) in desc.params.iter().enumerate() {
        let id = ApiDesc::field_id(i);
        match param.kind {
            ParamKind::OutPitchedDevPtr(pitch, height) => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                let pj = desc.param_index(pitch).unwrap_or(0);
                let replay_pitch = bufs.slot_of.get(&pj).map(|&k| slots[k][0]).unwrap_or(0);
                let captured_pitch = p.u64(ApiDesc::field_id(pj), "pitch").unwrap_or(0);
                if let Some(captured) = captured_out(id) {
                    if ret == 0 && replay_pitch != captured_pitch {
                        return Err(EventError::Inconsistent(format!(
                            "pitch {replay_pitch} at replay, {captured_pitch} at capture: kernels given the captured pitch would address the wrong rows"
                        )));
                    }
                    let h = desc.param_index(height).map(|j| args[j]).unwrap_or(0);
                    if ret == 0 && replay != 0 {
                        tr.addrs
                            .insert(captured, captured_pitch.saturating_mul(h), replay);
                        owned.live.insert(replay, Resource::DeviceMemory);
                    }
                }
            }
            ParamKind::OutSize
            | ParamKind::OutValue
            | ParamKind::OutStruct
            | ParamKind::OutDevicePropsR0600
            | ParamKind::OutPoolAttrValue(_) => {
                slot.next();
            }
            ParamKind::OutMemPool | ParamKind::OutDevicePool => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                if let Some(captured) = captured_out(id) {
                    tr.handles.insert(captured, replay);
                }
                // A created pool is replay's until the program destroys it; a
                // device's pool is the device's.
                if ret == 0 && replay != 0 && param.kind == ParamKind::OutMemPool {
                    owned.live.insert(replay, Resource::MemPool);
                }
            }
            ParamKind::FreeMemPool if ret == 0 => {
                owned.live.remove(&args[i]);
            }
            ParamKind::RegisterHostPtr(len) if ret == 0 => {
                if let (Some(captured), Some(buf)) =
                    (p.get(id).and_then(|f| f.as_u64().ok()), bufs.registering)
                {
                    let size = desc.param_index(len).map(|j| args[j]).unwrap_or(0);
                    tr.addrs.insert(captured, size, buf);
                }
            }
            ParamKind::OutDevPtr(len)
            | ParamKind::OutHostPtr(len)
            | ParamKind::OutManagedPtr(len) => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                // Mapped only when replay's call made it: a captured address whose
                // replay allocation failed stays unmapped (then null, counted), never
                // a range from address 0.
                let in_graph = p.get(api::CAPTURE_FIELD).is_some();
                if let (Some(captured), true) = (captured_out(id), ret == 0 && replay != 0) {
                    let size = desc.param_index(len).map(|j| args[j]).unwrap_or(0);
                    tr.addrs.insert(captured, size, replay);
                    if matches!(param.kind, ParamKind::OutManagedPtr(_)) {
                        tr.managed.insert(captured);
                    } else {
                        tr.managed.remove(&captured);
                    }
                    if in_graph {
                        tr.graph_memory.insert(captured);
                    } else {
                        tr.graph_memory.remove(&captured);
                    }
                }
                // Memory a graph allocates is the graph's to release.
                if ret == 0 && replay != 0 && !in_graph {
                    // Managed memory is released as device memory (cudaFree).
                    let kind = if !matches!(param.kind, ParamKind::OutHostPtr(_)) {
                        Resource::DeviceMemory
                    } else {
                        Resource::PinnedHostMemory
                    };
                    owned.live.insert(replay, kind);
                }
            }
            ParamKind::OutStream
            | ParamKind::OutEvent
            | ParamKind::OutGraph
            | ParamKind::OutGraphExec => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                if let Some(captured) = captured_out(id) {
                    tr.handles.insert(captured, replay);
                }
                if ret == 0 && replay != 0 {
                    let kind = match param.kind {
                        ParamKind::OutStream => Resource::Stream,
                        ParamKind::OutEvent => Resource::Event,
                        ParamKind::OutGraph => Resource::Graph,
                        _ => Resource::GraphExec,
                    };
                    owned.live.insert(replay, kind);
                }
            }
            ParamKind::MemAllocNodeParams if ret == 0 => {
                use hrr_archive::api::mem_alloc_node as m;
                let word = |b: &[u8], o: usize| {
                    b.get(o..o + 8)
                        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
                };
                let captured = p.bytes(id, "memory allocation node parameters")?;
                if let (Some((head, _)), Some(at), Some(size)) = (
                    &bufs.alloc_node,
                    word(captured, m::DPTR),
                    word(captured, m::BYTESIZE),
                ) {
                    // The graph owns the allocation: mapped like any, released by it.
                    let replay = word(head, m::DPTR).unwrap_or(0);
                    tr.addrs.insert(at, size, replay);
                    tr.graph_memory.insert(at);
                }
            }
            ParamKind::OutArray(_)
            | ParamKind::OutMipmappedArray(_)
            | ParamKind::OutArrayLevel(_)
            | ParamKind::OutArrayPlane(_) => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                if let Some(captured) = captured_out(id) {
                    tr.handles.insert(captured, replay);
                }
                // A level belongs to its mipmapped array.
                let array = match param.kind {
                    ParamKind::OutArray(_) => Some(Resource::Array),
                    ParamKind::OutMipmappedArray(_) => Some(Resource::MipmappedArray),
                    _ => None,
                };
                if let (Some(kind), true) = (array, ret == 0 && replay != 0) {
                    owned.live.insert(replay, kind);
                }
            }
            ParamKind::OutTextureObject | ParamKind::OutSurfaceObject => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                let surface = param.kind == ParamKind::OutSurfaceObject;
                if let (Some(captured), true) = (captured_out(id), ret == 0) {
                    owned.objects.created(surface, captured, replay);
                }
            }
            ParamKind::FreeTextureObject | ParamKind::FreeSurfaceObject if ret == 0 => {
                let surface = param.kind == ParamKind::FreeSurfaceObject;
                if let Some(captured) = p.get(id).and_then(|f| f.as_u64().ok()) {
                    owned.objects.destroyed(surface, captured);
                }
            }
            ParamKind::FreeArray | ParamKind::FreeMipmappedArray if ret == 0 => {
                owned.live.remove(&args[i]);
            }
            ParamKind::OutGraphNode | ParamKind::OutGraphRef => {
                // A node belongs to its graph, a child graph to its node: mapped, never
                // released on their own.
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                if let Some(captured) = captured_out(id) {
                    tr.handles.insert(captured, replay);
                }
            }
            ParamKind::FreeGraph | ParamKind::FreeGraphExec if ret == 0 => {
                owned.live.remove(&args[i]);
            }
            ParamKind::FreeDevPtr | ParamKind::FreeHostPtr if ret == 0 => {
                if let Some(captured) = p.get(id).and_then(|f| f.as_u64().ok()) {
                    // A graph's memory keeps its address for the graph's next launch.
                    if !tr.graph_memory.contains(&captured) {
                        tr.addrs.remove(captured);
                    }
                }
                // An unregistered stand-in buffer is ours to free.
                owned.registered.remove(&args[i]);
                owned.live.remove(&args[i]);
            }
            ParamKind::OutContext | ParamKind::OutContextRef => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                if let Some(captured) = captured_out(id) {
                    tr.handles.insert(captured, replay);
                }
                if ret == 0 && replay != 0 && param.kind == ParamKind::OutContext {
                    owned.live.insert(replay, Resource::Context);
                }
            }
            ParamKind::FreeContext if ret == 0 => {
                owned.context_destroyed(args[i]);
                code.context_destroyed();
            }
            ParamKind::OutAddressRange(len) => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                if let (Some(captured), true) = (captured_out(id), ret == 0 && replay != 0) {
                    let size = desc.param_index(len).map(|j| args[j]).unwrap_or(0);
                    tr.addrs.insert(captured, size, replay);
                    owned.live.insert(replay, Resource::AddressRange { size });
                }
            }
            ParamKind::OutMemHandle => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                if let (Some(captured), true) = (captured_out(id), ret == 0 && replay != 0) {
                    tr.handles.insert(captured, replay);
                    owned.live.insert(replay, Resource::MemHandle);
                }
            }
            ParamKind::OutGraphNodeList(count) if ret == 0 => {
                // The list's slot, and how many the call wrote (the count's slot).
                let list = bufs.slot_of.get(&i).map(|&k| &slots[k]);
                let written = desc
                    .param_index(count)
                    .and_then(|j| bufs.slot_of.get(&j))
                    .map_or(0, |&k| slots[k][0]) as usize;
                if let (Some(list), Some(f)) = (list, p.get(id).filter(|f| !f.is_null())) {
                    let captured = f.as_u64_array()?;
                    // Nodes belong to their graph: mapped, never released on their own.
                    for (c, r) in captured.iter().zip(list.iter().take(written)) {
                        tr.handles.insert(*c, *r);
                    }
                }
            }
            ParamKind::FreeMemHandle if ret == 0 => {
                owned.live.remove(&args[i]);
            }
            ParamKind::MapAt(len) if ret == 0 => {
                let size = desc.param_index(len).map(|j| args[j]).unwrap_or(0);
                owned.mappings.mapped(args[i], size);
            }
            ParamKind::UnmapAt if ret == 0 => {
                owned.mappings.unmapped(args[i]);
            }
            ParamKind::OutMappedDevPtr(host) => {
                let replay = slot.next().map(|s| s[0]).unwrap_or(0);
                let host_field = desc.param_index(host).map(ApiDesc::field_id);
                let captured_host = host_field
                    .and_then(|f| p.get(f))
                    .and_then(|f| f.as_u64().ok());
                if let (Some(captured), Some(h), true) = (captured_out(id), captured_host, ret == 0)
                {
                    // The mapped address covers the rest of the host allocation.
                    let size = tr.addrs.remaining(h).unwrap_or(1);
                    tr.addrs.insert(captured, size, replay);
                }
            }
            _ => {}
        }
    }
    Ok(())
}
