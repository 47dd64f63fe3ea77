//! Replay's view of the captured process's names: captured addresses to replay
//! allocations (`AddressMap`), captured handles (streams, events, graphs, contexts,
//! pools, nodes, arrays) to replay handles, and which captured addresses a graph owns.
//! Nothing here calls the runtime except adopting a primary context no call created.

use std::collections::{HashMap, HashSet};

use hrr_archive::api;

use super::error::EventError;
use crate::runtime::Runtime;
use crate::translate::{AddressMap, Translated};

#[derive(Default)]
pub(super) struct Translation {
    pub(super) addrs: AddressMap,
    pub(super) handles: HashMap<u64, u64>,
    /// Captured addresses a graph allocates (an allocation made into a capturing stream,
    /// a memory allocation node): each launch of the graph allocates them again at the
    /// same address, so a free outside the graph keeps their translation for the next.
    pub(super) graph_memory: HashSet<u64>,
    /// Address-shaped values inside no live allocation, passed as null.
    pub(super) untranslated: u64,
    /// Captured starts of managed allocations (`cudaMallocManaged` and its twins): their
    /// snapshots are restored by copy (`snapshots`).
    pub(super) managed: HashSet<u64>,
}

impl Translation {
    /// The replay handle of a captured one.
    pub(super) fn handle(&self, captured: u64) -> Result<u64, EventError> {
        // 0 is the default stream; 1 and 2 are the legacy / per-thread default streams.
        if captured <= 2 {
            return Ok(captured);
        }
        self.handles
            .get(&captured)
            .copied()
            .ok_or(EventError::UnknownHandle(captured))
    }

    /// The replay address of a captured one; an address inside no live allocation is
    /// counted and passed as null.
    pub(super) fn translate(&mut self, addr: u64) -> u64 {
        match self.addrs.translate(addr) {
            Translated::Null => 0,
            Translated::Mapped(a) => a,
            Translated::Unmapped => {
                self.untranslated += 1;
                0
            }
        }
    }

    /// A context argument no recorded call created: the device's primary context, which
    /// nvcc's static runtime retains through the driver's private export table and then
    /// makes current with `cuCtxSetCurrent` before any public call names it (H200, CUDA
    /// 13). Replay retains its own primary context of device 0 (replay runs on one GPU)
    /// and maps the captured handle to it; the program's later
    /// `cuDevicePrimaryCtxRetain` returns the same handle, which then maps to it too.
    pub(super) fn adopt_primary_context(
        &mut self,
        rt: &Runtime,
        captured: u64,
    ) -> Result<u64, EventError> {
        let mut ctx: u64 = 0;
        // SAFETY: the row's out pointer is a local of ours; device 0 is replay's GPU.
        let r = unsafe {
            rt.call_table(
                api::id::DevicePrimaryCtxRetain,
                &[&mut ctx as *mut u64 as u64, 0],
            )
        }?;
        if r != 0 || ctx == 0 {
            return Err(EventError::Call {
                call: format!(
                    "retaining the primary context of device 0 for context {captured:#x}, which no recorded call created"
                ),
                code: r,
            });
        }
        self.handles.insert(captured, ctx);
        Ok(ctx)
    }

    /// One side of a 3D copy on the device: its array mapped, or its pointer translated.
    pub(super) fn device_side(&mut self, array: &mut u64, ptr: &mut u64) -> Result<(), EventError> {
        if *array != 0 {
            *array = self.handle(*array)?;
        } else {
            *ptr = self.translate(*ptr);
        }
        Ok(())
    }

    /// After a device reset: nothing captured before it may be translated to a stale
    /// address or handle.
    pub(super) fn reset(&mut self) {
        self.addrs = AddressMap::default();
        self.handles.clear();
        self.managed.clear();
    }
}
