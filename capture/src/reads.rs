//! The process's pending reads (the `pending` table under one lock) and the waits made
//! on them: for given reads, for the reads a synchronisation covers, for the reads
//! overlapping host bytes; and the count of outputs gathered but still being hashed and
//! stored, which exit and fork wait for too.
//!
//! A read stops being pending once its bytes are gathered (copied out of the program's
//! memory): from then on the program may touch that memory again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hrr_archive::sync::{Condvar, ForkLock, Mutex, MutexGuard};

use crate::events;
use crate::pending::{self, Cover, PendingReads, Ticket};

static READS: Mutex<PendingReads> = Mutex::new(PendingReads::new());
/// Signalled (under `READS`' lock) when a read finishes or an output is stored.
static CHANGED: Condvar = Condvar::new();
/// Pending reads, readable without the lock (the fast path of every hook).
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// Outputs gathered and not yet stored.
static STORING: AtomicUsize = AtomicUsize::new(0);

/// Whether any read is pending.
#[inline]
pub fn any() -> bool {
    PENDING.load(Ordering::Acquire) != 0
}

/// The table, locked.
pub fn lock() -> MutexGuard<'static, PendingReads> {
    READS.lock()
}

/// Updates the lock-free count after a change to the table.
pub fn counted(r: &PendingReads) {
    PENDING.store(r.len(), Ordering::Release);
}

/// Waits on the table's condition (a read finished, an output stored).
pub fn wait_changed(r: &mut MutexGuard<'static, PendingReads>) {
    CHANGED.wait(r);
}

/// As `wait_changed`, until `deadline`; false when it passed.
pub fn wait_changed_until(r: &mut MutexGuard<'static, PendingReads>, deadline: Instant) -> bool {
    !CHANGED.wait_until(r, deadline).timed_out()
}

/// The read `t` is gathered: it is no longer pending.
pub fn finish(t: Ticket) {
    let mut r = READS.lock();
    r.finish(t);
    counted(&r);
    CHANGED.notify_all();
}

/// An output starts being hashed and stored.
pub fn storing() {
    STORING.fetch_add(1, Ordering::AcqRel);
}

/// An output is stored (or recorded as not recorded).
pub fn stored() {
    STORING.fetch_sub(1, Ordering::AcqRel);
    let _r = READS.lock();
    CHANGED.notify_all();
}

/// Outputs being stored now.
pub fn storing_count() -> usize {
    STORING.load(Ordering::Acquire)
}

/// Waits until none of `tickets` is pending.
pub fn wait_for(tickets: &[Ticket]) {
    if tickets.is_empty() {
        return;
    }
    let mut r = READS.lock();
    while tickets.iter().any(|&t| r.get(t).is_some()) {
        CHANGED.wait(&mut r);
    }
}

/// Waits for the reads `cover` names and for every read whose copy has already
/// completed (a dependency capture does not track, such as a stream that waited on
/// another stream's event, is then covered too).
pub fn wait_covered(cover: impl FnOnce(&PendingReads) -> Cover) {
    if !any() {
        return;
    }
    let (mut tickets, others) = {
        let r = READS.lock();
        let covered = r.covered(cover(&r));
        let others: Vec<(Ticket, events::Event)> = r
            .covered(pending::ALL)
            .into_iter()
            .filter(|t| !covered.contains(t))
            .filter_map(|t| r.get(t).map(|e| (t, e.event)))
            .collect();
        (covered, others)
    };
    tickets.extend(
        others
            .into_iter()
            .filter(|&(_, e)| events::is_complete(e))
            .map(|(t, _)| t),
    );
    wait_for(&tickets);
}

/// Waits for the pending reads overlapping `[start, end)`.
pub fn wait_overlapping(start: u64, end: u64) {
    if !any() {
        return;
    }
    let t = READS.lock().overlapping((start, end));
    wait_for(&t);
}

/// Waits for every pending read and every output being stored (fork).
pub fn wait_all() {
    wait_covered(|_| pending::ALL);
    let mut r = READS.lock();
    while STORING.load(Ordering::Acquire) != 0 {
        CHANGED.wait(&mut r);
    }
}

/// The table's lock, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&READS]
}

/// In a forked child, its lock reset: the parent's reads and readers are not the child's.
pub fn fork_child_forget() {
    let mut r = READS.lock();
    r.clear();
    counted(&r);
    STORING.store(0, Ordering::Release);
}
