//! The reader threads: each takes a copy whose output is to be recorded, waits for the
//! event capture recorded after it, gathers the destination's bytes into a snapshot of
//! its own (from then on the program may touch that memory again), hashes and stores
//! them (the blob store writes a content once: a repeated output costs a hash), and
//! appends the `CopyOutput` record naming the copy's sequence id, or, when the bytes
//! could not be read, the record flagged incomplete with the reason.
//!
//! A copy that completed before its call returned (a blocking copy into page-locked
//! memory) arrives already snapshotted by the program's thread: only the hashing and
//! storing are left to a reader. A destination that repeats one 16-byte unit (a
//! constant result) is not copied at all: its fill is found in one pass that stops at the
//! first differing byte, and stored as a 32-byte blob (`hrr_archive::fill`). Snapshots come from a small pool (no page faults on
//! reuse); their bytes in flight are bounded, and the program's thread waits for room.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};

use hrr_archive::api::{fid, semantic, BLOB_FIELD};
use hrr_archive::fill::Fill;
use hrr_archive::payload::{BlobRef, PayloadWriter};
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::sync::{Condvar, ForkLock, Mutex};
use hrr_archive::ProcessWriter;

use crate::events;
use crate::pending::{self, Ticket};
use crate::reads;
use crate::regions::HostRegion;

/// Reader threads.
const READERS: usize = 4;
/// Outputs larger than this are hashed in place (their read stays pending until stored).
pub const SNAPSHOT_MAX: u64 = 256 << 20;
/// Snapshot bytes in flight at most (gathered, not yet stored).
const SNAPSHOT_BYTES_MAX: usize = 1 << 30;
/// Snapshot bytes kept for reuse at most.
const POOL_BYTES_MAX: usize = 512 << 20;
/// Copies of at least this many bytes are gathered by several threads.
const PARALLEL_COPY_BYTES: usize = 8 << 20;

/// Bytes gathered from a copy's destination: `len` bytes at the start of `buf`, or,
/// when they repeat one unit (`Fill`), that fill alone (nothing copied, `len` 0).
pub struct Snapshot {
    buf: Vec<u8>,
    len: usize,
    fill: Option<Fill>,
}

/// What the reader is given to read.
pub enum Source {
    /// An asynchronous copy: wait for `event`, then gather `region` (pending read `ticket`).
    Pending {
        ticket: Ticket,
        event: events::Event,
        region: HostRegion,
    },
    /// A copy complete when its call returned, gathered already.
    Gathered(Snapshot),
}

/// What a `CopyOutput` record names: the copy's sequence id, its destination's field id,
/// the graph node whose output it is (a graph launch's), its API (for the manifest's
/// reason), the writer.
#[derive(Clone, Copy)]
pub struct Note {
    pub seq: u64,
    pub fid: u16,
    pub node: Option<u64>,
    pub api: &'static str,
    pub writer: &'static ProcessWriter,
}

struct Jobs {
    queue: VecDeque<(Note, Source)>,
    /// The notes of pending reads, until a reader takes them (exit records an abandoned
    /// read from its note).
    notes: BTreeMap<Ticket, Note>,
    readers: usize,
}

static JOBS: Mutex<Jobs> = Mutex::new(Jobs {
    queue: VecDeque::new(),
    notes: BTreeMap::new(),
    readers: 0,
});
static JOB_READY: Condvar = Condvar::new();

struct Pool {
    free: Vec<Vec<u8>>,
    /// Snapshot bytes gathered and not yet stored.
    in_flight: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    in_flight: 0,
});
static ROOM: Condvar = Condvar::new();

/// Hands a copy's output to a reader.
pub fn submit(note: Note, source: Source) {
    let mut jobs = JOBS.lock();
    if let Source::Pending { ticket, .. } = &source {
        jobs.notes.insert(*ticket, note);
    }
    jobs.queue.push_back((note, source));
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

/// Exit gave up the pending read `t`: its note, and its job if no reader took it yet.
pub fn abandon(t: Ticket) -> Option<Note> {
    let mut jobs = JOBS.lock();
    jobs.queue
        .retain(|(_, s)| !matches!(s, Source::Pending { ticket, .. } if *ticket == t));
    jobs.notes.remove(&t)
}

fn reader() {
    // For good: a reader only ever waits on capture's own events.
    let _ = events::relax_thread();
    loop {
        let (note, source) = {
            let mut jobs = JOBS.lock();
            loop {
                if let Some(j) = jobs.queue.pop_front() {
                    break j;
                }
                JOB_READY.wait(&mut jobs);
            }
        };
        match source {
            Source::Pending {
                ticket,
                event,
                region,
            } => read_pending(note, ticket, event, region),
            Source::Gathered(s) => {
                let outcome = store_snapshot(note.writer, &s);
                write_output(&note, outcome);
                give_back(s);
                reads::stored();
            }
        }
    }
}

fn read_pending(note: Note, ticket: Ticket, event: events::Event, region: HostRegion) {
    let waited = events::wait(event);
    // Claimed under the table's lock: a read exit abandoned meanwhile is exit's to record.
    if !reads::lock().start_reading(ticket) {
        events::give_back(event);
        return;
    }
    JOBS.lock().notes.remove(&ticket);
    reads::storing();
    let (start, end) = pending::span(&region);
    let outcome = if waited != 0 {
        reads::finish(ticket);
        Err(format!(
            "waiting for the copy to complete failed ({waited})"
        ))
    } else if end - start <= SNAPSHOT_MAX {
        // SAFETY: the copy into this page-locked region completed (its event did), and
        // the program's hooks wait for this read before it may touch the region again.
        let s = unsafe { snapshot(&region, false) };
        reads::finish(ticket);
        s.and_then(|s| {
            let r = store_snapshot(note.writer, &s);
            give_back(s);
            r
        })
    } else {
        // SAFETY: as above; the read stays pending until the bytes are stored.
        let r = unsafe { region.gather() }
            .map_err(|e| e.to_string())
            .and_then(|b| store(note.writer, &b));
        reads::finish(ticket);
        r
    };
    events::give_back(event);
    write_output(&note, outcome);
    reads::stored();
}

/// Stores a snapshot: its fill, or its bytes.
fn store_snapshot(w: &ProcessWriter, s: &Snapshot) -> Result<BlobRef, String> {
    match &s.fill {
        Some(f) => match catch_unwind(AssertUnwindSafe(|| w.put_fill(f))) {
            Ok(r) => r.map_err(|e| e.to_string()),
            Err(_) => Err("internal error while storing the bytes".into()),
        },
        None => store(w, &s.buf[..s.len]),
    }
}

/// Hashes and stores bytes (a content the writer holds already costs only the hash).
fn store(w: &ProcessWriter, bytes: &[u8]) -> Result<BlobRef, String> {
    match catch_unwind(AssertUnwindSafe(|| w.put_blob(bytes))) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err("internal error while storing the bytes".into()),
    }
}

