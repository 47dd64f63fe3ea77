//! Outputs that never pass through a device-to-host copy: kernels writing mapped
//! (page-locked) host memory or managed memory, which the host reads after a
//! synchronisation. Launches note the allocations their arguments reach (`reach`);
//! after each synchronisation that completes some of them, the allocations they reached
//! are read, hashed, and recorded as `MappedOutput` records, one a piece of 16 MiB
//! (`pieces`: a piece the archive holds, unchanged since the last record or since a
//! launch's snapshot, is not stored again), right after the synchronisation's own
//! record, so replay compares at the same point.
//!
//! Each such launch also gets one of capture's events, recorded after it on its stream
//! (`events`): a launch no synchronisation capture followed has completed may still have
//! finished on the device (a blocking copy on the legacy default stream waits for every
//! blocking stream, and so do host functions and flags the program polls), and a launch
//! snapshot asks the events before it leaves memory out for a launch in flight
//! (`in_flight`). At most `EVENTS_KEPT` launches hold one; a launch without one counts
//! as running.
//!
//! Cost is bounded by `HRR_CAPTURE_MAPPED_OUTPUT_MAX` bytes a synchronisation: over it,
//! one incomplete `MappedOutput` record names the total and the cap (replay refuses it
//! by name), and capture says so on stderr once.

use std::collections::{HashMap, HashSet};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

use hrr_archive::api::{fid, id, semantic, ApiDesc, Vendor};
use hrr_archive::payload::PayloadWriter;
use hrr_archive::sync::{ForkLock, Mutex};

use crate::capturing::StreamCapture;
use crate::events::Event;
use crate::ffi::host_bytes;
use crate::in_flight::InFlight;
use crate::pending::{Cover, ALL};
use crate::reach::{Completed, Reaches};
use crate::state::{self, Capture};

#[derive(Default)]
struct Tracker {
    reaches: Reaches,
    /// Launch sequence id -> capture's event recorded after it, while it is open.
    events: HashMap<u64, Event>,
    /// Events taken from launches still open (a HIP stream began capturing), pooled again
    /// at the next synchronisation: a snapshot asking one meanwhile must not find it
    /// recorded again after other work.
    retired: Vec<Event>,
}

/// Launches holding one of capture's events at most.
const EVENTS_KEPT: usize = 4096;

static TRACKER: Mutex<Option<Tracker>> = Mutex::new(None);
/// Set once any launch reached mapped or managed memory: until then a synchronisation
/// costs one relaxed load.
static ANY: AtomicBool = AtomicBool::new(false);
static OVER_CAP_SAID: AtomicBool = AtomicBool::new(false);

fn with<R>(f: impl FnOnce(&mut Tracker) -> R) -> R {
    let mut g = TRACKER.lock();
    let t = g.get_or_insert_with(Tracker::default);
    f(t)
}

/// A successful launch by `api` on `stream`, recorded at `seq`, whose arguments point
/// into the mapped or managed allocations `allocs` (host-readable start, size).
pub fn note_launch(api: &str, stream: u64, seq: Option<u64>, allocs: &[(u64, u64)]) {
    let Some(seq) = seq.filter(|_| !allocs.is_empty()) else {
        return;
    };
    ANY.store(true, Ordering::Relaxed);
    let room = with(|t| t.events.len() < EVENTS_KEPT);
    // Recorded before the tracker's lock is taken again: a leaf lock is held across no
    // runtime call.
    let event = room.then(|| completion_event(api, stream)).flatten();
    with(|t| {
        t.reaches.launch(stream, seq, allocs);
        if let Some(e) = event {
            t.events.insert(seq, e);
        }
    });
}

/// One of capture's events recorded on `stream` after a launch by `api`, where capture
/// can record one there: a driver launch beside a shared runtime gets none (its stream
/// may be of a context of the program's own, and the runtime's refusal would be left as
/// the program's last error: `events::serve_driver_rows`).
fn completion_event(api: &str, stream: u64) -> Option<Event> {
    let (vendor, driver) = if api.starts_with("hip") {
        (Vendor::Hip, false)
    } else {
        (
            Vendor::Cuda,
            api.starts_with("cu") && !api.starts_with("cuda"),
        )
    };
    crate::events::set_vendor(vendor);
    if driver && !crate::events::serve_driver_rows() {
        return None;
    }
    crate::events::record_after(stream)
}

/// Whether launches capture has not seen completed reach into `[start, start + size)`,
/// and if so, whether they are still running: capture's event after each of them is
/// asked, the latest first (a handle does not name one stream for good: the per-thread
/// default stream is each thread's own, and a destroyed stream's handle is handed out
/// again). Finished: each stream's latest, for replay to complete.
pub fn in_flight(start: u64, size: u64) -> InFlight {
    if !ANY.load(Ordering::Relaxed) {
        return InFlight::Settled;
    }
    let open: Vec<(u64, u64, Option<Event>)> = with(|t| {
        t.reaches
            .open_reaching(start, size)
            .into_iter()
            .map(|(stream, seq)| (stream, seq, t.events.get(&seq).copied()))
            .collect()
    });
    if open.is_empty() {
        return InFlight::Settled;
    }
    // Asked outside the tracker's lock.
    for &(_, seq, event) in &open {
        if !event.is_some_and(crate::events::is_complete) {
            return InFlight::Running(seq);
        }
    }
    let mut latest: Vec<(u64, u64)> = Vec::new();
    for (stream, seq, _) in open {
        if !latest.iter().any(|&(s, _)| s == stream) {
            latest.push((stream, seq));
        }
    }
    latest.sort_unstable();
    InFlight::Finished(latest)
}

