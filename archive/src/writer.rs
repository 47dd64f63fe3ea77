//! The archive writer used by capture: one `ProcessWriter` per process that uses the GPU.
//!
//! Rules it owns:
//! - Appending an event takes one uncontended lock and no system call; bytes reach the
//!   file when the buffer fills or the flush interval passes (then with fsync), so a killed
//!   process loses at most one interval.
//! - Blobs and code objects are content-addressed and stored once (`blobs.rs`).
//! - `finish` writes the trailer and `complete: true`; anything arriving later (a late call
//!   from another thread, a wrapped function pointer) is dropped and counted.
//! - A fatal signal loses nothing appended before it (`eventlog.rs`: the handler writes
//!   the buffer, or leaves it to the interrupted thread when that thread holds it).
//! - Fork: lock order is `file` → `buf` → `blobs` → `meta`. `fork_prepare` takes them all
//!   in that order; the parent releases them; the child abandons the parent's writer (its
//!   buffered events belong to the parent) and opens its own `pid-<pid>/` when it first
//!   records.
//! - Disk space: refuse to start under the reserve; a write that would cut into it stops
//!   recording (archive incomplete) after writing the whole records that fit, and room for
//!   the final manifest ([`MANIFEST_ROOM`]) is always kept so the stop reason reaches the
//!   disk, with a reserve of 0 too. The captured program is never affected.

mod blobs;
mod content;
mod eventlog;
mod flusher;
mod fork;
mod manifests;
mod room;

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::raw::c_int;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::sync::{Condvar, Mutex};

use crate::blob::{self, Compression};
use crate::codestore::CodeStore;
use crate::diskspace::{self, ReservePolicy};
use crate::fill::Fill;
use crate::hash::ContentHash;
use crate::manifest::{ProcessEntry, ProcessManifest, SettingsRecord, EVENTS_FILE};
use crate::record::{self, RecordHeader, TRAILER_API_ID};
use crate::safefs;
use crate::{ArchiveError, Result};
use blobs::BlobStore;
use eventlog::EventLog;
pub use eventlog::{current_tid, note_fork_in_child, SignalFlush};
use manifests::register_process;
pub use manifests::set_manifest_hook;
use room::whole_records_within;

pub use room::MANIFEST_ROOM;

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
    /// The code-object store shared by this machine's archives (`HRR_CAPTURE_CODE_STORE`):
    /// code objects go there, once, instead of into the archive.
    pub code_store: Option<PathBuf>,
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
            code_store: None,
        }
    }
}

/// What `finish` reports (capture prints it in its exit notice).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub dir: PathBuf,
    /// Events in the log on disk.
    pub events: u64,
    pub blobs: u64,
    pub blob_bytes: u64,
    pub code_objects: u64,
    /// Of `code_objects`, those in the shared code store rather than in the archive.
    pub code_objects_in_store: u64,
    /// Why the configured code store was not used (code objects then go into the
    /// archive), if it was not.
    pub code_store_refused: Option<String>,
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
    // Lock order: log.file, log.buf, store's index, meta.
    log: EventLog,
    store: BlobStore,
    /// Why `settings.code_store` is not used, if it is not.
    code_store_refused: Option<String>,
    meta: Mutex<ProcessManifest>,
    stopped: AtomicBool,
    dropped_after_trailer: AtomicU64,
    dropped_after_stop: AtomicU64,
    blob_referenced_bytes: AtomicU64,
    /// Set while the flusher thread runs: a full buffer then wakes it instead of making
    /// the appending thread write.
    flusher_running: AtomicBool,
    flush_wake: Mutex<bool>,
    flush_cv: Condvar,
    /// The names of the fills stored last (`put_fill`).
    fill_names: Mutex<std::collections::HashMap<Fill, ContentHash>>,
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

