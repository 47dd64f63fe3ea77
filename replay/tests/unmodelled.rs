//! Archives whose program called APIs capture does not model (records and manifest
//! entries as capture writes them), replayed through the hrr-replay binary against the
//! stand-in runtime: refused by name with counts, first sequence ids and the remedy;
//! under --continue-on-error replayed with every later check marked; an exempt call
//! alone refuses nothing; --info shows them.

#[path = "common/seeds.rs"]
#[allow(dead_code)] // rich_archive is for the other tests
mod seeds;
#[path = "common/stand_in.rs"]
mod stand_in;

use std::path::Path;
use std::process::Command;

use hrr_archive::api::{fid, id, semantic, CopyDir};
use hrr_archive::blob::Compression;
use hrr_archive::manifest::{ProcessManifest, UnmodelledApi, UnmodelledCoverage};
use hrr_archive::payload::PayloadWriter;
use serde_json::Value;

/// What the archive's sequence ids are.
struct Seqs {
    exempt: u64,
    unmodelled: u64,
    /// The D2H checks: before the unmodelled call, after it (passing), after it (an
    /// expected output that differs).
    checks: [u64; 3],
}

fn unmodelled_record(api: &str, exempt: Option<&str>) -> Vec<u8> {
    let mut p = PayloadWriter::new();
    p.str(fid::API_NAME, api)
        .str(fid::LIBRARY, "libcudart.so.13");
    if let Some(why) = exempt {
        p.str(fid::REASON, why);
    }
    p.finish()
}

/// Upload, check, an exempt call, [an unmodelled call,] check, a failing check.
fn archive(root: &Path, with_unmodelled: bool) -> Seqs {
    let w = seeds::writer(root, Compression::None);
    let dev = 0x7f00_0000_0000u64;
    w.append(id::Malloc, 0, 1, 0, &seeds::malloc(dev, 4096))
        .unwrap();
    let data: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    let up = w.put_blob(&data).unwrap();
    let h2d = seeds::memcpy(CopyDir::HostToDevice, dev, 0x1000, 4096, up);
    w.append(id::Memcpy, 0, 1, 0, &h2d).unwrap();
    let back = seeds::memcpy(CopyDir::DeviceToHost, 0x2000, dev, 4096, up);
    let c0 = w.append(id::Memcpy, 0, 1, 0, &back).unwrap();
    let exempt = w
        .append(
            semantic::UNMODELLED_CALL,
            0,
            1,
            0,
            &unmodelled_record("cudaGetErrorString", Some("error strings")),
        )
        .unwrap();
    let unmodelled = if with_unmodelled {
        w.append(
            semantic::UNMODELLED_CALL,
            0,
            1,
            0,
            &unmodelled_record("cudaGraphicsMapResources", None),
        )
        .unwrap()
    } else {
        u64::MAX
    };
    let c1 = w.append(id::Memcpy, 0, 1, 0, &back).unwrap();
    let mut wrong = data.clone();
    wrong[100] ^= 1;
    let wrong = w.put_blob(&wrong).unwrap();
    let c2 = w
        .append(
            id::Memcpy,
            0,
            1,
            0,
            &seeds::memcpy(CopyDir::DeviceToHost, 0x2000, dev, 4096, wrong),
        )
        .unwrap();
    w.finish().unwrap();
    // The counts capture's manifest hook writes.
    let dir = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("pid-"))
        .unwrap();
    let path = dir.join("manifest.json");
    let mut m: ProcessManifest = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    m.unmodelled_coverage = UnmodelledCoverage::Measured {
        pass_throughs: 1400,
    };
    m.unmodelled_apis.push(UnmodelledApi {
        api: "cudaGetErrorString".into(),
        library: "libcudart.so.13".into(),
        count: 5,
        first_seq: Some(exempt),
        exempt: Some("error strings".into()),
    });
    if with_unmodelled {
        m.unmodelled_apis.push(UnmodelledApi {
            api: "cudaGraphicsMapResources".into(),
            library: "libcudart.so.13".into(),
            count: 3,
            first_seq: Some(unmodelled),
            exempt: None,
        });
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    Seqs {
        exempt,
        unmodelled,
        checks: [c0, c1, c2],
    }
}

/// Replays `root` against the stand-in runtime: exit code, stdout + stderr, the JSON
/// result; None without a C compiler.
#[track_caller]
fn replay(root: &Path, args: &[&str]) -> Option<(Option<i32>, String, Value)> {
    let so = stand_in::library()?;
    let json = root.with_extension("json");
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg(root)
        .args(args)
        .arg("--json")
        .arg(&json)
        .env("HRR_REPLAY_CUDART", so)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    Some((o.status.code(), text, v))
}

