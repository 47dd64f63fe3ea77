//! `--compare` against the stand-in runtime: a D2H result that is not byte-exact matches
//! by the declared comparison (a float tolerance, or the same elements in any order), is
//! listed as such and never counted byte-exact; outside the bound it fails, and without a
//! declaration the failure names the likely cause (float noise, reordered elements).

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{id, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::PayloadWriter;
use serde_json::Value;

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;

const DEV: u64 = 0x7000_0000;

/// Malloc, an upload of `data`, then downloads of it whose captured bytes are each of
/// `expected` (the replayed bytes are `data` again).
fn archive(root: &Path, data: &[u8], expected: &[&[u8]]) {
    let n = data.len() as u64;
    let w = common::cuda_writer(root);
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), DEV)
        .u64(ApiDesc::field_id(1), n);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let up = w.put_blob(data).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, DEV)
        .devptr(2, 0x1000)
        .u64(3, n)
        .u64(4, 1)
        .blob(BLOB_FIELD | 2, up)
        .u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    for want in expected {
        let out = w.put_blob(want).unwrap();
        let mut p = PayloadWriter::new();
        p.devptr(1, 0x2000)
            .devptr(2, DEV)
            .u64(3, n)
            .u64(4, 2)
            .blob(BLOB_FIELD | 1, out)
            .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    }
    w.finish().unwrap();
}

/// Replays `root` with `args`: (exit code, summary, result).
fn replay(so: &Path, root: &Path, args: &[&str]) -> (i32, String, Value) {
    let json = root.with_extension("json");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(root)
        .args(args)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .env_remove("HRR_STAND_IN_VARY")
        .env_remove("HRR_STAND_IN_SKEW")
        .output()
        .unwrap();
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        v,
    )
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn float_noise_matches_within_the_declared_ulps_and_is_named_without_one() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let values = [0.75, 1.5, -3.25, 1e-3, 42.0, 7.0, 0.5, 2.0];
    let data = f64s(&values);
    // The captured residual differs from what replay computes in its last bits.
    let mut noisy = values;
    noisy[2] = f64::from_bits(noisy[2].to_bits() + 3);
    noisy[5] = f64::from_bits(noisy[5].to_bits() - 1);
    archive(&root, &data, &[&data, &f64s(&noisy)]);

    // Byte-exact (the default): a failure that names float noise as its likely cause.
    let (code, _, r) = replay(so, &root, &[]);
    assert_eq!(code, 1, "{r}");
    let msg = r["failures"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("every differing element is within 3 ulps of the captured one read as f64"),
        "{msg}"
    );

    // Declared: the check passes as a match within the tolerance, never byte-exact.
    let (code, summary, r) = replay(so, &root, &["--compare", "f64:ulps=4"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["verdict"], "PASS");
    assert_eq!(r["comparison"], "f64:ulps=4");
    assert_eq!(r["counts"]["d2h_pass"], 1, "{r}");
    assert_eq!(r["counts"]["d2h_declared_match"], 1, "{r}");
    let m = &r["declared_matches"][0];
    assert_eq!(
        (m["elements_differing"].as_u64(), m["max_ulps"].as_u64()),
        (Some(2), Some(3))
    );
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .ends_with("; 1 more matched as f64 within 4 ulps only, not byte-exact"),
        "{r}"
    );
    assert!(
        summary.contains("2 of 8 f64 element(s) differ, matched within 3 ulps"),
        "{summary}"
    );

    // Outside the bound: a failure as always.
    let (code, _, r) = replay(so, &root, &["--compare", "f64:ulps=2"]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["failures"][0]["kind"], "d2h_mismatch");
    assert!(r["counts"].get("d2h_declared_match").is_none(), "{r}");
}

#[test]
fn reordered_elements_match_as_a_multiset_only() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let words: Vec<u32> = (0..64u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let data: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut moved = words.clone();
    moved.rotate_left(5);
    let moved: Vec<u8> = moved.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut lost = words.clone();
    lost[3] = lost[4];
    let lost: Vec<u8> = lost.iter().flat_map(|w| w.to_le_bytes()).collect();

    archive(&root, &data, &[&moved]);
    let (code, _, r) = replay(so, &root, &[]);
    assert_eq!(code, 1, "{r}");
    let msg = r["failures"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("the same 4-byte elements as at capture, 64 of 64 in other positions"),
        "{msg}"
    );
    let (code, _, r) = replay(so, &root, &["--compare", "unordered:4"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["counts"]["d2h_declared_match"], 1, "{r}");
    assert_eq!(r["counts"]["d2h_pass"], 0, "{r}");
    assert!(r["declared_matches"][0].get("max_ulps").is_none(), "{r}");

    // An element lost and another doubled is no permutation: a failure.
    let root = t.path().join("b");
    archive(&root, &data, &[&lost]);
    let (code, _, r) = replay(so, &root, &["--compare", "unordered:4"]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["failures"][0]["kind"], "d2h_mismatch");
}

#[test]
fn a_bad_comparison_is_refused_by_the_command_line() {
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["/nonexistent", "--compare", "f64:ulps=0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ulps 0 must be 1 to"), "{err}");
}
