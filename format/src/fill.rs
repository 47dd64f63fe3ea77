//! Fill content: bytes that repeat one 16-byte unit from their first byte to their last
//! (a constant value of 1, 2, 4, 8 or 16 bytes: a zeroed buffer, a memset, a kernel's
//! constant result, the rounds of CUDA's simpleStreams). Detected in one pass that stops
//! at the first byte that breaks the pattern, stored as the unit alone (blob codec 2,
//! `blob`), and named by the same content hash as the bytes themselves, computed from
//! the unit without expanding the whole content: a fill and its expanded bytes are one
//! blob, whichever way they reach the store.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::hash::{self, ContentHash, TREE_LEAF_BYTES, TREE_MIN_BYTES};

/// The repeated unit's size: every period of 1, 2, 4, 8 or 16 bytes is one of 16.
pub const FILL_UNIT: usize = 16;
/// Content shorter than this is stored as it is (a fill saves nothing worth a check).
pub const FILL_MIN_BYTES: usize = 4096;
/// Comparison block: the unit repeated, compared against the content with memcmp.
const BLOCK: usize = 64 << 10;
/// Content at least this long is checked by several threads.
const PARALLEL_BYTES: usize = 8 << 20;
const THREADS: usize = 8;

/// `len` bytes, byte `i` of which is `unit[i % 16]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fill {
    pub unit: [u8; FILL_UNIT],
    pub len: u64,
}

impl Fill {
    /// The fill `data` is, if it is one and at least `FILL_MIN_BYTES` long.
    pub fn detect(data: &[u8]) -> Option<Fill> {
        if data.len() < FILL_MIN_BYTES {
            return None;
        }
        let mut unit = [0u8; FILL_UNIT];
        unit.copy_from_slice(&data[..FILL_UNIT]);
        let fill = Fill {
            unit,
            len: data.len() as u64,
        };
        // A few units far apart first: most content that is no fill stops here.
        let n = data.len();
        for at in [n / 2, n - FILL_UNIT, n / 4, 3 * (n / 4)] {
            let at = at - at % FILL_UNIT;
            let end = (at + FILL_UNIT).min(n);
            if data[at..end] != unit[..end - at] {
                return None;
            }
        }
        let block = fill.block();
        let matches = if n >= PARALLEL_BYTES {
            matches_parallel(data, &block)
        } else {
            matches_from(data, 0, &block, &AtomicBool::new(false))
        };
        matches.then_some(fill)
    }

    /// Whether `data` is exactly this content (its length and every byte), read once and
    /// by several threads when large; nothing is expanded.
    pub fn matches(&self, data: &[u8]) -> bool {
        if data.len() as u64 != self.len {
            return false;
        }
        let block = self.block();
        if data.len() >= PARALLEL_BYTES {
            matches_parallel(data, &block)
        } else {
            matches_from(data, 0, &block, &AtomicBool::new(false))
        }
    }

