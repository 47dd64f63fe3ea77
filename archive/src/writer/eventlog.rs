//! The event log of one process writer: the buffer appends go into, the `events.bin`
//! file it is written to, and the flush a fatal signal runs.
//!
//! Invariant: every appended event is in the buffer, or on disk, or in the hands of the
//! thread holding `file` (a checkpoint takes the buffer's bytes out under `file` and
//! writes them before releasing it). So whoever holds both locks can write everything
//! appended so far.
//!
//! Both locks are [`TidMutex`]es, whose lock word is the owner's thread id. A signal
//! handler can then tell whether the thread it interrupted holds one: if it does, the
//! handler must not wait (it would wait for itself). It leaves the flush to that thread
//! ([`SignalFlush::Deferred`]): the thread finishes what it was doing, and when it
//! releases its last lock of the log it writes the buffer and raises the signal again.
//! Any other thread's handler waits for the locks (bounded: [`SIGNAL_WAIT`]) and writes
//! the buffer itself. The append path pays nothing for this beyond a load of
//! [`DEFERRED_SIGNAL`] at unlock: the lock word was going to be written anyway.

use std::cell::UnsafeCell;
use std::fs::File;
use std::ops::{Deref, DerefMut};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use crate::sync::{futex_wait, futex_wake};

/// How long a signal handler waits for another thread to release the log.
pub const SIGNAL_WAIT: Duration = Duration::from_secs(3);

/// Lock word bit: a thread sleeps on the futex.
const WAITERS: u32 = 1 << 31;

static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// (fork generation, tid): gettid is a system call; a launch-heavy program makes
    /// millions of calls, so each thread asks once (again after a fork). A plain `Cell`
    /// of integers with a constant initialiser: no allocation, no destructor, so a signal
    /// handler may read it.
    static TID: std::cell::Cell<(u64, u32)> = const { std::cell::Cell::new((u64::MAX, 0)) };
}

/// The calling thread's OS thread id.
#[inline]
pub fn current_tid() -> u32 {
    let generation = FORK_GENERATION.load(Ordering::Relaxed);
    TID.try_with(|c| {
        let (g, t) = c.get();
        if g == generation {
            t
        } else {
            let t = nix::unistd::gettid().as_raw() as u32;
            c.set((generation, t));
            t
        }
    })
    .unwrap_or_else(|_| nix::unistd::gettid().as_raw() as u32)
}

/// Called in a forked child: every cached thread id belongs to the parent, and so does
/// any flush a signal handler left to a thread of the parent.
pub fn note_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
    DEFERRED_SIGNAL.store(0, Ordering::SeqCst);
    DEFERRED_LOG.store(std::ptr::null_mut(), Ordering::SeqCst);
}

/// A mutex whose lock word is its owner's thread id (0 when free; bit 31 when a thread
/// sleeps on it), so [`TidMutex::held_by_current`] is exact, also in a signal handler.
/// Uncontended lock and unlock are one atomic each; a contended thread spins briefly,
/// then sleeps on a futex.
pub struct TidMutex<T> {
    word: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and the lock word admits one
// guard at a time; T moves between threads with it, hence T: Send.
unsafe impl<T: Send> Sync for TidMutex<T> {}

pub struct TidGuard<'a, T> {
    mutex: &'a TidMutex<T>,
}

impl<T> TidMutex<T> {
    pub fn new(value: T) -> TidMutex<T> {
        TidMutex {
            word: AtomicU32::new(0),
            value: UnsafeCell::new(value),
        }
    }

