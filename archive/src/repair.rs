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
    self, LostEvents, ProcessManifest, RootManifest, SeqGap, EVENTS_FILE, MANIFEST_FILE,
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
    /// Bytes after the last whole record (a torn tail, or junk after the trailer), if any.
    pub tail_bytes_dropped: u64,
    /// Whole records dropped because an earlier record had their sequence id.
    pub duplicates_dropped: u64,
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
    /// (header, byte range of the whole record) of each kept record, in sequence order,
    /// one per sequence id, trailer excluded.
    pub records: Vec<(RecordHeader, std::ops::Range<usize>)>,
    /// Sequence ids missing between kept records, with the corrupt bytes that held them.
    pub lost: Vec<LostEvents>,
    /// Corrupt bytes skipped between whole records (whether or not they held an event).
    pub skipped_bytes: u64,
    /// Bytes after the last whole record (a torn tail, or junk after the trailer).
    pub tail_bytes: u64,
    /// Whole records whose sequence id an earlier record in the log already had: dropped.
    pub duplicates: u64,
    /// Their bytes.
    pub duplicate_bytes: u64,
    /// A verified trailer counted every kept record, with nothing skipped or missing
    /// before it and no new record after it.
    pub trailer: bool,
    /// Bytes run through CRC-32 to find the records (prefix pass included): at most a few
    /// times the log's size, however it was crafted.
    pub checksum_bytes: u64,
}

/// Records at most this long are checked by computing their checksum; longer ones from
/// the log's prefix checksums (`Checker`), so no offset costs more than a few hundred
/// bytes of checksum work.
const DIRECT_CHECK_MAX: u32 = 256;
/// Prefix checksums are kept every this many bytes.
const PREFIX_STEP: usize = 64;

/// Finds whole records at any offset of a log at bounded cost per offset, so a scan is
/// linear in the log's size however the bytes were crafted (issue 20: every 16th offset
/// of a crafted log looked like a 4 MiB record, and each cost its checksum: 97 s for 16
/// MiB). A record's CRC-32 covers its 32 header bytes, then its payload; a long payload's
/// checksum comes from two prefix checksums of the log (`P(e) ^ shift(P(s), e - s)`, CRC
/// being linear), which are computed once, in one pass, the first time they are needed.
struct Checker<'a> {
    bytes: &'a [u8],
    /// CRC-32 of `bytes[..i * PREFIX_STEP]`, for each i.
    prefix: Option<Vec<u32>>,
    /// Bytes run through CRC-32 so far.
    work: u64,
}

impl<'a> Checker<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Checker {
            bytes,
            prefix: None,
            work: 0,
        }
    }

    /// CRC-32 of `bytes[..x]`.
    fn prefix_crc(&mut self, x: usize) -> u32 {
        let bytes = self.bytes;
        if self.prefix.is_none() {
            self.work += bytes.len() as u64;
        }
        let table = self.prefix.get_or_insert_with(|| {
            let mut t = Vec::with_capacity(bytes.len() / PREFIX_STEP + 1);
            let mut h = crc32fast::Hasher::new();
            t.push(0);
            for chunk in bytes.chunks_exact(PREFIX_STEP) {
                h.update(chunk);
                t.push(h.clone().finalize());
            }
            t
        });
        let k = x / PREFIX_STEP;
        self.work += (x - k * PREFIX_STEP) as u64;
        let mut h = crc32fast::Hasher::new_with_initial(table[k]);
        h.update(&bytes[k * PREFIX_STEP..x]);
        h.finalize()
    }

    /// CRC-32 of `bytes[s..e]`.
    fn segment_crc(&mut self, s: usize, e: usize) -> u32 {
        let (ps, pe) = (self.prefix_crc(s), self.prefix_crc(e));
        // Appending e - s zero bytes to P(s), XORed with P(e), leaves the segment's own.
        let mut shifted = crc32fast::Hasher::new_with_initial_len(ps, s as u64);
        shifted.combine(&crc32fast::Hasher::new_with_initial_len(0, (e - s) as u64));
        pe ^ shifted.finalize()
    }

    /// A whole record at `at` whose checksum verifies and whose header `plausible`
    /// accepts: (header, record length).
    fn record_at(
        &mut self,
        at: usize,
        plausible: impl Fn(u16, u64) -> bool,
    ) -> Option<(RecordHeader, usize)> {
        let b = self.bytes.get(at..at + RECORD_HEADER_LEN)?;
        let len = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let api = u16::from_le_bytes([b[4], b[5]]);
        let seq = u64::from_le_bytes(b[8..16].try_into().ok()?);
        let remaining = self.bytes.len() - at - RECORD_HEADER_LEN;
        if len > record::MAX_RECORD_PAYLOAD || len as usize > remaining || !plausible(api, seq) {
            return None;
        }
        if len > DIRECT_CHECK_MAX {
            let stored = u32::from_le_bytes([b[32], b[33], b[34], b[35]]);
            let mut h = crc32fast::Hasher::new();
            h.update(&b[..32]);
            let head = h.finalize();
            let start = at + RECORD_HEADER_LEN;
            let payload = self.segment_crc(start, start + len as usize);
            let mut whole = crc32fast::Hasher::new_with_initial_len(head, 32);
            whole.combine(&crc32fast::Hasher::new_with_initial_len(
                payload, len as u64,
            ));
            if whole.finalize() != stored {
                return None;
            }
        }
        // Verified above, or short: decoded (and, short, checked) once. A long record
        // is checked again here only once it verified, so at most once per record kept.
        self.work += 32 + len as u64;
        let (h, _, n) = record::decode_record(&self.bytes[at..], at as u64).ok()?;
        Some((h, n))
    }
}

