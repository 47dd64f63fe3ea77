//! A failing program's archive (issue 26): the program's device synchronisation returned
//! a sticky error (715, an illegal instruction), and every call after it too; its D2H
//! copy wrote nothing, so the archive holds no expected bytes for it. Replayed against
//! the stand-in runtime told to fault the same way (`HRR_STAND_IN_FAULT`), the fault is
//! REPRODUCED (exit 4, 0 with `--expect-fault`), with no archive error about the missing
//! bytes; replayed where nothing faults, it is a FAIL naming the captured fault.

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{id, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::PayloadWriter;
use serde_json::Value;

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;

const DEV: u64 = 0x7000_0000;
const N: u64 = 128;

/// Malloc, an upload, the synchronisation that faulted, then a download, a free and a
/// malloc that the sticky error failed. Returns the synchronisation's sequence id.
fn faulted_archive(root: &Path) -> u64 {
    let w = common::cuda_writer(root);
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), DEV)
        .u64(ApiDesc::field_id(1), N);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let up = w.put_blob(&[7u8; N as usize]).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, DEV)
        .devptr(2, 0x1000)
        .u64(3, N)
        .u64(4, 1)
        .blob(BLOB_FIELD | 2, up)
        .u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    let sync = w
        .append(
            id::DeviceSynchronize,
            0,
            1,
            715,
            PayloadWriter::new().as_bytes(),
        )
        .unwrap();
    // The download the fault failed: no expected bytes.
    let mut p = PayloadWriter::new();
    p.devptr(1, 0x2000)
        .devptr(2, DEV)
        .u64(3, N)
        .u64(4, 2)
        .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    w.append(id::Memcpy, 0, 1, 715, p.as_bytes()).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, DEV);
    w.append(id::Free, 0, 1, 715, p.as_bytes()).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), 0)
        .u64(ApiDesc::field_id(1), N);
    w.append(id::Malloc, 0, 1, 715, p.as_bytes()).unwrap();
    w.finish().unwrap();
    sync
}

fn replay(so: &Path, root: &Path, args: &[&str], fault: Option<&str>) -> (i32, String, Value) {
    let json = root.with_extension("json");
    let mut c = Command::new(env!("CARGO_BIN_EXE_hrr-replay"));
    c.arg(root)
        .args(args)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .env_remove("HRR_STAND_IN_FAULT");
    if let Some(code) = fault {
        c.env("HRR_STAND_IN_FAULT", code);
    }
    let o = c.output().unwrap();
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        v,
    )
}

#[test]
fn a_fault_replayed_to_the_same_error_at_the_same_call_is_reproduced() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let sync = faulted_archive(&root);

    let (code, out, v) = replay(so, &root, &[], Some("715"));
    assert_eq!(code, 4, "{out}");
    assert_eq!(v["verdict"], "REPRODUCED");
    assert_eq!(v["exit_code"], 4);
    let f = &v["fault"];
    assert_eq!(
        (f["code"].as_i64(), f["seq"].as_u64()),
        (Some(715), Some(sync))
    );
    assert_eq!(f["error"], "cudaErrorIllegalInstruction");
    assert_eq!(f["api"], "cudaDeviceSynchronize");
    assert_eq!(f["reproduced"], true);
    assert!(v["failures"].as_array().unwrap().is_empty(), "{out}");
    let pid = f["pid"].as_u64().unwrap();
    assert!(
        out.contains(&format!(
            "REPRODUCED: the program faulted with 715 (cudaErrorIllegalInstruction) at capture and at replay; first failing call pid {pid} seq {sync} cudaDeviceSynchronize"
        )),
        "{out}"
    );
    assert!(!out.contains("expected output"), "{out}");

    // What the user asked for: 0 under --expect-fault.
    let (code, out, _) = replay(so, &root, &["--expect-fault"], Some("715"));
    assert_eq!(code, 0, "{out}");

    // Nothing faults at replay: a FAIL naming the captured fault, never a pass.
    let (code, out, v) = replay(so, &root, &["--expect-fault"], None);
    assert_eq!(code, 1, "{out}");
    assert_eq!(v["verdict"], "FAIL");
    assert_eq!(v["fault"]["reproduced"], false);
    assert!(out.contains("at capture, not so at replay"), "{out}");
    // Another error at replay is no reproduction either.
    let (code, _, v) = replay(so, &root, &[], Some("700"));
    assert_eq!((code, &v["verdict"]), (1, &Value::from("FAIL")));
}

/// `--sync-watchdog`: a synchronisation that does not return (the stand-in's waits 30 s)
/// is stopped after the limit, naming the event, instead of hanging the replay.
#[test]
fn a_replay_stuck_in_a_synchronisation_is_stopped_and_named() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let sync = faulted_archive(&root);
    let began = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(&root)
        .args(["--sync-watchdog", "1"])
        .env("HRR_REPLAY_CUDART", so)
        .env("HRR_STAND_IN_HANG", "30")
        .env_remove("HRR_STAND_IN_FAULT")
        .output()
        .unwrap();
    let took = began.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(took.as_secs() < 20, "stopped after {took:?}: {err}");
    assert!(
        err.contains(&format!(
            " seq {sync} cudaDeviceSynchronize has not returned after "
        )),
        "{err}"
    );
    assert!(
        err.contains("(--sync-watchdog 1 s); no kernel was launched before it"),
        "{err}"
    );
}
