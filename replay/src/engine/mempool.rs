//! Stream-ordered memory at the end of a replay: a device whose current pool the program
//! set (`DeviceSetMemPool`, `MemSetMemPool`: `RowHook::DevicePoolSet`) is given back its default pool before the program's pools are
//! destroyed, so the next archive replayed in the same process (`--serve`) allocates
//! from a live pool. Pools, their handles and allocations are otherwise table rows
//! (`OutMemPool`, `MemPool`, `MemPoolProps`, `PoolAttrValue` in `generic`).

use hrr_archive::api::row_hooks::PoolDevice;
use hrr_archive::api::{self, ApiDesc};
use hrr_archive::payload::Payload;

/// `cudaMemLocationTypeDevice` / `CU_MEM_LOCATION_TYPE_DEVICE`.
const LOCATION_DEVICE: i32 = 1;

/// The device a memory location's 8 bytes (type, id) name, if they name one.
fn device_location(b: &[u8]) -> Option<u64> {
    let word = |o: usize| Some(i32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
    (word(0)? == LOCATION_DEVICE)
        .then(|| word(4))
        .flatten()
        .and_then(|id| u64::try_from(id).ok())
}

use super::owned::Owned;
use crate::runtime::Runtime;

impl Owned {
    /// Notes the device whose current pool a successful call set (`RowHook::DevicePoolSet`).
    pub(super) fn note_device_pool(
        &mut self,
        desc: &ApiDesc,
        from: PoolDevice,
        p: &Payload,
        args: &[u64],
    ) {
        let device = match from {
            PoolDevice::FirstArgument => args.first().copied(),
            PoolDevice::Location => desc
                .param_index("location")
                .and_then(|i| p.bytes(ApiDesc::field_id(i), "location").ok())
                .and_then(device_location),
        };
        if let Some(device) = device {
            if !self.pool_devices.contains(&device) {
                self.pool_devices.push(device);
            }
        }
    }

    /// Gives each device the program changed its default pool back. Failures change no
    /// result: the device is checked before the next archive (`--serve`).
    pub(super) fn restore_device_pools(&mut self, rt: &Runtime) {
        for device in std::mem::take(&mut self.pool_devices) {
            let mut pool: u64 = 0;
            let slot = &mut pool as *mut u64 as u64;
            // SAFETY: DeviceGetDefaultMemPool(pool*, int device): `slot` is a live u64.
            let got = unsafe { rt.call_table(api::id::DeviceGetDefaultMemPool, &[slot, device]) };
            if matches!(got, Ok(0)) && pool != 0 {
                // SAFETY: DeviceSetMemPool(int device, pool): the device's own default pool.
                let _ = unsafe { rt.call_table(api::id::DeviceSetMemPool, &[device, pool]) };
            }
        }
    }
}