/// Creates this program's process directory: `pid-<pid>`, or, when that name is taken
/// (the same pid recorded before an exec, or a pid reused by an earlier run into the same
/// directory, or anything planted there), `pid-<pid>.2`, `.3`, ... A name that exists is
/// never entered, whatever it is.
fn create_process_dir(root: &Path, pid: u32) -> Result<(String, PathBuf)> {
    for image in 1..=crate::manifest::MAX_IMAGES_PER_PID {
        let name = crate::manifest::process_dir_name(pid, image);
        let dir = root.join(&name);
        match fs::create_dir(&dir) {
            Ok(()) => return Ok((name, dir)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(ArchiveError::io(&dir, "create process directory", e)),
        }
    }
    Err(ArchiveError::io(
        root.join(crate::manifest::process_dir_name(
            pid,
            crate::manifest::MAX_IMAGES_PER_PID,
        )),
        "create process directory",
        std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!(
                "pid {pid} already has {} program images in this archive",
                crate::manifest::MAX_IMAGES_PER_PID
            ),
        ),
    ))
}

impl ProcessWriter {
    /// Opens this program's process directory (`pid-<pid>`, or `pid-<pid>.<k>` when an
    /// earlier program image of the same pid has it) and registers it in the root
    /// manifest. Refuses if free space is already under the reserve.
    pub fn create(root: &Path, settings: CaptureSettings, ppid: u32) -> Result<Arc<ProcessWriter>> {
        Self::create_for(root, settings, ppid, "")
    }

    /// As [`Self::create`], with the runtime vendor ("cuda", "hip") in the process
    /// manifest from the start: a capture killed before its first flush still names the
    /// runtime replay must load.
    pub fn create_for(
        root: &Path,
        settings: CaptureSettings,
        ppid: u32,
        vendor: &str,
    ) -> Result<Arc<ProcessWriter>> {
        let pid = std::process::id();
        // Decided before the first write: a root that is a symbolic link (or no directory)
        // is refused here, not after pid-N/ was made in the link's target.
        safefs::ensure_dir(root)?;
        drop(safefs::open_dir(root)?);
        let space = diskspace::space(root)?;
        let reserve_bytes = settings.reserve.reserve_bytes(space.total);
        let keep = reserve_bytes.saturating_add(MANIFEST_ROOM);
        if space.available < keep {
            return Err(ArchiveError::DiskReserve {
                path: root.to_path_buf(),
                free: space.available,
                needed: 0,
                reserve: keep,
            });
        }
        let (dir_name, dir) = create_process_dir(root, pid)?;
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
        let mut meta = ProcessManifest::new(pid, ppid);
        meta.runtime.vendor = vendor.into();
        // A store that cannot be used costs archive space, never the capture.
        let (code_store, code_store_refused) = match &settings.code_store {
            None => (None, None),
            Some(p) => match CodeStore::create(p) {
                Ok(s) => {
                    meta.code_store = Some(p.to_string_lossy().into_owned());
                    (Some(s), None)
                }
                Err(e) => (None, Some(e.to_string())),
            },
        };
        // Blobs leave room for the event buffer too, so the events that reference the
        // last blobs written still fit when recording stops.
        let blob_keep = keep.saturating_add(settings.buffer_bytes as u64);
        let writer = ProcessWriter {
            root: root.to_path_buf(),
            store: BlobStore::new(
                dir.clone(),
                settings.compression,
                settings.fsync && settings.fsync_blobs,
                blob_keep,
                code_store,
            ),
            code_store_refused,
            dir,
            pid,
            reserve_bytes,
            log: EventLog::new(file, settings.buffer_bytes, settings.fsync, monotonic_ns()),
            settings,
            meta: Mutex::new(meta),
            stopped: AtomicBool::new(false),
            dropped_after_trailer: AtomicU64::new(0),
            dropped_after_stop: AtomicU64::new(0),
            blob_referenced_bytes: AtomicU64::new(0),
            flusher_running: AtomicBool::new(false),
            flush_wake: Mutex::new(false),
            flush_cv: Condvar::new(),
            fill_names: Mutex::new(std::collections::HashMap::new()),
        };
        // The process manifest first, then the root manifest's entry: a process killed
        // in between leaves a directory readers ignore, never a listed one without one.
        writer.write_process_manifest(false)?;
        register_process(
            root,
            &settings_record,
            ProcessEntry {
                pid,
                ppid,
                dir: dir_name,
            },
        )?;
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
        !self.stopped.load(Ordering::Relaxed) && !self.log.buf.lock().closed
    }

