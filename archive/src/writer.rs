//! The archive writer used by capture: one `ProcessWriter` per process that uses the GPU.
//!
//! Rules it owns:
//! - Appending an event takes one uncontended mutex and no system call; bytes reach the
//!   file when the buffer fills or the flush interval passes (then with fsync), so a killed
//!   process loses at most one interval.
//! - Blobs are content-addressed, written under a temporary name and renamed. A content
//!   key is *claimed* before it is written: a second thread with the same bytes waits for
//!   the claim and never writes or reserves space for a second copy.
//! - `finish` writes the trailer and `complete: true`; anything arriving later (a late call
//!   from another thread, a wrapped function pointer) is dropped and counted.
//! - `emergency_flush` is async-signal-safe: try-locks only, raw write(2)/fsync(2).
//! - Fork: lock order is `file` → `buf` → `blobs` → `meta`. `fork_prepare` takes them all
//!   in that order; the parent releases them; the child abandons the parent's writer (its
//!   buffered events belong to the parent) and opens its own `pid-<pid>/`.
//! - Disk reserve: refuse to start under it; stop recording (archive incomplete) when a
//!   write would cut into it. The captured program is never affected.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::blob::{self, Compression};
use crate::diskspace::{self, ReservePolicy};
use crate::hash::ContentHash;
use crate::manifest::{
    self, CaptureFailure, ProcessEntry, ProcessManifest, RootManifest, RuntimeInfo, SettingsRecord,
    UnreplayableApi, EVENTS_FILE, MANIFEST_FILE,
};
use crate::payload::BlobRef;
use crate::record::{self, RecordHeader, TRAILER_API_ID};
use crate::safefs;
use crate::{ArchiveError, Limits, Result, FORMAT_VERSION};

/// Capture-time settings (from `HRR_CAPTURE_*` variables in capture).
#[derive(Clone, Debug)]
pub struct CaptureSettings {
    pub compression: Compression,
    /// Buffered events are written and fsync'd at least this often.
    pub flush_interval: Duration,
    /// Buffered events are written once the buffer holds this many bytes.
    pub buffer_bytes: usize,
    pub reserve: ReservePolicy,
    /// fsync the event log and manifests at each flush interval and at the end.
    pub fsync: bool,
    /// fsync blob files too (`HRR_CAPTURE_FSYNC=all`). Off by default: it writes every
    /// blob's bytes to the disk before the process may exit (a second for a few
    /// gigabytes), where the page cache already survives any crash of the program itself.
    /// After a machine crash, an event may name a blob that is short or corrupt; replay
    /// and `--repair` name it.
    pub fsync_blobs: bool,
}

impl Default for CaptureSettings {
    fn default() -> Self {
        CaptureSettings {
            compression: Compression::None,
            flush_interval: Duration::from_millis(250),
            buffer_bytes: 1 << 20,
            reserve: ReservePolicy::Default,
            fsync: true,
            fsync_blobs: false,
        }
    }
}

struct EventBuf {
    data: Vec<u8>,
    next_seq: u64,
    /// Events in `data`, not yet written.
    pending_events: u64,
    last_flush_ns: u64,
    finalized: bool,
    /// The buffer written last time, kept so a checkpoint swaps instead of allocating.
    spare: Vec<u8>,
}

struct BlobIndex {
    known: HashSet<ContentHash>,
    claims: HashSet<ContentHash>,
    finalized: bool,
}

/// What `finish` reports (capture prints it in its exit notice).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub dir: PathBuf,
    pub events: u64,
    pub blobs: u64,
    pub blob_bytes: u64,
    pub code_objects: u64,
    pub complete: bool,
    pub stop_reason: Option<String>,
    pub dropped_after_trailer: u64,
    pub dropped_after_stop: u64,
}