/// Copies the bytes of `region` into a snapshot; the program's thread (`wait_for_room`)
/// first waits while too many snapshot bytes are in flight (a reader never waits: the
/// bytes in flight are stored by readers, and its own snapshot is one of at most
/// `READERS`).
///
/// # Safety
/// As [`HostRegion::gather`]: the region holds the completed copy's bytes and nothing
/// writes it meanwhile.
pub unsafe fn snapshot(region: &HostRegion, wait_for_room: bool) -> Result<Snapshot, String> {
    // SAFETY: the caller's contract.
    let bytes = unsafe { region.gather() }.map_err(|e| e.to_string())?;
    // Content that repeats one unit (a constant result) is recorded as that unit: no
    // copy, no room to wait for, and a 32-byte blob.
    if let Some(fill) = Fill::detect(&bytes) {
        return Ok(Snapshot {
            buf: Vec::new(),
            len: 0,
            fill: Some(fill),
        });
    }
    let len = bytes.len();
    let mut buf = {
        let mut p = POOL.lock();
        while wait_for_room && p.in_flight > 0 && p.in_flight + len > SNAPSHOT_BYTES_MAX {
            ROOM.wait(&mut p);
        }
        p.in_flight += len;
        match p.free.iter().position(|b| b.len() >= len) {
            Some(i) => p.free.swap_remove(i),
            None => Vec::new(),
        }
    };
    match bytes {
        Cow::Owned(v) if buf.is_empty() => buf = v,
        b => {
            if buf.len() < len {
                buf = vec![0u8; len];
            }
            copy_parallel(&mut buf[..len], &b);
        }
    }
    Ok(Snapshot {
        buf,
        len,
        fill: None,
    })
}

/// `dst.copy_from_slice(src)`, on several threads for large copies.
fn copy_parallel(dst: &mut [u8], src: &[u8]) {
    if src.len() < PARALLEL_COPY_BYTES {
        return dst.copy_from_slice(src);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let step = src.len().div_ceil(threads);
    std::thread::scope(|s| {
        for (d, x) in dst.chunks_mut(step).zip(src.chunks(step)) {
            s.spawn(move || d.copy_from_slice(x));
        }
    });
}

/// A snapshot no output will be made of.
pub fn discard(s: Snapshot) {
    give_back(s);
}

fn give_back(s: Snapshot) {
    let mut p = POOL.lock();
    p.in_flight -= s.len;
    let kept: usize = p.free.iter().map(Vec::len).sum();
    if s.buf.capacity() > 0 && kept + s.buf.len() <= POOL_BYTES_MAX {
        p.free.push(s.buf);
    }
    ROOM.notify_all();
}

/// Appends the `CopyOutput` record of `note`: its blob, or the reason it has none.
pub fn write_output(note: &Note, outcome: Result<BlobRef, String>) {
    let mut p = PayloadWriter::new();
    p.u64(fid::COPY_SEQ, note.seq)
        .u64(fid::COPY_FIELD, note.fid as u64);
    if let Some(n) = note.node {
        p.u64(fid::COPY_NODE, n);
    }
    let node = note
        .node
        .map(|n| format!(" (D2H node seq {n})"))
        .unwrap_or_default();
    let why = match outcome {
        Ok(r) => {
            p.blob(BLOB_FIELD | note.fid, r);
            None
        }
        Err(e) => Some(format!(
            "the expected output of seq {} {}{node} was not recorded: {e}",
            note.seq, note.api
        )),
    };
    let flags = if why.is_some() {
        RECORD_FLAG_INCOMPLETE
    } else {
        0
    };
    let tid = hrr_archive::writer::current_tid();
    let seq = note
        .writer
        .append(semantic::COPY_OUTPUT, flags, tid, 0, p.as_bytes());
    if let (Some(s), Some(why)) = (seq, why) {
        note.writer.note_capture_failure(s, note.api, &why);
    }
}

/// The queue's and the pool's locks, in their order, for the fork protocol (`fork.rs`).
pub fn fork_locks() -> [&'static dyn ForkLock; 2] {
    [&JOBS, &POOL]
}

/// In a forked child, its locks reset: the parent's readers did not survive the fork.
pub fn fork_child_forget() {
    let mut jobs = JOBS.lock();
    jobs.queue.clear();
    jobs.notes.clear();
    jobs.readers = 0;
    POOL.lock().in_flight = 0;
}
