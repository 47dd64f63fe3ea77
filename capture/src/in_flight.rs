//! Launches in flight at a launch snapshot (`InFlight`, which `mapped` answers), and how
//! many snapshots of managed or mapped page-locked memory capture left out because an
//! earlier launch reaching the memory was still running (`pinned`), said at exit
//! (`state`). A leaf: they meet through it without depending on each other.

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

/// Whether a launch snapshot may read memory that launches not yet completed reach.
#[derive(Debug, PartialEq, Eq)]
pub enum InFlight {
    /// No launch capture has not seen completed reaches it.
    Settled,
    /// This launch (the latest still running, or not known to have finished) reaches it.
    Running(u64),
    /// Every launch reaching it has finished on the device, though no synchronisation
    /// capture followed completed them: the latest of each stream, (stream, launch).
    /// Replay completes them before it restores the snapshot.
    Finished(Vec<(u64, u64)>),
}
