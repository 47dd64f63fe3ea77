//! Capture's own events, which mark an asynchronous copy's completion for its reader:
//! the real event calls (cudaEvent* / hipEvent*, never our shims, so nothing of
//! capture's is recorded), a pool of disable-timing, blocking-sync events, and the
//! relaxed stream-capture mode those calls run under (they are then never the
//! "potentially unsafe" calls a program's global-mode graph capture prohibits). A CUDA
//! program without a shared runtime (nvcc's static runtime, a driver-API program) gets
//! the driver's calls (`cuEvent*`, `cuThreadExchangeStreamCaptureMode`): a `CUevent` is
//! a `cudaEvent_t`, and the flags and modes have the same values.

use std::os::raw::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use hrr_archive::api::Vendor;
use hrr_archive::sync::{ForkLock, Mutex};

use crate::real::NO_REAL_FUNCTION;

/// cudaEventDisableTiming | cudaEventBlockingSync (the same values in HIP).
const EVENT_FLAGS: c_uint = 0x2 | 0x1;
/// cudaStreamCaptureModeRelaxed / hipStreamCaptureModeRelaxed.
const CAPTURE_MODE_RELAXED: c_int = 2;

static POOL: Mutex<Vec<u64>> = Mutex::new(Vec::new());
static VENDOR: AtomicU8 = AtomicU8::new(0);
/// The context current where capture last recorded a driver event (the driver's calls
/// only): made current on a reader thread that has none before it waits.
static DRIVER_CONTEXT: AtomicU64 = AtomicU64::new(0);

type EventCreateFn = unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int;
type EventRecordFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type EventFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type ExchangeModeFn = unsafe extern "C" fn(*mut c_int) -> c_int;
type ContextOutFn = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
type ContextFn = unsafe extern "C" fn(*mut c_void) -> c_int;

/// This thread's current CUDA context (the driver's `cuCtxGetCurrent`), 0 for none.
fn current_context() -> u64 {
    let Some(f) = real!(driver cuCtxGetCurrent: ContextOutFn).get() else {
        return 0;
    };
    let mut c: *mut c_void = std::ptr::null_mut();
    // SAFETY: an out pointer to a local.
    match unsafe { f(&mut c) } {
        0 => c as u64,
        _ => 0,
    }
}

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

/// The runtime's function, or for CUDA without one, the driver's twin.
fn runtime_or_driver<T: Copy>(
    cuda: &'static crate::real::Real<T>,
    driver: &'static crate::real::Real<T>,
    hip: &'static crate::real::Real<T>,
) -> Option<T> {
    match vendor() {
        Vendor::Cuda => cuda.get().or_else(|| driver.get()),
        Vendor::Hip => hip.get(),
    }
}

fn exchange_mode() -> Option<ExchangeModeFn> {
    runtime_or_driver(
        real!(cudaThreadExchangeStreamCaptureMode: ExchangeModeFn),
        real!(driver cuThreadExchangeStreamCaptureMode: ExchangeModeFn),
        real!(hipThreadExchangeStreamCaptureMode: ExchangeModeFn),
    )
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
    // cuEventCreate(CUevent *, unsigned) is cudaEventCreateWithFlags's C type.
    let f = runtime_or_driver(
        real!(cudaEventCreateWithFlags: EventCreateFn),
        real!(driver cuEventCreate: EventCreateFn),
        real!(hipEventCreateWithFlags: EventCreateFn),
    )?;
    let mut e: *mut c_void = std::ptr::null_mut();
    // SAFETY: an out pointer to a local; the runtime writes the new event there.
    (unsafe { f(&mut e, EVENT_FLAGS) } == 0 && !e.is_null()).then_some(e as u64)
}

/// An event of the pool recorded on `stream` (after the copy just issued there), or
/// None when the runtime would not create or record one.
pub fn record_after(stream: u64) -> Option<u64> {
    let pooled = POOL.lock().pop();
    let event = pooled.or_else(|| relaxed(create))?;
    let f = runtime_or_driver(
        real!(cudaEventRecord: EventRecordFn),
        real!(driver cuEventRecord: EventRecordFn),
        real!(hipEventRecord: EventRecordFn),
    );
    let r = match f {
        // SAFETY: an event of capture's pool and the stream the program's copy used.
        Some(f) => unsafe { f(event as *mut c_void, stream as *mut c_void) },
        None => NO_REAL_FUNCTION,
    };
    if r == 0 && serve_driver_rows() {
        let c = current_context();
        if c != 0 {
            DRIVER_CONTEXT.store(c, Ordering::Relaxed);
        }
    }
    if r != 0 {
        // Not returned to the pool: an event the runtime refuses stays refused (a driver
        // stream of another context than the event's). Destroyed, so a program that
        // keeps calling does not collect capture's events.
        let destroy = runtime_or_driver(
            real!(cudaEventDestroy: EventFn),
            real!(driver cuEventDestroy_v2: EventFn),
            real!(hipEventDestroy: EventFn),
        );
        if let Some(d) = destroy {
            // SAFETY: capture's own event, which nothing else holds or waits on.
            unsafe { d(event as *mut c_void) };
        }
        return None;
    }
    Some(event)
}

/// Whether capture's events can mark a copy a driver row made: only where they are the
/// driver's own (a CUDA program without a shared runtime). Beside a shared runtime, a
/// driver row's stream may belong to a context of the program's own, and the runtime's
/// refusal to record there would be left as the program's last error.
pub fn serve_driver_rows() -> bool {
    vendor() == Vendor::Cuda && real!(cudaEventRecord: EventRecordFn).get().is_none()
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
    let f = match query {
        false => runtime_or_driver(
            real!(cudaEventSynchronize: EventFn),
            real!(driver cuEventSynchronize: EventFn),
            real!(hipEventSynchronize: EventFn),
        ),
        true => runtime_or_driver(
            real!(cudaEventQuery: EventFn),
            real!(driver cuEventQuery: EventFn),
            real!(hipEventQuery: EventFn),
        ),
    };
    match f {
        // SAFETY: an event of capture's pool, recorded after a copy.
        Some(f) => unsafe { f(event as *mut c_void) },
        None => NO_REAL_FUNCTION,
    }
}

/// Waits for the event (a reader thread, whose capture mode is relaxed for good).
pub fn wait(event: u64) -> c_int {
    // With the driver's calls, a reader thread takes the program's context first (it has
    // none of its own; the driver's calls may ask for one).
    let c = DRIVER_CONTEXT.load(Ordering::Relaxed);
    if c != 0 && current_context() == 0 {
        if let Some(set) = real!(driver cuCtxSetCurrent: ContextFn).get() {
            // SAFETY: a context the program made current on its own thread; this is
            // capture's reader thread, which runs none of the program's code.
            unsafe { set(c as *mut c_void) };
        }
    }
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
