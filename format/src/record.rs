//! The event log's framing: the 16-byte file header, the 36-byte record header, the CRC
//! that closes each record, and the trailer record of a clean shutdown.
//!
//! ```text
//! file header   0  8  magic "HRREVLOG"
//!               8  4  format version (u32 LE)
//!              12  4  flags (u32 LE, must be 0 in version 1)
//! record       +0  4  payload length (u32 LE)
//!              +4  2  API id (u16 LE; 0xFFFF = trailer)
//!              +6  2  record flags (u16 LE)
//!              +8  8  sequence id (u64 LE, one total order across the process's threads)
//!             +16  8  timestamp, ns of CLOCK_MONOTONIC (u64 LE)
//!             +24  4  OS thread id (u32 LE)
//!             +28  4  return code of the call (i32 LE)
//!             +32  4  CRC-32 (IEEE) of bytes +0..+32 and of the payload
//!             +36  .  payload (typed fields, see payload.rs)
//! trailer payload: total events (u64 LE) then magic "HRRTRAIL"
//! ```

use crate::FORMAT_VERSION;

pub const FILE_MAGIC: &[u8; 8] = b"HRREVLOG";
pub const FILE_HEADER_LEN: usize = 16;
pub const RECORD_HEADER_LEN: usize = 36;
pub const TRAILER_API_ID: u16 = 0xFFFF;
pub const TRAILER_MAGIC: &[u8; 8] = b"HRRTRAIL";
pub const TRAILER_PAYLOAD_LEN: usize = 16;
/// A record whose payload claims more than this is implausible and counts as torn.
pub const MAX_RECORD_PAYLOAD: u32 = 64 << 20;

/// Record flag: the call was made while capture knew it could not record it faithfully
/// (a payload field was truncated at capture). Replay refuses such events.
pub const RECORD_FLAG_INCOMPLETE: u16 = 1;

pub fn file_header() -> [u8; FILE_HEADER_LEN] {
    let mut h = [0u8; FILE_HEADER_LEN];
    h[..8].copy_from_slice(FILE_MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h
}

/// The fixed part of every record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub api_id: u16,
    pub flags: u16,
    pub seq: u64,
    pub timestamp_ns: u64,
    pub tid: u32,
    pub ret: i32,
}

/// One decoded event: its header and its raw payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub header: RecordHeader,
    pub payload: Vec<u8>,
}

/// Appends one framed record to `out`, its CRC computed.
#[inline]
pub fn encode_record(out: &mut Vec<u8>, h: &RecordHeader, payload: &[u8]) {
    let start = out.len();
    encode_record_unsealed(out, h, payload);
    seal_record(&mut out[start..]);
}

/// Appends one framed record to `out` with its CRC left zero: the writer's append path,
/// so the program's thread never checksums. Whoever writes the bytes out calls
/// [`seal_records`] on them first.
#[inline]
pub fn encode_record_unsealed(out: &mut Vec<u8>, h: &RecordHeader, payload: &[u8]) {
    let mut head = [0u8; RECORD_HEADER_LEN];
    head[0..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    head[4..6].copy_from_slice(&h.api_id.to_le_bytes());
    head[6..8].copy_from_slice(&h.flags.to_le_bytes());
    head[8..16].copy_from_slice(&h.seq.to_le_bytes());
    head[16..24].copy_from_slice(&h.timestamp_ns.to_le_bytes());
    head[24..28].copy_from_slice(&h.tid.to_le_bytes());
    head[28..32].copy_from_slice(&h.ret.to_le_bytes());
    out.reserve(RECORD_HEADER_LEN + payload.len());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
}

/// Writes the CRC of the one whole record at the start of `rec` (header and payload);
/// returns its framed length, or `None` when `rec` is shorter than the record it starts.
#[inline]
fn seal_record(rec: &mut [u8]) -> Option<usize> {
    let head: [u8; 4] = rec.get(..4)?.try_into().ok()?;
    let len = RECORD_HEADER_LEN.checked_add(u32::from_le_bytes(head) as usize)?;
    let rec = rec.get_mut(..len)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&rec[..32]);
    crc.update(&rec[RECORD_HEADER_LEN..]);
    rec[32..36].copy_from_slice(&crc.finalize().to_le_bytes());
    Some(len)
}

/// Computes the CRC of every record in `buf` (whole records from its first byte, as the
/// writer's buffer holds them); idempotent. Allocates nothing and takes no lock, so the
/// fatal-signal flush may call it. A partial record at the end (never made by the
/// writer) is left as it is.
pub fn seal_records(buf: &mut [u8]) {
    let mut off = 0;
    while off < buf.len() {
        match seal_record(&mut buf[off..]) {
            Some(len) => off += len,
            None => break,
        }
    }
}

pub fn trailer_payload(total_events: u64) -> [u8; TRAILER_PAYLOAD_LEN] {
    let mut p = [0u8; TRAILER_PAYLOAD_LEN];
    p[..8].copy_from_slice(&total_events.to_le_bytes());
    p[8..].copy_from_slice(TRAILER_MAGIC);
    p
}

