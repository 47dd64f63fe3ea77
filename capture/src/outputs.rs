//! Reading asynchronous device-to-host copies' destinations when the copies complete,
//! off the program's thread, so capture never serialises the program's streams.
//!
//! After the real asynchronous D2H copy into page-locked host memory (pageable
//! destinations are complete when the call returns and are read on the spot), capture
//! records an event of its own (the real cudaEventRecord / hipEventRecord, never a shim;
//! disable-timing, blocking-sync events from a small pool) on the copy's stream, marks
//! the copy's record "output pending", and hands (event, host region, the copy's
//! sequence id) to a reader thread. The reader waits for the event, gathers, hashes and
//! stores the bytes (the blob store writes a content once: a repeated output costs a
//! hash), and appends a `CopyOutput` record naming the copy's sequence id.
//!
//! The program may look at the host buffer only after it synchronises, so every
//! synchronisation it can observe first waits for the reads it covers (`pending` states
//! the rules), and for every read whose copy is already complete (a dependency capture
//! does not track, such as a stream waiting on another's event, is then covered too). A
//! copy or host read overlapping a pending read waits for it first; freeing or
//! unregistering the memory too. Exit waits a bounded time and records what it could
//! not read as not recorded, with the reason; fork waits for every read.
//!
//! It owns the pending-read table, the reader threads and the event pool.

use std::os::raw::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hrr_archive::api::{fid, id, semantic, ApiDesc, CopyDir, ParamKind, Vendor, BLOB_FIELD};
use hrr_archive::payload::PayloadWriter;
use hrr_archive::ProcessWriter;
use parking_lot::{Condvar, Mutex};

use crate::alloc::Space;
use crate::pending::{self, Cover, PendingReads, Ticket};
use crate::regions::HostRegion;
use crate::state::Capture;

/// Reader threads (each waits on one copy's event at a time, then hashes its bytes).
const READERS: usize = 4;
/// Pending reads beyond these make the program's thread wait for the oldest first.
const MAX_PENDING: usize = 256;
const MAX_PENDING_BYTES: u64 = 2 << 30;
/// How long exit waits for copies that have not completed.
const EXIT_WAIT: Duration = Duration::from_secs(5);
/// cudaEventDisableTiming | cudaEventBlockingSync (the same values in HIP).
const EVENT_FLAGS: c_uint = 0x2 | 0x1;

/// A copy whose output a reader will read: its event was recorded after it.
pub struct Deferred {
    event: u64,
    stream: u64,
    region: HostRegion,
}

#[derive(Clone, Copy)]
struct Job {
    ticket: Ticket,
    seq: u64,
    fid: u16,
    api: &'static str,
    region: HostRegion,
    event: u64,
    writer: &'static ProcessWriter,
}

/// Reads handed to the readers: the tickets not yet taken, in order, and every pending
/// read's job until it finishes (exit records the abandoned ones from it).
struct Jobs {
    queue: std::collections::VecDeque<Ticket>,
    info: std::collections::BTreeMap<Ticket, Job>,
    readers: usize,
}

static READS: Mutex<PendingReads> = Mutex::new(PendingReads::new());
/// Signalled when a read finishes.
static FINISHED: Condvar = Condvar::new();
/// Pending reads, readable without the lock (the fast path of every hook).
static PENDING: AtomicUsize = AtomicUsize::new(0);
static JOBS: Mutex<Jobs> = Mutex::new(Jobs {
    queue: std::collections::VecDeque::new(),
    info: std::collections::BTreeMap::new(),
    readers: 0,
});
static JOB_READY: Condvar = Condvar::new();
static EVENT_POOL: Mutex<Vec<u64>> = Mutex::new(Vec::new());
static VENDOR: AtomicU8 = AtomicU8::new(0);
static HOOKS_INSTALLED: AtomicBool = AtomicBool::new(false);

fn vendor() -> Vendor {
    if VENDOR.load(Ordering::Relaxed) == 1 {
        Vendor::Hip
    } else {
        Vendor::Cuda
    }
}

type EventCreateFn = unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int;
type EventRecordFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type EventFn = unsafe extern "C" fn(*mut c_void) -> c_int;

