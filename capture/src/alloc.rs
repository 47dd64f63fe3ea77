//! Live allocations seen by capture: device memory and pinned host memory. Used to
//! resolve memcpy direction for "default" copies and to find pointers inside kernel
//! arguments (also inside structs passed by value).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use hrr_archive::sync::{ForkLock, RwLock};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Device,
    PinnedHost,
    /// Managed memory (`cudaMallocManaged`): one address for host and device.
    Managed,
    /// The device address of mapped page-locked memory where it differs from the host
    /// address (`cudaHostGetDevicePointer`): `host` is the host allocation's start.
    MappedAlias {
        host: u64,
    },
}

pub struct AllocTable {
    by_start: RwLock<BTreeMap<u64, (u64, Space)>>,
    /// Bumped by every change, so each thread's last lookup is reused only while the
    /// table is as it was (kernel arguments point into the same buffers launch after
    /// launch: most lookups then take no lock).
    generation: AtomicU64,
    /// Lowest start and highest end any allocation ever had (never narrowed): a word
    /// outside them (a small integer, a float) is no pointer, found without the lock.
    lowest: AtomicU64,
    highest: AtomicU64,
}

impl Default for AllocTable {
    fn default() -> Self {
        AllocTable {
            by_start: RwLock::default(),
            generation: AtomicU64::new(0),
            lowest: AtomicU64::new(u64::MAX),
            highest: AtomicU64::new(0),
        }
    }
}

thread_local! {
    /// (table, generation, start, size, space) of this thread's last successful lookup.
    static LAST_HIT: Cell<(usize, u64, u64, u64, Space)> =
        const { Cell::new((0, u64::MAX, 0, 0, Space::Device)) };
}

impl AllocTable {
    pub fn insert(&self, start: u64, size: u64, space: Space) {
        if start != 0 {
            let mut t = self.by_start.write();
            t.insert(start, (size.max(1), space));
            self.lowest.fetch_min(start, Ordering::Relaxed);
            self.highest
                .fetch_max(start.saturating_add(size.max(1)), Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
        }
    }
    pub fn remove(&self, start: u64) {
        let mut t = self.by_start.write();
        t.remove(&start);
        self.generation.fetch_add(1, Ordering::Release);
    }
    /// Every live allocation: (start, size, space), by start.
    pub fn all(&self) -> Vec<(u64, u64, Space)> {
        self.by_start
            .read()
            .iter()
            .map(|(&start, &(size, space))| (start, size, space))
            .collect()
    }
    /// The allocation containing `addr`, if any.
    pub fn lookup(&self, addr: u64) -> Option<(u64, u64, Space)> {
        if addr < self.lowest.load(Ordering::Relaxed)
            || addr >= self.highest.load(Ordering::Relaxed)
        {
            return None;
        }
        let table = self as *const AllocTable as usize;
        let generation = self.generation.load(Ordering::Acquire);
        if let Ok((tb, g, start, size, space)) = LAST_HIT.try_with(|c| c.get()) {
            if tb == table && g == generation && addr >= start && addr - start < size {
                return Some((start, size, space));
            }
        }
        let t = self.by_start.read();
        let (&start, &(size, space)) = t.range(..=addr).next_back()?;
        let hit = (addr < start.saturating_add(size)).then_some((start, size, space))?;
        // Stamped with the generation read under this lock: a change made since then
        // bumps it and retires the entry.
        let g = self.generation.load(Ordering::Acquire);
        let _ = LAST_HIT.try_with(|c| c.set((table, g, start, size, space)));
        Some(hit)
    }
    pub fn is_device(&self, addr: u64) -> bool {
        matches!(
            self.lookup(addr),
            Some((_, _, Space::Device | Space::Managed))
        )
    }
    pub fn clear(&self) {
        let mut t = self.by_start.write();
        t.clear();
        self.generation.fetch_add(1, Ordering::Release);
    }
}

/// Bytes checked at once for a word in the table's address bounds before any lookup.
const SCAN_BLOCK: usize = 4096;
/// From this size on, bytes are scanned for pointers by several threads (a 1 GiB copy's
/// scan went from 1.3 s to a fraction of it on the H200's host).
const PARALLEL_SCAN_BYTES: usize = 8 << 20;
/// The most threads one scan uses.
const SCAN_THREADS: usize = 8;

impl AllocTable {
    /// The offsets, from `bytes`' start, of the 8-byte words (little-endian, at multiples
    /// of 8) that point into a live allocation: device pointers the host wrote into
    /// memory it copies to the device (a batched GEMM's pointer arrays). Replay
    /// translates them before the copy. Each block is first checked for any word within
    /// the table's bounds without the lock (floats and small integers never are), so
    /// bytes holding no pointer cost one pass. `Err(n)`: more than `max` words (at least
    /// `n` found).
    pub fn pointer_words_in(&self, bytes: &[u8], max: usize) -> Result<Vec<u64>, usize> {
        let lo = self.lowest.load(Ordering::Relaxed);
        let hi = self.highest.load(Ordering::Relaxed);
        if lo >= hi {
            return Ok(Vec::new());
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, SCAN_THREADS);
        if bytes.len() < PARALLEL_SCAN_BYTES || threads == 1 {
            return self.scan(bytes, 0, lo, hi - lo, max);
        }
        // Parts of whole blocks, so every part's words stay at multiples of 8.
        let per = bytes.len().div_ceil(threads).next_multiple_of(SCAN_BLOCK);
        let parts: Vec<Result<Vec<u64>, usize>> = std::thread::scope(|s| {
            let handles: Vec<_> = bytes
                .chunks(per)
                .enumerate()
                .map(|(i, part)| {
                    s.spawn(move || self.scan(part, (i * per) as u64, lo, hi - lo, max))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Err(max + 1)))
                .collect()
        });
        let mut found = Vec::new();
        for part in parts {
            found.extend(part?);
            if found.len() > max {
                return Err(found.len());
            }
        }
        Ok(found)
    }

