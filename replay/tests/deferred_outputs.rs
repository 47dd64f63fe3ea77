//! Asynchronous D2H copies whose expected output capture attached later, in a
//! `CopyOutput` record, replayed against the stand-in runtime (standin/: an
//! asynchronous copy into host memory lands only when a stream, an event or the device
//! is waited for): replay compares when the attaching record arrives, after waiting for
//! its own event, so a check made before the copy landed cannot pass; the one-byte edit
//! of such an output fails exactly that copy's check (its sequence id, API and offset);
//! an archive of the earlier format (output inline) still replays; a blocking copy whose
//! output is attached later is compared at the call; a copy whose output never came is
//! refused by name.

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{
    fid, id, semantic, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD, OUTPUT_PENDING_FIELD,
};
use hrr_archive::payload::PayloadWriter;

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;

const DEV: u64 = 0x7000_0000;
const PINNED: u64 = 0x9000_0000;
const STREAM: u64 = 0x5500;
const N: usize = 4096;

fn data() -> Vec<u8> {
    (0..N).map(|i| (i * 31 + 7) as u8).collect()
}

/// Malloc, pinned host memory, a stream, an upload; then asynchronous downloads into
/// the pinned memory: the first with its output inline as before, the next two (the
/// first of them returned) of the same bytes with their outputs pending, attached (when
/// `attach`) before the stream is synchronised.
fn archive(root: &Path, attach: bool) -> u64 {
    let w = common::cuda_writer(root);
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), DEV)
        .u64(ApiDesc::field_id(1), N as u64);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), PINNED)
        .u64(ApiDesc::field_id(1), 2 * N as u64)
        .u64(ApiDesc::field_id(2), 0);
    w.append(id::HostAlloc, 0, 1, 0, p.as_bytes()).unwrap();
    let mut p = PayloadWriter::new();
    p.handle(ApiDesc::field_id(0), STREAM);
    w.append(id::StreamCreate, 0, 1, 0, p.as_bytes()).unwrap();
    let up = w.put_blob(&data()).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, DEV)
        .devptr(2, 0x1000)
        .u64(3, N as u64)
        .u64(4, 1)
        .blob(BLOB_FIELD | 2, up)
        .u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    let download = |dst: u64, pending: bool| {
        let mut p = PayloadWriter::new();
        p.devptr(1, dst)
            .devptr(2, DEV)
            .u64(3, N as u64)
            .u64(4, 2)
            .handle(5, STREAM)
            .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        if pending {
            p.u64(OUTPUT_PENDING_FIELD, 1);
        } else {
            p.blob(BLOB_FIELD | 1, up);
        }
        p
    };
    w.append(
        id::MemcpyAsync,
        0,
        1,
        0,
        download(PINNED + N as u64, false).as_bytes(),
    )
    .unwrap();
    let first = w
        .append(id::MemcpyAsync, 0, 1, 0, download(PINNED, true).as_bytes())
        .unwrap();
    // The same bytes again, into other memory: both wait at once for one content.
    let second = w
        .append(
            id::MemcpyAsync,
            0,
            1,
            0,
            download(PINNED + N as u64, true).as_bytes(),
        )
        .unwrap();
    // Attached before the program's synchronisation, as capture writes it: only replay's
    // own event makes the copy land before the check.
    if attach {
        for seq in [first, second] {
            let mut p = PayloadWriter::new();
            p.u64(fid::COPY_SEQ, seq)
                .u64(fid::COPY_FIELD, 1)
                .blob(BLOB_FIELD | 1, up);
            w.append(semantic::COPY_OUTPUT, 0, 2, 0, p.as_bytes())
                .unwrap();
        }
    }
    let mut p = PayloadWriter::new();
    p.handle(1, STREAM);
    w.append(id::StreamSynchronize, 0, 1, 0, p.as_bytes())
        .unwrap();
    w.finish().unwrap();
    first
}

fn replay(so: &Path, root: &Path, json: &Path) -> (i32, serde_json::Value) {
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(root)
        .arg("--json")
        .arg(json)
        .env("HRR_REPLAY_CUDART", so)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    (o.status.code().unwrap_or(-1), v)
}

#[test]
fn a_pending_output_is_compared_when_it_arrives_and_its_edit_names_the_copy() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let first = archive(&root, true);
    let (code, r) = replay(so, &root, &t.path().join("r.json"));
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["verdict"], "PASS", "{r}");
    assert_eq!(r["counts"]["d2h_pass"], 3, "{r}");

    // The edit of the pending copy's output changes its CopyOutput blob and names the
    // copy.
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--edit-expected", "100", "--seq", &first.to_string()])
        .arg(&root)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains(&format!("seq {first}: expected output byte 100")),
        "{out}"
    );
    let (code, r) = replay(so, &root, &t.path().join("e.json"));
    assert_eq!(code, 1, "{r}");
    let f = &r["failures"][0];
    assert_eq!(r["failures"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(f["kind"], "d2h_mismatch", "{r}");
    assert_eq!(f["seq"], first, "{r}");
    assert_eq!(f["api"], "cudaMemcpyAsync", "{r}");
    assert_eq!(f["first_differing_offset"], 100, "{r}");
    assert_eq!(f["differing_bytes"], 1, "{r}");
    // The other copy of the same (unedited) bytes passes: the edited content is another.
    assert_eq!(r["counts"]["d2h_pass"], 2, "{r}");
}

#[test]
fn a_copy_whose_output_never_came_is_refused_by_name() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let first = archive(&root, false);
    let (code, r) = replay(so, &root, &t.path().join("r.json"));
    assert_ne!(code, 0, "{r}");
    let f = &r["failures"][0];
    assert_eq!(f["seq"], first, "{r}");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("no CopyOutput record carries it"),
        "{r}"
    );
}

#[test]
fn a_blocking_copy_whose_output_is_attached_later_is_compared_at_the_call() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let w = common::cuda_writer(&root);
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), DEV)
        .u64(ApiDesc::field_id(1), N as u64);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let up = w.put_blob(&data()).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, DEV)
        .devptr(2, 0x1000)
        .u64(3, N as u64)
        .u64(4, 1)
        .blob(BLOB_FIELD | 2, up)
        .u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, PINNED)
        .devptr(2, DEV)
        .u64(3, N as u64)
        .u64(4, 2)
        .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64)
        .u64(OUTPUT_PENDING_FIELD, 1);
    let copy = w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    // Another call between the copy and its attached output (as capture writes it: a
    // reader stores the snapshot while the program goes on).
    let mut p = PayloadWriter::new();
    p.devptr(1, DEV).u64(2, 0).u64(3, N as u64);
    w.append(id::Memset, 0, 1, 0, p.as_bytes()).unwrap();
    let mut p = PayloadWriter::new();
    p.u64(fid::COPY_SEQ, copy)
        .u64(fid::COPY_FIELD, 1)
        .blob(BLOB_FIELD | 1, up);
    w.append(semantic::COPY_OUTPUT, 0, 2, 0, p.as_bytes())
        .unwrap();
    w.finish().unwrap();
    let (code, r) = replay(so, &root, &t.path().join("r.json"));
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["counts"]["d2h_pass"], 1, "{r}");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--edit-expected", "9"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(o.status.success());
    let (code, r) = replay(so, &root, &t.path().join("e.json"));
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["failures"][0]["seq"], copy, "{r}");
    assert_eq!(r["failures"][0]["api"], "cudaMemcpy", "{r}");
    assert_eq!(r["failures"][0]["first_differing_offset"], 9, "{r}");
}
