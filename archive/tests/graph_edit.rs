//! The blob-edit of a graph: a copy captured into a graph has no expected output of its
//! own (it ran at each launch), so the edit changes the first D2H node of the first graph
//! launch, and only that node's bytes.

mod common;

use common::settings;
use hrr_archive::api::{fid, semantic, CopyDir, BLOB_FIELD, CAPTURE_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::{BlobRef, Payload, PayloadWriter};
use hrr_archive::{edit, Archive, Limits, ProcessWriter};

fn node(seq: u64, r: BlobRef) -> PayloadWriter {
    let mut n = PayloadWriter::new();
    n.u64(fid::NODE_SEQ, seq).blob(fid::NODE_BYTES, r);
    n
}

/// (seq, blob) of each D2H node of the graph launch event at index `i`.
fn outputs(root: &std::path::Path, i: usize) -> Vec<(u64, BlobRef)> {
    let a = Archive::open(root, Limits::default()).unwrap();
    let ev = &a.processes[0].events[i];
    assert_eq!(ev.header.api_id, semantic::GRAPH_LAUNCH);
    let p = Payload::parse(&ev.payload).unwrap();
    p.all(fid::GRAPH_OUTPUT)
        .map(|f| {
            let n = f.as_nested().unwrap();
            (
                n.u64(fid::NODE_SEQ, "seq").unwrap(),
                n.blob(fid::NODE_BYTES, "bytes").unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_edit_changes_the_first_d2h_node_of_a_graph_launch() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let w = ProcessWriter::create(root, settings(), 1).unwrap();
    // seq 0: a D2H copy captured into a graph: no blob.
    let mut p = PayloadWriter::new();
    p.u64(3, 64)
        .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64)
        .u64(CAPTURE_FIELD, 5);
    w.append(21, 0, 77, 0, p.as_bytes()).unwrap();
    // seq 1: a launch of its graph with two D2H nodes.
    let first: Vec<u8> = (0..64u8).collect();
    let second = vec![9u8; 64];
    let (r1, r2) = (w.put_blob(&first).unwrap(), w.put_blob(&second).unwrap());
    let mut p = PayloadWriter::new();
    p.handle(fid::HANDLE, 0xe0).handle(fid::STREAM, 0);
    p.nested(fid::GRAPH_OUTPUT, &node(0, r1));
    p.nested(fid::GRAPH_OUTPUT, &node(7, r2));
    w.append(semantic::GRAPH_LAUNCH, 0, 77, 0, p.as_bytes())
        .unwrap();
    // seq 2: a plain D2H copy after it.
    let mut p = PayloadWriter::new();
    p.u64(3, 64)
        .blob(BLOB_FIELD | 1, r2)
        .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    w.append(21, 0, 77, 0, p.as_bytes()).unwrap();
    w.finish().unwrap();

    let e = edit::edit_expected_output(root, None, 5, Limits::default()).unwrap();
    assert_eq!((e.seq, e.offset, e.old, e.new), (1, 5, 5, !5u8));
    let after = outputs(root, 1);
    assert_eq!(after[1], (7, r2), "the second node is unchanged");
    assert_eq!(after[0].0, 0);
    assert_ne!(after[0].1, r1);
    let a = Archive::open(root, Limits::default()).unwrap();
    let mut bytes = a.processes[0].load_blob(&after[0].1).unwrap();
    bytes[5] = !bytes[5];
    assert_eq!(bytes, first, "exactly one byte flipped");
    // The captured copy itself is never chosen, even by its seq.
    assert!(edit::edit_expected_output(root, Some(0), 0, Limits::default()).is_err());
}
