//! Recording D2H copies' outputs without serialising the program's streams: the hooks
//! `generic` calls around a table row.
//!
//! After the real asynchronous D2H copy into page-locked host memory, capture records
//! an event of its own on the copy's stream (`events`), marks the copy's record "output
//! pending", and hands (event, host region, the copy's sequence id) to a reader thread
//! (`reader`), which appends the bytes in a `CopyOutput` record once the copy completed.
//! A blocking copy into page-locked memory is complete when its call returns: its bytes
//! are snapshotted on the spot and hashed and stored by a reader. Pageable destinations
//! (an asynchronous D2H copy into pageable memory also completes before it returns) and
//! copies with no event to be had are read on the spot, as before.
//!
//! The program may look at the host buffer only after it synchronises, so every
//! synchronisation it can observe first waits for the reads it covers (`pending` states
//! the rules; `reads` waits). A copy or host read overlapping a pending read waits for
//! it first; freeing or unregistering the memory, and a device reset, too. Exit waits a
//! bounded time and records what it could not read as not recorded, with the reason;
//! fork waits for every read.

use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hrr_archive::api::{id, ApiDesc, CopyDir, ParamKind, Vendor};

use crate::alloc::Space;
use crate::events;
use crate::pending::{self, Cover, Ticket};
use crate::reader::{self, Note, Snapshot, Source};
use crate::reads;
use crate::regions::HostRegion;
use crate::state::Capture;

/// Pending reads beyond these make the program's thread wait for the oldest first.
const MAX_PENDING: usize = 256;
const MAX_PENDING_BYTES: u64 = 2 << 30;
/// How long exit waits for copies that have not completed.
const EXIT_WAIT: Duration = Duration::from_secs(30);
/// How long exit then waits for outputs being stored.
const EXIT_STORE_WAIT: Duration = Duration::from_secs(60);

static HOOKS_INSTALLED: AtomicBool = AtomicBool::new(false);

/// A copy whose output a reader records.
pub enum Deferred {
    /// An asynchronous copy: `event` was recorded after it on `stream`.
    Event {
        event: events::Event,
        stream: u64,
        region: HostRegion,
    },
    /// A copy complete when its call returned, snapshotted.
    Snapshot(Snapshot),
}

/// The stream parameter of a row, if it has one.
fn stream_of(desc: &ApiDesc, args: &[u64]) -> Option<u64> {
    desc.params
        .iter()
        .position(|p| p.kind == ParamKind::Stream)
        .map(|i| args[i])
}

/// Whether `region` lies wholly inside one page-locked allocation.
fn in_pinned(cap: &Capture, region: &HostRegion) -> bool {
    let (start, end) = pending::span(region);
    match cap.allocs.lookup(start) {
        Some((a, size, Space::PinnedHost)) => end > start && end <= a.saturating_add(size),
        _ => false,
    }
}

/// After the real D2H copy of a row into `region`, which completed if the row has no
/// stream: how a reader will record its output, or None (the caller then waits for the
/// stream and reads on the spot, as for any other copy).
pub fn defer(
    cap: &Capture,
    vendor: Vendor,
    desc: &ApiDesc,
    args: &[u64],
    region: HostRegion,
) -> Option<Deferred> {
    if !in_pinned(cap, &region) {
        return None;
    }
    events::set_vendor(vendor);
    match stream_of(desc, args) {
        Some(stream) => after_event(stream, region),
        None => {
            let (start, end) = pending::span(&region);
            if end - start > reader::SNAPSHOT_MAX {
                return None;
            }
            reads::storing();
            // SAFETY: a blocking copy completed before its call returned, and the
            // program's thread (this one) has not touched the region since.
            match unsafe { reader::snapshot(&region, true) } {
                Ok(s) => Some(Deferred::Snapshot(s)),
                Err(_) => {
                    reads::stored();
                    None
                }
            }
        }
    }
}

/// After a graph launch on `stream` (the driver's `cuGraphLaunch` where `driver`): how a
/// reader will record what its D2H node wrote to `region` once the launch completed, or
/// None (page-locked memory only, and events capture can record there; the caller then
/// waits for the stream and reads on the spot).
pub fn defer_node(
    cap: &Capture,
    vendor: Vendor,
    stream: u64,
    region: HostRegion,
    driver: bool,
) -> Option<Deferred> {
    events::set_vendor(vendor);
    if !in_pinned(cap, &region) || (driver && !events::serve_driver_rows()) {
        return None;
    }
    after_event(stream, region)
}