/// A whole record found in file order, with the corrupt stretch skipped just before it.
struct Found {
    header: RecordHeader,
    range: std::ops::Range<usize>,
    skipped_before: Option<(usize, usize)>,
}

/// Scans a whole log (file header already checked): every record whose checksum
/// verifies, wherever it lies (resynchronising byte by byte past corrupt bytes), kept in
/// sequence order with one record per sequence id.
///
/// A candidate's sequence id must be one a record of this log could have: no further
/// past the highest id found than the bytes from the start of the corrupt stretch
/// before it could hold records (a hole's records count, not only those after it). Ids
/// below the highest found are accepted (records written out of order are put back in
/// order); an id already kept is a duplicate, dropped and counted.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut out = Scan::default();
    let mut checker = Checker::new(bytes);
    let mut found: Vec<Found> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // The next id after the highest kept.
    let mut next_seq = 0u64;
    let mut at = FILE_HEADER_LEN;
    // Where the corrupt stretch being skipped began.
    let mut skip_from: Option<usize> = None;
    // A trailer whose count matched, and the kept count then.
    let mut trailer: Option<u64> = None;
    let mut skipped_before_trailer = false;
    while at < bytes.len() {
        let window = bytes.len() - skip_from.unwrap_or(at);
        let bound = next_seq.saturating_add((window / RECORD_HEADER_LEN) as u64);
        let plausible = |api: u16, seq: u64| api == TRAILER_API_ID || seq <= bound;
        let Some((h, n)) = checker.record_at(at, plausible) else {
            skip_from.get_or_insert(at);
            at += 1;
            continue;
        };
        let skipped = skip_from.take().map(|from| (from, at - from));
        out.skipped_bytes += skipped.map_or(0, |(_, len)| len as u64);
        if h.api_id == TRAILER_API_ID {
            let payload = &bytes[at + RECORD_HEADER_LEN..at + n];
            let counted = payload.len() == record::TRAILER_PAYLOAD_LEN
                && &payload[8..] == record::TRAILER_MAGIC
                && payload[..8] == (seen.len() as u64).to_le_bytes();
            if counted && trailer.is_none() {
                trailer = Some(seen.len() as u64);
                skipped_before_trailer = out.skipped_bytes > 0;
            } else {
                // A trailer that is not the log's own end is skipped like corrupt bytes.
                out.skipped_bytes += n as u64;
            }
        } else if !seen.insert(h.seq) {
            out.duplicates += 1;
            out.duplicate_bytes += n as u64;
        } else {
            next_seq = next_seq.max(h.seq + 1);
            found.push(Found {
                header: h,
                range: at..at + n,
                skipped_before: skipped,
            });
        }
        at += n;
    }
    if let Some(from) = skip_from {
        out.tail_bytes = (bytes.len() - from) as u64;
    }
    found.sort_by_key(|f| f.header.seq);
    let mut expected = 0u64;
    for f in &found {
        if f.header.seq > expected {
            let (offset, len) = f.skipped_before.unwrap_or((f.range.start, 0));
            out.lost.push(LostEvents {
                first_seq: expected,
                last_seq: f.header.seq - 1,
                offset: offset as u64,
                bytes: len as u64,
            });
        }
        expected = f.header.seq + 1;
    }
    out.trailer =
        trailer == Some(found.len() as u64) && !skipped_before_trailer && out.lost.is_empty();
    out.records = found.into_iter().map(|f| (f.header, f.range)).collect();
    out.checksum_bytes = checker.work;
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
    let log_path = dir.join(EVENTS_FILE);
    // The reader's checks first (directory, manifest, log header); an intact log is
    // left alone when it is complete, or was repaired before and nothing tore since. A
    // log the reader refuses for its records (ids out of order or repeated, bytes after
    // the trailer) is what repair is for; anything else it refuses stays refused.
    let (manifest, was) = match ProcessArchive::open(&dir, entry.clone(), *limits) {
        Ok(current) => {
            if current.is_complete()
                || (current.manifest.repaired && current.status == crate::LogStatus::Incomplete)
            {
                return Ok(None);
            }
            (current.manifest, current.status.label())
        }
        Err(ArchiveError::Invalid { path, .. }) if path == log_path => {
            let m: ProcessManifest = manifest::read_manifest(&dir.join(MANIFEST_FILE), limits)?;
            (m, "invalid")
        }
        Err(e) => return Err(e),
    };
    let bytes = blob::read_regular_file(&log_path, limits)?;
    logread::check_file_header(&log_path, &bytes)?;
    let old_lost = manifest.lost_events.clone();
    let gaps = manifest.seq_gaps();
    let s = scan_with_lost(&bytes, &[gaps.lost, gaps.pruned].concat());
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

    let mut m: ProcessManifest = manifest;
    m.complete = complete;
    m.repaired = true;
    m.event_count = s.records.len() as u64;
    m.lost_events = old_lost;
    m.lost_events.extend(s.lost.iter().cloned());
    manifest::write_manifest(&dir.join(MANIFEST_FILE), &m, true)?;

    let repaired = ProcessArchive::open(&dir, entry.clone(), *limits)?;
    let (_, refs) = repaired.blob_references();
    // Each blob verified by streaming it (bounded memory, whatever its size).
    let missing = refs
        .iter()
        .filter(|r| repaired.verify_blob(r).is_err())
        .count() as u64;
    Ok(Some(RepairedProcess {
        pid: entry.pid,
        was,
        events_kept: s.records.len() as u64,
        bytes_dropped: s.skipped_bytes + s.tail_bytes + s.duplicate_bytes,
        lost: s.lost,
        tail_bytes_dropped: s.tail_bytes,
        duplicates_dropped: s.duplicates,
        complete,
        backup,
        missing_blobs: missing,
    }))
}

