//! Fatal signals: what capture has buffered reaches the disk before the process dies.
//!
//! Events are written when the buffer fills or the flush interval passes, so a process
//! killed between two flushes would lose up to one interval of records, the last ones,
//! which are the ones a person debugging a crash wants. When capture starts it installs
//! a handler for each fatal signal whose disposition is still the default (a signal the
//! program handles or ignores is left alone: capture never changes the program's
//! behaviour). The handler writes the buffered events (`ProcessWriter::flush_for_signal`:
//! atomics, write(2), fsync(2), no allocation), then lets the signal do what it would
//! have done: the disposition is back to the default (SA_RESETHAND) and the signal is
//! raised again. When the interrupted thread itself holds the event buffer, the flush
//! would wait for itself: the handler returns instead ([`AfterFlush::LeftToThread`]),
//! the thread finishes its append, writes the buffer and raises the signal when it
//! releases it. The archive stays incomplete (no trailer); every whole record reads.
//!
//! The harness stops a case at its timeout with SIGTERM, then SIGKILL: the first is
//! caught here, the second cannot be.
//!
//! This module knows nothing of capture's state: `state` hands [`install`] the function
//! that flushes, which the handler calls (it must be async-signal-safe).

use std::os::raw::c_int;
use std::sync::OnceLock;

/// What the handler does after the flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterFlush {
    /// Raise the signal again (its default action now).
    Raise,
    /// The interrupted thread flushes and raises it when it releases the buffer.
    LeftToThread,
}

/// The flush the handler runs, given by the first [`install`].
static FLUSH: OnceLock<fn(c_int) -> AfterFlush> = OnceLock::new();

/// Signals whose default action ends the process, for a crash or a request to stop.
const FATAL: [c_int; 9] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
];

/// Installs the handler for every fatal signal still at its default disposition; the
/// handler calls `flush` (async-signal-safe: it runs in a signal handler). Returns the
/// signals it took.
pub fn install(flush: fn(c_int) -> AfterFlush) -> Vec<c_int> {
    let _ = FLUSH.set(flush);
    let mut taken = Vec::new();
    for sig in FATAL {
        // SAFETY: all-zero is a valid sigaction (a plain C struct).
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only reads the current one into `old`.
        let read = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
        if read != 0 || old.sa_sigaction != libc::SIG_DFL {
            continue;
        }
        // SAFETY: all-zero is a valid sigaction.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_fatal_signal as extern "C" fn(c_int) as usize;
        act.sa_flags = libc::SA_RESETHAND | libc::SA_ONSTACK;
        // SAFETY: initialising our own struct's mask, then installing a handler that is
        // an extern "C" fn(c_int) living as long as the library (never unloaded).
        let ok = unsafe {
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut()) == 0
        };
        if ok {
            taken.push(sig);
        }
    }
    taken
}

extern "C" fn on_fatal_signal(sig: c_int) {
    // An atomic load: safe in a signal handler.
    if let Some(flush) = FLUSH.get() {
        if flush(sig) == AfterFlush::LeftToThread {
            return;
        }
    }
    // SAFETY: raise(3) is async-signal-safe. SA_RESETHAND restored the default action,
    // and the signal is blocked until this handler returns: it is then delivered with
    // its default action (for a fault, the faulting instruction also runs again).
    unsafe {
        libc::raise(sig);
    }
}
