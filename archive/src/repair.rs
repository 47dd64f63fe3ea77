//! `--repair`: rewrites a truncated or incomplete archive as a clean, complete one that
//! holds every whole record, for every process under a root.

use std::path::Path;

use crate::manifest::{self, ProcessManifest, EVENTS_FILE, MANIFEST_FILE};
use crate::reader::{Archive, LogStatus};
use crate::record::{self, RecordHeader, TRAILER_API_ID};
use crate::{blob, Limits, Result};

/// What repair did to one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairedProcess {
    pub pid: u32,
    pub was: &'static str,
    pub events_kept: u64,
    pub bytes_dropped: u64,
    /// Blobs referenced by kept events that are missing or corrupt.
    pub missing_blobs: u64,
}

/// Repairs every process of the archive at `root`; processes already complete are left
/// untouched. Returns one entry per process that was rewritten.
pub fn repair(root: &Path, limits: Limits) -> Result<Vec<RepairedProcess>> {
    let archive = Archive::open(root, limits)?;
    let mut out = Vec::new();
    for p in &archive.processes {
        if p.is_complete() {
            continue;
        }
        let dropped = match &p.status {
            LogStatus::Truncated { dropped_bytes, .. } => *dropped_bytes,
            _ => 0,
        };
        let mut bytes = Vec::with_capacity(
            record::FILE_HEADER_LEN + p.events.iter().map(|e| e.payload.len() + 64).sum::<usize>(),
        );
        bytes.extend_from_slice(&record::file_header());
        for e in &p.events {
            record::encode_record(&mut bytes, &e.header, &e.payload);
        }
        let total = p.events.len() as u64;
        let last_ts = p.events.last().map(|e| e.header.timestamp_ns).unwrap_or(0);
        let h = RecordHeader {
            api_id: TRAILER_API_ID,
            flags: 0,
            seq: total,
            timestamp_ns: last_ts,
            tid: 0,
            ret: 0,
        };
        record::encode_record(&mut bytes, &h, &record::trailer_payload(total));
        blob::write_atomic(&p.dir.join(EVENTS_FILE), &bytes, true)?;

        let (_, refs) = p.blob_references();
        let missing = refs.iter().filter(|r| p.load_blob(r).is_err()).count() as u64;
        let mut m: ProcessManifest = p.manifest.clone();
        m.complete = true;
        m.repaired = true;
        m.event_count = total;
        manifest::write_manifest(&p.dir.join(MANIFEST_FILE), &m, true)?;
        out.push(RepairedProcess {
            pid: p.entry.pid,
            was: p.status.label(),
            events_kept: total,
            bytes_dropped: dropped,
            missing_blobs: missing,
        });
    }
    Ok(out)
}
