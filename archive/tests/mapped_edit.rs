//! The blob-edit of a program whose only outputs are written by kernels into mapped or
//! managed memory: the edit changes the first `MappedOutput` record's bytes (a record
//! flagged incomplete, which carries none, is passed over), and only that record's.

mod common;

use common::settings;
use hrr_archive::api::{fid, semantic};
use hrr_archive::payload::{BlobRef, Payload, PayloadWriter};
use hrr_archive::record::RECORD_FLAG_INCOMPLETE;
use hrr_archive::{edit, Archive, Limits, ProcessWriter};

fn mapped(start: u64, r: Option<BlobRef>) -> PayloadWriter {
    let mut p = PayloadWriter::new();
    p.devptr(fid::MAPPED_START, start)
        .u64(fid::MAPPED_SIZE, 64)
        .u64(fid::MAPPED_LAUNCH, 1)
        .u64(fid::MAPPED_SYNC, 2);
    if let Some(r) = r {
        p.blob(fid::MAPPED_BYTES, r);
    }
    p
}

fn bytes_of(root: &std::path::Path, i: usize) -> BlobRef {
    let a = Archive::open(root, Limits::default()).unwrap();
    let ev = &a.processes[0].events[i];
    assert_eq!(ev.header.api_id, semantic::MAPPED_OUTPUT);
    Payload::parse(&ev.payload)
        .unwrap()
        .blob(fid::MAPPED_BYTES, "bytes")
        .unwrap()
}

#[test]
fn the_edit_changes_the_first_mapped_output_and_nothing_else() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let w = ProcessWriter::create(root, settings(), 1).unwrap();
    let first: Vec<u8> = (0..64u8).collect();
    let (r1, r2) = (w.put_blob(&first).unwrap(), w.put_blob(&[3u8; 64]).unwrap());
    // seq 0: a synchronisation's outputs over the cap: incomplete, no bytes.
    w.append(
        semantic::MAPPED_OUTPUT,
        RECORD_FLAG_INCOMPLETE,
        77,
        0,
        mapped(0x9000, None).as_bytes(),
    )
    .unwrap();
    // seq 1 and 2: two allocations after the next synchronisation.
    for (start, r) in [(0x1000, r1), (0x2000, r2)] {
        w.append(
            semantic::MAPPED_OUTPUT,
            0,
            77,
            0,
            mapped(start, Some(r)).as_bytes(),
        )
        .unwrap();
    }
    w.finish().unwrap();

    let e = edit::edit_expected_output(root, None, 5, Limits::default()).unwrap();
    assert_eq!((e.seq, e.offset, e.old, e.new), (1, 5, 5, !5u8));
    assert_ne!(
        bytes_of(root, 1),
        r1,
        "the first output points at the edited bytes"
    );
    assert_eq!(bytes_of(root, 2), r2, "the second is unchanged");
    let a = Archive::open(root, Limits::default()).unwrap();
    let edited = a.processes[0].load_blob(&bytes_of(root, 1)).unwrap();
    let mut want = first.clone();
    want[5] = !5;
    assert_eq!(edited, want);
}
