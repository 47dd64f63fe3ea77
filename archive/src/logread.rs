//! Reading one process's event log (`events.bin`): the file header, then whole records
//! until the trailer, the end of the file, or the first torn record.
//!
//! Two decoders share one set of per-record rules ([`LogRules`]): `decode_bytes` over bytes
//! already in memory (repair, edit, the fuzzer) and `read_file` straight from the file,
//! which holds only the records it keeps. So a huge or sparse log costs what its whole
//! records hold, not its length: a sparse file's first hole reads as a torn record.
//!
//! Sequence ids run 0, 1, 2, ...; the only gaps allowed are the ranges a repair recorded
//! as lost and those a range capture pruned (`ProcessManifest::seq_gaps`), so a log that
//! silently skips events is refused rather than replayed out of order.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::manifest::Gaps;
use crate::record::{
    self, Event, RecordHeader, Torn, FILE_HEADER_LEN, FILE_MAGIC, MAX_RECORD_PAYLOAD,
    RECORD_HEADER_LEN, TRAILER_API_ID, TRAILER_MAGIC,
};
use crate::{ArchiveError, Limits, Result, FORMAT_VERSION};

/// State of one process's event log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogStatus {
    /// Every record whole, trailer present and consistent.
    Complete,
    /// Every record whole but no trailer: the process did not shut capture down cleanly.
    Incomplete,
    /// The log ends in a torn or corrupt record; `valid_bytes` of it are whole records.
    Truncated {
        torn: Torn,
        valid_bytes: u64,
        dropped_bytes: u64,
    },
}

impl LogStatus {
    pub fn label(&self) -> &'static str {
        match self {
            LogStatus::Complete => "complete",
            LogStatus::Incomplete => "incomplete",
            LogStatus::Truncated { .. } => "truncated",
        }
    }
}

