//! What replay owns on the device until the program's own call releases it: allocations,
//! streams, events, contexts, pools, graphs, arrays, physical memory and reserved ranges
//! (`live`), host buffers it page-locked in place of the program's registered memory,
//! texture and surface objects, memory mapped into reserved ranges, and devices whose
//! current pool the program set. `release` gives back what the program left, in an
//! order that releases nothing before what depends on it.

use std::collections::HashMap;

use hrr_archive::api;

use super::resource::Resource;
use super::{textures, vmm};
use crate::pages::Pages;
use crate::runtime::Runtime;

#[derive(Default)]
pub(super) struct Owned {
    /// What this replay created and has not released yet, by replay address or handle:
    /// released when the process's replay ends, so the next archive replayed in the same
    /// process (`hrr-replay --serve`) starts on an empty device.
    pub(super) live: HashMap<u64, Resource>,
    /// Host buffers replay page-locked in place of the captured process's registered
    /// memory (HostRegister), by their replay address.
    pub(super) registered: HashMap<u64, Pages>,
    /// Devices whose current memory pool the program set (`RowHook::DevicePoolSet`):
    /// given back their default pool at the end, before the program's pools are
    /// destroyed (`mempool`).
    pub(super) pool_devices: Vec<u64>,
    /// Texture and surface objects (`textures`).
    pub(super) objects: textures::Objects,
    /// Memory the program mapped into its reserved ranges (`vmm`).
    pub(super) mappings: vmm::Mappings,
}

impl Owned {
    /// After the program's context `ctx` (a replay handle) was destroyed: it is no longer
    /// replay's to release.
    pub(super) fn context_destroyed(&mut self, ctx: u64) {
        self.live.remove(&ctx);
    }

    /// `Objects::offset_numbering`, the memory under replay's own object owned here.
    pub(super) fn offset_object_numbering(&mut self, rt: &Runtime, surface: bool) {
        if let Some((at, kind)) = self.objects.offset_numbering(rt, surface) {
            self.live.insert(at, kind);
        }
    }

    /// After a device reset: every allocation, stream, event, pool and object went with
    /// it. Registrations went with the context; the buffers are still ours.
    pub(super) fn reset(&mut self) {
        self.live.clear();
        self.objects = textures::Objects::default();
        self.pool_devices.clear();
        self.registered.clear();
    }

    /// Releases what the replayed program left allocated or registered (a program need
    /// not free before it exits; a replay process serving several archives must).
    /// Failures here change no result: the device is checked before the next archive
    /// (`--serve`).
    pub(super) fn release(&mut self, rt: &Runtime) {
        self.restore_device_pools(rt);
        // Objects before the arrays and memory they read.
        self.objects.release(rt);
        // Mappings before the ranges that hold them (`Resource::release_order`).
        self.mappings.release(rt);
        let mut live: Vec<(u64, Resource)> = std::mem::take(&mut self.live).into_iter().collect();
        live.sort_by_key(|(_, kind)| kind.release_order());
        let contexts = live.iter().any(|(_, k)| *k == Resource::Context);
        for (handle, kind) in live {
            let mut row = kind.release_row();
            if rt.driver_only {
                if let Some(&(_, d)) = crate::runtime::DRIVER_RELEASE_ROWS
                    .iter()
                    .find(|(r, _)| *r == row)
                {
                    row = d;
                }
            }
            // SAFETY: the row that releases `kind`, given the handle or address this
            // replay's own call created and nothing has released since.
            let _ = unsafe { rt.call_table(row, &kind.release_args(handle)) };
        }
        if contexts {
            // The runtime makes its primary context current again on its next call.
            // SAFETY: CtxSetCurrent(NULL) unbinds the thread's context.
            let _ = unsafe { rt.call_table(api::id::CtxSetCurrent, &[0]) };
        }
        for buf in std::mem::take(&mut self.registered).keys() {
            // SAFETY: HostUnregister of a buffer this replay registered; the buffer is
            // dropped only after the call.
            let _ = unsafe { rt.call_table(api::id::HostUnregister, &[*buf]) };
        }
    }
}
