//! Capture's own events, which mark an asynchronous copy's completion for its reader
//! and a launch's for a snapshot: the real event calls (cudaEvent* / hipEvent*, never
//! our shims, so nothing of capture's is recorded), a pool of disable-timing,
//! blocking-sync events for each device (runtime) or context (driver) an event belongs
//! to, and the relaxed stream-capture mode those calls run under (they are then never
//! the "potentially unsafe" calls a program's global-mode graph capture prohibits). A
//! CUDA program without a shared runtime (nvcc's static runtime, a driver-API program)
//! gets the driver's calls (`cuEvent*`, `cuThreadExchangeStreamCaptureMode`): a
//! `CUevent` is a `cudaEvent_t`, and the flags and modes have the same values.
//!
//! An event is recorded only on a stream of the device (context) current on the
//! calling thread, the one its pool's events were created on: a stream of another
//! device gets none (its reader or snapshot then waits as for a copy without one). And
//! no call of capture's is left as the program's last error: one that fails is taken
//! back (`cudaGetLastError`), and where a call of capture's could change an error the
//! program has pending (any HIP call; a CUDA query), none is made
//! (`leaving_no_error`), so `cudaPeekAtLastError` says what it would have said.

use std::os::raw::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use hrr_archive::api::Vendor;
use hrr_archive::sync::{ForkLock, Mutex};

use crate::real::NO_REAL_FUNCTION;

/// cudaEventDisableTiming | cudaEventBlockingSync (the same values in HIP).
const EVENT_FLAGS: c_uint = 0x2 | 0x1;
/// cudaStreamCaptureModeRelaxed / hipStreamCaptureModeRelaxed.
const CAPTURE_MODE_RELAXED: c_int = 2;

/// Where an event belongs: the runtime's device (ordinal) or the driver's context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Home {
    Device(c_int),
    Context(u64),
}

/// One of capture's events, recorded after a copy or launch, and where it belongs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    handle: u64,
    home: Home,
    /// The pool's generation it was made in: one given back after a reset or a context's
    /// destruction (which destroyed it) is not pooled again.
    generation: u32,
}

impl Event {
    /// An event no runtime made, for the tests of the modules that hold events.
    #[cfg(test)]
    pub fn for_test(handle: u64) -> Event {
        Event {
            handle,
            home: Home::Device(0),
            generation: 0,
        }
    }
}

/// Idle events by home (a process has a few devices or contexts).
static POOL: Mutex<Vec<(Home, Vec<u64>)>> = Mutex::new(Vec::new());
/// Bumped by [`forget_all`].
static GENERATION: AtomicU32 = AtomicU32::new(0);
static VENDOR: AtomicU8 = AtomicU8::new(0);

type EventCreateFn = unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int;
type EventRecordFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type EventFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type ExchangeModeFn = unsafe extern "C" fn(*mut c_int) -> c_int;
type ContextOutFn = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
type ContextFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type DeviceOutFn = unsafe extern "C" fn(*mut c_int) -> c_int;
type StreamDeviceFn = unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int;
type StreamContextFn = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> c_int;
type StatusFn = unsafe extern "C" fn() -> c_int;
type StreamIdFn = unsafe extern "C" fn(*mut c_void) -> c_int;

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

/// Whether the calls are the runtime's (else the driver's, which keep no last error).
fn runtime_calls() -> bool {
    match vendor() {
        Vendor::Cuda => real!(cudaEventRecord: EventRecordFn).get().is_some(),
        Vendor::Hip => true,
    }
}

/// The runtime's function (a shared CUDA runtime's or HIP's).
fn runtime<T: Copy>(
    cuda: &'static crate::real::Real<T>,
    hip: &'static crate::real::Real<T>,
) -> Option<T> {
    match vendor() {
        Vendor::Cuda => cuda.get(),
        Vendor::Hip => hip.get(),
    }
}

/// The runtime's last-error calls: (peek, get).
fn last_error_calls() -> Option<(StatusFn, StatusFn)> {
    Some((
        runtime(
            real!(cudaPeekAtLastError: StatusFn),
            real!(hipPeekAtLastError: StatusFn),
        )?,
        runtime(
            real!(cudaGetLastError: StatusFn),
            real!(hipGetLastError: StatusFn),
        )?,
    ))
}

