//! Address translation: every captured device (or pinned host) address maps to the
//! tightest enclosing replay allocation, keeping its offset.

use std::collections::BTreeMap;

#[derive(Default, Debug)]
pub struct AddressMap {
    /// captured start -> (size, replay start)
    by_start: BTreeMap<u64, (u64, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Translated {
    Null,
    Mapped(u64),
    /// Address-shaped but inside no live allocation.
    Unmapped,
}

impl AddressMap {
    pub fn insert(&mut self, captured: u64, size: u64, replay: u64) {
        if captured != 0 {
            self.by_start.insert(captured, (size.max(1), replay));
        }
    }
    pub fn remove(&mut self, captured: u64) {
        self.by_start.remove(&captured);
    }
    /// The bytes from `addr` to the end of the tightest allocation holding it.
    pub fn remaining(&self, addr: u64) -> Option<u64> {
        let (&start, &(size, _)) = self.by_start.range(..=addr).next_back()?;
        (addr < start.saturating_add(size)).then(|| start + size - addr)
    }

    /// Tightest enclosing allocation: among those containing `addr`, the one starting
    /// last (allocations may nest, e.g. a registered range inside a larger one).
    pub fn translate(&self, addr: u64) -> Translated {
        if addr == 0 {
            return Translated::Null;
        }
        let mut best: Option<(u64, u64, u64)> = None;
        for (&start, &(size, replay)) in self.by_start.range(..=addr).rev() {
            if addr < start.saturating_add(size) {
                match best {
                    Some((_, bsize, _)) if bsize <= size => {}
                    _ => best = Some((start, size, replay)),
                }
                // The nearest start that contains addr is the tightest unless a larger
                // earlier one is smaller, which cannot happen for nesting ranges.
                break;
            }
        }
        match best {
            Some((start, _, replay)) => Translated::Mapped(replay + (addr - start)),
            None => Translated::Unmapped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_inside_outside_zero_and_tightest() {
        let mut m = AddressMap::default();
        m.insert(0x1000, 0x1000, 0xa000);
        m.insert(0x1800, 0x100, 0xc000); // nested inside the first
        assert_eq!(m.translate(0), Translated::Null);
        assert_eq!(m.translate(0x1000), Translated::Mapped(0xa000));
        assert_eq!(m.translate(0x1010), Translated::Mapped(0xa010));
        assert_eq!(
            m.translate(0x1810),
            Translated::Mapped(0xc010),
            "tightest enclosing wins"
        );
        assert_eq!(
            m.translate(0x1900),
            Translated::Mapped(0xa900),
            "past the nested one, the outer one"
        );
        assert_eq!(
            m.translate(0x2000),
            Translated::Unmapped,
            "one past the end is outside"
        );
        assert_eq!(m.translate(0xfff), Translated::Unmapped);
        assert_eq!(m.remaining(0x1010), Some(0xff0));
        assert_eq!(m.remaining(0x2000), None);
        m.remove(0x1000);
        assert_eq!(m.translate(0x1010), Translated::Unmapped);
    }
}
