//! Repair's scan on crafted logs (`cargo bench -p hrr-archive --bench repair_bench`):
//! issue 20's shape, a log where every 16th offset after two whole records looks like a
//! whole 4 MiB record (a plausible length and sequence id) whose checksum fails, at 4, 8
//! and 16 MiB; and an intact log of 16 MiB for comparison. Prints the time and the CRC
//! work per log. Results go into bench/RESULTS.md.

use std::time::Instant;

use hrr_archive::record::{encode_record, file_header, RecordHeader};
use hrr_archive::repair::scan;

fn header(seq: u64) -> RecordHeader {
    RecordHeader {
        api_id: 3,
        flags: 0,
        seq,
        timestamp_ns: seq,
        tid: 1,
        ret: 0,
    }
}

fn crafted(mib: usize) -> Vec<u8> {
    let mut b = file_header().to_vec();
    for seq in 0..2 {
        encode_record(&mut b, &header(seq), &[7u8; 16]);
    }
    let start = b.len();
    b.resize(start + (mib << 20), 0);
    for at in (start..b.len() - 36).step_by(16) {
        b[at..at + 4].copy_from_slice(&(4u32 << 20).to_le_bytes());
        b[at + 8..at + 16].copy_from_slice(&2u64.to_le_bytes());
    }
    b
}

fn intact(mib: usize) -> Vec<u8> {
    let mut b = file_header().to_vec();
    let mut seq = 0;
    while b.len() < mib << 20 {
        encode_record(&mut b, &header(seq), &[seq as u8; 100]);
        seq += 1;
    }
    b
}

fn main() {
    for (what, log) in [
        ("crafted 4 MiB", crafted(4)),
        ("crafted 8 MiB", crafted(8)),
        ("crafted 16 MiB", crafted(16)),
        ("intact 16 MiB", intact(16)),
    ] {
        let t = Instant::now();
        let s = scan(&log);
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{what:>15}: {secs:.3} s, {} records kept, {:.1} bytes of CRC per byte",
            s.records.len(),
            s.checksum_bytes as f64 / log.len() as f64
        );
    }
}
