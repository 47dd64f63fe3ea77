//! The two manifests: the root `manifest.json` (format, tool, settings, processes) and
//! each process's `pid-<pid>/manifest.json` (completeness, counts, what replay cannot
//! reproduce, runtime and device metadata).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::blob::Compression;
use crate::limits::Limits;
use crate::{ArchiveError, Result};

pub const MANIFEST_FILE: &str = "manifest.json";
pub const EVENTS_FILE: &str = "events.bin";
/// Manifests are small; anything larger is refused whatever `max_file_bytes` says.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// Settings chosen at capture time, recorded so replay and people know what was done.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettingsRecord {
    pub compression: Compression,
    pub flush_interval_ms: u64,
    pub disk_reserve_bytes: u64,
}

/// One process listed in the root manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessEntry {
    pub pid: u32,
    pub ppid: u32,
    /// Directory name relative to the root: [`process_dir_name`] of the pid and of the
    /// program image (`pid-<pid>`, or `pid-<pid>.<k>` for the k-th program that recorded
    /// under the same pid: one that exec'd after recording, or a pid reused by a later
    /// run into the same directory).
    pub dir: String,
}

/// The most program images one pid may record into one archive.
pub const MAX_IMAGES_PER_PID: u32 = 64;

/// The directory of image `image` (1-based) of process `pid`.
pub fn process_dir_name(pid: u32, image: u32) -> String {
    if image <= 1 {
        format!("pid-{pid}")
    } else {
        format!("pid-{pid}.{image}")
    }
}

/// Whether `dir` is a directory name the writer gives process `pid`; the reader accepts
/// no other (a name never leads out of the archive).
pub fn is_process_dir_of(pid: u32, dir: &str) -> bool {
    (1..=MAX_IMAGES_PER_PID).any(|k| process_dir_name(pid, k) == dir)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootManifest {
    pub format_version: u32,
    pub tool_version: String,
    pub source_revision: String,
    pub settings: SettingsRecord,
    pub processes: Vec<ProcessEntry>,
}

/// An API that was called but that no other process can reproduce.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreplayableApi {
    pub api: String,
    pub reason: String,
    pub count: u64,
}

/// A surface API capture does not model that the program called (`api::surface`): it
/// passed through uncounted by any record but its first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnmodelledApi {
    pub api: String,
    /// The library its symbol belongs to ("libcudart.so.13", "libcuda.so.1", ...).
    pub library: String,
    /// Calls counted, every thread's (calls the runtime made through the exported symbol
    /// itself included).
    pub count: u64,
    /// The sequence id of the record of its first call; None when capture was not
    /// recording then (a call made from inside another shim's own work).
    pub first_seq: Option<u64>,
    /// Why the call cannot affect results, when the API table exempts it (`api::EXEMPT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exempt: Option<String>,
}

/// Whether capture counted the calls it does not model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum UnmodelledCoverage {
    /// Written before coverage existed, or by a writer that is not capture: unknown.
    #[default]
    NotRecorded,
    /// Every surface symbol capture does not model had a counting pass-through.
    Measured { pass_throughs: u64 },
    /// Capture could not count them (no pass-throughs on this architecture).
    NotMeasured { reason: String },
}

/// A call whose capture failed (a payload that could not be recorded whole).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureFailure {
    pub seq: u64,
    pub api: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub index: u32,
    pub name: String,
    /// gcnArchName on AMD (e.g. "gfx90a:sramecc+:xnack-"), "sm_90" on NVIDIA.
    pub arch: String,
    pub total_memory: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    /// "cuda", "hip", or "" before the first runtime call.
    pub vendor: String,
    pub runtime_version: String,
    pub driver_version: String,
    pub devices: Vec<DeviceInfo>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessManifest {
    pub format_version: u32,
    pub pid: u32,
    pub ppid: u32,
    pub complete: bool,
    /// Why capture stopped early (disk reserve, a panic in a shim, a signal), if it did.
    pub stop_reason: Option<String>,
    pub event_count: u64,
    pub blob_count: u64,
    /// Content bytes of distinct blobs (before compression).
    pub blob_bytes: u64,
    /// Bytes the blobs take on disk (after compression).
    pub blob_stored_bytes: u64,
    /// Content bytes of every blob reference, duplicates included: what deduplication saved
    /// is `blob_referenced_bytes - blob_bytes`.
    pub blob_referenced_bytes: u64,
    pub code_object_count: u64,
    /// The shared code store (`HRR_CAPTURE_CODE_STORE`) capture put code objects in, as
    /// the capturing process named it; replay reads there what the archive lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_store: Option<String>,
    /// Of `code_object_count`, those kept in `code_store` and not in the archive.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub code_objects_in_store: u64,
    /// Events and blobs that arrived after the trailer and were dropped.
    pub dropped_after_trailer: u64,
    /// Events not recorded because capture had stopped (disk reserve, panic).
    pub dropped_after_stop: u64,
    pub unreplayable_apis: Vec<UnreplayableApi>,
    pub capture_failures: Vec<CaptureFailure>,
    /// Whether calls capture does not model were counted, and those the program made.
    #[serde(default)]
    pub unmodelled_coverage: UnmodelledCoverage,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmodelled_apis: Vec<UnmodelledApi>,
    pub runtime: RuntimeInfo,
    /// Set by `hrr-replay --repair`.
    #[serde(default)]
    pub repaired: bool,
    /// Stretches of the log a repair found corrupt and skipped, with the sequence ids they
    /// held: the only gaps a reader accepts in the sequence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_events: Vec<LostEvents>,
    /// What a range capture left out at exit: the set-up its range does not use
    /// (`crate::prune`). Its sequence ids are gaps a reader accepts, as `lost_events`'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pruned: Option<Pruned>,
}

