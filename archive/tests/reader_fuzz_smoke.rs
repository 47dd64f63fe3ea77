//! Bounded fuzz smoke test run in CI: thousands of mutated logs, payloads and manifests
//! must decode to a result or an error, never a panic or an unbounded allocation.
//! The coverage-guided target is archive/fuzz (cargo fuzz run reader).

use std::path::Path;

use hrr_archive::payload::{Payload, PayloadWriter};
use hrr_archive::reader::decode_log;
use hrr_archive::record::{self, RecordHeader};
use hrr_archive::Limits;

/// xorshift64*: deterministic, so a failure reproduces from the printed iteration.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seed_log() -> Vec<u8> {
    let mut out = record::file_header().to_vec();
    for i in 0..20u64 {
        let mut inner = PayloadWriter::new();
        inner.u64(1, i).devptr(2, 0x7000 + i);
        let mut p = PayloadWriter::new();
        p.u64(1, i).str(2, "kernel").u64_array(3, &[1, 2, 3]);
        p.nested(4, &inner);
        let h = RecordHeader {
            api_id: (i % 5) as u16,
            flags: 0,
            seq: i,
            timestamp_ns: i * 10,
            tid: 1,
            ret: 0,
        };
        record::encode_record(&mut out, &h, p.as_bytes());
    }
    let h = RecordHeader {
        api_id: record::TRAILER_API_ID,
        flags: 0,
        seq: 20,
        timestamp_ns: 300,
        tid: 1,
        ret: 0,
    };
    record::encode_record(&mut out, &h, &record::trailer_payload(20));
    out
}

#[test]
fn mutated_logs_never_panic() {
    let seed = seed_log();
    let limits = Limits {
        max_events: 1000,
        ..Limits::default()
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for iter in 0..20_000 {
        let mut b = seed.clone();
        for _ in 0..1 + rng.below(4) {
            if b.is_empty() {
                break;
            }
            match rng.below(4) {
                0 => {
                    let i = rng.below(b.len());
                    b[i] ^= 1 << rng.below(8);
                }
                1 => b.truncate(rng.below(b.len() + 1)),
                2 => {
                    let i = rng.below(b.len());
                    b[i] = 0xff;
                }
                _ => {
                    let i = rng.below(b.len());
                    let n = rng.below(16);
                    b.splice(i..i, std::iter::repeat_n(rng.next() as u8, n));
                }
            }
        }
        let r = std::panic::catch_unwind(|| {
            if let Ok((events, _)) = decode_log(Path::new("fuzz"), &b, &limits) {
                for e in &events {
                    if let Ok(p) = Payload::parse(&e.payload) {
                        for f in p.iter() {
                            let _ = f.render();
                        }
                    }
                }
            }
            // Payload decoding on raw bytes as well (a record's payload may be anything).
            if let Ok(p) = Payload::parse(&b[b.len().min(16)..]) {
                for f in p.iter() {
                    let _ = f.render();
                }
            }
        });
        assert!(r.is_ok(), "iteration {iter} panicked on {} bytes", b.len());
    }
}

#[test]
fn mutated_manifests_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let w = hrr_archive::ProcessWriter::create(
        dir.path(),
        hrr_archive::CaptureSettings {
            fsync: false,
            fsync_blobs: false,
            code_store: None,
            reserve: hrr_archive::diskspace::ReservePolicy::Bytes(0),
            ..Default::default()
        },
        1,
    )
    .unwrap();
    w.append(1, 0, 1, 0, b"").unwrap();
    w.finish().unwrap();
    let m = dir.path().join("manifest.json");
    let orig = std::fs::read(&m).unwrap();
    let mut rng = Rng(42);
    for _ in 0..500 {
        let mut b = orig.clone();
        let i = rng.below(b.len());
        b[i] = b"{}[]\":,0123456789-ab"[rng.below(20)];
        std::fs::write(&m, &b).unwrap();
        let r = std::panic::catch_unwind(|| {
            let _ = hrr_archive::Archive::open(dir.path(), Limits::default());
        });
        assert!(r.is_ok());
    }
}