/// Checks the 16-byte file header.
pub fn check_file_header(path: &Path, bytes: &[u8]) -> Result<()> {
    if bytes.len() < FILE_HEADER_LEN {
        return Err(ArchiveError::invalid(
            path,
            format!(
                "file header is torn ({} of {FILE_HEADER_LEN} bytes)",
                bytes.len()
            ),
        ));
    }
    if &bytes[..8] != FILE_MAGIC {
        return Err(ArchiveError::invalid(
            path,
            "bad magic: not an hrr event log",
        ));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != FORMAT_VERSION {
        return Err(ArchiveError::VersionMismatch {
            path: path.to_path_buf(),
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let flags = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
    if flags != 0 {
        return Err(ArchiveError::invalid(
            path,
            format!("unknown file flags {flags:#x}"),
        ));
    }
    Ok(())
}

/// What a record did to the log being read.
enum Step {
    /// Kept; read on.
    More,
    /// The trailer: the log is complete.
    Complete,
}

/// The rules every whole record must pass, whichever decoder found it.
struct LogRules<'a> {
    path: &'a Path,
    limits: &'a Limits,
    gaps: &'a Gaps,
    events: Vec<Event>,
    /// The sequence id the next record must carry.
    next_seq: u64,
}

impl<'a> LogRules<'a> {
    fn new(path: &'a Path, limits: &'a Limits, gaps: &'a Gaps) -> Self {
        let mut r = LogRules {
            path,
            limits,
            gaps,
            events: Vec::new(),
            next_seq: 0,
        };
        r.skip_lost();
        r
    }

    /// Moves `next_seq` past a range a repair recorded as lost.
    fn skip_lost(&mut self) {
        while let Some(l) = (self.gaps.lost.iter()).find(|l| l.first_seq == self.next_seq) {
            self.next_seq = l.last_seq.saturating_add(1);
        }
    }

    /// Whether the ids from `next_seq` up to `seq` (exclusive) were pruned.
    fn pruned_up_to(&self, seq: u64) -> bool {
        (self.gaps.pruned.iter())
            .any(|g| g.first_seq <= self.next_seq && seq <= g.last_seq.saturating_add(1))
    }

    /// `at`: the record's byte offset; `end`: the file's length.
    fn accept(
        &mut self,
        h: RecordHeader,
        payload: &[u8],
        at: u64,
        n: u64,
        end: u64,
    ) -> Result<Step> {
        if h.api_id == TRAILER_API_ID {
            if payload.len() != record::TRAILER_PAYLOAD_LEN || &payload[8..] != TRAILER_MAGIC {
                return Err(ArchiveError::invalid(
                    self.path,
                    format!("record at byte {at} has the trailer id but no trailer magic"),
                ));
            }
            let total = u64::from_le_bytes(payload[..8].try_into().unwrap_or([0; 8]));
            if total != self.events.len() as u64 {
                return Err(ArchiveError::invalid(
                    self.path,
                    format!(
                        "trailer says {total} events, the log holds {}",
                        self.events.len()
                    ),
                ));
            }
            if at + n != end {
                return Err(ArchiveError::invalid(
                    self.path,
                    format!("{} bytes follow the trailer", end - at - n),
                ));
            }
            return Ok(Step::Complete);
        }
        if h.seq != self.next_seq && !(h.seq > self.next_seq && self.pruned_up_to(h.seq)) {
            return Err(ArchiveError::invalid(
                self.path,
                format!(
                    "record at byte {at} has sequence id {}, expected {}",
                    h.seq, self.next_seq
                ),
            ));
        }
        Limits::check(
            self.path,
            "max_events",
            self.events.len() as u64 + 1,
            self.limits.max_events,
        )?;
        self.events.push(Event {
            header: h,
            payload: payload.to_vec(),
        });
        self.next_seq = h.seq + 1;
        self.skip_lost();
        Ok(Step::More)
    }
}

/// Decodes an event log held in memory: the whole records, and how the log ends.
pub fn decode_bytes(
    path: &Path,
    bytes: &[u8],
    limits: &Limits,
    gaps: &Gaps,
) -> Result<(Vec<Event>, LogStatus)> {
    check_file_header(path, bytes)?;
    let mut rules = LogRules::new(path, limits, gaps);
    let end = bytes.len() as u64;
    let mut at = FILE_HEADER_LEN;
    loop {
        if at == bytes.len() {
            return Ok((rules.events, LogStatus::Incomplete));
        }
        let (h, payload, n) = match record::decode_record(&bytes[at..], at as u64) {
            Ok(r) => r,
            Err(torn) => {
                let status = LogStatus::Truncated {
                    torn,
                    valid_bytes: at as u64,
                    dropped_bytes: end - at as u64,
                };
                return Ok((rules.events, status));
            }
        };
        if let Step::Complete = rules.accept(h, payload, at as u64, n as u64, end)? {
            return Ok((rules.events, LogStatus::Complete));
        }
        at += n;
    }
}

/// Reads `n` bytes, or as many as the file still has; returns how many.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Decodes the event log in `file` (`len` bytes by fstat, already checked against the
/// limits) record by record, holding only the records it keeps.
pub fn read_file(
    path: &Path,
    file: File,
    len: u64,
    limits: &Limits,
    gaps: &Gaps,
) -> Result<(Vec<Event>, LogStatus)> {
    let io = |e| ArchiveError::io(path, "read", e);
    let mut r = BufReader::with_capacity(1 << 20, file.take(len));
    let mut head = [0u8; FILE_HEADER_LEN];
    let got = read_up_to(&mut r, &mut head).map_err(io)?;
    check_file_header(path, &head[..got])?;
    let mut rules = LogRules::new(path, limits, gaps);
    let mut at = FILE_HEADER_LEN as u64;
    let mut buf: Vec<u8> = Vec::with_capacity(RECORD_HEADER_LEN + 4096);
    let truncated = |torn: Torn, at: u64| LogStatus::Truncated {
        torn,
        valid_bytes: at,
        dropped_bytes: len - at,
    };
    loop {
        if at == len {
            return Ok((rules.events, LogStatus::Incomplete));
        }
        buf.resize(RECORD_HEADER_LEN, 0);
        let got = read_up_to(&mut r, &mut buf).map_err(io)?;
        if got < RECORD_HEADER_LEN {
            let torn = Torn::ShortHeader {
                offset: at,
                available: got,
            };
            return Ok((rules.events, truncated(torn, at)));
        }
        let plen = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
        if plen > MAX_RECORD_PAYLOAD {
            let torn = Torn::ImplausibleLength {
                offset: at,
                length: plen,
            };
            return Ok((rules.events, truncated(torn, at)));
        }
        let remaining = len - at - RECORD_HEADER_LEN as u64;
        if u64::from(plen) > remaining {
            let torn = Torn::ShortPayload {
                offset: at,
                needed: plen,
                available: remaining as usize,
            };
            return Ok((rules.events, truncated(torn, at)));
        }
        buf.resize(RECORD_HEADER_LEN + plen as usize, 0);
        let got = read_up_to(&mut r, &mut buf[RECORD_HEADER_LEN..]).map_err(io)?;
        if got < plen as usize {
            // The file shrank while it was read.
            let torn = Torn::ShortPayload {
                offset: at,
                needed: plen,
                available: got,
            };
            return Ok((rules.events, truncated(torn, at)));
        }
        let (h, payload, n) = match record::decode_record(&buf, at) {
            Ok(x) => x,
            Err(torn) => return Ok((rules.events, truncated(torn, at))),
        };
        if let Step::Complete = rules.accept(h, payload, at, n as u64, len)? {
            return Ok((rules.events, LogStatus::Complete));
        }
        at += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::SeqGap;
    use crate::record::{encode_record, file_header, trailer_payload};

    fn rec(seq: u64) -> (RecordHeader, Vec<u8>) {
        (
            RecordHeader {
                api_id: 1,
                flags: 0,
                seq,
                timestamp_ns: seq * 10,
                tid: 7,
                ret: 0,
            },
            vec![seq as u8; 5 + seq as usize],
        )
    }

    fn log(seqs: &[u64], trailer: bool) -> Vec<u8> {
        let mut b = file_header().to_vec();
        for &s in seqs {
            let (h, p) = rec(s);
            encode_record(&mut b, &h, &p);
        }
        if trailer {
            let h = RecordHeader {
                api_id: TRAILER_API_ID,
                flags: 0,
                seq: seqs.len() as u64,
                timestamp_ns: 0,
                tid: 0,
                ret: 0,
            };
            encode_record(&mut b, &h, &trailer_payload(seqs.len() as u64));
        }
        b
    }

    fn both(bytes: &[u8], gaps: &Gaps) -> (Vec<Event>, LogStatus) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.bin");
        std::fs::write(&p, bytes).unwrap();
        let limits = Limits::default();
        let mem = decode_bytes(&p, bytes, &limits, gaps).unwrap();
        let f = File::open(&p).unwrap();
        let streamed = read_file(&p, f, bytes.len() as u64, &limits, gaps).unwrap();
        assert_eq!(mem.1, streamed.1);
        assert_eq!(mem.0.len(), streamed.0.len());
        for (a, b) in mem.0.iter().zip(&streamed.0) {
            assert_eq!(a.header, b.header);
            assert_eq!(a.payload, b.payload);
        }
        mem
    }

    #[test]
    fn both_decoders_agree_on_complete_incomplete_and_torn_logs() {
        let none = Gaps::default();
        let full = log(&[0, 1, 2], true);
        assert_eq!(both(&full, &none).1, LogStatus::Complete);
        let open = log(&[0, 1, 2], false);
        let (ev, st) = both(&open, &none);
        assert_eq!((ev.len(), st), (3, LogStatus::Incomplete));
        for cut in FILE_HEADER_LEN + 1..open.len() {
            let (ev, st) = both(&open[..cut], &none);
            // A cut at a record boundary leaves an unfinished log, anywhere else a torn one.
            assert!(
                matches!(st, LogStatus::Truncated { .. } | LogStatus::Incomplete),
                "cut {cut}: {st:?}"
            );
            assert!(ev.len() < 3);
        }
        let mut flipped = open.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        let (ev, st) = both(&flipped, &none);
        assert_eq!(ev.len(), 2);
        assert!(matches!(
            st,
            LogStatus::Truncated {
                torn: Torn::BadChecksum { .. },
                ..
            }
        ));
    }

    #[test]
    fn a_sparse_tail_reads_as_one_torn_record() {
        let none = Gaps::default();
        let mut b = log(&[0, 1], false);
        b.resize(b.len() + (1 << 20), 0);
        let (ev, st) = both(&b, &none);
        assert_eq!(ev.len(), 2);
        // A zero header has length 0 and a CRC that does not match.
        assert!(matches!(
            st,
            LogStatus::Truncated {
                torn: Torn::BadChecksum { .. },
                ..
            }
        ));
    }

    #[test]
    fn sequence_gaps_are_refused_unless_recorded_as_lost() {
        let gap = log(&[0, 1, 4, 5], true);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.bin");
        let e = decode_bytes(&p, &gap, &Limits::default(), &Gaps::default()).unwrap_err();
        assert!(e.to_string().contains("sequence id 4, expected 2"), "{e}");
        let lost = |first_seq, last_seq| Gaps {
            lost: vec![SeqGap {
                first_seq,
                last_seq,
            }],
            pruned: Vec::new(),
        };
        let (ev, st) = both(&gap, &lost(2, 3));
        assert_eq!((ev.len(), st), (4, LogStatus::Complete));
        let at_start = log(&[3, 4], false);
        assert_eq!(both(&at_start, &lost(0, 2)).0.len(), 2);
        // A lost stretch is never in the log.
        let whole = log(&[0, 1, 2, 3], false);
        let e = decode_bytes(&p, &whole, &Limits::default(), &lost(1, 2)).unwrap_err();
        assert!(e.to_string().contains("sequence id 1, expected 3"), "{e}");
    }

    #[test]
    fn a_pruned_stretch_may_be_absent_or_whole_but_nothing_else_may_be_missing() {
        let pruned = Gaps {
            lost: Vec::new(),
            pruned: vec![
                SeqGap {
                    first_seq: 1,
                    last_seq: 3,
                },
                SeqGap {
                    first_seq: 6,
                    last_seq: 6,
                },
            ],
        };
        for seqs in [
            &[0, 4, 5, 7][..],
            &[0, 1, 2, 3, 4, 5, 6, 7],
            &[0, 2, 3, 4, 5, 7],
        ] {
            let (ev, st) = both(&log(seqs, true), &pruned);
            assert_eq!(
                (ev.len(), st),
                (seqs.len(), LogStatus::Complete),
                "{seqs:?}"
            );
        }
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.bin");
        for (seqs, want) in [
            (&[0, 4, 7][..], "sequence id 7, expected 5"),
            (&[0, 1, 5][..], "sequence id 5, expected 2"),
            (&[0, 4, 5, 6, 6][..], "sequence id 6, expected 7"),
        ] {
            let e = decode_bytes(&p, &log(seqs, false), &Limits::default(), &pruned).unwrap_err();
            assert!(e.to_string().contains(want), "{seqs:?}: {e}");
        }
    }
}
