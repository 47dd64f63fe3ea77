//! Fork: one set of `pthread_atfork` handlers, registered when the library loads, owning
//! the whole protocol, so that a child forked from a busy multi-threaded program can
//! always make its next call (HRR issue 20: children hung on locks the parent's threads
//! held or were parked on).
//!
//! Prepare waits for the copies whose outputs capture's reader threads are still reading
//! (those threads do not survive into the child), then takes every lock capture's code
//! uses, in the lock order, outermost first:
//!
//! init → mapped tracker → reader queue → snapshot pool → pending reads → event pool →
//! graph registry → kernel-node graphs → kernel registry → allocation table → arrays →
//! objects → the writer (file → buf → blobs → meta) → leaves (unreplayable warnings,
//! private runtimes found, unmodelled names noted).
//!
//! So no other thread is inside any of them across the fork, and the data they guard is
//! consistent. The parent releases them. The child resets them (`hrr_archive::sync`: free
//! again, nobody woken; the parent's sleepers do not exist there), then drops what was
//! the parent's: readers, pending reads, events, launches noted, counts of unseen calls,
//! and its writer (abandoned; the child opens its own at its first call). Locks are
//! futex words, never a user-space queue, so nothing in the child waits for a thread
//! that is not there.

use hrr_archive::sync::ForkLock;

use crate::{
    events, graph_io, kernel_node, mapped, private_runtime, proc_address, reader, reads, state,
    unreplayable, unseen,
};

/// Capture's locks other than the writer's, in the lock order (the writer's come between
/// the tables and the leaves: [`prepare`]).
fn ordered_before_writer() -> impl Iterator<Item = &'static dyn ForkLock> {
    let [tracker] = mapped::fork_locks();
    let [jobs, pool] = reader::fork_locks();
    let [pending] = reads::fork_locks();
    let [event_pool] = events::fork_locks();
    let [graphs] = graph_io::fork_locks();
    let [node_graphs] = kernel_node::fork_locks();
    let tables = state::current().map(state::table_locks);
    [
        state::init_lock(),
        tracker,
        jobs,
        pool,
        pending,
        event_pool,
        graphs,
        node_graphs,
    ]
    .into_iter()
    .chain(tables.into_iter().flatten())
}

fn leaves() -> [&'static dyn ForkLock; 3] {
    let [warned] = unreplayable::fork_locks();
    let [found] = private_runtime::fork_locks();
    let [noted] = proc_address::fork_locks();
    [warned, found, noted]
}

extern "C" fn prepare() {
    reads::wait_all();
    ordered_before_writer().for_each(|l| l.fork_prepare());
    if let Some(w) = state::current().and_then(state::Capture::writer_opt) {
        w.fork_prepare();
    }
    leaves().iter().for_each(|l| l.fork_prepare());
}

extern "C" fn parent() {
    // SAFETY: prepare took each of these on this thread just before the fork, and the
    // writer pointer does not change in the parent between the two.
    unsafe {
        leaves().iter().rev().for_each(|l| l.fork_parent());
        if let Some(w) = state::current().and_then(state::Capture::writer_opt) {
            w.fork_parent();
        }
        let locks: Vec<_> = ordered_before_writer().collect();
        locks.iter().rev().for_each(|l| l.fork_parent());
    }
}

extern "C" fn child() {
    // SAFETY: the child's one thread is the one that took every lock in prepare. The
    // parent's writer is not released: the child abandons it (state::fork_child_forget).
    unsafe {
        leaves().iter().for_each(|l| l.fork_child());
        ordered_before_writer().for_each(|l| l.fork_child());
    }
    state::fork_child_forget();
    unseen::fork_child_forget();
    mapped::fork_child_forget();
    reader::fork_child_forget();
    reads::fork_child_forget();
    events::fork_child_forget();
    crate::host_fns::fork_child_forget();
}

extern "C" fn on_load() {
    // SAFETY: registering plain extern "C" fns, once.
    unsafe {
        libc::pthread_atfork(Some(prepare), Some(parent), Some(child));
    }
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;