/// Before HIP's `hipStreamBeginCapture` on `stream`: the events of the launches open there
/// are taken unasked (HIP would invalidate the capture at a query of an event last
/// recorded on a capturing stream); those launches count as running until a
/// synchronisation completes them.
pub fn before_hip_capture(stream: u64) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    with(|t| {
        let on_stream: HashSet<u64> = t.reaches.open_on(stream);
        for seq in on_stream {
            if let Some(e) = t.events.remove(&seq) {
                t.retired.push(e);
            }
        }
    });
}

/// Takes the events of launches no longer open, to be given back outside the lock.
fn release_events(t: &mut Tracker) -> Vec<Event> {
    let retired = std::mem::take(&mut t.retired);
    if t.events.is_empty() {
        return retired;
    }
    let open: HashSet<u64> = t.reaches.open_launches();
    let done: Vec<u64> = t
        .events
        .keys()
        .copied()
        .filter(|seq| !open.contains(seq))
        .collect();
    done.iter()
        .filter_map(|seq| t.events.remove(seq))
        .chain(retired)
        .collect()
}

fn give_back(events: Vec<Event>) {
    events.into_iter().for_each(crate::events::give_back);
}

/// The tracker's lock (a leaf: held by nothing that takes another lock), for the fork
/// protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 1] {
    [&TRACKER]
}

/// A forked child starts with nothing noted: its parent's launches are not its own.
pub fn fork_child_forget() {
    *TRACKER.lock() = None;
}

/// What a table row's call completes of the launches noted, if it is a synchronisation
/// the program can observe (the same rows `outputs::after_row` waits at).
fn cover_of(t: &Reaches, row: u16, args: &[u64], ret: c_int) -> Option<Cover> {
    if ret != 0 {
        return None;
    }
    Some(match row {
        id::DeviceSynchronize
        | id::CtxSynchronize
        | id::CtxSynchronizeV2
        | id::ExecutionCtxSynchronize => ALL,
        id::Memcpy
        | id::Memcpy2D
        | id::Memcpy3D
        | id::MemcpyHtoD
        | id::MemcpyDtoH
        | id::MemcpyDtoD
        | id::CuMemcpy
        | id::DrvMemcpy2D
        | id::DrvMemcpy3D => Cover::DefaultStreams,
        id::StreamSynchronize | id::CuStreamSynchronize | id::StreamQuery | id::CuStreamQuery => {
            t.stream_cover(args[0])
        }
        id::EventSynchronize | id::CuEventSynchronize | id::EventQuery | id::CuEventQuery => {
            t.event_cover(args[0])
        }
        _ => return None,
    })
}

/// After a table row's record (at `seq`): notes an event's record point, and after a
/// synchronisation records the mapped and managed allocations the launches it completed
/// reached.
pub fn after_row(
    cap: &Capture,
    api: &str,
    desc: &ApiDesc,
    args: &[u64],
    ret: c_int,
    seq: Option<u64>,
) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    // A wait into a capturing stream is an edge of the graph being captured, not of the
    // stream's own work (asked before the tracker's lock is taken: a leaf lock is held
    // across no runtime call).
    // A per-thread default stream form (HIP's `_spt` rows) counts as its base row.
    let row = hrr_archive::api::hip_abi::base_row(desc.id);
    let joins = matches!(
        row,
        id::StreamWaitEvent | id::CuStreamWaitEvent | id::StreamWaitEventSpt
    ) && ret == 0
        && stream_runs_its_work(api, args[0]);
    // A HIP stream that waited into a capture (a fork of it) captures now: its launches'
    // events are not asked again (HIP would invalidate the capture).
    let forked = api.starts_with("hip")
        && matches!(row, id::StreamWaitEvent | id::StreamWaitEventSpt)
        && ret == 0
        && !joins;
    if forked {
        before_hip_capture(args[0]);
    }
    let (done, released) = with(|t| match completed_by(t, row, args, ret, joins) {
        // Only a synchronisation closes launches, and with them their events.
        Some(done) => (done, release_events(t)),
        None => (Vec::new(), Vec::new()),
    });
    give_back(released);
    if done.is_empty() {
        return;
    }
    record_completed(cap, seq.unwrap_or(u64::MAX), api, &done);
}

