//! Declared instability end to end without a GPU: `hrr-harness run --family sm90
//! --stand-in` of atomic_float_sum (declared `unstable: {runs: 6, max_bytes: 16}`) and of
//! launch_paths (declaring none), with the stand-in runtime making device-to-host results
//! vary on demand (`HRR_STAND_IN_VARY`, standin/core.c). Within the declaration the case
//! passes and the report (console line, results.json, JUnit valid against
//! junit-10.xsd, summary.md) says how many bytes were excluded and why; beyond it the
//! `stability` check fails naming the bytes; an undeclared case fails its roundtrip, the
//! bytes named as differing between replays. Nothing varying, the declaration (an upper
//! bound) passes.
//!
//! Needs cc, nvcc and xmllint: skipped through `hrr_testkit`, saying so, where one is
//! missing (a failure under `CI=true` or `HRR_REQUIRE_ALL=1`; `.ci/install` installs them).

use std::process::Command;

use hrr_testkit::tools;

mod common;
use common::workspace;

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");

struct Run {
    code: i32,
    stdout: String,
    results: serde_json::Value,
    junit: String,
    summary: String,
}

/// One harness run of `case` against the stand-in, its D2H results varied by `vary`.
#[track_caller]
fn run(case: &str, vary: Option<&str>) -> Option<Run> {
    let [_, nvcc, xmllint] = hrr_testkit::tools([&tools::CC, &tools::NVCC, &tools::XMLLINT])?;
    let tools = common::built_capture_and_replay(HARNESS);
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(HARNESS);
    cmd.env("NVCC", nvcc);
    cmd.env_remove("HRR_STAND_IN_VARY");
    if let Some(v) = vary {
        cmd.env("HRR_STAND_IN_VARY", v);
    }
    let o = cmd
        .current_dir(workspace())
        .env("HRR_CAPTURE_DISK_RESERVE", "64M")
        .args([
            "run",
            "--family",
            "sm90",
            "--stand-in",
            "--no-progress",
            "--case",
            case,
        ])
        .arg("--tools")
        .arg(&tools)
        .arg("--output")
        .arg(out.path())
        .output()
        .unwrap();
    let read = |f: &str| std::fs::read_to_string(out.path().join(f)).unwrap_or_default();
    let junit = read("junit.xml");
    let v = Command::new(xmllint)
        .args(["--noout", "--schema"])
        .arg(workspace().join("reports/schema/junit-10.xsd"))
        .arg(out.path().join("junit.xml"))
        .output()
        .unwrap();
    assert!(
        v.status.success(),
        "junit.xml does not validate: {}\n{junit}\nthe harness said: {}{}",
        String::from_utf8_lossy(&v.stderr),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    Some(Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        results: serde_json::from_str(&read("results.json")).unwrap_or_default(),
        junit,
        summary: read("summary.md"),
    })
}

fn check<'a>(r: &'a Run, name: &str) -> &'a serde_json::Value {
    r.results["cases"][0]["attempts"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {}", r.results))
}

/// Bytes 0 and 1 of each of the case's two results vary: 4 bytes, within its 16.
#[test]
fn declared_instability_within_its_bound_passes_saying_what_was_excluded() {
    let Some(r) = run("atomic_float_sum", Some("0:2")) else {
        return;
    };
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.results);
    assert_eq!(r.results["cases"][0]["status"], "stand-in", "{}", r.results);
    let s = check(&r, "stability");
    assert_eq!(s["passed"], true, "{s}");
    let detail = s["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("4 byte(s) differed between 6 replays and were excluded, within the 16 the case declares: pid "),
        "{detail}"
    );
    assert!(
        detail.contains("cudaMemcpy: 2 of 1024 bytes at 0..2 [stable_bytes_match]"),
        "{detail}"
    );
    assert!(
        detail.contains("cudaMemcpy: 2 of 32 bytes at 0..2 [stable_bytes_match]"),
        "{detail}"
    );
    // The blob-edit byte (100) is stable: still caught exactly.
    assert_eq!(check(&r, "blob-edit")["passed"], true, "{}", r.results);
    let e = &r.results["cases"][0]["attempts"][0]["excluded"];
    assert_eq!(
        (
            e["bytes"].as_u64(),
            e["checks"].as_u64(),
            e["runs"].as_u64()
        ),
        (Some(4), Some(2), Some(6)),
        "{e}"
    );
    let why = "4 byte(s) of 2 D2H check(s) excluded: they differed between 6 replays of the archive, so the program does not reproduce them; the case declares at most 16 such bytes";
    assert!(r.junit.contains(&format!("unstable: {why}")), "{}", r.junit);
    // The replay summary in system-out lists them too.
    assert!(r.junit.contains("stability runs   : 6"), "{}", r.junit);
}

