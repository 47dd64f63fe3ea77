//! Fork support for the process writer (pthread_atfork): every lock is taken before the
//! fork in the documented order; the parent releases them; the child abandons the
//! parent's writer, whose buffer holds the parent's events.

use std::sync::Arc;

use super::ProcessWriter;
use crate::Result;

impl ProcessWriter {
    /// Fork support, step 1 (pthread_atfork prepare): takes every lock in the documented
    /// order so no lock is held mid-operation across the fork.
    pub fn fork_prepare(&self) {
        self.log.file.lock_and_keep();
        self.log.buf.lock_and_keep();
        self.store.lock_and_keep();
        std::mem::forget(self.meta.lock());
    }

    /// Fork support, step 2 in the parent: releases what `fork_prepare` took.
    ///
    /// # Safety
    /// Must follow a `fork_prepare` on this writer by the same thread.
    pub unsafe fn fork_parent(&self) {
        // SAFETY: fork_prepare locked all four and forgot the guards (caller's contract).
        unsafe {
            self.meta.force_unlock();
            self.store.force_unlock();
            self.log.buf.force_unlock();
            self.log.file.force_unlock();
        }
    }

    /// Fork support, step 2 in the child: the parent's writer must be abandoned (never
    /// used or dropped: its locks are held and its buffer holds the parent's events).
    /// Closes the inherited log descriptor. The child opens its own writer when it first
    /// records (`create_for`): a child that only execs leaves no directory, and the
    /// program it execs records into `pid-<pid>/` itself.
    pub fn fork_abandon(&self) {
        self.log.close_inherited();
    }

    /// `fork_abandon`, then the child's own writer at once (same settings, this process
    /// as the parent).
    pub fn fork_child(&self) -> Result<Arc<ProcessWriter>> {
        self.fork_abandon();
        let vendor = self.meta.try_lock().map(|m| m.runtime.vendor.clone());
        ProcessWriter::create_for(
            &self.root,
            self.settings.clone(),
            self.pid,
            vendor.as_deref().unwrap_or(""),
        )
    }
}
