//! Fork-safe locks for capture and the process writer: a mutex, a reader-writer lock and a
//! condition variable whose whole state is the atomic words they hold, with waiters asleep
//! on those words through the kernel's futex, never in a user-space queue.
//!
//! Why not parking_lot: its locks park waiters in a process-wide user-space table and
//! hand a released lock to a parked thread. After `fork()` the child holds copies of the
//! parent's parked threads that will never run; releasing a lock in the child then handed
//! it to one of them (or to readers that do not exist), and the child's next call waited
//! for them forever (HRR issue 20: children hung in 4 of 10 runs, in `AllocTable::insert`).
//!
//! Here a waiter is only ever in the kernel, which forgets the parent's waiters in the
//! child: a lock the forking thread holds (taken in `pthread_atfork`'s prepare handler) is
//! released in the child by [`Mutex::reset_in_child`] / [`RwLock::reset_in_child`], which
//! store the unlocked state and wake no one. A lock some *other* thread held at the fork
//! is not safe to reset (its data may be half-changed): every lock the child uses is taken
//! in the prepare handler, in the documented lock order (capture's `fork.rs`).
//!
//! The API follows parking_lot's where capture used it (`lock`, `try_lock`, `read`,
//! `write`, `Condvar::wait`/`wait_until`/`notify_*`), so the change of lock is local.
//! Condition waits may wake spuriously; every caller waits in a loop on its condition.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// Sleeps while `*word == expected`, until woken or `deadline` (with no deadline: one
/// system call, async-signal-safe; the writer's `TidMutex` uses it too).
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, deadline: Option<Instant>) {
    let ts = match deadline {
        None => None,
        Some(d) => {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            Some(libc::timespec {
                tv_sec: left.as_secs().min(i64::MAX as u64) as libc::time_t,
                tv_nsec: left.subsec_nanos() as _,
            })
        }
    };
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: FUTEX_WAIT reads the aligned word we borrow and the optional relative
    // timeout on our stack; it returns on a wake, a changed value, a signal or the timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            ts_ptr,
        );
    }
}

/// Wakes up to `n` threads asleep on `word`.
pub(crate) fn futex_wake(word: &AtomicU32, n: i32) {
    // SAFETY: FUTEX_WAKE only uses the word's address as a key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        );
    }
}

const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;
/// Locked, and a thread may be asleep on the word.
const CONTENDED: u32 = 2;

/// A mutual-exclusion lock: 0 free, 1 held, 2 held with sleepers (Drepper's futex mutex).
pub struct Mutex<T: ?Sized> {
    state: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, one at a time; it moves between
// threads with the lock, hence T: Send.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}

pub struct MutexGuard<'a, T: ?Sized> {
    mutex: &'a Mutex<T>,
}

impl<T> Mutex<T> {
    pub const fn new(value: T) -> Mutex<T> {
        Mutex {
            state: AtomicU32::new(UNLOCKED),
            value: UnsafeCell::new(value),
        }
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T: ?Sized> Mutex<T> {
    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        if self
            .state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        MutexGuard { mutex: self }
    }

    #[cold]
    fn lock_contended(&self) {
        for _ in 0..100 {
            if self.state.load(Ordering::Relaxed) == UNLOCKED
                && self
                    .state
                    .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            std::hint::spin_loop();
        }
        // From here the word says "sleepers may exist", so the holder's unlock wakes one.
        while self.state.swap(CONTENDED, Ordering::Acquire) != UNLOCKED {
            futex_wait(&self.state, CONTENDED, None);
        }
    }

    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        self.state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| MutexGuard { mutex: self })
    }

    #[inline]
    fn unlock(&self) {
        if self.state.swap(UNLOCKED, Ordering::Release) == CONTENDED {
            futex_wake(&self.state, 1);
        }
    }

    /// Releases a lock whose guard was forgotten (fork prepare, then the parent).
    ///
    /// # Safety
    /// The calling thread holds the lock with no guard alive.
    pub unsafe fn force_unlock(&self) {
        self.unlock();
    }

    /// In a forked child: the lock is free again, and no one is woken (the parent's
    /// sleepers do not exist here).
    ///
    /// # Safety
    /// Only in a forked child's atfork handler, for a lock the forking thread held through
    /// the fork (so its data is consistent) with no guard alive.
    pub unsafe fn reset_in_child(&self) {
        self.state.store(UNLOCKED, Ordering::Release);
    }

    /// The value, through exclusive access to the lock itself.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a guard exists only while its thread holds the lock.
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for deref; the guard is borrowed mutably, so this is the only access.
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.mutex.unlock();
    }
}

