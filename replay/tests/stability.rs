//! `--stability-runs N` against the stand-in runtime (standin/'s on_request.c), which
//! makes device-to-host results vary on demand (`HRR_STAND_IN_VARY`: bytes that differ
//! in every result, as a float atomic sum does from run to run) or go wrong alike
//! (`HRR_STAND_IN_SKEW`: one byte wrong in every result, a regression). Bytes the
//! replays disagree on are excluded and listed, never passed; a byte every replay gets
//! wrong fails as always, beside unstable ones too; a check with no stable byte verifies
//! nothing; the one-byte edit of a stable byte still fails exactly that check.

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{id, ApiDesc, CopyDir, BLOB_FIELD, COPY_DIR_FIELD};
use hrr_archive::payload::PayloadWriter;
use serde_json::Value;

mod common;
#[path = "common/stand_in.rs"]
mod stand_in;

const DEV: u64 = 0x7000_0000;
const N: usize = 64;

/// Malloc, an upload of N bytes, then two blocking downloads of them: the first of
/// `first` bytes, the second whole. Returns the downloads' sequence ids.
fn archive(root: &Path, first: usize) -> (u64, u64) {
    let seqs = downloads(root, &[first, N]);
    (seqs[0], seqs[1])
}

/// Malloc, an upload of N bytes, then a blocking download of each length in `lengths`.
/// Returns the downloads' sequence ids.
fn downloads(root: &Path, lengths: &[usize]) -> Vec<u64> {
    let data: Vec<u8> = (0..N).map(|i| (i * 37 + 11) as u8).collect();
    let w = common::cuda_writer(root);
    let mut p = PayloadWriter::new();
    p.devptr(ApiDesc::field_id(0), DEV)
        .u64(ApiDesc::field_id(1), N as u64);
    w.append(id::Malloc, 0, 1, 0, p.as_bytes()).unwrap();
    let up = w.put_blob(&data).unwrap();
    let mut p = PayloadWriter::new();
    p.devptr(1, DEV)
        .devptr(2, 0x1000)
        .u64(3, N as u64)
        .u64(4, 1)
        .blob(BLOB_FIELD | 2, up)
        .u64(COPY_DIR_FIELD, CopyDir::HostToDevice as u64);
    w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap();
    let download = |n: usize| {
        let out = w.put_blob(&data[..n]).unwrap();
        let mut p = PayloadWriter::new();
        p.devptr(1, 0x2000)
            .devptr(2, DEV)
            .u64(3, n as u64)
            .u64(4, 2)
            .blob(BLOB_FIELD | 1, out)
            .u64(COPY_DIR_FIELD, CopyDir::DeviceToHost as u64);
        w.append(id::Memcpy, 0, 1, 0, p.as_bytes()).unwrap()
    };
    let seqs = lengths.iter().map(|&n| download(n)).collect();
    w.finish().unwrap();
    seqs
}

/// Replays `root` with `args` and the stand-in's `env`: (exit code, summary, result).
fn replay(so: &Path, root: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, Value) {
    let json = root.with_extension("json");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(root)
        .args(args)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .env_remove("HRR_STAND_IN_VARY")
        .env_remove("HRR_STAND_IN_SKEW")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        v,
    )
}

#[test]
fn bytes_that_differ_between_replays_are_excluded_and_listed_never_passed() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let (a, b) = archive(&root, N);
    let vary = [("HRR_STAND_IN_VARY", "4:3")];

    // Replayed once, the varying bytes are a mismatch like any other.
    let (code, _, r) = replay(so, &root, &[], &vary);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["failures"][0]["first_differing_offset"], 4, "{r}");

    // Replayed three times, they are unstable: excluded, counted, listed.
    let (code, text, r) = replay(so, &root, &["--stability-runs", "3"], &vary);
    assert_eq!(code, 0, "{text}{r}");
    assert_eq!(r["verdict"], "PASS", "{r}");
    assert_eq!(r["schema_version"], "1.4", "{r}");
    assert_eq!(r["stability_runs"], 3, "{r}");
    let c = &r["counts"];
    assert_eq!(
        (c["d2h_pass"].as_u64(), c["d2h_unstable"].as_u64()),
        (Some(0), Some(2)),
        "{r}"
    );
    assert_eq!(c["unstable_bytes"], 6, "{r}");
    let u = r["unstable"].as_array().unwrap();
    assert_eq!(u.len(), 2, "{r}");
    assert_eq!(u[0]["seq"], a, "{r}");
    assert_eq!(u[1]["seq"], b, "{r}");
    assert_eq!(u[0]["verdict"], "stable_bytes_match", "{r}");
    assert_eq!(
        u[0]["ranges"],
        serde_json::json!([{"start": 4, "len": 3}]),
        "{r}"
    );
    assert_eq!(
        (u[0]["unstable_bytes"].as_u64(), u[0]["bytes"].as_u64()),
        (Some(3), Some(N as u64))
    );
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("2 more matched on their stable bytes only (6 unstable byte(s) excluded: they differed between 3 replays)"),
        "{r}"
    );
    assert!(text.contains("stability runs   : 3"), "{text}");
    assert!(
        text.contains(&format!(
            "UNSTABLE seq {a} cudaMemcpy [stable_bytes_match]: 3 of 64 bytes differed between 3 replays, at 4..7"
        )),
        "{text}"
    );

    // Nothing varies: every check passes, nothing is excluded or listed.
    let (code, text, r) = replay(so, &root, &["--stability-runs", "2"], &[]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(r["counts"]["d2h_pass"], 2, "{r}");
    assert!(
        r.get("unstable").is_none() && r["counts"].get("unstable_bytes").is_none(),
        "{r}"
    );
    assert!(!text.contains("UNSTABLE"), "{text}");
}