/// `scan` for a log that an earlier repair already left with known gaps: those gaps are
/// not lost again (their sequence ids are skipped, not reported).
fn scan_with_lost(bytes: &[u8], old: &[SeqGap]) -> Scan {
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

    /// Issue 20's crafted log: every 16th offset of 8 MiB looks like a whole 4 MiB record
    /// (a plausible length and id) whose checksum fails. The checksum work stays a bounded
    /// multiple of the log's size (it was one 4 MiB checksum per candidate: about 1 TB
    /// here).
    #[test]
    fn a_crafted_log_costs_checksum_work_linear_in_its_size() {
        let (mut b, _) = log(2, false);
        let start = b.len();
        b.resize(start + (8 << 20), 0);
        for at in (start..b.len() - RECORD_HEADER_LEN).step_by(16) {
            b[at..at + 4].copy_from_slice(&(4u32 << 20).to_le_bytes());
            b[at + 8..at + 16].copy_from_slice(&2u64.to_le_bytes());
        }
        let s = scan(&b);
        assert_eq!(s.records.len(), 2);
        // No offset costs more than a short record's checksum (292 bytes) or a long one's
        // header and two partial prefix steps (158): here about 14 bytes per byte of log.
        assert!(
            s.checksum_bytes <= 32 * b.len() as u64,
            "{} bytes checksummed for a {}-byte log",
            s.checksum_bytes,
            b.len()
        );
    }
}