/// Whether a timed wait ended at its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    pub fn timed_out(self) -> bool {
        self.0
    }
}

/// A condition variable: a sequence number bumped by every notification; a waiter sleeps
/// while it is unchanged. Waits may end spuriously (callers loop on their condition).
pub struct Condvar {
    seq: AtomicU32,
}

impl Default for Condvar {
    fn default() -> Self {
        Condvar::new()
    }
}

impl Condvar {
    pub const fn new() -> Condvar {
        Condvar {
            seq: AtomicU32::new(0),
        }
    }

    /// Releases the guard's lock, sleeps until notified, takes the lock again.
    pub fn wait<T: ?Sized>(&self, guard: &mut MutexGuard<'_, T>) {
        self.wait_inner(guard, None);
    }

    /// As [`Condvar::wait`], until `deadline` at the latest.
    pub fn wait_until<T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        self.wait_inner(guard, Some(deadline));
        WaitTimeoutResult(Instant::now() >= deadline)
    }

    /// As [`Condvar::wait`], for `timeout` at most.
    pub fn wait_for<T: ?Sized>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        timeout: std::time::Duration,
    ) -> WaitTimeoutResult {
        self.wait_until(guard, Instant::now() + timeout)
    }

    fn wait_inner<T: ?Sized>(&self, guard: &mut MutexGuard<'_, T>, deadline: Option<Instant>) {
        // Read before unlocking: a notification after this point changes the number, so
        // the sleep below cannot miss it.
        let seq = self.seq.load(Ordering::Acquire);
        let m = guard.mutex;
        m.unlock();
        futex_wait(&self.seq, seq, deadline);
        // Others may be asleep on the mutex too (woken together): mark it contended so
        // each unlock passes it on.
        while m.state.swap(CONTENDED, Ordering::Acquire) != UNLOCKED {
            futex_wait(&m.state, CONTENDED, None);
        }
    }

    pub fn notify_one(&self) {
        self.seq.fetch_add(1, Ordering::Release);
        futex_wake(&self.seq, 1);
    }

    pub fn notify_all(&self) {
        self.seq.fetch_add(1, Ordering::Release);
        futex_wake(&self.seq, i32::MAX);
    }
}

/// A lock held across `fork()` by the forking thread: taken in the prepare handler,
/// released in the parent, reset in the child.
pub trait ForkLock {
    /// Takes the lock (exclusively) and keeps it past the call.
    fn fork_prepare(&self);
    /// Releases what `fork_prepare` took, waking waiters.
    ///
    /// # Safety
    /// After `fork_prepare` on this thread, in the parent.
    unsafe fn fork_parent(&self);
    /// Frees the lock in the child without waking anyone.
    ///
    /// # Safety
    /// After `fork_prepare` on this thread (before the fork), in the child.
    unsafe fn fork_child(&self);
}

impl<T> ForkLock for Mutex<T> {
    fn fork_prepare(&self) {
        std::mem::forget(self.lock());
    }
    unsafe fn fork_parent(&self) {
        // SAFETY: the caller's contract: held through fork_prepare, no guard alive.
        unsafe { self.force_unlock() }
    }
    unsafe fn fork_child(&self) {
        // SAFETY: as fork_parent, in the child.
        unsafe { self.reset_in_child() }
    }
}

impl<T> ForkLock for RwLock<T> {
    fn fork_prepare(&self) {
        std::mem::forget(self.write());
    }
    unsafe fn fork_parent(&self) {
        // SAFETY: the caller's contract: write-held through fork_prepare, no guard alive.
        unsafe { self.force_unlock_write() }
    }
    unsafe fn fork_child(&self) {
        // SAFETY: as fork_parent, in the child.
        unsafe { self.reset_in_child() }
    }
}

/// Reader count in the low bits.
const READERS: u32 = (1 << 30) - 1;
/// A writer holds the lock.
const WRITER: u32 = 1 << 30;
/// A writer waits: new readers wait behind it.
const WRITER_WAITING: u32 = 1 << 31;

/// A reader-writer lock: the state word holds the reader count and two flags; sleepers of
/// either kind wait on it and are all woken when it may have become free for them.
pub struct RwLock<T: ?Sized> {
    state: AtomicU32,
    /// Threads asleep (or about to sleep) on `state`: unlock wakes only when this is not 0.
    sleepers: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: shared access is through read guards (T: Sync), exclusive through the one write
// guard (T: Send).
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}

pub struct RwLockReadGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
}

pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
}