/// Bytes 0..12 of each result vary: 24 bytes, beyond the 16 declared.
#[test]
fn instability_beyond_the_declaration_fails_naming_the_bytes() {
    let Some(r) = run("atomic_float_sum", Some("0:12")) else {
        return;
    };
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(r.results["cases"][0]["status"], "fail", "{}", r.results);
    let s = check(&r, "stability");
    assert_eq!(s["passed"], false, "{s}");
    let detail = s["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "24 byte(s) differed between 6 replays, more than the 16 the case declares"
        ),
        "{detail}"
    );
    assert!(detail.contains("12 of 32 bytes at 0..12"), "{detail}");
    assert!(
        r.summary.contains("stability: 24 byte(s) differed"),
        "{}",
        r.summary
    );
    assert!(
        r.junit.contains("[FAIL] stability: 24 byte(s)"),
        "{}",
        r.junit
    );
}

/// launch_paths declares no instability (and checks its results only where kernels ran):
/// its varying bytes fail roundtrip, and the diagnosis replays name them as differing
/// between replays.
#[test]
fn instability_in_an_undeclared_case_fails_naming_it() {
    let Some(r) = run("launch_paths", Some("5:1")) else {
        return;
    };
    assert_eq!(r.code, 1, "{}", r.stdout);
    let rt = check(&r, "roundtrip");
    assert_eq!(rt["passed"], false, "{rt}");
    let detail = rt["detail"].as_str().unwrap();
    assert!(
        detail.contains("first failure: D2H check failed at seq "),
        "{detail}"
    );
    assert!(
        detail.contains(
            "byte(s) differ between the replays themselves, the program's own nondeterminism"
        ),
        "{detail}"
    );
    assert!(
        detail.contains(" bytes at 5 [stable_bytes_match]"),
        "{detail}"
    );
}

/// Nothing varies (the stand-in runs no kernel): the declaration is an upper bound.
#[test]
fn no_instability_passes_a_declaration() {
    let Some(r) = run("atomic_float_sum", None) else {
        return;
    };
    assert_eq!(r.code, 0, "{}", r.stdout);
    let s = check(&r, "stability");
    assert_eq!(
        s["detail"],
        "6 replays agreed on every byte (the case declares at most 16 unstable)"
    );
    assert!(r.results["cases"][0]["attempts"][0]
        .get("excluded")
        .is_none());
}

/// `run --list --json` shows a case's declared instability (no GPU, nothing built).
#[test]
fn the_plan_shows_the_declaration() {
    let o = Command::new(HARNESS)
        .current_dir(workspace())
        .args([
            "run",
            "--family",
            "sm90",
            "--list",
            "--json",
            "--case",
            "atomic_float_sum",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v[0]["unstable"],
        serde_json::json!({"runs": 6, "max_bytes": 16}),
        "{v}"
    );
    let o = Command::new(HARNESS)
        .current_dir(workspace())
        .args([
            "run",
            "--family",
            "sm90",
            "--list",
            "--json",
            "--case",
            "memcpy_kinds",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v[0]["unstable"].is_null(), "{v}");
}