#[test]
fn replay_refuses_naming_the_unmodelled_api_its_count_and_first_call() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("a");
    let s = archive(&root, true);
    let Some((code, text, v)) = replay(&root, &[]) else {
        return;
    };
    let pid = v["unmodelled_apis"][0]["pid"].as_u64().unwrap();
    assert_eq!(code, Some(1), "{text}");
    let named = format!(
        "cudaGraphicsMapResources (libcudart.so.13): 3 calls, first at pid {pid} seq {}",
        s.unmodelled
    );
    assert!(text.contains(&named), "{text}");
    assert!(text.contains("model them in the API table"), "{text}");
    assert!(
        !text.contains("cudaGetErrorString (libcudart.so.13): 5"),
        "exempt: {text}"
    );
    assert_eq!(v["schema_version"], "1.4");
    assert_eq!(v["verdict"], "FAIL");
    assert!(v["reason"].as_str().unwrap().contains(&named), "{v}");
    let f = v["failures"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{v}");
    assert_eq!(f[0]["kind"], "unmodelled");
    assert_eq!(f[0]["api"], "cudaGraphicsMapResources");
    assert_eq!(f[0]["seq"], s.unmodelled);
    // Nothing was run.
    assert_eq!(v["counts"]["events_replayed"], 0);
    let listed = v["unmodelled_apis"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0]["api"], "cudaGetErrorString");
    assert_eq!(listed[0]["first_seq"], s.exempt);
    assert_eq!(listed[0]["count"], 5);
    assert!(listed[0]["exempt"]
        .as_str()
        .unwrap()
        .contains("error strings"));
    assert_eq!(listed[1]["count"], 3);
    assert!(listed[1].get("exempt").is_none());
}

#[test]
fn continue_on_error_replays_and_marks_every_later_check() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("a");
    let s = archive(&root, true);
    let Some((code, text, v)) = replay(&root, &["--continue-on-error"]) else {
        return;
    };
    assert_eq!(code, Some(1), "{text}");
    let c = &v["counts"];
    assert_eq!(
        (c["d2h_pass"].as_u64(), c["d2h_fail"].as_u64()),
        (Some(2), Some(1)),
        "{v}"
    );
    // The passing check and the failing one after the call; not the one before.
    assert_eq!(c["checks_after_unmodelled"], 2, "{v}");
    let f = v["failures"].as_array().unwrap();
    assert_eq!(f.len(), 2, "{v}");
    assert_eq!(f[0]["kind"], "unmodelled");
    assert_eq!(f[1]["kind"], "d2h_mismatch");
    assert_eq!(f[1]["seq"], s.checks[2]);
    assert_eq!(f[1]["after_unmodelled_call"], true);
    assert!(f[0].get("after_unmodelled_call").is_none());
    assert!(
        text.contains(&format!(
            "FAILED seq {} cudaMemcpy [d2h_mismatch]",
            s.checks[2]
        )),
        "{text}"
    );
    assert!(text.contains("(after an unmodelled call)"), "{text}");
    assert!(
        text.contains("after an unmodelled call: 2 D2H check(s)"),
        "{text}"
    );
    assert!(s.checks[0] < s.unmodelled && s.unmodelled < s.checks[1]);
}

#[test]
fn an_exempt_call_alone_is_listed_and_refuses_nothing() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("a");
    let s = archive(&root, false);
    let Some((code, text, v)) = replay(&root, &["--continue-on-error"]) else {
        return;
    };
    // Only the deliberately wrong expected output fails, and it is not marked.
    assert_eq!(code, Some(1), "{text}");
    let f = v["failures"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{v}");
    assert_eq!(f[0]["kind"], "d2h_mismatch");
    assert!(f[0].get("after_unmodelled_call").is_none());
    assert_eq!(v["counts"]["checks_after_unmodelled"], 0);
    assert_eq!(v["counts"]["d2h_pass"], 2);
    assert_eq!(v["unmodelled_apis"][0]["first_seq"], s.exempt);
    assert!(
        text.contains("unmodelled call      : cudaGetErrorString (libcudart.so.13) x5"),
        "{text}"
    );
    assert!(text.contains("(exempt)"), "{text}");
}

#[test]
fn info_shows_coverage_and_each_unmodelled_api() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("a");
    let s = archive(&root, true);
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg("--info")
        .arg(&root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "unmodelled     cudaGraphicsMapResources (libcudart.so.13) x3, first at seq {}: NOT exempt: replay refuses this archive",
            s.unmodelled
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "unmodelled     cudaGetErrorString (libcudart.so.13) x5, first at seq {}: exempt, error strings",
            s.exempt
        )),
        "{text}"
    );
    // An archive written without coverage says so rather than "none".
    let bare = d.path().join("bare");
    let w = seeds::writer(&bare, Compression::None);
    w.append(id::Malloc, 0, 1, 0, &seeds::malloc(0x1000, 16))
        .unwrap();
    w.finish().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hrr-replay"))
        .arg("--info")
        .arg(&bare)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("unmodelled     not recorded"), "{text}");
}