/// The real event calls (never our shims: nothing of capture's own is recorded).
fn event_create() -> Option<u64> {
    let f = match vendor() {
        Vendor::Cuda => real!(cudaEventCreateWithFlags: EventCreateFn),
        Vendor::Hip => real!(hipEventCreateWithFlags: EventCreateFn),
    }
    .get()?;
    let mut e: *mut c_void = std::ptr::null_mut();
    // SAFETY: an out pointer to a local; the runtime writes the new event there.
    (unsafe { f(&mut e, EVENT_FLAGS) } == 0 && !e.is_null()).then_some(e as u64)
}

fn event_record(event: u64, stream: u64) -> c_int {
    let f = match vendor() {
        Vendor::Cuda => real!(cudaEventRecord: EventRecordFn),
        Vendor::Hip => real!(hipEventRecord: EventRecordFn),
    };
    match f.get() {
        // SAFETY: an event of capture's pool and the stream the program's copy used.
        Some(f) => unsafe { f(event as *mut c_void, stream as *mut c_void) },
        None => crate::real::NO_REAL_FUNCTION,
    }
}

fn event_wait(event: u64, query: bool) -> c_int {
    let f = match (vendor(), query) {
        (Vendor::Cuda, false) => real!(cudaEventSynchronize: EventFn),
        (Vendor::Cuda, true) => real!(cudaEventQuery: EventFn),
        (Vendor::Hip, false) => real!(hipEventSynchronize: EventFn),
        (Vendor::Hip, true) => real!(hipEventQuery: EventFn),
    };
    match f.get() {
        // SAFETY: an event of capture's pool, recorded after the copy.
        Some(f) => unsafe { f(event as *mut c_void) },
        None => crate::real::NO_REAL_FUNCTION,
    }
}

/// The stream parameter of a row, if it has one.
fn stream_of(desc: &ApiDesc, args: &[u64]) -> Option<u64> {
    desc.params
        .iter()
        .position(|p| p.kind == ParamKind::Stream)
        .map(|i| args[i])
}

/// After the real asynchronous copy: records capture's event on its stream, so a reader
/// reads `region` once the copy completed. None (the caller then waits for the stream
/// and reads on the spot, as for any other copy) for a copy without a stream, a
/// destination that is not wholly inside one page-locked allocation (a pageable
/// destination is complete when the call returns: the program may read it at once), or
/// an event the runtime would not create or record.
pub fn defer(
    cap: &Capture,
    vendor: Vendor,
    desc: &ApiDesc,
    args: &[u64],
    region: HostRegion,
) -> Option<Deferred> {
    let stream = stream_of(desc, args)?;
    let (start, end) = pending::span(&region);
    let (a, size, space) = cap.allocs.lookup(start)?;
    if space != Space::PinnedHost || end > a.saturating_add(size) || end <= start {
        return None;
    }
    VENDOR.store(matches!(vendor, Vendor::Hip) as u8, Ordering::Relaxed);
    let event = EVENT_POOL.lock().pop().or_else(event_create)?;
    if event_record(event, stream) != 0 {
        EVENT_POOL.lock().push(event);
        return None;
    }
    Some(Deferred {
        event,
        stream,
        region,
    })
}

/// Hands a deferred copy, recorded at `seq` with its destination at field `fid`, to a
/// reader; waits first for the oldest read when too many are pending.
pub fn submit(cap: &Capture, d: Deferred, seq: u64, fid: u16, api: &'static str) {
    install_hooks();
    let ticket = {
        let mut r = READS.lock();
        while r.len() >= MAX_PENDING || r.bytes() >= MAX_PENDING_BYTES {
            let Some(t) = r.oldest() else { break };
            while r.get(t).is_some() {
                FINISHED.wait(&mut r);
            }
        }
        let t = r.add(d.stream, pending::span(&d.region), d.event);
        PENDING.store(r.len(), Ordering::Release);
        t
    };
    let mut jobs = JOBS.lock();
    jobs.info.insert(
        ticket,
        Job {
            ticket,
            seq,
            fid,
            api,
            region: d.region,
            event: d.event,
            writer: cap.writer(),
        },
    );
    jobs.queue.push_back(ticket);
    if jobs.readers < READERS {
        let spawned = std::thread::Builder::new()
            .name("hrr-reader".into())
            .spawn(reader);
        if spawned.is_ok() {
            jobs.readers += 1;
        }
    }
    JOB_READY.notify_one();
}