    /// Whether `data` is exactly this content, as `matches` says. When it is, `data` is
    /// left holding the complement of this content (every byte inverted), written block
    /// by block right after each block is compared, while it is in cache: a buffer
    /// about to be reused then already differs from this content at every byte. When it
    /// is not, `data` is left as it was, for the mismatch to be reported.
    pub fn matches_then_complement(&self, data: &mut [u8]) -> bool {
        if data.len() as u64 != self.len {
            return false;
        }
        let (block, inverse) = (self.block(), self.complement().block());
        let stop = AtomicBool::new(false);
        let per = if data.len() >= PARALLEL_BYTES {
            let threads = std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .clamp(1, THREADS);
            data.len().div_ceil(BLOCK).div_ceil(threads) * BLOCK
        } else {
            data.len().max(1)
        };
        // Each part reports how many of its bytes it compared and complemented.
        let done: Vec<usize> = std::thread::scope(|s| {
            let (block, inverse, stop) = (&block, &inverse, &stop);
            let handles: Vec<_> = data
                .chunks_mut(per)
                .map(|part| s.spawn(move || complement_matching(part, block, inverse, stop)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or(0)).collect()
        });
        if !stop.load(Ordering::Relaxed) {
            return true;
        }
        // A part differed: every part's complemented prefix matched, so it gets this
        // content back, and `data` is as it was.
        for (part, n) in data.chunks_mut(per).zip(done) {
            for chunk in part[..n].chunks_mut(BLOCK) {
                chunk.copy_from_slice(&block[..chunk.len()]);
            }
        }
        false
    }

    /// Byte `i` of the content.
    pub fn byte(&self, i: usize) -> u8 {
        self.unit[i % FILL_UNIT]
    }

    /// The content whose every byte is the complement of this one's.
    pub fn complement(&self) -> Fill {
        Fill {
            unit: self.unit.map(|b| !b),
            len: self.len,
        }
    }

    /// The unit repeated to `BLOCK` bytes.
    fn block(&self) -> Vec<u8> {
        self.unit.repeat(BLOCK / FILL_UNIT)
    }

    /// Writes the content into `out`, which must be `len` bytes long.
    /// Large content is written by several threads (one thread writes page-locked
    /// memory at a fraction of its bandwidth).
    pub fn expand_into(&self, out: &mut [u8]) {
        debug_assert_eq!(out.len() as u64, self.len);
        let block = self.block();
        let write = |part: &mut [u8]| {
            for chunk in part.chunks_mut(BLOCK) {
                chunk.copy_from_slice(&block[..chunk.len()]);
            }
        };
        if out.len() < PARALLEL_BYTES {
            return write(out);
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, THREADS);
        // Whole blocks per thread, so every part starts at a multiple of the unit.
        let per = out.len().div_ceil(BLOCK).div_ceil(threads) * BLOCK;
        std::thread::scope(|s| {
            for part in out.chunks_mut(per) {
                s.spawn(|| write(part));
            }
        });
    }

    /// The content hash of the expanded bytes (`ContentHash::of` would give the same),
    /// from at most one tree leaf's worth of hashing: every full leaf of a fill is the
    /// same bytes.
    pub fn hash(&self) -> ContentHash {
        let len = self.len as usize;
        if len < TREE_MIN_BYTES {
            return ContentHash(self.stream_hash(len));
        }
        let leaves = len.div_ceil(TREE_LEAF_BYTES);
        let full = self.stream_hash(TREE_LEAF_BYTES);
        let mut digests = vec![full; leaves];
        let last = len - (leaves - 1) * TREE_LEAF_BYTES;
        if last != TREE_LEAF_BYTES {
            digests[leaves - 1] = self.stream_hash(last);
        }
        hash::tree_name(len as u64, &digests)
    }

    /// XXH3-128 of the first `len` bytes of the content, fed block by block (each block
    /// starts at a multiple of the unit, so each is the block's own prefix).
    fn stream_hash(&self, len: usize) -> [u8; 16] {
        let block = self.block();
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut left = len;
        while left > 0 {
            let n = left.min(BLOCK);
            h.update(&block[..n]);
            left -= n;
        }
        h.digest128().to_be_bytes()
    }
}

/// Whether `data[from..]` (`from` a multiple of `BLOCK`) matches the repeated block;
/// gives up when `stop` is raised by another thread that found a difference.
fn matches_from(data: &[u8], from: usize, block: &[u8], stop: &AtomicBool) -> bool {
    for chunk in data[from..].chunks(BLOCK) {
        if stop.load(Ordering::Relaxed) || chunk != &block[..chunk.len()] {
            stop.store(true, Ordering::Relaxed);
            return false;
        }
    }
    true
}

/// Compares `part` block by block with `block`, complementing each block that matches
/// (`inverse`), until one does not or `stop` is set; returns the bytes complemented.
fn complement_matching(part: &mut [u8], block: &[u8], inverse: &[u8], stop: &AtomicBool) -> usize {
    let mut done = 0;
    for chunk in part.chunks_mut(BLOCK) {
        if stop.load(Ordering::Relaxed) || *chunk != block[..chunk.len()] {
            stop.store(true, Ordering::Relaxed);
            return done;
        }
        chunk.copy_from_slice(&inverse[..chunk.len()]);
        done += chunk.len();
    }
    done
}

/// `matches_from` over ranges of whole blocks checked by several threads; the first
/// difference stops them all.
fn matches_parallel(data: &[u8], block: &[u8]) -> bool {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, THREADS);
    let blocks = data.len().div_ceil(BLOCK);
    let per = blocks.div_ceil(threads) * BLOCK;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let stop = &stop;
        let handles: Vec<_> = data
            .chunks(per)
            .map(|range| s.spawn(move || matches_from(range, 0, block, stop)))
            .collect();
        handles.into_iter().all(|h| h.join().unwrap_or(false))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(unit: [u8; 16], len: usize) -> Vec<u8> {
        let f = Fill {
            unit,
            len: len as u64,
        };
        let mut v = vec![0u8; len];
        f.expand_into(&mut v);
        v
    }

