//! `--repair`: rewrites each damaged process log of an archive so that it holds every
//! record whose checksum verifies, and says exactly what it could not keep.
//!
//! - A corrupt record in the middle does not end the log: the scan resynchronises at the
//!   next offset where a whole record with a plausible sequence id begins. The skipped
//!   bytes and the sequence ids they held are recorded in the process manifest
//!   (`lost_events`), the only sequence gaps a reader then accepts.
//! - The original log is kept beside the new one (`events.bin.before-repair`, hard-linked
//!   before the new log is renamed into place, so a crash leaves one or the other whole).
//! - A process is marked complete only when nothing was lost: its trailer verified and
//!   every record before it did too. A log that lost its tail, or events in the middle,
//!   is rewritten without a trailer and stays incomplete; replay says so.

use std::path::{Path, PathBuf};

use crate::manifest::{
    self, LostEvents, ProcessManifest, RootManifest, EVENTS_FILE, MANIFEST_FILE,
};
use crate::record::{self, RecordHeader, FILE_HEADER_LEN, RECORD_HEADER_LEN, TRAILER_API_ID};
use crate::{blob, logread, ArchiveError, Limits, ProcessArchive, Result};

/// The name the original log is kept under (a number is added if it is taken).
pub const BACKUP_NAME: &str = "events.bin.before-repair";

/// What repair did to one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairedProcess {
    pub pid: u32,
    /// The log's state before repair: "incomplete" or "truncated".
    pub was: &'static str,
    pub events_kept: u64,
    /// Every byte not kept: corrupt stretches and a torn tail.
    pub bytes_dropped: u64,
    /// Corrupt stretches between whole records, with the sequence ids they held.
    pub lost: Vec<LostEvents>,
    /// Bytes after the last whole record (a torn tail), if any.
    pub tail_bytes_dropped: u64,
    /// Whether the process is now marked complete (nothing was lost).
    pub complete: bool,
    /// Where the original log was kept.
    pub backup: PathBuf,
    /// Blobs referenced by kept events that are missing or corrupt.
    pub missing_blobs: u64,
}

/// The records a scan kept and what it skipped.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// (header, byte range of the whole record) of each kept record, trailer excluded.
    pub records: Vec<(RecordHeader, std::ops::Range<usize>)>,
    /// Sequence ids missing between kept records, with the corrupt bytes that held them.
    pub lost: Vec<LostEvents>,
    /// Corrupt bytes skipped between whole records (whether or not they held an event).
    pub skipped_bytes: u64,
    /// Bytes after the last whole record (a torn tail).
    pub tail_bytes: u64,
    /// A verified trailer ended the log, right after the last kept record, with nothing
    /// skipped or missing before it.
    pub trailer: bool,
}

/// Whether a whole record can be the next one: a trailer, or a sequence id that follows
/// the last kept one and is no further ahead than the bytes left could hold records.
fn plausible(h: &RecordHeader, next_seq: u64, remaining: usize) -> bool {
    h.api_id == TRAILER_API_ID
        || (h.seq >= next_seq && h.seq - next_seq <= (remaining / RECORD_HEADER_LEN) as u64)
}

/// The length and sequence fields of a header, read without a checksum: a resync looks
/// at every offset, and computes a checksum only where these are plausible.
fn quick_header(bytes: &[u8]) -> Option<(u32, u64)> {
    let b = bytes.get(..RECORD_HEADER_LEN)?;
    let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let mut s = [0u8; 8];
    s.copy_from_slice(&b[8..16]);
    Some((len, u64::from_le_bytes(s)))
}

/// A whole, plausible record at `at`: (header, record length).
fn record_at(bytes: &[u8], at: usize, next_seq: u64) -> Option<(RecordHeader, usize)> {
    let remaining = bytes.len() - at;
    let (len, seq) = quick_header(&bytes[at..])?;
    let fits = len <= record::MAX_RECORD_PAYLOAD
        && (len as usize) <= remaining - RECORD_HEADER_LEN
        && seq.wrapping_sub(next_seq) <= (remaining / RECORD_HEADER_LEN) as u64;
    // A trailer's sequence field is the event count, which also follows the last id.
    if !fits {
        return None;
    }
    let (h, _, n) = record::decode_record(&bytes[at..], at as u64).ok()?;
    plausible(&h, next_seq, remaining).then_some((h, n))
}