    #[inline]
    pub fn lock(&self) -> TidGuard<'_, T> {
        let tid = current_tid();
        if self
            .word
            .compare_exchange(0, tid, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended(tid);
        }
        TidGuard { mutex: self }
    }

    #[cold]
    fn lock_contended(&self, tid: u32) {
        let mut spins = 0;
        let mut slept = false;
        loop {
            let cur = self.word.load(Ordering::Relaxed);
            if cur == 0 {
                // After sleeping, other sleepers may remain: keep the bit so the unlock
                // wakes the next one.
                let want = if slept { tid | WAITERS } else { tid };
                if self
                    .word
                    .compare_exchange_weak(0, want, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return;
                }
                continue;
            }
            if spins < 100 {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            if cur & WAITERS == 0
                && self
                    .word
                    .compare_exchange_weak(cur, cur | WAITERS, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            futex_wait(&self.word, cur | WAITERS, None);
            slept = true;
        }
    }

    pub fn try_lock(&self) -> Option<TidGuard<'_, T>> {
        self.word
            .compare_exchange(0, current_tid(), Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| TidGuard { mutex: self })
    }

    /// Whether the calling thread holds the lock.
    #[inline]
    pub fn held_by_current(&self) -> bool {
        self.word.load(Ordering::Relaxed) & !WAITERS == current_tid()
    }

    /// Takes the lock and keeps it past the guard (fork prepare); [`Self::force_unlock`]
    /// releases it.
    pub fn lock_and_keep(&self) {
        std::mem::forget(self.lock());
    }

    /// Releases a lock kept by [`Self::lock_and_keep`].
    ///
    /// # Safety
    /// The calling thread must hold the lock through `lock_and_keep`, with no guard alive.
    pub unsafe fn force_unlock(&self) {
        self.unlock();
    }

    #[inline]
    fn unlock(&self) {
        if self.word.swap(0, Ordering::Release) & WAITERS != 0 {
            futex_wake(&self.word, 1);
        }
        if DEFERRED_SIGNAL.load(Ordering::Relaxed) != 0 {
            run_deferred();
        }
    }
}

impl<T> Deref for TidGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a guard exists only while its thread holds the lock (see TidMutex).
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T> DerefMut for TidGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for deref; the guard is borrowed mutably, so this is the only access.
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T> Drop for TidGuard<'_, T> {
    fn drop(&mut self) {
        self.mutex.unlock();
    }
}

/// Appended events not yet written.
pub struct EventBuf {
    pub data: Vec<u8>,
    pub next_seq: u64,
    /// Events in `data`, not yet written.
    pub pending_events: u64,
    pub last_flush_ns: u64,
    /// No more events are accepted: the trailer was written (`finalized`), a signal
    /// flushed the log, or a write was refused and the log must end where it stands.
    pub closed: bool,
    /// `finish` ran.
    pub finalized: bool,
    /// The buffer written last time, kept so a checkpoint swaps instead of allocating.
    pub spare: Vec<u8>,
}

/// What the signal flush did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalFlush {
    /// Buffered events are written; the caller lets the signal take its course.
    Written,
    /// The interrupted thread holds the log: it writes the buffer when it releases it,
    /// then raises the signal again. The handler must return without raising.
    Deferred,
    /// Another thread kept the log past [`SIGNAL_WAIT`]; nothing was written.
    Busy,
}

pub struct EventLog {
    pub file: TidMutex<File>,
    pub buf: TidMutex<EventBuf>,
    /// The raw descriptor of `file`, for fsync without the lock (-1 once closed).
    fd: AtomicI32,
    fsync: bool,
}

/// The signal a handler left to the thread it interrupted (0: none) and the log to flush.
static DEFERRED_SIGNAL: AtomicI32 = AtomicI32::new(0);
static DEFERRED_LOG: AtomicPtr<EventLog> = AtomicPtr::new(std::ptr::null_mut());

/// Runs a deferred signal flush once the calling thread holds no lock of the log.
#[cold]
fn run_deferred() {
    let log = DEFERRED_LOG.load(Ordering::Acquire);
    if log.is_null() {
        return;
    }
    // SAFETY: DEFERRED_LOG is only set from a &'static EventLog (flush_for_signal).
    let log: &'static EventLog = unsafe { &*log };
    if log.file.held_by_current() || log.buf.held_by_current() {
        return; // the outer release runs it
    }
    let sig = DEFERRED_SIGNAL.swap(0, Ordering::SeqCst);
    if sig == 0 {
        return;
    }
    let file = log.file.lock();
    let mut buf = log.buf.lock();
    log.write_buffered(&file, &mut buf);
    drop(buf);
    drop(file);
    // SAFETY: raise(3) on the calling thread; the handler already restored the default
    // action (SA_RESETHAND), so the signal now does what it would have done.
    unsafe {
        libc::raise(sig);
    }
}

impl EventLog {
    pub fn new(file: File, buffer_bytes: usize, fsync: bool, now_ns: u64) -> EventLog {
        use std::os::fd::AsRawFd;
        EventLog {
            fd: AtomicI32::new(file.as_raw_fd()),
            file: TidMutex::new(file),
            buf: TidMutex::new(EventBuf {
                data: Vec::with_capacity(buffer_bytes + 4096),
                next_seq: 0,
                pending_events: 0,
                last_flush_ns: now_ns,
                closed: false,
                finalized: false,
                spare: Vec::with_capacity(buffer_bytes + 4096),
            }),
            fsync,
        }
    }

