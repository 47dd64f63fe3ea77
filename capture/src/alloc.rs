//! Live allocations seen by capture: device memory and pinned host memory. Used to
//! resolve memcpy direction for "default" copies and to find pointers inside kernel
//! arguments (also inside structs passed by value).

use std::collections::BTreeMap;

use parking_lot::RwLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Device,
    PinnedHost,
}

#[derive(Default)]
pub struct AllocTable {
    by_start: RwLock<BTreeMap<u64, (u64, Space)>>,
}

impl AllocTable {
    pub fn insert(&self, start: u64, size: u64, space: Space) {
        if start != 0 {
            self.by_start.write().insert(start, (size.max(1), space));
        }
    }
    pub fn remove(&self, start: u64) {
        self.by_start.write().remove(&start);
    }
    /// The allocation containing `addr`, if any.
    pub fn lookup(&self, addr: u64) -> Option<(u64, u64, Space)> {
        let t = self.by_start.read();
        let (&start, &(size, space)) = t.range(..=addr).next_back()?;
        (addr < start.saturating_add(size)).then_some((start, size, space))
    }
    pub fn is_device(&self, addr: u64) -> bool {
        matches!(self.lookup(addr), Some((_, _, Space::Device)))
    }
    pub fn clear(&self) {
        self.by_start.write().clear();
    }
}

impl AllocTable {
    /// Fork support: take the lock so no other thread holds it across fork.
    pub fn fork_prepare(&self) {
        std::mem::forget(self.by_start.write());
    }
    /// # Safety
    /// Must follow `fork_prepare` on the same thread (in the parent or the child).
    pub unsafe fn fork_release(&self) {
        // SAFETY: the caller's contract: fork_prepare holds the write lock.
        unsafe { self.by_start.force_unlock_write() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_inside_outside_and_edges() {
        let t = AllocTable::default();
        t.insert(0x1000, 0x100, Space::Device);
        t.insert(0x2000, 0x10, Space::PinnedHost);
        assert_eq!(t.lookup(0x1000), Some((0x1000, 0x100, Space::Device)));
        assert_eq!(t.lookup(0x10ff), Some((0x1000, 0x100, Space::Device)));
        assert_eq!(t.lookup(0x1100), None);
        assert_eq!(t.lookup(0xfff), None);
        assert!(!t.is_device(0x2004));
        t.remove(0x1000);
        assert_eq!(t.lookup(0x1004), None);
    }
}