pub struct ProcessWriter {
    root: PathBuf,
    dir: PathBuf,
    pid: u32,
    settings: CaptureSettings,
    reserve_bytes: u64,
    raw_fd: AtomicI32,
    // Lock order: file, buf, blobs, meta.
    file: Mutex<File>,
    buf: Mutex<EventBuf>,
    blobs: Mutex<BlobIndex>,
    blob_cv: Condvar,
    meta: Mutex<ProcessManifest>,
    stopped: AtomicBool,
    dropped_after_trailer: AtomicU64,
    dropped_after_stop: AtomicU64,
    blob_count: AtomicU64,
    blob_bytes: AtomicU64,
    blob_stored_bytes: AtomicU64,
    blob_referenced_bytes: AtomicU64,
    code_objects: AtomicU64,
    /// Set while the flusher thread runs: a full buffer then wakes it instead of making
    /// the appending thread write.
    flusher_running: AtomicBool,
    flush_wake: Mutex<bool>,
    flush_cv: Condvar,
    /// Blobs written but not yet fsync'd (synced before the events that reference them).
    unsynced_blobs: Mutex<Vec<PathBuf>>,
}

/// What an append leaves to do after it released the buffer lock.
enum Due {
    No,
    WriteHere,
    WakeFlusher,
}

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC; vDSO, no system call).
pub fn monotonic_ns() -> u64 {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC) {
        Ok(ts) => (ts.tv_sec() as u64).saturating_mul(1_000_000_000) + ts.tv_nsec() as u64,
        Err(_) => 0,
    }
}

static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// (fork generation, tid): gettid is a system call; a launch-heavy program makes
    /// millions of calls, so each thread asks once (again after a fork).
    static TID: std::cell::Cell<(u64, u32)> = const { std::cell::Cell::new((u64::MAX, 0)) };
}

/// The calling thread's OS thread id.
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

/// Called in a forked child: every cached thread id belongs to the parent.
pub fn note_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}

fn process_dir_name(pid: u32) -> String {
    format!("pid-{pid}")
}