    /// Records one event. Returns its sequence id, or `None` when it was dropped (after the
    /// trailer, or after capture stopped).
    #[inline]
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
            let mut b = self.log.buf.lock();
            if b.closed {
                let after_trailer = b.finalized;
                drop(b);
                if after_trailer {
                    self.dropped_after_trailer.fetch_add(1, Ordering::Relaxed);
                } else {
                    self.dropped_after_stop.fetch_add(1, Ordering::Relaxed);
                }
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
            // Unsealed: the thread that writes the buffer out computes the CRCs.
            record::encode_record_unsealed(&mut b.data, &h, payload);
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

    /// The whole records of `data` that fit on disk with the reserve and the manifest's
    /// room kept free: (bytes, records), and the refusal when not all of them fit.
    fn fitting(&self, data: &[u8], records: u64) -> (usize, u64, Option<ArchiveError>) {
        let keep = self.reserve_bytes.saturating_add(MANIFEST_ROOM);
        let available = match diskspace::space(&self.dir) {
            Ok(s) => s.available,
            Err(e) => return (0, 0, Some(e)),
        };
        let room = available.saturating_sub(keep);
        if room >= data.len() as u64 {
            // All of it fits: no need to walk the records to find where to cut.
            return (data.len(), records, None);
        }
        let (bytes, records) = whole_records_within(data, room.min(usize::MAX as u64) as usize);
        if bytes == data.len() {
            return (bytes, records, None);
        }
        let refusal = ArchiveError::DiskReserve {
            path: self.dir.clone(),
            free: available,
            needed: data.len() as u64,
            reserve: keep,
        };
        (bytes, records, Some(refusal))
    }

    /// Writes buffered events; fsyncs and refreshes the manifest when the interval passed.
    /// Safe to call from any thread at any time while capture runs. When the disk cannot
    /// take them all, the whole records that fit are written and recording stops: the log
    /// ends there (later events are dropped, so no sequence id is skipped).
    pub fn checkpoint(&self) {
        let mut file = self.log.file.lock();
        let (data, events, interval_due) = {
            let mut b = self.log.buf.lock();
            if b.closed || b.data.is_empty() {
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
        let mut data = data;
        record::seal_records(&mut data);
        let (bytes, kept, refused) = self.fitting(&data, events);
        if refused.is_some() {
            // Nothing appended after these may be written: the log must not skip ids.
            let mut b = self.log.buf.lock();
            b.closed = true;
            b.data.clear();
            let later = std::mem::take(&mut b.pending_events);
            self.dropped_after_stop.fetch_add(later, Ordering::Relaxed);
        }
        let written = file.write_all(&data[..bytes]);
        drop(file);
        // The fsync runs without the file lock: a thread whose buffer filled while the
        // disk was busy then waits only for its own write, never for this fsync.
        let result = written.and_then(|_| {
            if interval_due && self.settings.fsync {
                self.store.sync();
                self.log.datasync()
            } else {
                Ok(())
            }
        });
        {
            let mut b = self.log.buf.lock();
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
        self.meta.lock().event_count += kept;
        if let Some(e) = refused {
            self.stop(&format!(
                "{e}; the last {} buffered events were not written",
                events - kept
            ));
        } else if interval_due {
            let _ = self.write_process_manifest(false);
        }
    }

    /// Stops recording: later events and blobs are dropped and counted, the manifest says
    /// incomplete with the reason. Events appended before it are still written (at the
    /// next signal flush or at `finish`, as far as the disk takes them). The captured
    /// program is not affected.
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

    /// Ends the capture: writes buffered events, the trailer, and `complete: true` (or, if
    /// capture had stopped, the events appended before the stop that fit, `complete:
    /// false` with the reason and no trailer). Later events and blobs are dropped and
    /// counted. Idempotent.
    pub fn finish(&self) -> Result<Summary> {
        // Claimed blob writes land first, without the log's locks held (a signal handler
        // may wait for those, never for a blob).
        self.store.finalize();
        let mut file = self.log.file.lock();
        let (mut data, total, first, was_closed, pending) = {
            let mut b = self.log.buf.lock();
            let first = !b.finalized;
            let was_closed = b.closed;
            b.finalized = true;
            b.closed = true;
            let pending = std::mem::take(&mut b.pending_events);
            (
                std::mem::take(&mut b.data),
                b.next_seq,
                first,
                was_closed,
                pending,
            )
        };
        if first {
            record::seal_records(&mut data);
            if !self.stopped.load(Ordering::SeqCst) && !was_closed {
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
            let with_trailer = !self.stopped.load(Ordering::SeqCst) && !was_closed;
            let (bytes, records, refused) = self.fitting(&data, pending + u64::from(with_trailer));
            let written = file
                .write_all(&data[..bytes])
                .map_err(|e| ArchiveError::io(self.dir.join(EVENTS_FILE), "write", e));
            drop(file);
            let synced = written.and_then(|_| {
                if self.settings.fsync {
                    self.store.sync();
                    self.log
                        .datasync()
                        .map_err(|e| ArchiveError::io(self.dir.join(EVENTS_FILE), "fsync", e))
                } else {
                    Ok(())
                }
            });
            let events = if with_trailer && refused.is_none() {
                records - 1
            } else {
                records
            };
            match (synced, refused) {
                (Err(e), _) => self.stop(&e.to_string()),
                (Ok(()), Some(e)) => {
                    self.meta.lock().event_count += events;
                    self.stop(&format!("{e}; the last events were not written"));
                }
                (Ok(()), None) => self.meta.lock().event_count += events,
            }
            let complete = !self.stopped.load(Ordering::SeqCst);
            self.write_process_manifest(complete)?;
        } else {
            drop(file);
        }
        let m = self.meta.lock();
        Ok(Summary {
            dir: self.dir.clone(),
            events: m.event_count,
            blobs: m.blob_count,
            blob_bytes: m.blob_bytes,
            code_objects: m.code_object_count,
            code_objects_in_store: m.code_objects_in_store,
            code_store_refused: self.code_store_refused.clone(),
            complete: m.complete,
            stop_reason: m.stop_reason.clone(),
            dropped_after_trailer: self.dropped_after_trailer.load(Ordering::Relaxed),
            dropped_after_stop: self.dropped_after_stop.load(Ordering::Relaxed),
        })
    }

    /// The flush a fatal-signal handler runs (async-signal-safe: atomics, write(2),
    /// fsync(2), nanosleep(2); no allocation). Recording stops; every event appended
    /// before the signal reaches the log, also when the interrupted thread held the buffer
    /// ([`SignalFlush::Deferred`]: that thread writes it and raises `sig` again when it
    /// releases the buffer, so the handler must return without raising). No trailer:
    /// readers report the archive incomplete.
    pub fn flush_for_signal(&'static self, sig: c_int) -> SignalFlush {
        self.stopped.store(true, Ordering::SeqCst);
        self.log.flush_for_signal(sig)
    }

    /// Why the configured code store is not used (code objects then go into the
    /// archive), if it is not.
    pub fn code_store_refused(&self) -> Option<&str> {
        self.code_store_refused.as_deref()
    }

    /// What `_exit` runs (it skips atexit, so `finish` never comes): every appended event
    /// written and recording stopped, async-signal-safe like `flush_for_signal`, never
    /// waiting for a lock the calling thread holds (`_exit` may be called from a signal
    /// handler). No trailer: readers report the archive incomplete, every event in it.
    pub fn flush_at_exit(&self) -> SignalFlush {
        self.stopped.store(true, Ordering::SeqCst);
        self.log.flush_unless_held()
    }

    /// Writes what is buffered and stops recording, as a fatal signal would, from an
    /// ordinary thread. No trailer, so readers report the archive incomplete.
    pub fn emergency_flush(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.log.flush_and_close();
    }
}