fn reader() {
    loop {
        let job = {
            let mut jobs = JOBS.lock();
            loop {
                if let Some(j) = jobs.queue.pop_front().and_then(|t| jobs.info.get(&t)) {
                    break *j;
                }
                JOB_READY.wait(&mut jobs);
            }
        };
        let ticket = job.ticket;
        let waited = event_wait(job.event, false);
        if READS.lock().start_reading(ticket) {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let outcome = if waited == 0 {
                    store(&job)
                } else {
                    Err(format!("waiting for the copy to complete failed ({waited})"))
                };
                write_output(&job, outcome);
            }));
            finish(ticket);
        }
        EVENT_POOL.lock().push(job.event);
    }
}

/// Gathers and stores the destination's bytes (the writer hashes them and writes a
/// content it does not hold yet).
fn store(job: &Job) -> Result<hrr_archive::payload::BlobRef, String> {
    // SAFETY: the copy into this page-locked region completed (its event did), and the
    // program cannot free or reuse it before the read finishes (the hooks wait).
    let bytes = unsafe { job.region.gather() }.map_err(|e| e.to_string())?;
    job.writer.put_blob(&bytes).map_err(|e| e.to_string())
}

/// Appends the `CopyOutput` record of `job`: its blob, or the reason it has none.
fn write_output(job: &Job, outcome: Result<hrr_archive::payload::BlobRef, String>) {
    let mut p = PayloadWriter::new();
    p.u64(fid::COPY_SEQ, job.seq).u64(fid::COPY_FIELD, job.fid as u64);
    let why = match outcome {
        Ok(r) => {
            p.blob(BLOB_FIELD | job.fid, r);
            None
        }
        Err(e) => Some(format!(
            "the expected output of seq {} {} was not recorded: {e}",
            job.seq, job.api
        )),
    };
    let flags = if why.is_some() {
        hrr_archive::record::RECORD_FLAG_INCOMPLETE
    } else {
        0
    };
    let tid = hrr_archive::writer::current_tid();
    if let Some(s) = job
        .writer
        .append(semantic::COPY_OUTPUT, flags, tid, 0, p.as_bytes())
    {
        if let Some(why) = why {
            job.writer.note_capture_failure(s, job.api, &why);
        }
    }
}

fn finish(t: Ticket) {
    JOBS.lock().info.remove(&t);
    let mut r = READS.lock();
    r.finish(t);
    PENDING.store(r.len(), Ordering::Release);
    FINISHED.notify_all();
}

/// Waits until none of `tickets` is pending.
fn wait_for(tickets: &[Ticket]) {
    if tickets.is_empty() {
        return;
    }
    let mut r = READS.lock();
    while tickets.iter().any(|&t| r.get(t).is_some()) {
        FINISHED.wait(&mut r);
    }
}

/// Waits for the reads `cover` names and for every read whose copy already completed.
fn wait_covered(cover: impl FnOnce(&PendingReads) -> Cover) {
    let (mut tickets, others) = {
        let r = READS.lock();
        let c = cover(&r);
        let covered = r.covered(c);
        let others: Vec<(Ticket, u64)> = r
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
            .filter(|&(_, e)| event_wait(e, true) == 0)
            .map(|(t, _)| t),
    );
    wait_for(&tickets);
}

/// Waits for the pending reads overlapping `[start, end)` (a host read or write capture
/// or the program is about to make there).
pub fn wait_overlapping(start: u64, end: u64) {
    if PENDING.load(Ordering::Acquire) == 0 {
        return;
    }
    let t = READS.lock().overlapping((start, end));
    wait_for(&t);
}

/// Before a row's real call: a copy's host side, memory being freed or unregistered,
/// and a device reset wait for the pending reads they touch.
pub fn before_row(
    cap: &Capture,
    desc: &ApiDesc,
    dir: Option<CopyDir>,
    host_side: Option<HostRegion>,
    args: &[u64],
) {
    if PENDING.load(Ordering::Acquire) == 0 {
        return;
    }
    if desc.id == id::DeviceReset {
        wait_covered(|_| pending::ALL);
        return;
    }
    if desc.id == id::FreeHost || desc.id == id::HostUnregister {
        if let Some((start, size, _)) = cap.allocs.lookup(args[0]) {
            wait_overlapping(start, start.saturating_add(size));
        }
        return;
    }
    if matches!(
        dir,
        Some(CopyDir::HostToDevice) | Some(CopyDir::DeviceToHost)
    ) {
        if let Some(r) = host_side {
            let (s, e) = pending::span(&r);
            wait_overlapping(s, e);
        }
    }
}

