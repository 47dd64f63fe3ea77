//! How many launch snapshots of managed or mapped page-locked memory capture left out because an earlier launch
//! reaching the memory was still in flight (`pinned`); said at exit (`state`). A leaf:
//! both count through it without depending on each other.

use std::sync::atomic::{AtomicU64, Ordering};

static SKIPS: AtomicU64 = AtomicU64::new(0);

/// One snapshot left out.
pub fn skipped() {
    SKIPS.fetch_add(1, Ordering::Relaxed);
}

/// The snapshots left out so far.
pub fn skips() -> u64 {
    SKIPS.load(Ordering::Relaxed)
}
