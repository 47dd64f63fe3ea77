//! `--pack` / `--unpack` and replaying a packed archive (`.hrrz`) as the directory it
//! holds: the same verdict, the result naming the file given; `--info` reads it too; a
//! damaged pack is refused as an invalid archive (exit 2), naming the file.

use std::path::Path;
use std::process::{Command, Output};

use hrr_archive::api::{id, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::PayloadWriter;
use serde_json::Value;

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;

const DEV: u64 = 0x7000_0000;

/// Malloc, an upload of 64 bytes and their download.
fn archive(root: &Path) {
    let data: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
    let w = common::cuda_writer(root);
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), DEV)
        .u64(ApiDesc::field_id(1), 64);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let up = w.put_blob(&data).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, DEV)
        .devptr(2, 0x1000)
        .u64(3, 64)
        .u64(4, 1)
        .blob(BLOB_FIELD | 2, up)
        .u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, 0x2000)
        .devptr(2, DEV)
        .u64(3, 64)
        .u64(4, 2)
        .blob(BLOB_FIELD | 1, up)
        .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
    w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    w.finish().unwrap();
}

fn replay(args: &[&Path], flags: &[&str], so: Option<&Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hrr-replay"));
    c.args(flags).args(args);
    if let Some(so) = so {
        c.env("HRR_REPLAY_CUDART", so);
    }
    c.output().unwrap()
}

#[test]
fn a_packed_archive_packs_unpacks_and_is_read_as_its_directory() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    archive(&root);
    let hrrz = t.path().join("a.hrrz");
    let o = replay(&[&root, &hrrz], &["--pack"], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stdout);
    let sha = hrr_archive::pack::file_sha256(&hrrz).unwrap();
    assert!(said.contains(&format!("sha256 {sha}")), "{said}");
    // --info reads the packed file.
    let o = replay(&[&hrrz], &["--info"], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("events"));
    // --unpack into a new directory, and never over an existing one.
    let out = t.path().join("u");
    let o = replay(&[&hrrz, &out], &["--unpack"], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("manifest.json").is_file());
    let o = replay(&[&hrrz, &out], &["--unpack"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already exists"));
    // One path only is a usage error that says what is needed.
    let o = replay(&[&root], &["--pack"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("takes two paths"));
}

#[test]
fn a_packed_archive_replays_like_its_directory_and_a_damaged_one_is_refused() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    archive(&root);
    let hrrz = t.path().join("a.hrrz");
    assert!(replay(&[&root, &hrrz], &["--pack"], None).status.success());
    let json = t.path().join("r.json");
    // Its own temporary directory, to see the unpacked copy removed.
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(&hrrz)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["verdict"], "PASS");
    assert_eq!(r["archive"], hrrz.display().to_string());
    assert_eq!(r["counts"]["d2h_pass"], 1);
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    // A byte of the packed file changed: refused as an invalid archive, naming it.
    let mut bytes = std::fs::read(&hrrz).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    let bad = t.path().join("bad.hrrz");
    std::fs::write(&bad, &bytes).unwrap();
    let o = replay(&[&bad], &[], Some(so));
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bad.hrrz"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