    /// `pointer_words_in` on one thread, for bytes starting `base` bytes into the copy.
    fn scan(
        &self,
        bytes: &[u8],
        base: u64,
        lo: u64,
        span: u64,
        max: usize,
    ) -> Result<Vec<u64>, usize> {
        let mut found = Vec::new();
        let word = |w: &[u8]| u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        for (b, block) in bytes.chunks(SCAN_BLOCK).enumerate() {
            // No early exit: a plain fold the compiler vectorises.
            let any = block
                .chunks_exact(8)
                .fold(false, |acc, w| acc | (word(w).wrapping_sub(lo) < span));
            if !any {
                continue;
            }
            for (i, w) in block.chunks_exact(8).enumerate() {
                if self.lookup(word(w)).is_some() {
                    if found.len() == max {
                        return Err(found.len() + 1);
                    }
                    found.push(base + (b * SCAN_BLOCK + i * 8) as u64);
                }
            }
        }
        Ok(found)
    }
}

impl AllocTable {
    /// The table's lock, for the fork protocol (`fork.rs`).
    pub fn fork_locks(&self) -> [&dyn ForkLock; 1] {
        [&self.by_start]
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
        // A repeated lookup is served from the thread's last hit until the table changes.
        assert_eq!(t.lookup(0x1010), Some((0x1000, 0x100, Space::Device)));
        assert_eq!(t.lookup(0x1020), Some((0x1000, 0x100, Space::Device)));
        t.remove(0x1000);
        assert_eq!(t.lookup(0x1004), None);
        t.insert(0x1000, 0x10, Space::PinnedHost);
        assert_eq!(t.lookup(0x1020), None);
    }

    #[test]
    fn pointer_words_are_found_in_any_block_and_capped() {
        let t = AllocTable::default();
        t.insert(0x7f00_0000_0000, 0x1000, Space::Device);
        t.insert(0x7f00_0010_0000, 0x1000, Space::Device);
        let mut bytes = vec![0u8; 3 * SCAN_BLOCK];
        let put =
            |b: &mut Vec<u8>, at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        // Inside each allocation, in two blocks; between them (inside the bounds, in
        // none), one past the end, and a float and an integer: no pointers.
        put(&mut bytes, 8, 0x7f00_0000_0010);
        put(&mut bytes, 2 * SCAN_BLOCK + 16, 0x7f00_0010_0fff);
        put(&mut bytes, 24, 0x7f00_0008_0000);
        put(&mut bytes, 32, 0x7f00_0010_1000);
        put(&mut bytes, 40, 1.5f64.to_bits());
        put(&mut bytes, 48, 3);
        assert_eq!(
            t.pointer_words_in(&bytes, 16),
            Ok(vec![8, (2 * SCAN_BLOCK + 16) as u64])
        );
        assert_eq!(t.pointer_words_in(&bytes, 1), Err(2));
        assert_eq!(
            AllocTable::default().pointer_words_in(&bytes, 16),
            Ok(vec![])
        );
        // A tail shorter than a word is no word.
        assert_eq!(t.pointer_words_in(&bytes[..16], 16), Ok(vec![8]));
        assert_eq!(t.pointer_words_in(&bytes[..15], 16), Ok(vec![]));
    }

    #[test]
    fn a_parallel_scan_finds_what_one_thread_finds_in_order() {
        let t = AllocTable::default();
        t.insert(0x7f00_0000_0000, 0x1000, Space::Device);
        let mut bytes = vec![0u8; 2 * PARALLEL_SCAN_BYTES + 4104];
        let mut want = Vec::new();
        for at in [
            0,
            8,
            PARALLEL_SCAN_BYTES / 3 * 8 / 8,
            PARALLEL_SCAN_BYTES - 8,
            PARALLEL_SCAN_BYTES,
            bytes.len() - 8,
        ] {
            let at = at / 8 * 8;
            bytes[at..at + 8]
                .copy_from_slice(&(0x7f00_0000_0000u64 + at as u64 % 0x1000).to_le_bytes());
            want.push(at as u64);
        }
        want.sort();
        want.dedup();
        assert_eq!(t.pointer_words_in(&bytes, 100), Ok(want.clone()));
        assert_eq!(
            t.scan(&bytes, 0, 0x7f00_0000_0000, 0x1000, 100),
            Ok(want.clone())
        );
        assert!(t.pointer_words_in(&bytes, want.len() - 1).is_err());
    }
}
