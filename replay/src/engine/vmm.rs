//! Virtual memory management at replay: where replay's calls mapped physical memory into
//! reserved ranges (`cuMemMap` / `hipMemMap`), so that what the program left mapped is
//! unmapped before its range is freed at the end. Ranges and handles themselves are
//! resources (`Resource::AddressRange`, `Resource::MemHandle`); translation of the
//! captured range is `AddressMap`'s, like any allocation's.

use std::collections::BTreeMap;

use hrr_archive::api;

use crate::runtime::Runtime;

/// Replay's live mappings: start address -> size.
#[derive(Default, Debug)]
pub(super) struct Mappings {
    by_start: BTreeMap<u64, u64>,
}

impl Mappings {
    /// A successful map of `size` bytes at replay address `at`.
    pub(super) fn mapped(&mut self, at: u64, size: u64) {
        self.by_start.insert(at, size);
    }

    /// A successful unmap starting at `at`: every mapping the unmapped range began with
    /// (the driver unmaps whole mappings only).
    pub(super) fn unmapped(&mut self, at: u64) {
        self.by_start.remove(&at);
    }

    /// Unmaps what is still mapped (failures change no result: see `release_all`).
    pub(super) fn release(&mut self, rt: &Runtime) {
        for (at, size) in std::mem::take(&mut self.by_start) {
            // SAFETY: MemUnmap(ptr, size) of a mapping this replay's own call made and no
            // call has removed since.
            let _ = unsafe { rt.call_table(api::id::MemUnmap, &[at, size]) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unmap_forgets_the_mapping_it_starts_at() {
        let mut m = Mappings::default();
        m.mapped(0x7000_0000, 2 << 20);
        m.mapped(0x7020_0000, 2 << 20);
        m.unmapped(0x7000_0000);
        assert_eq!(
            m.by_start.iter().collect::<Vec<_>>(),
            [(&0x7020_0000, &(2 << 20))]
        );
    }
}