/// Instability never masks a regression: a byte every replay gets wrong fails, named,
/// beside unstable bytes too, and the one-byte edit of a stable byte fails exactly there.
#[test]
fn a_byte_every_replay_gets_wrong_fails_beside_unstable_ones() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let (a, _) = archive(&root, N);
    let env = [("HRR_STAND_IN_VARY", "0:2"), ("HRR_STAND_IN_SKEW", "9")];
    let (code, _, r) = replay(so, &root, &["--stability-runs", "3"], &env);
    assert_eq!(code, 1, "{r}");
    let f = &r["failures"][0];
    assert_eq!(r["failures"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(f["seq"], a, "{r}");
    assert_eq!(f["kind"], "d2h_mismatch", "{r}");
    assert_eq!(
        (
            f["first_differing_offset"].as_u64(),
            f["differing_bytes"].as_u64()
        ),
        (Some(9), Some(1)),
        "{r}"
    );
    assert!(
        f["message"].as_str().unwrap().ends_with(
            "(stable bytes only: 2 byte(s) at 0..2 differed between 3 replays and were excluded)"
        ),
        "{r}"
    );
    assert_eq!(r["unstable"][0]["verdict"], "stable_bytes_differ", "{r}");
    assert_eq!(r["counts"]["d2h_fail"], 2, "{r}");

    // The blob-edit check's edit of a stable byte under instability.
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--edit-expected", "20"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(o.status.success());
    let (code, _, r) = replay(so, &root, &["--stability-runs", "3"], &env[..1]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["failures"].as_array().unwrap().len(), 1, "{r}");
    let f = &r["failures"][0];
    assert_eq!(
        (
            f["seq"].as_u64(),
            f["first_differing_offset"].as_u64(),
            f["differing_bytes"].as_u64()
        ),
        (Some(a), Some(20), Some(1)),
        "{r}"
    );
}

/// A check with no stable byte verifies nothing: not a pass, and an archive with no
/// other check fails as "nothing was verified".
#[test]
fn a_check_with_no_stable_byte_is_not_a_pass() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    // The first download is 4 bytes, all varying; the second has stable bytes beyond.
    let (a, _) = archive(&root, 4);
    let env = [("HRR_STAND_IN_VARY", "0:4")];
    let (code, text, r) = replay(so, &root, &["--stability-runs", "2"], &env);
    assert_eq!(code, 0, "{text}");
    assert_eq!(r["counts"]["d2h_all_unstable"], 1, "{r}");
    assert_eq!(r["counts"]["d2h_unstable"], 1, "{r}");
    assert_eq!(r["counts"]["d2h_pass"], 0, "{r}");
    assert_eq!(r["unstable"][0]["seq"], a, "{r}");
    assert_eq!(r["unstable"][0]["verdict"], "all_unstable", "{r}");
    assert!(
        r["reason"].as_str().unwrap().ends_with(
            "; 1 check(s) had no byte the same in all 2 replays (nothing of them verified)"
        ),
        "{r}"
    );
    // Every byte of both downloads varies: nothing verified.
    let env = [("HRR_STAND_IN_VARY", "0:64")];
    let (code, _, r) = replay(so, &root, &["--stability-runs", "2"], &env);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["verdict"], "FAIL", "{r}");
    assert_eq!(r["counts"]["d2h_all_unstable"], 2, "{r}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .starts_with("no device-to-host check passed: nothing was verified; 2 check(s)"),
        "{r}"
    );
}

#[test]
fn stability_runs_are_bounded() {
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--stability-runs", "65", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .args(["--stability-runs", "0", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// `--divergence-abort 0.25`: a replay whose every result is wrong (`HRR_STAND_IN_SKEW`)
/// stops after the first 10 checks, naming the first failing one, instead of listing all.
#[test]
fn a_diverging_replay_stops_early_and_names_the_first_failing_check() {
    let Some(so) = stand_in::library() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("a");
    let first = downloads(&root, &[N; 40])[0];
    let skew = [("HRR_STAND_IN_SKEW", "5")];
    let (code, out, v) = replay(
        so,
        &root,
        &["--continue-on-error", "--divergence-abort", "0.25"],
        &skew,
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(v["counts"]["d2h_fail"], 10, "{v}");
    let failures = v["failures"].as_array().unwrap();
    let last = failures.last().unwrap()["message"].as_str().unwrap();
    assert_eq!(
        last,
        format!("replay stopped: 10 of 10 D2H checks failed, more than 25% (--divergence-abort 0.25); the first failing check: pid {} seq {first} cudaMemcpy", failures[0]["pid"])
    );
    // Without the flag every check is made.
    let (_, _, v) = replay(so, &root, &["--continue-on-error"], &skew);
    assert_eq!(v["counts"]["d2h_fail"], 40, "{v}");
}