/// Scans a whole log (file header already checked): every record whose checksum verifies,
/// resynchronising past corrupt bytes at the next plausible whole record.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut out = Scan::default();
    let mut next_seq = 0u64;
    let mut at = FILE_HEADER_LEN;
    // Where the corrupt stretch being skipped began.
    let mut skip_from: Option<usize> = None;
    while at < bytes.len() {
        let Some((h, n)) = record_at(bytes, at, next_seq) else {
            skip_from.get_or_insert(at);
            match (at + 1..bytes.len()).find(|&q| record_at(bytes, q, next_seq).is_some()) {
                Some(q) => at = q,
                None => break,
            }
            continue;
        };
        let skipped = skip_from.take().map(|from| (from, at - from));
        out.skipped_bytes += skipped.map_or(0, |(_, len)| len as u64);
        if h.api_id == TRAILER_API_ID {
            let payload = &bytes[at + RECORD_HEADER_LEN..at + n];
            out.trailer = at + n == bytes.len()
                && skipped.is_none()
                && out.lost.is_empty()
                && payload.len() == record::TRAILER_PAYLOAD_LEN
                && &payload[8..] == record::TRAILER_MAGIC
                && payload[..8] == (out.records.len() as u64).to_le_bytes();
            if !out.trailer {
                // A trailer that is not the log's true end is skipped like corrupt bytes.
                out.skipped_bytes += n as u64;
            }
        } else {
            if h.seq > next_seq {
                out.lost.push(LostEvents {
                    first_seq: next_seq,
                    last_seq: h.seq - 1,
                    offset: skipped.map_or(at, |(from, _)| from) as u64,
                    bytes: skipped.map_or(0, |(_, len)| len as u64),
                });
            }
            out.records.push((h, at..at + n));
            next_seq = h.seq + 1;
        }
        at += n;
    }
    if let Some(from) = skip_from {
        out.tail_bytes = (bytes.len() - from) as u64;
    }
    out
}

/// A name beside `log` that nothing uses yet, for the original.
fn backup_path(dir: &Path) -> PathBuf {
    let first = dir.join(BACKUP_NAME);
    if std::fs::symlink_metadata(&first).is_err() {
        return first;
    }
    (1..)
        .map(|i| dir.join(format!("{BACKUP_NAME}.{i}")))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or(first)
}

/// Repairs every process of the archive at `root` whose log is damaged or unfinished;
/// processes already complete, or already repaired and intact since, are left untouched.
/// Returns one entry per process that was rewritten.
pub fn repair(root: &Path, limits: Limits) -> Result<Vec<RepairedProcess>> {
    let root_manifest: RootManifest = manifest::read_manifest(&root.join(MANIFEST_FILE), &limits)?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for entry in &root_manifest.processes {
        crate::reader::check_entry(root, entry, &mut seen)?;
        if let Some(r) = repair_process(root, entry, &limits)? {
            out.push(r);
        }
    }
    Ok(out)
}

fn repair_process(
    root: &Path,
    entry: &manifest::ProcessEntry,
    limits: &Limits,
) -> Result<Option<RepairedProcess>> {
    let dir = root.join(&entry.dir);
    // The reader's checks first (directory, manifest, log header); an intact log is
    // left alone when it is complete, or was repaired before and nothing tore since.
    let current = ProcessArchive::open(&dir, entry.clone(), *limits)?;
    let was = current.status.label();
    if current.is_complete()
        || (current.manifest.repaired && current.status == crate::LogStatus::Incomplete)
    {
        return Ok(None);
    }
    let log_path = dir.join(EVENTS_FILE);
    let bytes = blob::read_regular_file(&log_path, limits)?;
    logread::check_file_header(&log_path, &bytes)?;
    let old_lost = current.manifest.lost_events.clone();
    let s = scan_with_lost(&bytes, &old_lost);
    let complete = s.trailer && s.lost.is_empty() && old_lost.is_empty();

    let mut log = Vec::with_capacity(
        FILE_HEADER_LEN + s.records.iter().map(|(_, r)| r.len()).sum::<usize>() + 64,
    );
    log.extend_from_slice(&record::file_header());
    for (_, r) in &s.records {
        log.extend_from_slice(&bytes[r.clone()]);
    }
    if complete {
        let total = s.records.len() as u64;
        let h = RecordHeader {
            api_id: TRAILER_API_ID,
            flags: 0,
            seq: total,
            timestamp_ns: s.records.last().map(|(h, _)| h.timestamp_ns).unwrap_or(0),
            tid: 0,
            ret: 0,
        };
        record::encode_record(&mut log, &h, &record::trailer_payload(total));
    }
    let backup = backup_path(&dir);
    std::fs::hard_link(&log_path, &backup)
        .map_err(|e| ArchiveError::io(&backup, "keep the original log", e))?;
    blob::write_atomic(&log_path, &log, true)?;

    let mut m: ProcessManifest = current.manifest.clone();
    m.complete = complete;
    m.repaired = true;
    m.event_count = s.records.len() as u64;
    m.lost_events = old_lost;
    m.lost_events.extend(s.lost.iter().cloned());
    manifest::write_manifest(&dir.join(MANIFEST_FILE), &m, true)?;

    let repaired = ProcessArchive::open(&dir, entry.clone(), *limits)?;
    let (_, refs) = repaired.blob_references();
    let missing = refs
        .iter()
        .filter(|r| repaired.load_blob(r).is_err())
        .count() as u64;
    Ok(Some(RepairedProcess {
        pid: entry.pid,
        was,
        events_kept: s.records.len() as u64,
        bytes_dropped: s.skipped_bytes + s.tail_bytes,
        lost: s.lost,
        tail_bytes_dropped: s.tail_bytes,
        complete,
        backup,
        missing_blobs: missing,
    }))
}

