//! The writer's manifests: what the process manifest notes besides events (unreplayable
//! APIs, capture failures, the runtime, what capture's hook adds), writing it, and the
//! process's entry in the root manifest.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use super::ProcessWriter;
use crate::manifest::{
    self, CaptureFailure, ProcessEntry, ProcessManifest, RootManifest, RuntimeInfo, SettingsRecord,
    UnreplayableApi, MANIFEST_FILE,
};
use crate::{ArchiveError, Limits, Result, FORMAT_VERSION};

/// What the process using this writer adds to each process manifest it writes.
static MANIFEST_HOOK: OnceLock<fn(&mut ProcessManifest)> = OnceLock::new();

/// Installs, once per process, a function that fills in part of every process manifest
/// just before it is written (capture's count of the calls it does not model: counted
/// outside the writer, by atomics, and read at each manifest write). It runs under the
/// manifest's lock: it must not call the writer.
pub fn set_manifest_hook(hook: fn(&mut ProcessManifest)) {
    let _ = MANIFEST_HOOK.set(hook);
}

impl ProcessWriter {
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

    pub(super) fn write_process_manifest(&self, complete: bool) -> Result<()> {
        let counts = self.store.counts();
        let snapshot = {
            let mut m = self.meta.lock();
            m.complete = complete;
            m.blob_count = counts.blobs;
            m.blob_bytes = counts.blob_bytes;
            m.blob_stored_bytes = counts.blob_stored_bytes;
            m.blob_referenced_bytes = self.blob_referenced_bytes.load(Ordering::Relaxed);
            m.code_object_count = counts.code_objects;
            m.code_objects_in_store = counts.code_objects_in_store;
            m.dropped_after_trailer = self.dropped_after_trailer.load(Ordering::Relaxed);
            m.dropped_after_stop = self.dropped_after_stop.load(Ordering::Relaxed);
            if let Some(hook) = MANIFEST_HOOK.get() {
                hook(&mut m);
            }
            m.clone()
        };
        manifest::write_manifest(
            &self.dir.join(MANIFEST_FILE),
            &snapshot,
            self.settings.fsync,
        )
    }
}

/// Adds a process to the root manifest, creating it if needed, under an exclusive flock
/// on `root/.lock` so concurrent processes (a parent and its children) never lose entries.
pub(super) fn register_process(
    root: &Path,
    settings: &SettingsRecord,
    entry: ProcessEntry,
) -> Result<()> {
    let lock_path = root.join(".lock");
    let lock_file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        // A link planted at `.lock` in a shared output directory is refused, not followed;
        // a FIFO (or a socket) there fails at once instead of blocking the program in
        // open, and anything but a regular file is refused below before flock.
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&lock_path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => ArchiveError::unsafe_path(&lock_path, "is a symbolic link"),
            Some(libc::ENXIO) => ArchiveError::unsafe_path(&lock_path, "is not a regular file"),
            _ => ArchiveError::io(&lock_path, "open", e),
        })?;
    let is_file = lock_file
        .metadata()
        .map_err(|e| ArchiveError::io(&lock_path, "stat", e))?
        .is_file();
    if !is_file {
        return Err(ArchiveError::unsafe_path(
            &lock_path,
            "is not a regular file",
        ));
    }
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
    m.processes.retain(|p| p.dir != entry.dir);
    m.processes.push(entry);
    manifest::write_manifest(&path, &m, true)
}