/// After a row's real call, before its record: a synchronisation the program can
/// observe waits for the reads it covers; an event's record point is noted.
pub fn after_row(desc: &ApiDesc, args: &[u64], ret: c_int) {
    match desc.id {
        id::EventRecord if ret == 0 => READS.lock().on_event_record(args[0], args[1]),
        id::EventDestroy if ret == 0 => READS.lock().on_event_destroy(args[0]),
        _ if PENDING.load(Ordering::Acquire) == 0 => {}
        id::DeviceSynchronize | id::Memcpy | id::Memcpy2D | id::Memcpy3D => {
            wait_covered(|_| pending::ALL)
        }
        id::StreamSynchronize => wait_covered(|r| r.stream_cover(args[0])),
        id::StreamQuery if ret == 0 => wait_covered(|r| r.stream_cover(args[0])),
        id::EventSynchronize => wait_covered(|r| r.event_cover(args[0])),
        id::EventQuery if ret == 0 => wait_covered(|r| r.event_cover(args[0])),
        _ => {}
    }
}

/// Exit and fork handlers, registered at the first deferred copy: after the runtime's
/// own exit handler was registered (the runtime had started), so ours runs before the
/// runtime tears the context down, and before capture's own (which finishes the log).
fn install_hooks() {
    if HOOKS_INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    // SAFETY: registering plain extern "C" fns.
    unsafe {
        libc::atexit(drain_at_exit);
        libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child));
    }
}

/// At exit: waits up to `EXIT_WAIT` for every pending read; a copy still not complete
/// then is recorded as not recorded, with the reason.
extern "C" fn drain_at_exit() {
    let deadline = Instant::now() + EXIT_WAIT;
    let mut r = READS.lock();
    while !r.is_empty() {
        if FINISHED.wait_until(&mut r, deadline).timed_out() {
            break;
        }
    }
    let left = r.covered(pending::ALL);
    let abandoned: Vec<Ticket> = left.into_iter().filter(|&t| r.abandon(t)).collect();
    PENDING.store(r.len(), Ordering::Release);
    drop(r);
    if !abandoned.is_empty() {
        let mut jobs = JOBS.lock();
        let gone: Vec<Job> = abandoned
            .iter()
            .filter_map(|t| jobs.info.remove(t))
            .collect();
        jobs.queue.retain(|t| !abandoned.contains(t));
        drop(jobs);
        for j in &gone {
            write_output(
                j,
                Err(format!(
                    "the program exited and the copy had not completed within {} s",
                    EXIT_WAIT.as_secs()
                )),
            );
        }
    }
    // Reads being written finish on their own (no GPU wait left in them).
    let mut r = READS.lock();
    while !r.is_empty() {
        if FINISHED.wait_for(&mut r, EXIT_WAIT).timed_out() {
            break;
        }
    }
}

extern "C" fn fork_prepare() {
    wait_covered(|_| pending::ALL);
    std::mem::forget(JOBS.lock());
    std::mem::forget(READS.lock());
    std::mem::forget(EVENT_POOL.lock());
}

extern "C" fn fork_parent() {
    // SAFETY: fork_prepare took these locks on this thread just before fork.
    unsafe {
        EVENT_POOL.force_unlock();
        READS.force_unlock();
        JOBS.force_unlock();
    }
}

extern "C" fn fork_child() {
    // SAFETY: as fork_parent; the child has only this thread.
    unsafe {
        EVENT_POOL.force_unlock();
        READS.force_unlock();
        JOBS.force_unlock();
    }
    // The parent's readers and events are not the child's.
    READS.lock().clear();
    PENDING.store(0, Ordering::Release);
    let mut jobs = JOBS.lock();
    jobs.queue.clear();
    jobs.info.clear();
    jobs.readers = 0;
    EVENT_POOL.lock().clear();
}