    /// fdatasync(2) of the log without its lock (a closed descriptor just fails).
    pub fn datasync(&self) -> std::io::Result<()> {
        // SAFETY: fdatasync on this log's own descriptor, which lives as long as `file`.
        match unsafe { libc::fdatasync(self.fd.load(Ordering::SeqCst)) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }

    /// In a forked child: closes the inherited descriptor of a log the child abandons
    /// (its locks stay held by the parent's threads, which do not exist here).
    pub fn close_inherited(&self) {
        let fd = self.fd.swap(-1, Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: closing the inherited descriptor of the abandoned log; the File that
            // owns it is never used or dropped in the child.
            unsafe {
                libc::close(fd);
            }
        }
    }

    /// Async-signal-safe: writes every appended event and closes the log (later events
    /// are dropped), or leaves that to the interrupted thread when it holds the log.
    /// Allocates nothing; only atomics, write(2), fsync(2), nanosleep(2).
    pub fn flush_for_signal(&'static self, sig: c_int) -> SignalFlush {
        if self.file.held_by_current() || self.buf.held_by_current() {
            DEFERRED_LOG.store(self as *const EventLog as *mut EventLog, Ordering::SeqCst);
            DEFERRED_SIGNAL.store(sig, Ordering::SeqCst);
            return SignalFlush::Deferred;
        }
        match self.lock_both_within(SIGNAL_WAIT) {
            Some((file, mut buf)) => {
                self.write_buffered(&file, &mut buf);
                SignalFlush::Written
            }
            None => SignalFlush::Busy,
        }
    }

    /// `flush_and_close` that never waits for a lock this thread holds (the process is
    /// leaving, possibly from a signal handler that interrupted an append): then nothing
    /// is written and the answer is `Busy`.
    pub fn flush_unless_held(&self) -> SignalFlush {
        if self.file.held_by_current() || self.buf.held_by_current() {
            return SignalFlush::Busy;
        }
        self.flush_and_close()
    }

    /// Writes every appended event now and closes the log (outside a signal handler).
    pub fn flush_and_close(&self) -> SignalFlush {
        match self.lock_both_within(SIGNAL_WAIT) {
            Some((file, mut buf)) => {
                self.write_buffered(&file, &mut buf);
                SignalFlush::Written
            }
            None => SignalFlush::Busy,
        }
    }

    fn lock_both_within(
        &self,
        wait: Duration,
    ) -> Option<(TidGuard<'_, File>, TidGuard<'_, EventBuf>)> {
        let deadline = super::monotonic_ns().saturating_add(wait.as_nanos() as u64);
        let file = loop {
            if let Some(g) = self.file.try_lock() {
                break g;
            }
            if super::monotonic_ns() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        loop {
            if let Some(b) = self.buf.try_lock() {
                return Some((file, b));
            }
            if super::monotonic_ns() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// write(2)s the buffer whole (the caller holds both locks), closes the log, fsyncs.
    fn write_buffered(&self, _file: &File, b: &mut EventBuf) {
        let fd = self.fd.load(Ordering::SeqCst);
        if !b.closed && !b.data.is_empty() {
            // Pure arithmetic over the buffer: no allocation, no lock.
            crate::record::seal_records(&mut b.data);
            let mut off = 0usize;
            while off < b.data.len() {
                // SAFETY: fd is this log's open events.bin (O_APPEND); the slice is live
                // for the call; write(2) is async-signal-safe.
                let n =
                    unsafe { libc::write(fd, b.data[off..].as_ptr().cast(), b.data.len() - off) };
                if n <= 0 {
                    break;
                }
                off += n as usize;
            }
            b.data.clear();
            b.pending_events = 0;
        }
        b.closed = true;
        if self.fsync {
            // SAFETY: fsync(2) on our own descriptor is async-signal-safe; a closed one fails.
            unsafe {
                libc::fsync(fd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn the_lock_word_names_its_owner() {
        let m = TidMutex::new(0u32);
        assert!(!m.held_by_current());
        let g = m.lock();
        assert!(m.held_by_current());
        assert!(m.try_lock().is_none());
        let other = std::thread::scope(|s| s.spawn(|| m.held_by_current()).join().unwrap());
        assert!(!other, "another thread does not hold it");
        drop(g);
        assert!(!m.held_by_current());
        assert!(m.try_lock().is_some());
    }

    #[test]
    fn contended_threads_exclude_each_other() {
        let m = Arc::new(TidMutex::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..50_000 {
                        let mut g = m.lock();
                        let v = *g;
                        std::hint::black_box(&mut *g);
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*m.lock(), 200_000);
    }
}
