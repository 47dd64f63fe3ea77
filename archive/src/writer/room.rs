//! Disk space for the event log: which whole records fit, and the room always kept for
//! the manifest that says why recording stopped.

use crate::record::RECORD_HEADER_LEN;

/// Free space always kept for the process manifest written when recording stops (its
/// stop reason): capture failures are capped at 1000 entries, so it stays well under this.
pub const MANIFEST_ROOM: u64 = 512 << 10;

/// (bytes, records) of the longest run of whole records at the start of `data` that is
/// at most `limit` bytes long.
pub fn whole_records_within(data: &[u8], limit: usize) -> (usize, u64) {
    let (mut off, mut n) = (0usize, 0u64);
    while off + RECORD_HEADER_LEN <= data.len() {
        let len = u32::from_le_bytes([data[off], data[off + 1], data[off + 2], data[off + 3]]);
        let next = off + RECORD_HEADER_LEN + len as usize;
        if next > limit || next > data.len() {
            break;
        }
        off = next;
        n += 1;
    }
    (off, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{self, RecordHeader};

    #[test]
    fn only_whole_records_count_as_fitting() {
        let mut data = Vec::new();
        for seq in 0..3u64 {
            let h = RecordHeader {
                api_id: 1,
                flags: 0,
                seq,
                timestamp_ns: 0,
                tid: 1,
                ret: 0,
            };
            record::encode_record(&mut data, &h, &[7u8; 10]);
        }
        let one = RECORD_HEADER_LEN + 10;
        assert_eq!(whole_records_within(&data, data.len()), (3 * one, 3));
        assert_eq!(whole_records_within(&data, 2 * one + 5), (2 * one, 2));
        assert_eq!(whole_records_within(&data, one - 1), (0, 0));
        assert_eq!(whole_records_within(&data[..one + 3], usize::MAX), (one, 1));
    }
}
