//! Reading one process's event log (`events.bin`): the file header, then whole records
//! until the trailer, the end of the file, or the first torn record.
//!
//! Two decoders share one set of per-record rules ([`LogRules`]): `decode_bytes` over bytes
//! already in memory (repair, edit, the fuzzer) and `read_file` straight from the file,
//! which holds only the records it keeps. So a huge or sparse log costs what its whole
//! records hold, not its length: a sparse file's first hole reads as a torn record.
//!
//! Sequence ids run 0, 1, 2, ...; the only gaps allowed are the ranges a repair recorded
//! as lost (`ProcessManifest::lost_events`), so a log that silently skips events is
//! refused rather than replayed out of order.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::manifest::LostEvents;
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
    lost: &'a [LostEvents],
    events: Vec<Event>,
    /// The sequence id the next record must carry.
    next_seq: u64,
}

impl<'a> LogRules<'a> {
    fn new(path: &'a Path, limits: &'a Limits, lost: &'a [LostEvents]) -> Self {
        let mut r = LogRules {
            path,
            limits,
            lost,
            events: Vec::new(),
            next_seq: 0,
        };
        r.skip_lost();
        r
    }

    /// Moves `next_seq` past a range a repair recorded as lost.
    fn skip_lost(&mut self) {
        while let Some(l) = self.lost.iter().find(|l| l.first_seq == self.next_seq) {
            self.next_seq = l.last_seq.saturating_add(1);
        }
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
        if h.seq != self.next_seq {
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
    lost: &[LostEvents],
) -> Result<(Vec<Event>, LogStatus)> {
    check_file_header(path, bytes)?;
    let mut rules = LogRules::new(path, limits, lost);
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
    lost: &[LostEvents],
) -> Result<(Vec<Event>, LogStatus)> {
    let io = |e| ArchiveError::io(path, "read", e);
    let mut r = BufReader::with_capacity(1 << 20, file.take(len));
    let mut head = [0u8; FILE_HEADER_LEN];
    let got = read_up_to(&mut r, &mut head).map_err(io)?;
    check_file_header(path, &head[..got])?;
    let mut rules = LogRules::new(path, limits, lost);
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

    fn both(bytes: &[u8], lost: &[LostEvents]) -> (Vec<Event>, LogStatus) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("events.bin");
        std::fs::write(&p, bytes).unwrap();
        let limits = Limits::default();
        let mem = decode_bytes(&p, bytes, &limits, lost).unwrap();
        let f = File::open(&p).unwrap();
        let streamed = read_file(&p, f, bytes.len() as u64, &limits, lost).unwrap();
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
        let full = log(&[0, 1, 2], true);
        assert_eq!(both(&full, &[]).1, LogStatus::Complete);
        let open = log(&[0, 1, 2], false);
        let (ev, st) = both(&open, &[]);
        assert_eq!((ev.len(), st), (3, LogStatus::Incomplete));
        for cut in FILE_HEADER_LEN + 1..open.len() {
            let (ev, st) = both(&open[..cut], &[]);
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
        let (ev, st) = both(&flipped, &[]);
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
        let mut b = log(&[0, 1], false);
        b.resize(b.len() + (1 << 20), 0);
        let (ev, st) = both(&b, &[]);
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
        let e = decode_bytes(&p, &gap, &Limits::default(), &[]).unwrap_err();
        assert!(e.to_string().contains("sequence id 4, expected 2"), "{e}");
        let lost = [LostEvents {
            first_seq: 2,
            last_seq: 3,
            offset: 0,
            bytes: 0,
        }];
        let (ev, st) = both(&gap, &lost);
        assert_eq!((ev.len(), st), (4, LogStatus::Complete));
        let at_start = log(&[3, 4], false);
        let lost = [LostEvents {
            first_seq: 0,
            last_seq: 2,
            offset: 16,
            bytes: 99,
        }];
        assert_eq!(both(&at_start, &lost).0.len(), 2);
    }
}