impl<T> RwLock<T> {
    pub const fn new(value: T) -> RwLock<T> {
        RwLock {
            state: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
            value: UnsafeCell::new(value),
        }
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T: ?Sized> RwLock<T> {
    fn sleep(&self, seen: u32) {
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        futex_wait(&self.state, seen, None);
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    fn wake_all(&self) {
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            futex_wake(&self.state, i32::MAX);
        }
    }

    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        let mut spins = 0;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & (WRITER | WRITER_WAITING) == 0 && s & READERS != READERS {
                if self
                    .state
                    .compare_exchange_weak(s, s + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return RwLockReadGuard { lock: self };
                }
                continue;
            }
            if spins < 100 {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            self.sleep(s);
        }
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        let mut spins = 0;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & (WRITER | READERS) == 0 {
                if self
                    .state
                    .compare_exchange_weak(s, WRITER, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return RwLockWriteGuard { lock: self };
                }
                continue;
            }
            if spins < 100 {
                spins += 1;
                std::hint::spin_loop();
                continue;
            }
            if s & WRITER_WAITING == 0
                && self
                    .state
                    .compare_exchange_weak(
                        s,
                        s | WRITER_WAITING,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                    .is_err()
            {
                continue;
            }
            self.sleep(s | WRITER_WAITING);
        }
    }

    fn unlock_read(&self) {
        let before = self.state.fetch_sub(1, Ordering::Release);
        if before & READERS == 1 {
            self.wake_all();
        }
    }

    fn unlock_write(&self) {
        // Clears the writer and the waiting flag: a writer still waiting sets it again.
        self.state.store(0, Ordering::Release);
        self.wake_all();
    }

    /// Releases a write lock whose guard was forgotten (fork prepare, then the parent).
    ///
    /// # Safety
    /// The calling thread holds the write lock with no guard alive.
    pub unsafe fn force_unlock_write(&self) {
        self.unlock_write();
    }

    /// In a forked child: free again, no sleepers, no one woken (see [`Mutex::reset_in_child`]).
    ///
    /// # Safety
    /// As [`Mutex::reset_in_child`]: the forking thread held the write lock through fork.
    pub unsafe fn reset_in_child(&self) {
        self.sleepers.store(0, Ordering::Relaxed);
        self.state.store(0, Ordering::Release);
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: readers share the value; no writer holds the lock while a reader does.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock_read();
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the write guard is the lock's only guard.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for deref, borrowed mutably.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T: ?Sized> Drop for RwLockWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock_write();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn mutex_counts_under_contention() {
        let m = Arc::new(Mutex::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(*m.lock(), 80_000);
        assert!(m.try_lock().is_some());
    }

    #[test]
    fn rwlock_readers_share_and_writers_exclude() {
        let l = Arc::new(RwLock::new(Vec::<u32>::new()));
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let l = l.clone();
                std::thread::spawn(move || {
                    for j in 0..5_000 {
                        if j % 10 == 0 {
                            l.write().push(i);
                        } else {
                            let r = l.read();
                            let n = r.len();
                            assert_eq!(r.len(), n);
                        }
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(l.read().len(), 4 * 500);
        let (a, b) = (l.read(), l.read());
        assert_eq!(a.len(), b.len());
    }

    #[test]
    fn condvar_wakes_a_waiter_and_times_out() {
        let pair = Arc::new((Mutex::new(false), Condvar::new()));
        let p = pair.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            *p.0.lock() = true;
            p.1.notify_all();
        });
        let mut g = pair.0.lock();
        while !*g {
            pair.1.wait(&mut g);
        }
        drop(g);
        t.join().unwrap();
        let mut g = pair.0.lock();
        let r = pair
            .1
            .wait_until(&mut g, Instant::now() + Duration::from_millis(10));
        assert!(r.timed_out());
    }

    #[test]
    fn a_lock_held_at_fork_is_free_in_the_child_without_waking_anyone() {
        static M: Mutex<u32> = Mutex::new(7);
        static L: RwLock<u32> = RwLock::new(9);
        std::mem::forget(M.lock());
        std::mem::forget(L.write());
        // SAFETY: fork in a test process; the child only touches the two locks, stores
        // and _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: this thread held both through the fork.
            unsafe {
                M.reset_in_child();
                L.reset_in_child();
            }
            let ok = *M.lock() == 7 && *L.read() == 9 && *L.write() == 9;
            // SAFETY: leaving the child without running the test harness's exit path.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        // SAFETY: held by this thread, guards forgotten above.
        unsafe {
            M.force_unlock();
            L.force_unlock_write();
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}
