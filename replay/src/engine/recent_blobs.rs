//! The blobs replay loaded last for pinned snapshots, kept by content hash within a byte
//! budget: capture records a large buffer that launch after launch reads in pieces, and
//! the pieces that did not change carry the same blob each time (`capture::pinned`), so
//! replay loads and verifies each from the archive once, not once per launch. A piece
//! restored into managed memory is page-locked once (`snapshots`), so its copy runs at
//! the bus's speed; what the budget drops is handed back for unregistering.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use hrr_archive::hash::ContentHash;

use crate::pages::Pages;

/// The most bytes kept (pieces are 16 MiB: 32 of them).
pub(super) const RECENT_BLOB_BYTES: u64 = 512 << 20;

/// One loaded, verified piece, in pages of its own.
pub(super) struct Piece {
    pub(super) pages: Pages,
    /// Registered with the runtime (page-locked): its start, to unregister.
    pub(super) registered: Cell<bool>,
}

impl Piece {
    pub(super) fn new(pages: Pages) -> Piece {
        Piece {
            pages,
            registered: Cell::new(false),
        }
    }

    pub(super) fn bytes(&self) -> &[u8] {
        self.pages.as_slice()
    }
}

pub(super) struct RecentBlobs {
    by_hash: HashMap<ContentHash, Rc<Piece>>,
    /// Insertion order: the oldest is dropped first.
    order: VecDeque<ContentHash>,
    bytes: u64,
    budget: u64,
}

impl Default for RecentBlobs {
    fn default() -> Self {
        RecentBlobs::with_budget(RECENT_BLOB_BYTES)
    }
}

impl RecentBlobs {
    fn with_budget(budget: u64) -> RecentBlobs {
        RecentBlobs {
            by_hash: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            budget,
        }
    }

    pub(super) fn get(&self, hash: &ContentHash) -> Option<Rc<Piece>> {
        self.by_hash.get(hash).cloned()
    }

    /// Keeps `data` under `hash`, dropping the oldest entries to stay within the budget
    /// (content larger than the budget is not kept); returns what was dropped.
    #[must_use]
    pub(super) fn keep(&mut self, hash: ContentHash, data: Rc<Piece>) -> Vec<Rc<Piece>> {
        let len = data.bytes().len() as u64;
        let mut dropped = Vec::new();
        if len > self.budget || self.by_hash.contains_key(&hash) {
            return dropped;
        }
        while self.bytes + len > self.budget {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(d) = self.by_hash.remove(&old) {
                self.bytes -= d.bytes().len() as u64;
                dropped.push(d);
            }
        }
        self.bytes += len;
        self.order.push_back(hash);
        self.by_hash.insert(hash, data);
        dropped
    }

    /// Every piece, the kept ones emptied out.
    pub(super) fn take_all(&mut self) -> Vec<Rc<Piece>> {
        self.order.clear();
        self.bytes = 0;
        self.by_hash.drain().map(|(_, p)| p).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_go_first_and_the_budget_holds() {
        let budget = 4 * 4096;
        let mut r = RecentBlobs::with_budget(budget);
        let piece = (budget / 4) as usize;
        let h = |i: u8| ContentHash([i; 16]);
        let make = |n: usize| Rc::new(Piece::new(Pages::new(n).unwrap()));
        for i in 0..5 {
            let dropped = r.keep(h(i), make(piece));
            assert_eq!(dropped.len(), usize::from(i == 4), "piece {i}");
        }
        assert!(
            r.get(&h(0)).is_none(),
            "the first was dropped for the fifth"
        );
        assert!((1..5).all(|i| r.get(&h(i)).is_some()));
        assert_eq!(r.bytes, budget);
        assert!(r.keep(h(9), make(budget as usize + 1)).is_empty());
        assert!(r.get(&h(9)).is_none(), "larger than the budget: not kept");
        assert_eq!(r.take_all().len(), 4);
        assert_eq!(r.bytes, 0);
    }
}
