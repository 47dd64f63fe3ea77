//! `--replace-kernel NAME=PATH` where nothing can be replaced: a code object that cannot
//! be read is refused before replay (exit 2, naming it), and a name the archive never
//! looks up fails the replay saying so, never passing as "unchanged". (A replacement that
//! is used: the matrix's `kernel_replacement` case, under the stand-in in CI and on GPUs.)

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{id, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::PayloadWriter;
use serde_json::Value;

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;

/// Malloc, an upload of 64 bytes and their download: no kernel at all.
fn archive(root: &Path) {
    let data = [9u8; 64];
    let w = common::cuda_writer(root);
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), 0x7000_0000)
        .u64(ApiDesc::field_id(1), 64);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let up = w.put_blob(&data).unwrap();
    for (dir, dst, src) in [
        (CopyDir::HostToDevice, 0x7000_0000u64, 0x1000u64),
        (CopyDir::DeviceToHost, 0x2000, 0x7000_0000),
    ] {
        let mut p = PayloadWriter::new();
        p.devptr(1, dst)
            .devptr(2, src)
            .u64(3, 64)
            .u64(4, dir as u64)
            .blob(
                BLOB_FIELD | if dir == CopyDir::HostToDevice { 2 } else { 1 },
                up,
            )
            .u64(COPY_DIR_FIELD, dir as u64);
        w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn a_replacement_that_cannot_be_used_is_never_a_pass() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    archive(&root);
    // An unreadable code object: refused before anything runs.
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(&root)
        .arg("--replace-kernel")
        .arg(format!("affine={}", t.path().join("missing.co").display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--replace-kernel affine=") && err.contains("missing.co"),
        "{err}"
    );
    // Not NAME=PATH: a usage error.
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(&root)
        .args(["--replace-kernel", "affine"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not NAME=PATH"));

    let Some(so) = stand_in::library() else {
        return;
    };
    let co = t.path().join("k.co");
    std::fs::write(&co, b"\x7fELF not looked up anyway").unwrap();
    let json = t.path().join("r.json");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(&root)
        .arg("--replace-kernel")
        .arg(format!("affine={}", co.display()))
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(o.status.code(), Some(1), "{r}");
    assert_eq!(r["replaced_kernels"][0]["name"], "affine");
    assert_eq!(r["replaced_kernels"][0]["lookups"], 0);
    let msg = r["failures"][0]["message"].as_str().unwrap();
    assert!(msg.contains("looked up no kernel of that name"), "{msg}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("replaced kernel  : affine from"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