/// Runs `f` (capture's own runtime calls) and takes back whatever error they leave, so
/// the program's last error is as it was. CUDA's runtime keeps a pending error through
/// calls that succeed: `f` runs whatever is pending (only a call of capture's that fails
/// while the program has an error pending leaves it none). HIP's (clr before 6) sets the
/// last error at every call, success too: `f` runs only where nothing is pending; so
/// does a `strict` one (a query, whose "not ready" a runtime may leave as the last
/// error). The driver's calls keep no last error: `f` simply runs.
fn leaving_no_error<T>(strict: bool, f: impl FnOnce() -> Option<T>) -> Option<T> {
    if !runtime_calls() {
        return f();
    }
    let (peek, get) = last_error_calls()?;
    // SAFETY: the runtime's own calls, without arguments; peek changes nothing.
    let pending = unsafe { peek() };
    if pending != 0 && (strict || vendor() == Vendor::Hip) {
        return None;
    }
    let r = f();
    // SAFETY: as above. What is pending now and was not before is capture's, and taking
    // it back leaves the program's state as it was.
    if unsafe { peek() } != pending {
        // SAFETY: as above.
        unsafe { get() };
    }
    r
}

/// The device (runtime) or context (driver) this thread has current, where `stream`
/// belongs to it too; None for a stream of another device, or where it can't be told.
fn home_of(stream: u64) -> Option<Home> {
    if runtime_calls() {
        let current = runtime(
            real!(cudaGetDevice: DeviceOutFn),
            real!(hipGetDevice: DeviceOutFn),
        )?;
        let mut now: c_int = -1;
        // SAFETY: an out pointer to a local.
        if unsafe { current(&mut now) } != 0 {
            return None;
        }
        // A runtime older than the call (CUDA before 12.8, HIP 5 without
        // hipGetStreamDeviceId): the stream is taken to be the current device's.
        let of_stream = runtime(
            real!(cudaStreamGetDevice: StreamDeviceFn),
            real!(hipStreamGetDevice: StreamDeviceFn),
        );
        let d = match of_stream {
            Some(f) => {
                let mut d: c_int = -1;
                // SAFETY: the stream the program's call just used, and an out pointer.
                (unsafe { f(stream as *mut c_void, &mut d) } == 0).then_some(d)?
            }
            // HIP 5's own look-up (the device, or -1).
            None if vendor() == Vendor::Hip => {
                match real!(hipGetStreamDeviceId: StreamIdFn).get() {
                    // SAFETY: the stream the program's call just used.
                    Some(f) => unsafe { f(stream as *mut c_void) },
                    None => now,
                }
            }
            None => now,
        };
        return (d == now).then_some(Home::Device(now));
    }
    let now = current_context();
    if now == 0 {
        return None;
    }
    if let Some(f) = real!(driver cuStreamGetCtx: StreamContextFn).get() {
        let mut c: *mut c_void = std::ptr::null_mut();
        // SAFETY: the stream the program's call just used, and an out pointer.
        if unsafe { f(stream as *mut c_void, &mut c) } != 0 || c as u64 != now {
            return None;
        }
    }
    Some(Home::Context(now))
}

fn take_pooled(home: Home) -> Option<u64> {
    let mut pool = POOL.lock();
    pool.iter_mut().find(|(h, _)| *h == home)?.1.pop()
}

fn destroy(handle: u64) {
    let destroy = runtime_or_driver(
        real!(cudaEventDestroy: EventFn),
        real!(driver cuEventDestroy_v2: EventFn),
        real!(hipEventDestroy: EventFn),
    );
    if let Some(d) = destroy {
        // SAFETY: capture's own event, which nothing else holds or waits on.
        unsafe { d(handle as *mut c_void) };
    }
}

