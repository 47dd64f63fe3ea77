//! Capture's own events, which mark an asynchronous copy's completion for its reader:
//! the real event calls (cudaEvent* / hipEvent*, never our shims, so nothing of
//! capture's is recorded), a pool of disable-timing, blocking-sync events, and the
//! relaxed stream-capture mode those calls run under (they are then never the
//! "potentially unsafe" calls a program's global-mode graph capture prohibits).

use std::os::raw::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU8, Ordering};

use hrr_archive::api::Vendor;
use hrr_archive::sync::{ForkLock, Mutex};

use crate::real::NO_REAL_FUNCTION;

/// cudaEventDisableTiming | cudaEventBlockingSync (the same values in HIP).
const EVENT_FLAGS: c_uint = 0x2 | 0x1;
/// cudaStreamCaptureModeRelaxed / hipStreamCaptureModeRelaxed.
const CAPTURE_MODE_RELAXED: c_int = 2;

static POOL: Mutex<Vec<u64>> = Mutex::new(Vec::new());
static VENDOR: AtomicU8 = AtomicU8::new(0);

type EventCreateFn = unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int;
type EventRecordFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type EventFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type ExchangeModeFn = unsafe extern "C" fn(*mut c_int) -> c_int;

/// The runtime the process uses (set by the first copy that takes an event).
pub fn set_vendor(v: Vendor) {
    VENDOR.store(matches!(v, Vendor::Hip) as u8, Ordering::Relaxed);
}

fn vendor() -> Vendor {
    if VENDOR.load(Ordering::Relaxed) == 1 {
        Vendor::Hip
    } else {
        Vendor::Cuda
    }
}

fn exchange_mode() -> Option<ExchangeModeFn> {
    match vendor() {
        Vendor::Cuda => real!(cudaThreadExchangeStreamCaptureMode: ExchangeModeFn),
        Vendor::Hip => real!(hipThreadExchangeStreamCaptureMode: ExchangeModeFn),
    }
    .get()
}

/// Sets this thread's stream-capture mode to relaxed; the previous mode, where the
/// runtime has the call.
pub fn relax_thread() -> Option<c_int> {
    let f = exchange_mode()?;
    let mut mode = CAPTURE_MODE_RELAXED;
    // SAFETY: an in/out pointer to a local mode value.
    (unsafe { f(&mut mode) } == 0).then_some(mode)
}

/// Runs `f` with this thread's stream-capture mode relaxed, then restores it.
pub fn relaxed<T>(f: impl FnOnce() -> T) -> T {
    let before = relax_thread();
    let r = f();
    if let (Some(mut mode), Some(x)) = (before, exchange_mode()) {
        // SAFETY: as in relax_thread: the mode this thread had.
        unsafe { x(&mut mode) };
    }
    r
}

fn create() -> Option<u64> {
    let f = match vendor() {
        Vendor::Cuda => real!(cudaEventCreateWithFlags: EventCreateFn),
        Vendor::Hip => real!(hipEventCreateWithFlags: EventCreateFn),
    }
    .get()?;
    let mut e: *mut c_void = std::ptr::null_mut();
    // SAFETY: an out pointer to a local; the runtime writes the new event there.
    (unsafe { f(&mut e, EVENT_FLAGS) } == 0 && !e.is_null()).then_some(e as u64)
}

/// An event of the pool recorded on `stream` (after the copy just issued there), or
/// None when the runtime would not create or record one.
pub fn record_after(stream: u64) -> Option<u64> {
    let pooled = POOL.lock().pop();
    let event = pooled.or_else(|| relaxed(create))?;
    let f = match vendor() {
        Vendor::Cuda => real!(cudaEventRecord: EventRecordFn),
        Vendor::Hip => real!(hipEventRecord: EventRecordFn),
    };
    let r = match f.get() {
        // SAFETY: an event of capture's pool and the stream the program's copy used.
        Some(f) => unsafe { f(event as *mut c_void, stream as *mut c_void) },
        None => NO_REAL_FUNCTION,
    };
    if r != 0 {
        // Not returned to the pool: an event the runtime refuses stays refused.
        return None;
    }
    Some(event)
}

/// Forgets the pool (a device reset destroys every event).
pub fn forget_all() {
    POOL.lock().clear();
}

/// Returns an event to the pool once its copy was read.
pub fn give_back(event: u64) {
    POOL.lock().push(event);
}

fn call(event: u64, query: bool) -> c_int {
    let f = match (vendor(), query) {
        (Vendor::Cuda, false) => real!(cudaEventSynchronize: EventFn),
        (Vendor::Cuda, true) => real!(cudaEventQuery: EventFn),
        (Vendor::Hip, false) => real!(hipEventSynchronize: EventFn),
        (Vendor::Hip, true) => real!(hipEventQuery: EventFn),
    };
    match f.get() {
        // SAFETY: an event of capture's pool, recorded after a copy.
        Some(f) => unsafe { f(event as *mut c_void) },
        None => NO_REAL_FUNCTION,
    }
}

/// Waits for the event (a reader thread, whose capture mode is relaxed for good).
pub fn wait(event: u64) -> c_int {
    call(event, false)
}

/// Whether the event has completed (from any thread).
pub fn is_complete(event: u64) -> bool {
    relaxed(|| call(event, true)) == 0
}

/// The pool's lock, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&POOL]
}

/// In a forked child, its lock reset: the parent's events are not the child's.
pub fn fork_child_forget() {
    POOL.lock().clear();
}