/// What row `row`'s call changes in the tracker (`joins`: a wait of a stream that runs
/// its work); for a synchronisation, the allocations it completed (None: the row is not
/// one, and closed no launch).
fn completed_by(
    t: &mut Tracker,
    row: u16,
    args: &[u64],
    ret: c_int,
    joins: bool,
) -> Option<Vec<Completed>> {
    match row {
        id::EventRecord
        | id::CuEventRecord
        | id::EventRecordWithFlags
        | id::DrvEventRecordWithFlags
            if ret == 0 =>
        {
            t.reaches.event_recorded(args[0], args[1]);
            None
        }
        _ if joins => {
            t.reaches.stream_waited(args[0], args[1]);
            None
        }
        id::EventDestroy | id::CuEventDestroy if ret == 0 => {
            t.reaches.event_destroyed(args[0]);
            None
        }
        // Recorded over a whole context: every launch issued before it, as an event of
        // a default stream covers (`event_cover`).
        id::ExecutionCtxRecordEvent | id::DrvCtxRecordEvent if ret == 0 => {
            t.reaches.event_recorded(args[1], 0);
            None
        }
        id::StreamDestroy | id::CuStreamDestroy if ret == 0 => {
            t.reaches.stream_destroyed(args[0]);
            None
        }
        // The reset destroyed capture's events too (`events::forget_all`).
        a if hrr_archive::api::resets_device(a) && ret == 0 => {
            *t = Tracker::default();
            None
        }
        // A context destroyed takes capture's events in it along: none is asked again
        // (its launches, and other contexts', count as running until a synchronisation).
        id::CtxDestroy if ret == 0 => {
            t.events.clear();
            t.retired.clear();
            None
        }
        _ => cover_of(&t.reaches, row, args, ret).map(|c| t.reaches.complete(c)),
    }
}

/// Whether `stream` runs what is issued to it now (it is not capturing into a graph).
fn stream_runs_its_work(api: &str, stream: u64) -> bool {
    let vendor = if api.starts_with("hip") {
        Vendor::Hip
    } else {
        Vendor::Cuda
    };
    crate::capturing::stream_capture(vendor, stream) == StreamCapture::Idle
}

/// Records each completed allocation still live, or one incomplete record when their
/// bytes exceed the cap.
fn record_completed(cap: &Capture, sync_seq: u64, api: &str, done: &[Completed]) {
    // Only allocations still live as they were: a freed one can no longer be read by
    // the program either.
    let live: Vec<&Completed> = done
        .iter()
        .filter(|c| {
            cap.allocs
                .lookup(c.start)
                .is_some_and(|(s, n, _)| s == c.start && n == c.size)
        })
        .collect();
    let total: u64 = live.iter().map(|c| c.size).sum();
    if total > cap.mapped_output_max {
        let why = format!(
            "mapped or managed memory written by kernels and completed by {api} (seq {sync_seq}): {total} bytes in {} allocation(s) exceed the cap ({} bytes, HRR_CAPTURE_MAPPED_OUTPUT_MAX): not recorded, so not checked",
            live.len(),
            cap.mapped_output_max
        );
        if !OVER_CAP_SAID.swap(true, Ordering::Relaxed) {
            state::note(&why);
        }
        let mut p = PayloadWriter::new();
        p.u64(fid::MAPPED_SYNC, sync_seq)
            .u64(fid::MAPPED_SIZE, total);
        cap.record(semantic::MAPPED_OUTPUT, 0, &p, Some(&why), "MappedOutput");
        return;
    }
    for c in live {
        // A copy's pending read of these bytes first.
        crate::outputs::wait_overlapping(c.start, c.start.saturating_add(c.size));
        // SAFETY: a live, host-readable allocation of `size` bytes from the allocation
        // table (page-locked host memory, or managed memory after the synchronisation
        // that completed the kernels writing it).
        let mem = unsafe { host_bytes(c.start, c.size) };
        // Each piece read once, into a copy: its name and its blob are of the same bytes
        // even if a kernel this synchronisation did not complete writes the allocation
        // meanwhile. Pieces the archive holds (unchanged since the last record, or since
        // a launch's snapshot) are named by their hash alone.
        let pieces = crate::pieces::store(
            cap.writer(),
            c.start,
            mem,
            crate::pieces::Source::Program,
            crate::pieces::Likely::New,
        );
        let whole = pieces.len() == 1;
        for piece in pieces {
            let mut p = PayloadWriter::new();
            p.devptr(fid::MAPPED_START, piece.at)
                .u64(fid::MAPPED_SIZE, piece.len)
                .u64(fid::MAPPED_LAUNCH, c.launch_seq)
                .u64(fid::MAPPED_SYNC, sync_seq);
            if !whole {
                p.u64(fid::MAPPED_ALLOCATION, c.start);
            }
            let failure = match piece.blob {
                Ok(r) => {
                    p.blob(fid::MAPPED_BYTES, r);
                    None
                }
                Err(e) => Some(format!("mapped output not recorded: {e}")),
            };
            cap.record(
                semantic::MAPPED_OUTPUT,
                0,
                &p,
                failure.as_deref(),
                "MappedOutput",
            );
        }
    }
}

/// An allocation leaving the table (freed, unregistered): its reaches and last record
/// are forgotten (a new allocation may take its address).
pub fn forget(start: u64) {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    let released = with(|t| {
        t.reaches.forget(start);
        release_events(t)
    });
    give_back(released);
}