/// An event of the pool recorded on `stream` (after the copy or launch just issued
/// there), or None when the stream is another device's than the current one, the
/// program has an error pending under HIP, or the runtime would not create or record one.
pub fn record_after(stream: u64) -> Option<Event> {
    leaving_no_error(false, || {
        let home = home_of(stream)?;
        let handle = take_pooled(home).or_else(|| relaxed(create))?;
        let f = runtime_or_driver(
            real!(cudaEventRecord: EventRecordFn),
            real!(driver cuEventRecord: EventRecordFn),
            real!(hipEventRecord: EventRecordFn),
        );
        let r = match f {
            // SAFETY: an event of capture's pool, of the stream's device or context.
            Some(f) => unsafe { f(handle as *mut c_void, stream as *mut c_void) },
            None => NO_REAL_FUNCTION,
        };
        if r != 0 {
            // Not returned to the pool: an event the runtime refuses may stay refused.
            // Destroyed, so a program that keeps calling does not collect capture's
            // events.
            destroy(handle);
            return None;
        }
        Some(Event {
            handle,
            home,
            generation: GENERATION.load(Ordering::Relaxed),
        })
    })
}

/// Whether capture's events can mark a copy a driver row made: only where they are the
/// driver's own (a CUDA program without a shared runtime). Beside a shared runtime, a
/// driver row's stream may belong to a context of the program's own, and the runtime's
/// refusal to record there would be left as the program's last error.
pub fn serve_driver_rows() -> bool {
    vendor() == Vendor::Cuda && real!(cudaEventRecord: EventRecordFn).get().is_none()
}

/// Forgets the pool and every event out of it (a device reset or a context's destruction
/// destroys its events; those of other devices or contexts are left to the process's
/// end, never reused).
pub fn forget_all() {
    let mut pool = POOL.lock();
    pool.clear();
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Returns an event to its home's pool once its copy was read or its launch seen done
/// (one made before [`forget_all`]: dropped).
pub fn give_back(event: Event) {
    let mut pool = POOL.lock();
    if event.generation != GENERATION.load(Ordering::Relaxed) {
        return;
    }
    match pool.iter_mut().find(|(h, _)| *h == event.home) {
        Some((_, idle)) => idle.push(event.handle),
        None => pool.push((event.home, vec![event.handle])),
    }
}

fn call(event: Event, query: bool) -> c_int {
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
        // SAFETY: an event of capture's pool, recorded after a copy or launch.
        Some(f) => unsafe { f(event.handle as *mut c_void) },
        None => NO_REAL_FUNCTION,
    }
}

/// Waits for the event (a reader thread, whose capture mode is relaxed for good).
pub fn wait(event: Event) -> c_int {
    // With the driver's calls, a reader thread takes the event's context first (it has
    // none of its own; the driver's calls may ask for one; one it took before may have
    // been destroyed since).
    if let Home::Context(c) = event.home {
        if current_context() != c {
            if let Some(set) = real!(driver cuCtxSetCurrent: ContextFn).get() {
                // SAFETY: a context the program had current on its own thread when the
                // event was recorded; this is capture's reader thread, which runs none of
                // the program's code.
                unsafe { set(c as *mut c_void) };
            }
        }
    }
    call(event, false)
}

/// Whether the event has completed (from any thread; not known, so no, while the
/// program has an error pending on this one).
pub fn is_complete(event: Event) -> bool {
    leaving_no_error(true, || Some(relaxed(|| call(event, true)))) == Some(0)
}

/// The pool's lock, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&POOL]
}

/// In a forked child, its lock reset: the parent's events are not the child's.
pub fn fork_child_forget() {
    POOL.lock().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_made_before_the_pool_was_forgotten_is_not_pooled_again() {
        let before = Event::for_test(0x77);
        forget_all();
        give_back(before);
        assert_eq!(
            take_pooled(Home::Device(0)),
            None,
            "destroyed with its device"
        );
        let now = Event {
            handle: 0x78,
            home: Home::Device(0),
            generation: GENERATION.load(Ordering::Relaxed),
        };
        give_back(now);
        assert_eq!(
            take_pooled(Home::Context(0x78)),
            None,
            "another home's pool"
        );
        assert_eq!(take_pooled(Home::Device(0)), Some(0x78));
    }
}