/// A read of `region` once an event of capture's, recorded now on `stream`, completed;
/// None when no event could be recorded there.
fn after_event(stream: u64, region: HostRegion) -> Option<Deferred> {
    Some(Deferred::Event {
        event: events::record_after(stream)?,
        stream,
        region,
    })
}

/// Hands a deferred copy, recorded at `seq` with its destination at field `fid` (a graph
/// launch's: the output of D2H node `node`), to a reader; waits first for the oldest
/// read when too many are pending.
pub fn submit(
    cap: &Capture,
    d: Deferred,
    seq: u64,
    fid: u16,
    node: Option<u64>,
    api: &'static str,
) {
    install_hooks();
    let note = Note {
        seq,
        fid,
        node,
        api,
        writer: cap.writer(),
    };
    match d {
        Deferred::Snapshot(s) => reader::submit(note, Source::Gathered(s)),
        Deferred::Event {
            event,
            stream,
            region,
        } => {
            let ticket = {
                let mut r = reads::lock();
                while r.len() >= MAX_PENDING || r.bytes() >= MAX_PENDING_BYTES {
                    let Some(t) = r.oldest() else { break };
                    while r.get(t).is_some() {
                        reads::wait_changed(&mut r);
                    }
                }
                let t = r.add(stream, pending::span(&region), event);
                reads::counted(&r);
                t
            };
            reader::submit(
                note,
                Source::Pending {
                    ticket,
                    event,
                    region,
                },
            );
        }
    }
}

/// A deferred copy whose record was not appended (capture stopped): nothing is read.
pub fn cancel(d: Deferred) {
    match d {
        Deferred::Event { event, .. } => events::give_back(event),
        Deferred::Snapshot(s) => {
            reader::discard(s);
            reads::stored();
        }
    }
}

/// Waits for the pending reads overlapping `[start, end)` (host bytes capture or the
/// program is about to read or write).
pub fn wait_overlapping(start: u64, end: u64) {
    reads::wait_overlapping(start, end);
}

/// Before a row's real call: a copy's host side, memory being freed or unregistered,
/// and a device reset wait for the pending reads they touch.
pub fn before_row(
    cap: &Capture,
    desc: &ApiDesc,
    dir: Option<CopyDir>,
    host_side: impl FnOnce() -> Option<HostRegion>,
    args: &[u64],
) {
    if hrr_archive::api::resets_device(desc.id) || desc.id == id::CtxDestroy {
        // Every output recorded before the reset's own record (a context's page-locked
        // memory goes with it); the reset destroys the pool's events.
        reads::wait_all();
        events::forget_all();
        return;
    }
    if !reads::any() {
        return;
    }
    if desc.id == id::FreeHost || desc.id == id::HostUnregister {
        if let Some((start, size, _)) = cap.allocs.lookup(args[0]) {
            reads::wait_overlapping(start, start.saturating_add(size));
        }
        return;
    }
    if matches!(
        dir,
        Some(CopyDir::HostToDevice) | Some(CopyDir::DeviceToHost)
    ) {
        if let Some(r) = host_side() {
            let (s, e) = pending::span(&r);
            reads::wait_overlapping(s, e);
        }
    }
}

/// Before HIP's `hipStreamBeginCapture` on `stream`: the reads pending there are waited
/// for, so no event of capture's last recorded on the stream is waited for or asked once
/// it captures (HIP would invalidate the capture).
pub fn before_hip_capture(stream: u64) {
    reads::wait_covered(|r| r.stream_cover(stream));
}

/// Before HIP's `hipStreamWaitEvent(stream, event)`: where the event was recorded on a
/// stream that captures and `stream` does not, the wait makes `stream` capture too (a
/// fork of the capture): as before [`before_hip_capture`].
pub fn before_hip_wait(stream: u64, event: u64) {
    if !reads::any() {
        return;
    }
    let Some(of_event) = reads::lock().event_stream(event) else {
        return;
    };
    use crate::capturing::{stream_capture, StreamCapture};
    if matches!(
        stream_capture(Vendor::Hip, of_event),
        StreamCapture::Active { .. }
    ) && stream_capture(Vendor::Hip, stream) == StreamCapture::Idle
    {
        before_hip_capture(stream);
    }
}