impl ProcessWriter {
    /// Opens `root/pid-<pid>/` for this process and registers it in the root manifest.
    /// Refuses if free space is already under the reserve, or if the directory exists.
    pub fn create(root: &Path, settings: CaptureSettings, ppid: u32) -> Result<Arc<ProcessWriter>> {
        let pid = std::process::id();
        fs::create_dir_all(root).map_err(|e| ArchiveError::io(root, "create directory", e))?;
        let space = diskspace::space(root)?;
        let reserve_bytes = settings.reserve.reserve_bytes(space.total);
        if space.available < reserve_bytes {
            return Err(ArchiveError::DiskReserve {
                path: root.to_path_buf(),
                free: space.available,
                needed: 0,
                reserve: reserve_bytes,
            });
        }
        let dir_name = process_dir_name(pid);
        let dir = root.join(&dir_name);
        fs::create_dir(&dir).map_err(|e| ArchiveError::io(&dir, "create process directory", e))?;
        for sub in [blob::BLOBS_DIR, blob::CODE_OBJECTS_DIR] {
            let p = dir.join(sub);
            fs::create_dir(&p).map_err(|e| ArchiveError::io(&p, "create directory", e))?;
        }
        let events_path = dir.join(EVENTS_FILE);
        let mut file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(&events_path)
            .map_err(|e| ArchiveError::io(&events_path, "create", e))?;
        file.write_all(&record::file_header())
            .map_err(|e| ArchiveError::io(&events_path, "write header", e))?;
        let settings_record = SettingsRecord {
            compression: settings.compression,
            flush_interval_ms: settings.flush_interval.as_millis() as u64,
            disk_reserve_bytes: reserve_bytes,
        };
        register_process(
            root,
            &settings_record,
            ProcessEntry {
                pid,
                ppid,
                dir: dir_name,
            },
        )?;
        let writer = ProcessWriter {
            root: root.to_path_buf(),
            dir,
            pid,
            reserve_bytes,
            raw_fd: AtomicI32::new(file.as_raw_fd()),
            file: Mutex::new(file),
            buf: Mutex::new(EventBuf {
                data: Vec::with_capacity(settings.buffer_bytes + 4096),
                next_seq: 0,
                pending_events: 0,
                last_flush_ns: monotonic_ns(),
                finalized: false,
                spare: Vec::with_capacity(settings.buffer_bytes + 4096),
            }),
            settings,
            blobs: Mutex::new(BlobIndex {
                known: HashSet::new(),
                claims: HashSet::new(),
                finalized: false,
            }),
            blob_cv: Condvar::new(),
            meta: Mutex::new(ProcessManifest::new(pid, ppid)),
            stopped: AtomicBool::new(false),
            dropped_after_trailer: AtomicU64::new(0),
            dropped_after_stop: AtomicU64::new(0),
            blob_count: AtomicU64::new(0),
            blob_bytes: AtomicU64::new(0),
            blob_stored_bytes: AtomicU64::new(0),
            blob_referenced_bytes: AtomicU64::new(0),
            code_objects: AtomicU64::new(0),
            flusher_running: AtomicBool::new(false),
            flush_wake: Mutex::new(false),
            flush_cv: Condvar::new(),
            unsynced_blobs: Mutex::new(Vec::new()),
        };
        writer.write_process_manifest(false)?;
        Ok(Arc::new(writer))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn pid(&self) -> u32 {
        self.pid
    }
    pub fn settings(&self) -> &CaptureSettings {
        &self.settings
    }
    pub fn is_recording(&self) -> bool {
        !self.stopped.load(Ordering::Relaxed) && !self.buf.lock().finalized
    }

    /// Records one event. Returns its sequence id, or `None` when it was dropped (after the
    /// trailer, or after capture stopped).
    pub fn append(
        &self,
        api_id: u16,
        flags: u16,
        tid: u32,
        ret: i32,
        payload: &[u8],
    ) -> Option<u64> {
        if self.stopped.load(Ordering::Relaxed) {
            self.dropped_after_stop.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let (seq, due) = {
            let mut b = self.buf.lock();
            if b.finalized {
                drop(b);
                self.dropped_after_trailer.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            let ts = monotonic_ns();
            let seq = b.next_seq;
            b.next_seq += 1;
            b.pending_events += 1;
            let h = RecordHeader {
                api_id,
                flags,
                seq,
                timestamp_ns: ts,
                tid,
                ret,
            };
            record::encode_record(&mut b.data, &h, payload);
            let len = b.data.len();
            let due = if len >= self.settings.buffer_bytes {
                // With a flusher the write happens there; the appending thread writes
                // itself only when the flusher falls behind by several buffers.
                if self.flusher_running.load(Ordering::Relaxed)
                    && len < 4 * self.settings.buffer_bytes
                {
                    Due::WakeFlusher
                } else {
                    Due::WriteHere
                }
            } else if !self.flusher_running.load(Ordering::Relaxed)
                && ts.saturating_sub(b.last_flush_ns)
                    >= self.settings.flush_interval.as_nanos() as u64
            {
                Due::WriteHere
            } else {
                Due::No
            };
            (seq, due)
        };
        match due {
            Due::No => {}
            Due::WriteHere => self.checkpoint(),
            Due::WakeFlusher => {
                let mut wake = self.flush_wake.lock();
                if !*wake {
                    *wake = true;
                    self.flush_cv.notify_one();
                }
            }
        }
        Some(seq)
    }

    /// Writes buffered events; fsyncs and refreshes the manifest when the interval passed.
    /// Safe to call from any thread at any time while capture runs.
    pub fn checkpoint(&self) {
        let mut file = self.file.lock();
        let (data, events, interval_due) = {
            let mut b = self.buf.lock();
            if b.finalized || b.data.is_empty() {
                return;
            }
            let now = monotonic_ns();
            let interval_due = now.saturating_sub(b.last_flush_ns)
                >= self.settings.flush_interval.as_nanos() as u64;
            if interval_due {
                b.last_flush_ns = now;
            }
            let events = std::mem::take(&mut b.pending_events);
            let spare = std::mem::take(&mut b.spare);
            (std::mem::replace(&mut b.data, spare), events, interval_due)
        };
        if let Err(e) = diskspace::check(
            &self.dir,
            ReservePolicy::Bytes(self.reserve_bytes),
            data.len() as u64,
        ) {
            drop(file);
            self.stop(&e.to_string());
            return;
        }
        let written = file.write_all(&data);
        drop(file);
        // The fsync runs without the file lock: a thread whose buffer filled while the
        // disk was busy then waits only for its own write, never for this fsync.
        let result = written.and_then(|_| {
            if interval_due && self.settings.fsync {
                self.sync_blobs();
                // SAFETY: fdatasync(2) on this writer's own events.bin descriptor, which lives
                // as long as `self.file`; a closed descriptor just fails with EBADF.
                match unsafe { libc::fdatasync(self.raw_fd.load(Ordering::SeqCst)) } {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            } else {
                Ok(())
            }
        });
        {
            let mut b = self.buf.lock();
            if b.spare.capacity() < data.capacity() {
                let mut data = data;
                data.clear();
                b.spare = data;
            }
        }
        if let Err(e) = result {
            self.stop(&format!(
                "writing {}: {e}",
                self.dir.join(EVENTS_FILE).display()
            ));
            return;
        }
        self.meta.lock().event_count += events;
        if interval_due {
            let _ = self.write_process_manifest(false);
        }
    }

    /// Stops recording: later events and blobs are dropped and counted, the manifest says
    /// incomplete with the reason. The captured program is not affected.
    pub fn stop(&self, reason: &str) {
        if self.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        {
            let mut m = self.meta.lock();
            m.stop_reason = Some(reason.to_string());
        }
        let _ = self.write_process_manifest(false);
    }

    pub fn stop_reason(&self) -> Option<String> {
        self.meta.lock().stop_reason.clone()
    }

    /// Stores host bytes as a blob and returns its reference. Identical content is stored
    /// once, also when several threads store it at the same time.
    pub fn put_blob(&self, data: &[u8]) -> Result<BlobRef> {
        let hash = ContentHash::of(data);
        self.put_content(hash, data, blob::blob_rel_path(&hash), false)?;
        self.blob_referenced_bytes
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(BlobRef {
            hash,
            len: data.len() as u64,
        })
    }

    /// Stores a device code object (fat binary, ELF, bundle) and returns its hash.
    pub fn put_code_object(&self, data: &[u8]) -> Result<ContentHash> {
        let hash = ContentHash::of(data);
        self.put_content(hash, data, blob::code_object_rel_path(&hash), true)?;
        Ok(hash)
    }

    fn put_content(
        &self,
        hash: ContentHash,
        data: &[u8],
        rel: PathBuf,
        is_code: bool,
    ) -> Result<()> {
        if self.stopped.load(Ordering::Relaxed) {
            self.dropped_after_stop.fetch_add(1, Ordering::Relaxed);
            return Err(ArchiveError::Finished);
        }
        {
            let mut idx = self.blobs.lock();
            loop {
                if idx.finalized {
                    drop(idx);
                    self.dropped_after_trailer.fetch_add(1, Ordering::Relaxed);
                    return Err(ArchiveError::Finished);
                }
                if idx.known.contains(&hash) {
                    return Ok(());
                }
                if idx.claims.contains(&hash) {
                    self.blob_cv.wait(&mut idx);
                    continue;
                }
                idx.claims.insert(hash);
                break;
            }
        }
        let result = self.write_content(data, &rel);
        let mut idx = self.blobs.lock();
        idx.claims.remove(&hash);
        if result.is_ok() {
            idx.known.insert(hash);
        }
        drop(idx);
        self.blob_cv.notify_all();
        match result {
            Ok(stored) => {
                if is_code {
                    self.code_objects.fetch_add(1, Ordering::Relaxed);
                } else {
                    self.blob_count.fetch_add(1, Ordering::Relaxed);
                    self.blob_bytes
                        .fetch_add(data.len() as u64, Ordering::Relaxed);
                    self.blob_stored_bytes.fetch_add(stored, Ordering::Relaxed);
                }
                Ok(())
            }
            Err(e) => {
                self.stop(&e.to_string());
                Err(e)
            }
        }
    }

    /// Writes one blob or code object (temporary name, then rename). It is not fsync'd
    /// here, on the program's thread: the next fsync'd checkpoint syncs every blob written
    /// since the last one before it syncs the events that reference them.
    fn write_content(&self, data: &[u8], rel: &Path) -> Result<u64> {
        let dest = self.dir.join(rel);
        let compressed;
        let header;
        let parts: [&[u8]; 2] = match self.settings.compression {
            blob::Compression::None => {
                header = blob::header(data.len() as u64, blob::Compression::None);
                [&header, data]
            }
            c => {
                compressed =
                    blob::encode(data, c).map_err(|e| ArchiveError::io(&dest, "compress", e))?;
                [&compressed, &[]]
            }
        };
        let stored = (parts[0].len() + parts[1].len()) as u64;
        diskspace::check(&self.dir, ReservePolicy::Bytes(self.reserve_bytes), stored)?;
        if let Some(parent) = dest.parent() {
            safefs::ensure_dir(parent)?;
        }
        blob::write_atomic_parts(&dest, &parts, false)?;
        if self.settings.fsync && self.settings.fsync_blobs {
            self.unsynced_blobs.lock().push(dest);
        }
        Ok(stored)
    }

    /// fsyncs the blobs written since the last call (and their directories' entries).
    fn sync_blobs(&self) {
        let paths = std::mem::take(&mut *self.unsynced_blobs.lock());
        let mut dirs = std::collections::BTreeSet::new();
        for p in paths {
            if let Ok(f) = File::open(&p) {
                let _ = f.sync_all();
            }
            if let Some(d) = p.parent() {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in dirs {
            if let Ok(f) = File::open(&d) {
                let _ = f.sync_all();
            }
        }
    }

    /// Lists an API that replay cannot reproduce. Returns true the first time for `api`
    /// (capture warns once).
    pub fn note_unreplayable(&self, api: &str, reason: &str) -> bool {
        let mut m = self.meta.lock();
        if let Some(u) = m.unreplayable_apis.iter_mut().find(|u| u.api == api) {
            u.count += 1;
            return false;
        }
        m.unreplayable_apis.push(UnreplayableApi {
            api: api.into(),
            reason: reason.into(),
            count: 1,
        });
        true
    }

    /// Records that the capture of one call failed (e.g. a payload it could not store whole).
    pub fn note_capture_failure(&self, seq: u64, api: &str, reason: &str) {
        let mut m = self.meta.lock();
        if m.capture_failures.len() < 1000 {
            m.capture_failures.push(CaptureFailure {
                seq,
                api: api.into(),
                reason: reason.into(),
            });
        }
    }

    pub fn update_runtime(&self, f: impl FnOnce(&mut RuntimeInfo)) {
        f(&mut self.meta.lock().runtime);
    }

    fn write_process_manifest(&self, complete: bool) -> Result<()> {
        let snapshot = {
            let mut m = self.meta.lock();
            m.complete = complete;
            m.blob_count = self.blob_count.load(Ordering::Relaxed);
            m.blob_bytes = self.blob_bytes.load(Ordering::Relaxed);
            m.blob_stored_bytes = self.blob_stored_bytes.load(Ordering::Relaxed);
            m.blob_referenced_bytes = self.blob_referenced_bytes.load(Ordering::Relaxed);
            m.code_object_count = self.code_objects.load(Ordering::Relaxed);
            m.dropped_after_trailer = self.dropped_after_trailer.load(Ordering::Relaxed);
            m.dropped_after_stop = self.dropped_after_stop.load(Ordering::Relaxed);
            m.clone()
        };
        manifest::write_manifest(
            &self.dir.join(MANIFEST_FILE),
            &snapshot,
            self.settings.fsync,
        )
    }

    /// Ends the capture: writes buffered events, the trailer, and `complete: true` (or, if
    /// capture had stopped, `complete: false` with the reason and no trailer). Later events
    /// and blobs are dropped and counted. Idempotent.
    pub fn finish(&self) -> Result<Summary> {
        let mut file = self.file.lock();
        let (mut data, total, first) = {
            let mut b = self.buf.lock();
            let first = !b.finalized;
            b.finalized = true;
            (std::mem::take(&mut b.data), b.next_seq, first)
        };
        {
            // Cut off blob claims, then wait for claimed writes to land so the manifest
            // counts every blob the trailer's events may reference.
            let mut idx = self.blobs.lock();
            idx.finalized = true;
            while !idx.claims.is_empty() {
                self.blob_cv.wait(&mut idx);
            }
        }
        let stopped = self.stopped.load(Ordering::SeqCst);
        if first {
            if !stopped {
                let trailer = record::trailer_payload(total);
                let h = RecordHeader {
                    api_id: TRAILER_API_ID,
                    flags: 0,
                    seq: total,
                    timestamp_ns: monotonic_ns(),
                    tid: current_tid(),
                    ret: 0,
                };
                record::encode_record(&mut data, &h, &trailer);
            }
            let write = diskspace::check(
                &self.dir,
                ReservePolicy::Bytes(self.reserve_bytes),
                data.len() as u64,
            )
            .and_then(|_| {
                file.write_all(&data)
                    .and_then(|_| {
                        if self.settings.fsync {
                            self.sync_blobs();
                            file.sync_all()
                        } else {
                            Ok(())
                        }
                    })
                    .map_err(|e| ArchiveError::io(self.dir.join(EVENTS_FILE), "write", e))
            });
            match write {
                Ok(()) => self.meta.lock().event_count = total,
                Err(e) => {
                    drop(file);
                    self.stop(&e.to_string());
                    file = self.file.lock();
                }
            }
            let complete = !self.stopped.load(Ordering::SeqCst);
            self.write_process_manifest(complete)?;
        }
        drop(file);
        let m = self.meta.lock();
        Ok(Summary {
            dir: self.dir.clone(),
            events: total,
            blobs: m.blob_count,
            blob_bytes: m.blob_bytes,
            code_objects: m.code_object_count,
            complete: m.complete,
            stop_reason: m.stop_reason.clone(),
            dropped_after_trailer: self.dropped_after_trailer.load(Ordering::Relaxed),
            dropped_after_stop: self.dropped_after_stop.load(Ordering::Relaxed),
        })
    }

    /// Async-signal-safe: writes what is buffered if no other thread holds the locks, then
    /// stops capture. The manifest on disk already says `complete: false`; no trailer is
    /// written, so readers report the archive incomplete. Allocates nothing.
    pub fn emergency_flush(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let fd = self.raw_fd.load(Ordering::SeqCst);
        if let Some(_file) = self.file.try_lock() {
            if let Some(mut b) = self.buf.try_lock() {
                if !b.finalized && !b.data.is_empty() {
                    let mut off = 0usize;
                    while off < b.data.len() {
                        // SAFETY: fd is this writer's open events.bin (O_APPEND); the slice
                        // is live for the call; write(2) is async-signal-safe.
                        let n = unsafe {
                            libc::write(fd, b.data[off..].as_ptr().cast(), b.data.len() - off)
                        };
                        if n <= 0 {
                            break;
                        }
                        off += n as usize;
                    }
                    b.data.clear();
                }
                b.finalized = true;
            }
        }
        // SAFETY: fsync(2) on our own fd is async-signal-safe; a closed fd just fails.
        unsafe {
            libc::fsync(fd);
        }
    }

    /// Fork support, step 1 (pthread_atfork prepare): takes every lock in the documented
    /// order so no lock is held mid-operation across the fork.
    pub fn fork_prepare(&self) {
        std::mem::forget(self.file.lock());
        std::mem::forget(self.buf.lock());
        std::mem::forget(self.blobs.lock());
        std::mem::forget(self.meta.lock());
    }

    /// Fork support, step 2 in the parent: releases what `fork_prepare` took.
    ///
    /// # Safety
    /// Must follow a `fork_prepare` on this writer by the same thread.
    pub unsafe fn fork_parent(&self) {
        // SAFETY: fork_prepare locked all four and forgot the guards (caller's contract).
        unsafe {
            self.meta.force_unlock();
            self.blobs.force_unlock();
            self.buf.force_unlock();
            self.file.force_unlock();
        }
    }

    /// Fork support, step 2 in the child: the parent's writer must be abandoned (never
    /// used or dropped: its locks are held and its buffer holds the parent's events).
    /// Closes the inherited log descriptor and opens the child's own `pid-<pid>/`.
    pub fn fork_child(&self) -> Result<Arc<ProcessWriter>> {
        let fd = self.raw_fd.swap(-1, Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: closing the inherited descriptor of the abandoned writer; nothing in the
            // child uses it (the writer is leaked, never dropped).
            unsafe {
                libc::close(fd);
            }
        }
        ProcessWriter::create(&self.root, self.settings.clone(), self.pid)
    }

    /// Starts a thread that flushes idle buffers every interval (so a program that stops
    /// making calls still gets its events to disk). It ends when the writer is dropped or
    /// finished.
    pub fn start_flusher(self: &Arc<Self>) {
        let weak: Weak<ProcessWriter> = Arc::downgrade(self);
        let interval = self.settings.flush_interval;
        self.flusher_running.store(true, Ordering::Relaxed);
        let spawned = std::thread::Builder::new()
            .name("hrr-flush".into())
            .spawn(move || loop {
                // Sleep until the interval passes or an appending thread fills the buffer.
                let woken_early = {
                    let Some(w) = weak.upgrade() else { return };
                    let mut wake = w.flush_wake.lock();
                    if !*wake {
                        w.flush_cv.wait_for(&mut wake, interval);
                    }
                    std::mem::take(&mut *wake)
                };
                let Some(w) = weak.upgrade() else { return };
                if w.buf.lock().finalized || w.stopped.load(Ordering::Relaxed) {
                    w.flusher_running.store(false, Ordering::Relaxed);
                    return;
                }
                if !woken_early {
                    // Make the checkpoint's interval test true for an idle buffer.
                    let mut b = w.buf.lock();
                    b.last_flush_ns = b.last_flush_ns.saturating_sub(interval.as_nanos() as u64);
                }
                w.checkpoint();
            });
        if spawned.is_err() {
            self.flusher_running.store(false, Ordering::Relaxed);
        }
    }
}

/// Adds a process to the root manifest, creating it if needed, under an exclusive flock
/// on `root/.lock` so concurrent processes (a parent and its children) never lose entries.
fn register_process(root: &Path, settings: &SettingsRecord, entry: ProcessEntry) -> Result<()> {
    let lock_path = root.join(".lock");
    let lock_file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(&lock_path)
        .map_err(|e| ArchiveError::io(&lock_path, "open", e))?;
    let _lock = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| ArchiveError::io(&lock_path, "lock", std::io::Error::from(e)))?;
    let path = root.join(MANIFEST_FILE);
    let mut m: RootManifest = if path.exists() {
        manifest::read_manifest(&path, &Limits::default())?
    } else {
        RootManifest {
            format_version: FORMAT_VERSION,
            tool_version: crate::TOOL_VERSION.into(),
            source_revision: crate::SOURCE_REVISION.into(),
            settings: settings.clone(),
            processes: Vec::new(),
        }
    };
    m.processes.retain(|p| p.pid != entry.pid);
    m.processes.push(entry);
    manifest::write_manifest(&path, &m, true)
}