/// The set-up a range capture dropped: registrations and loads of code objects that no
/// event of the range, and no set-up event kept, names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pruned {
    /// Registrations, loads, lookups, unregistrations and unloads before the range's
    /// start: what could be dropped.
    pub candidates: u64,
    /// Events dropped, all of them candidates.
    pub events: u64,
    /// Code objects only those events named, removed from `code_objects/`.
    pub code_objects: u64,
    /// Their stored bytes.
    pub code_object_bytes: u64,
    /// The sequence ids dropped, as inclusive stretches.
    pub stretches: Vec<SeqGap>,
}

/// The sequence gaps a reader accepts in one log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gaps {
    /// Stretches a repair lost: never in the log.
    pub lost: Vec<SeqGap>,
    /// Stretches a range capture pruned: absent, or still there whole (capture writes
    /// the manifest that lists them before the log without them, so a capture stopped
    /// between the two leaves a log that still reads).
    pub pruned: Vec<SeqGap>,
}

/// An inclusive stretch of sequence ids that a log lacks on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeqGap {
    pub first_seq: u64,
    pub last_seq: u64,
}

/// Events a repair could not keep: corrupt bytes between two whole records, and the
/// sequence ids between those records' ids (inclusive).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LostEvents {
    pub first_seq: u64,
    pub last_seq: u64,
    /// Byte offset of the corrupt stretch in the log before repair.
    pub offset: u64,
    pub bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ProcessManifest {
    pub fn new(pid: u32, ppid: u32) -> Self {
        ProcessManifest {
            format_version: crate::FORMAT_VERSION,
            pid,
            ppid,
            complete: false,
            stop_reason: None,
            event_count: 0,
            blob_count: 0,
            blob_bytes: 0,
            blob_stored_bytes: 0,
            blob_referenced_bytes: 0,
            code_object_count: 0,
            code_store: None,
            code_objects_in_store: 0,
            dropped_after_trailer: 0,
            dropped_after_stop: 0,
            unreplayable_apis: Vec::new(),
            capture_failures: Vec::new(),
            unmodelled_coverage: UnmodelledCoverage::NotRecorded,
            unmodelled_apis: Vec::new(),
            runtime: RuntimeInfo::default(),
            repaired: false,
            lost_events: Vec::new(),
            pruned: None,
        }
    }

    /// Every sequence gap the log may have: stretches a repair lost and stretches a
    /// range capture pruned.
    pub fn seq_gaps(&self) -> Gaps {
        Gaps {
            lost: (self.lost_events.iter())
                .map(|l| SeqGap {
                    first_seq: l.first_seq,
                    last_seq: l.last_seq,
                })
                .collect(),
            pruned: (self.pruned.iter())
                .flat_map(|p| p.stretches.iter().copied())
                .collect(),
        }
    }
}

/// Reads and parses a manifest, checking the format version before anything else so a
/// mismatch is reported as such rather than as a schema error.
pub fn read_manifest<T: serde::de::DeserializeOwned>(path: &Path, limits: &Limits) -> Result<T> {
    let small = Limits {
        max_file_bytes: limits.max_file_bytes.min(MAX_MANIFEST_BYTES),
        ..*limits
    };
    let bytes = crate::blob::read_regular_file(path, &small)?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        ArchiveError::invalid(
            path,
            format!(
                "not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    match value.get("format_version").and_then(|v| v.as_u64()) {
        Some(v) if v == crate::FORMAT_VERSION as u64 => {}
        Some(v) => {
            return Err(ArchiveError::VersionMismatch {
                path: path.to_path_buf(),
                found: v.min(u32::MAX as u64) as u32,
                supported: crate::FORMAT_VERSION,
            })
        }
        None => return Err(ArchiveError::invalid(path, "no numeric \"format_version\"")),
    }
    serde_json::from_value(value).map_err(|e| {
        ArchiveError::invalid(path, format!("manifest does not match the schema: {e}"))
    })
}

pub fn write_manifest<T: Serialize>(path: &Path, value: &T, fsync: bool) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| ArchiveError::invalid(path, format!("cannot serialise manifest: {e}")))?;
    bytes.push(b'\n');
    crate::blob::write_atomic(path, &bytes, fsync)
}
