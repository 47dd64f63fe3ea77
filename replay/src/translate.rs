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
        match self.holder(addr) {
            Some((start, _, replay)) => Translated::Mapped(replay + (addr - start)),
            None => Translated::Unmapped,
        }
    }

    /// `translate` for `len` bytes from `addr`: `Err(Some((start, size)))` of the
    /// tightest captured allocation holding `addr` when the range runs past its end,
    /// `Err(None)` when no allocation holds a range of one byte or more. Null stays null
    /// (the runtime refuses it), as does an empty range nothing holds.
    pub fn translate_range(&self, addr: u64, len: u64) -> Result<Translated, Option<(u64, u64)>> {
        if addr == 0 {
            return Ok(Translated::Null);
        }
        match self.holder(addr) {
            Some((start, size, replay)) => {
                let end = start.saturating_add(size);
                if addr.checked_add(len).is_some_and(|e| e <= end) {
                    Ok(Translated::Mapped(replay + (addr - start)))
                } else {
                    Err(Some((start, size)))
                }
            }
            None if len == 0 => Ok(Translated::Unmapped),
            None => Err(None),
        }
    }

    /// The tightest allocation holding `addr`: (captured start, size, replay start).
    pub fn holder(&self, addr: u64) -> Option<(u64, u64, u64)> {
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
        best
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

    #[test]
    fn a_range_must_end_inside_the_allocation_holding_its_start() {
        let mut m = AddressMap::default();
        m.insert(0x1000, 0x4000, 0x9000);
        m.insert(0x2000, 0, 0x20_0000); // a 0-byte registration: one byte mapped
        assert_eq!(
            m.translate_range(0x1000, 0x4000),
            Ok(Translated::Mapped(0x9000))
        );
        let past = Err(Some((0x1000, 0x4000)));
        assert_eq!(m.translate_range(0x1010, 0x4000), past);
        assert_eq!(m.translate_range(0x1000, 1 << 40), past);
        assert_eq!(m.translate_range(0x1000, u64::MAX), past);
        assert_eq!(m.translate_range(0x2000, 256), Err(Some((0x2000, 1))));
        assert_eq!(m.translate_range(0, 64), Ok(Translated::Null));
        assert_eq!(m.translate_range(0x8000_0000, 64), Err(None));
        assert_eq!(m.translate_range(0x8000_0000, 0), Ok(Translated::Unmapped));
    }
}
