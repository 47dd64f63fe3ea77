//! Stream-ordered memory at the end of a replay: a device whose current pool the program
//! set (`DeviceSetMemPool`) is given back its default pool before the program's pools are
//! destroyed, so the next archive replayed in the same process (`--serve`) allocates
//! from a live pool. Pools, their handles and allocations are otherwise table rows
//! (`OutMemPool`, `MemPool`, `MemPoolProps`, `PoolAttrValue` in `generic`).

use hrr_archive::api::{self, ApiDesc};

use super::Ctx;

impl Ctx<'_> {
    /// Notes the device a successful `DeviceSetMemPool` changed (its first argument).
    pub(super) fn note_device_pool(&mut self, desc: &ApiDesc, ret: i32, args: &[u64]) {
        if matches!(
            desc.id,
            api::id::DeviceSetMemPool | api::id::DrvDeviceSetMemPool
        ) && ret == 0
        {
            if let Some(&device) = args.first() {
                if !self.pool_devices.contains(&device) {
                    self.pool_devices.push(device);
                }
            }
        }
    }

    /// Gives each device the program changed its default pool back. Failures change no
    /// result: the device is checked before the next archive (`--serve`).
    pub(super) fn restore_device_pools(&mut self) {
        for device in std::mem::take(&mut self.pool_devices) {
            let mut pool: u64 = 0;
            let slot = &mut pool as *mut u64 as u64;
            // SAFETY: DeviceGetDefaultMemPool(pool*, int device): `slot` is a live u64.
            let got = unsafe {
                self.rt
                    .call_table(api::id::DeviceGetDefaultMemPool, &[slot, device])
            };
            if matches!(got, Ok(0)) && pool != 0 {
                // SAFETY: DeviceSetMemPool(int device, pool): the device's own default pool.
                let _ = unsafe {
                    self.rt
                        .call_table(api::id::DeviceSetMemPool, &[device, pool])
                };
            }
        }
    }
}
