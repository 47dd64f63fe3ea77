//! The blobs replay loaded last for pinned snapshots, kept by content hash within a byte
//! budget: capture records a large buffer that launch after launch reads in pieces, and
//! the pieces that did not change carry the same blob each time (`capture::pinned`), so
//! replay loads and verifies each from the archive once, not once per launch.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use hrr_archive::hash::ContentHash;

/// The most bytes kept (pieces are 16 MiB: 32 of them).
pub(super) const RECENT_BLOB_BYTES: u64 = 512 << 20;

#[derive(Default)]
pub(super) struct RecentBlobs {
    by_hash: HashMap<ContentHash, Rc<Vec<u8>>>,
    /// Insertion order: the oldest is dropped first.
    order: VecDeque<ContentHash>,
    bytes: u64,
}

impl RecentBlobs {
    pub(super) fn get(&self, hash: &ContentHash) -> Option<Rc<Vec<u8>>> {
        self.by_hash.get(hash).cloned()
    }

    /// Keeps `data` under `hash`, dropping the oldest entries to stay within the budget
    /// (content larger than the budget is not kept).
    pub(super) fn keep(&mut self, hash: ContentHash, data: Rc<Vec<u8>>) {
        let len = data.len() as u64;
        if len > RECENT_BLOB_BYTES || self.by_hash.contains_key(&hash) {
            return;
        }
        while self.bytes + len > RECENT_BLOB_BYTES {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(d) = self.by_hash.remove(&old) {
                self.bytes -= d.len() as u64;
            }
        }
        self.bytes += len;
        self.order.push_back(hash);
        self.by_hash.insert(hash, data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_go_first_and_the_budget_holds() {
        let mut r = RecentBlobs::default();
        let piece = (RECENT_BLOB_BYTES / 4) as usize;
        let h = |i: u8| ContentHash([i; 16]);
        for i in 0..5 {
            r.keep(h(i), Rc::new(vec![i; piece]));
        }
        assert!(
            r.get(&h(0)).is_none(),
            "the first was dropped for the fifth"
        );
        assert!((1..5).all(|i| r.get(&h(i)).is_some()));
        assert_eq!(r.bytes, RECENT_BLOB_BYTES);
        r.keep(h(9), Rc::new(vec![0; RECENT_BLOB_BYTES as usize + 1]));
        assert!(r.get(&h(9)).is_none(), "larger than the budget: not kept");
    }
}