/// `scan` for a log that an earlier repair already left with known gaps: those gaps are
/// not lost again (their sequence ids are skipped, not reported).
fn scan_with_lost(bytes: &[u8], old: &[LostEvents]) -> Scan {
    let mut s = scan(bytes);
    s.lost.retain(|l| {
        !old.iter()
            .any(|o| o.first_seq <= l.first_seq && l.last_seq <= o.last_seq)
    });
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{encode_record, file_header, trailer_payload};

    fn log(n: u64, trailer: bool) -> (Vec<u8>, Vec<usize>) {
        let mut b = file_header().to_vec();
        let mut starts = Vec::new();
        for seq in 0..n {
            starts.push(b.len());
            let h = RecordHeader {
                api_id: 3,
                flags: 0,
                seq,
                timestamp_ns: seq,
                tid: 1,
                ret: 0,
            };
            encode_record(&mut b, &h, &vec![seq as u8; 10 + (seq % 7) as usize]);
        }
        if trailer {
            let h = RecordHeader {
                api_id: TRAILER_API_ID,
                flags: 0,
                seq: n,
                timestamp_ns: 0,
                tid: 0,
                ret: 0,
            };
            encode_record(&mut b, &h, &trailer_payload(n));
        }
        (b, starts)
    }

    #[test]
    fn an_intact_log_is_kept_whole() {
        let (b, _) = log(20, true);
        let s = scan(&b);
        assert_eq!((s.records.len(), s.trailer, s.tail_bytes), (20, true, 0));
        assert!(s.lost.is_empty());
    }

    #[test]
    fn one_flipped_bit_loses_one_record_not_the_rest() {
        let (mut b, starts) = log(64, true);
        b[starts[1] + 20] ^= 0x10; // inside record 1's header (timestamp)
        let s = scan(&b);
        assert_eq!(s.records.len(), 63);
        assert_eq!(
            s.lost,
            vec![LostEvents {
                first_seq: 1,
                last_seq: 1,
                offset: starts[1] as u64,
                bytes: (starts[2] - starts[1]) as u64
            }]
        );
        // The trailer's count no longer matches what is kept: not complete.
        assert!(!s.trailer);
    }

    #[test]
    fn every_single_bit_flip_keeps_every_other_record() {
        let (b, _) = log(12, true);
        let trailer_at = b.len() - RECORD_HEADER_LEN - record::TRAILER_PAYLOAD_LEN;
        for bit in (FILE_HEADER_LEN * 8)..(b.len() * 8) {
            let mut m = b.clone();
            m[bit / 8] ^= 1 << (bit % 8);
            let s = scan(&m);
            let want = if bit / 8 >= trailer_at { 12 } else { 11 };
            assert_eq!(s.records.len(), want, "bit {bit}");
            assert!(!s.trailer, "bit {bit}: a damaged log is never complete");
            let dropped = s.skipped_bytes + s.tail_bytes;
            assert!(dropped > 0, "bit {bit}: the damage is reported");
        }
    }

    #[test]
    fn a_torn_tail_is_counted_and_the_rest_kept() {
        let (b, starts) = log(10, false);
        let cut = starts[7] + 20;
        let s = scan(&b[..cut]);
        assert_eq!((s.records.len(), s.tail_bytes, s.skipped_bytes), (7, 20, 0));
        assert!(!s.trailer && s.lost.is_empty());
    }

    #[test]
    fn garbage_resync_is_linear_in_practice() {
        // A megabyte of pseudo-random garbage between two records: the scan must finish
        // quickly (it checks cheap header fields before computing any checksum).
        let (a, _) = log(3, false);
        let mut b = a.clone();
        let mut x = 0x9e3779b97f4a7c15u64;
        for _ in 0..(1 << 20) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b.push(x as u8);
        }
        let h = RecordHeader {
            api_id: 3,
            flags: 0,
            seq: 3,
            timestamp_ns: 3,
            tid: 1,
            ret: 0,
        };
        encode_record(&mut b, &h, b"tail");
        let t = std::time::Instant::now();
        let s = scan(&b);
        assert_eq!(s.records.len(), 4);
        assert!(s.lost.is_empty(), "no sequence id was lost, only bytes");
        assert_eq!(s.skipped_bytes, 1 << 20);
        assert!(t.elapsed().as_secs() < 20);
    }
}