/// Why decoding stopped before the end of the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Torn {
    /// Fewer bytes than a record header remain.
    ShortHeader { offset: u64, available: usize },
    /// The header claims more payload than the file holds.
    ShortPayload {
        offset: u64,
        needed: u32,
        available: usize,
    },
    /// The payload length is beyond [`MAX_RECORD_PAYLOAD`].
    ImplausibleLength { offset: u64, length: u32 },
    /// The CRC does not match: a partly written or overwritten record.
    BadChecksum { offset: u64 },
}

impl std::fmt::Display for Torn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Torn::ShortHeader { offset, available } => write!(
                f,
                "record header at byte {offset} is torn ({available} of {RECORD_HEADER_LEN} bytes)"
            ),
            Torn::ShortPayload { offset, needed, available } => write!(
                f,
                "record at byte {offset} is torn: payload needs {needed} bytes, {available} remain"
            ),
            Torn::ImplausibleLength { offset, length } => write!(
                f,
                "record at byte {offset} claims an implausible payload of {length} bytes (max {MAX_RECORD_PAYLOAD})"
            ),
            Torn::BadChecksum { offset } => {
                write!(f, "record at byte {offset} fails its checksum")
            }
        }
    }
}

/// Decodes the record at the start of `buf` (which begins at file offset `offset`).
/// Returns the header, the payload slice and the record's total length.
pub fn decode_record(buf: &[u8], offset: u64) -> Result<(RecordHeader, &[u8], usize), Torn> {
    if buf.len() < RECORD_HEADER_LEN {
        return Err(Torn::ShortHeader {
            offset,
            available: buf.len(),
        });
    }
    let u32_at = |i: usize| u32::from_le_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&buf[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let len = u32_at(0);
    if len > MAX_RECORD_PAYLOAD {
        return Err(Torn::ImplausibleLength {
            offset,
            length: len,
        });
    }
    let available = buf.len() - RECORD_HEADER_LEN;
    if (len as usize) > available {
        return Err(Torn::ShortPayload {
            offset,
            needed: len,
            available,
        });
    }
    let payload = &buf[RECORD_HEADER_LEN..RECORD_HEADER_LEN + len as usize];
    let mut crc = crc32fast::Hasher::new();
    crc.update(&buf[..32]);
    crc.update(payload);
    if crc.finalize() != u32_at(32) {
        return Err(Torn::BadChecksum { offset });
    }
    let header = RecordHeader {
        api_id: u16::from_le_bytes([buf[4], buf[5]]),
        flags: u16::from_le_bytes([buf[6], buf[7]]),
        seq: u64_at(8),
        timestamp_ns: u64_at(16),
        tid: u32_at(24),
        ret: u32_at(28) as i32,
    };
    Ok((header, payload, RECORD_HEADER_LEN + len as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> RecordHeader {
        RecordHeader {
            api_id: 7,
            flags: 0,
            seq: 42,
            timestamp_ns: 99,
            tid: 1234,
            ret: -3,
        }
    }

    #[test]
    fn record_round_trip() {
        let mut buf = Vec::new();
        encode_record(&mut buf, &header(), b"payload");
        let (h, p, n) = decode_record(&buf, 0).unwrap();
        assert_eq!(h, header());
        assert_eq!(p, b"payload");
        assert_eq!(n, buf.len());
    }

    #[test]
    fn torn_and_corrupt_records_are_classified() {
        let mut buf = Vec::new();
        encode_record(&mut buf, &header(), b"payload");
        assert!(matches!(
            decode_record(&buf[..10], 0),
            Err(Torn::ShortHeader { .. })
        ));
        assert!(matches!(
            decode_record(&buf[..buf.len() - 1], 0),
            Err(Torn::ShortPayload {
                needed: 7,
                available: 6,
                ..
            })
        ));
        let mut flipped = buf.clone();
        flipped[RECORD_HEADER_LEN] ^= 1;
        assert!(matches!(
            decode_record(&flipped, 0),
            Err(Torn::BadChecksum { .. })
        ));
        let mut huge = buf.clone();
        huge[..4].copy_from_slice(&(MAX_RECORD_PAYLOAD + 1).to_le_bytes());
        assert!(matches!(
            decode_record(&huge, 0),
            Err(Torn::ImplausibleLength { .. })
        ));
    }

    #[test]
    fn records_appended_unsealed_are_sealed_in_place_to_the_same_bytes() {
        let mut sealed = Vec::new();
        let mut unsealed = Vec::new();
        for (i, p) in [&b"payload"[..], b"", &[7u8; 300]].iter().enumerate() {
            let h = RecordHeader {
                seq: i as u64,
                ..header()
            };
            encode_record(&mut sealed, &h, p);
            encode_record_unsealed(&mut unsealed, &h, p);
        }
        assert!(matches!(
            decode_record(&unsealed, 0),
            Err(Torn::BadChecksum { .. })
        ));
        // A partial record at the end is left alone, the whole ones before it sealed.
        let mut partial = unsealed.clone();
        partial.extend_from_slice(&[9, 0, 0, 0, 1]);
        seal_records(&mut partial);
        assert_eq!(&partial[..sealed.len()], &sealed[..]);
        seal_records(&mut unsealed);
        assert_eq!(unsealed, sealed);
        seal_records(&mut unsealed);
        assert_eq!(unsealed, sealed, "sealing twice changes nothing");
    }
}