/// After a row's real call, before its record: a synchronisation the program can
/// observe waits for the reads it covers; an event's record point is noted.
pub fn after_row(desc: &ApiDesc, args: &[u64], ret: c_int) {
    // A per-thread default stream form synchronises as its base row.
    match hrr_archive::api::hip_abi::base_row(desc.id) {
        // The driver's twins count too: a program may copy through the runtime and
        // synchronise through the driver (a driver context sync covers the device).
        id::EventRecord
        | id::CuEventRecord
        | id::EventRecordWithFlags
        | id::DrvEventRecordWithFlags
            if ret == 0 =>
        {
            reads::lock().on_event_record(args[0], args[1])
        }
        id::EventDestroy | id::CuEventDestroy if ret == 0 => {
            reads::lock().on_event_destroy(args[0])
        }
        // Recorded over a whole context: no one stream's reads, so forgotten (a
        // synchronisation with it then covers every read: `event_cover`).
        id::ExecutionCtxRecordEvent | id::DrvCtxRecordEvent if ret == 0 => {
            reads::lock().on_event_destroy(args[1])
        }
        _ if !reads::any() => {}
        id::DeviceSynchronize
        | id::CtxSynchronize
        | id::CtxSynchronizeV2
        | id::ExecutionCtxSynchronize => reads::wait_covered(|_| pending::ALL),
        // Blocking copies, the runtime's and the driver's (nvcc's static runtime makes its
        // blocking copies of the driver's).
        id::Memcpy
        | id::Memcpy2D
        | id::Memcpy3D
        | id::MemcpyHtoD
        | id::MemcpyDtoH
        | id::CuMemcpy
        | id::DrvMemcpy2D
        | id::DrvMemcpy2DUnaligned
        | id::DrvMemcpy3D => reads::wait_covered(|_| Cover::DefaultStreams),
        id::StreamSynchronize | id::CuStreamSynchronize => {
            reads::wait_covered(|r| r.stream_cover(args[0]))
        }
        id::StreamQuery | id::CuStreamQuery if ret == 0 => {
            reads::wait_covered(|r| r.stream_cover(args[0]))
        }
        id::EventSynchronize | id::CuEventSynchronize => {
            reads::wait_covered(|r| r.event_cover(args[0]))
        }
        id::EventQuery | id::CuEventQuery if ret == 0 => {
            reads::wait_covered(|r| r.event_cover(args[0]))
        }
        _ => {}
    }
}

/// The exit handler, registered at the first deferred copy: after the runtime's own exit
/// handler was registered (the runtime had started), so ours runs before the runtime
/// tears the context down, and before capture's own (which finishes the log). (Fork is
/// `fork.rs`'s, which waits for every read before it takes the locks.)
fn install_hooks() {
    if HOOKS_INSTALLED.swap(true, Ordering::AcqRel) {
        return;
    }
    // SAFETY: registering plain extern "C" fns.
    unsafe {
        libc::atexit(drain_at_exit);
    }
}

/// At exit: waits up to `EXIT_WAIT` for every pending read; a copy still not complete
/// then is recorded as not recorded, with the reason; then waits for the outputs being
/// stored (no GPU wait is left in them), up to `EXIT_STORE_WAIT`.
extern "C" fn drain_at_exit() {
    let deadline = Instant::now() + EXIT_WAIT;
    let mut r = reads::lock();
    while !r.is_empty() && reads::wait_changed_until(&mut r, deadline) {}
    let abandoned: Vec<Ticket> = r
        .covered(pending::ALL)
        .into_iter()
        .filter(|&t| r.abandon(t))
        .collect();
    reads::counted(&r);
    drop(r);
    for t in abandoned {
        if let Some(note) = reader::abandon(t) {
            reader::write_output(
                &note,
                Err(format!(
                    "the program exited and the copy had not completed within {} s",
                    EXIT_WAIT.as_secs()
                )),
            );
        }
    }
    let deadline = Instant::now() + EXIT_STORE_WAIT;
    let mut r = reads::lock();
    while (!r.is_empty() || reads::storing_count() != 0)
        && reads::wait_changed_until(&mut r, deadline)
    {}
}