    #[test]
    fn constant_values_of_every_width_are_fills_and_hash_as_their_bytes() {
        let mut unit = [0u8; 16];
        for (i, b) in unit.iter_mut().enumerate() {
            *b = (i % 4) as u8 * 17 + 1; // a 4-byte value
        }
        for len in [4096, 4097, 65_536 + 7, 1 << 20, (8 << 20) + 12] {
            let data = expanded(unit, len);
            let f = Fill::detect(&data).expect("a fill");
            assert_eq!(f.len, len as u64);
            assert_eq!(f.hash(), ContentHash::of(&data), "len {len}");
        }
        assert_eq!(Fill::detect(&vec![0u8; 4096]).unwrap().unit, [0u8; 16]);
        assert_eq!(
            Fill::detect(&vec![0xabu8; 100_000]).unwrap().unit,
            [0xab; 16]
        );
    }

    #[test]
    fn a_matching_buffer_is_left_complemented_and_a_differing_one_unchanged() {
        let unit = *b"0123456789abcdef";
        for len in [4096usize, 65_536 + 7, (8 << 20) + 12, 20 << 20] {
            let f = Fill {
                unit,
                len: len as u64,
            };
            let mut data = expanded(unit, len);
            assert!(f.matches_then_complement(&mut data), "len {len}");
            assert_eq!(data, expanded(f.complement().unit, len), "len {len}");
            for at in [0, 17, len / 2, len - 1] {
                let mut d = expanded(unit, len);
                d[at] ^= 0x40;
                let before = d.clone();
                assert!(!f.matches_then_complement(&mut d), "len {len}, byte {at}");
                assert!(d == before, "len {len}, byte {at}: changed");
            }
            let mut short = expanded(unit, len - 1);
            assert!(!f.matches_then_complement(&mut short));
            assert_eq!(short, expanded(unit, len - 1));
        }
    }

    #[test]
    fn matches_reads_every_byte_and_the_length() {
        let unit = *b"0123456789abcdef";
        for len in [4096usize, 65_536 + 7, (8 << 20) + 12] {
            let f = Fill {
                unit,
                len: len as u64,
            };
            let data = expanded(unit, len);
            assert!(f.matches(&data), "len {len}");
            assert!(!f.matches(&data[..len - 1]), "shorter, len {len}");
            for at in [0, 17, len / 2, len - 1] {
                let mut d = data.clone();
                d[at] ^= 0x40;
                assert!(!f.matches(&d), "len {len}, byte {at}");
                assert_eq!(f.byte(at), data[at]);
            }
            let c = f.complement();
            assert!((0..len).step_by(997).all(|i| c.byte(i) == !data[i]));
        }
    }

    #[test]
    fn tree_sized_fills_hash_as_their_bytes() {
        let unit = *b"0123456789abcdef";
        for len in [TREE_MIN_BYTES, TREE_MIN_BYTES + TREE_LEAF_BYTES / 2 + 5] {
            let data = expanded(unit, len);
            let f = Fill::detect(&data).expect("a fill");
            assert_eq!(f.hash(), ContentHash::of(&data), "len {len}");
        }
    }

    #[test]
    fn one_differing_byte_anywhere_is_no_fill() {
        let base = expanded([7u8; 16], (8 << 20) + 100);
        for at in [
            16,
            4095,
            BLOCK,
            BLOCK + 3,
            base.len() / 3,
            base.len() - 101,
            base.len() - 1,
        ] {
            let mut d = base.clone();
            d[at] ^= 1;
            assert_eq!(Fill::detect(&d), None, "difference at {at}");
        }
        // A period that does not divide 16 (a 12-byte float3) is no fill.
        let d: Vec<u8> = (0..8192).map(|i| (i % 12) as u8).collect();
        assert_eq!(Fill::detect(&d), None);
        // Too short to be worth it.
        assert_eq!(Fill::detect(&[0u8; 4095]), None);
    }
}
