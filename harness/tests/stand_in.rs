//! Every AMD family of the repository's matrix through the stand-in HIP runtime (standin/),
//! and sm90 through the stand-in CUDA runtime,
//! end to end without a GPU: `hrr-harness run --family F --stand-in` builds each GPU case
//! with the real compilers (hipcc; clang-19 for the targets only it knows), runs it under
//! libhrr_capture.so with the stand-in on the loader path (registration parses the real
//! offload bundles and AMDGPU code objects), replays the archive through the stand-in and
//! applies the matrix's checks. A case passing is `stand-in`, never `pass`; a family no
//! compiler here builds (gfx950, gfx1153) fails, never passes. One test per family.
//!
//! A HIP-side regression fails these tests: a copy capture stops recording leaves replay
//! nothing to verify (roundtrip) or the wrong output edited (blob-edit); a registration or
//! launch capture breaks shows as a refused launch at replay; a shim that changes what the
//! program sees fails `unchanged`.
//!
//! Skips (through `hrr_testkit`, saying so) only where a compiler the family needs is
//! missing: cc, and hipcc (clang-19 and lld-19 for gfx12 and gfx115x) or nvcc; a failure
//! under `CI=true` or `HRR_REQUIRE_ALL=1` (`.ci/install` installs them all).

use std::process::Command;

use hrr_testkit::{tools, Need, Tool};

mod common;
use common::workspace;

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");

struct Run {
    junit: String,
    code: i32,
    results: serde_json::Value,
    runtime_log: String,
    stdout: String,
    stderr: String,
}

/// One family at a time: each run compiles with every core, and the families share the
/// stand-in library's build.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What building `family`'s cases takes: cc (the stand-in runtime), and nvcc for NVIDIA
/// families; hipcc for AMD ones, and clang-19 with lld-19 for the targets HIP 5.2 does
/// not know.
fn compilers(family: &str) -> Vec<&'static Tool> {
    if family.starts_with("sm") {
        return vec![&tools::CC, &tools::NVCC];
    }
    let mut v = vec![&tools::CC, &tools::HIPCC];
    if matches!(family, "gfx120x" | "gfx1150" | "gfx1151") {
        v.extend([&tools::CLANG19, &tools::LLD19]);
    }
    v
}

#[track_caller]
fn run_family(family: &str) -> Option<Run> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let missing: Vec<String> = compilers(family)
        .into_iter()
        .filter(|t| hrr_testkit::find(t).is_none())
        .map(Tool::missing)
        .collect();
    if !missing.is_empty() {
        hrr_testkit::skip(Need::Tool, missing.join("; "));
        return None;
    }
    let tools = common::built_capture_and_replay(HARNESS);
    let out = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(HARNESS);
    if let Some(nvcc) = hrr_testkit::find(&tools::NVCC) {
        cmd.env("NVCC", nvcc);
    }
    let o = cmd
        .current_dir(workspace())
        // The cases' archives are small: the machine's free space is not under test (the
        // default reserve is 15% of the disk, up to 4 GiB, and a CI disk may have less).
        .env("HRR_CAPTURE_DISK_RESERVE", "64M")
        // heavy cases (2 GiB of copies, 100,000 launches) take minutes with debug tools:
        // the CLI run has them; this test keeps every other case.
        .args([
            "run",
            "--family",
            family,
            "--stand-in",
            "--no-progress",
            "--exclude-tag",
            "heavy",
        ])
        .arg("--tools")
        .arg(&tools)
        .arg("--output")
        .arg(out.path())
        .output()
        .unwrap();
    let results = std::fs::read(out.path().join("results.json"))
        .ok()
        .and_then(|d| serde_json::from_slice(&d).ok())
        .unwrap_or(serde_json::Value::Null);
    let junit = std::fs::read_to_string(out.path().join("junit.xml")).unwrap_or_default();
    let r = Run {
        junit,
        code: o.status.code().unwrap_or(-1),
        results,
        runtime_log: std::fs::read_to_string(out.path().join("stand-in-runtime.jsonl"))
            .unwrap_or_default(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    };
    Some(r)
}

fn cases(r: &Run) -> Vec<(String, String, String)> {
    r.results["cases"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|c| {
            (
                c["case"].as_str().unwrap_or("").to_string(),
                c["status"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// A family whose programs link here: every GPU case passes against the stand-in (status
/// `stand-in`, never `pass`), the device claimed `arch`, and the stand-in parsed code
/// objects and counted launches.
fn runs_green(family: &str, arch: &str) {
    let Some(r) = run_family(family) else { return };
    let all = cases(&r);
    let bad: Vec<_> = all
        .iter()
        .filter(|(_, s, _)| !matches!(s.as_str(), "stand-in" | "pass" | "skip"))
        .collect();
    assert!(
        r.code == 0 && bad.is_empty(),
        "{family}: exit {}; not green: {bad:#?}\nstdout: {}\nstderr tail: {}",
        r.code,
        r.stdout,
        &r.stderr[r.stderr.len().saturating_sub(3000)..]
    );
    let stand_in = all.iter().filter(|(_, s, _)| s == "stand-in").count();
    assert!(
        stand_in >= 15,
        "{family}: only {stand_in} stand-in cases: {all:#?}"
    );
    // GPU cases never report `pass` under the stand-in (host cases may).
    for (name, status, _) in &all {
        if status == "pass" {
            assert!(
                name == "archive_tools",
                "{family}: GPU case {name} reported as a GPU pass"
            );
        }
    }
    assert!(
        r.stdout.contains("STAND-IN, NO GPU")
            || r.stdout.contains("passed against the stand-in runtime"),
        "{family}: the last line does not say stand-in: {}",
        r.stdout
    );
    // JUnit names the stand-in in every passing GPU case's classname.
    assert!(
        r.junit
            .contains(&format!("classname=\"{family}-stand-in\"")),
        "{family}: JUnit does not label the stand-in"
    );
    // What the stand-in itself did, per process: registration from real code objects for
    // the claimed target, launches counted.
    let lines: Vec<serde_json::Value> = r
        .runtime_log
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        !lines.is_empty(),
        "{family}: the stand-in logged no process"
    );
    assert!(
        lines.iter().all(|l| l["arch"] == arch),
        "{family}: {lines:?}"
    );
    let launches: u64 = lines
        .iter()
        .map(|l| l["launches"].as_u64().unwrap_or(0))
        .sum();
    let kernels: u64 = lines
        .iter()
        .map(|l| l["kernels"].as_u64().unwrap_or(0))
        .sum();
    assert!(launches > 0 && kernels > 0, "{family}: {lines:?}");
    eprintln!(
        "{family}: {stand_in} cases stand-in; {} processes, {kernels} kernels registered, {launches} launches counted",
        lines.len()
    );
}

/// A family no compiler here builds: every GPU case fails naming why; nothing passes.
fn not_buildable(family: &str) {
    let Some(r) = run_family(family) else { return };
    let all = cases(&r);
    assert_eq!(r.code, 1, "{family}: {}\n{}", r.stdout, r.stderr);
    for (name, status, message) in &all {
        if name == "archive_tools" {
            continue;
        }
        // A case tagged stand-in-not-modelled is skipped before any build (never passed).
        if status == "skip" && message.contains("stand-in-not-modelled") {
            continue;
        }
        // A case a matrix rule skips on the family (HIP has no static runtime to build
        // private_runtime's library with) is never built, and never passed either.
        if status == "skip" && message.starts_with("unsupported:") {
            continue;
        }
        // A stored archive captured for other targets or another runtime is skipped,
        // saying so (archive cases build nothing).
        if status == "skip" && name.starts_with("stored_") {
            assert!(
                message.contains("its code objects are for") || message.contains("captured on a"),
                "{family}: {name}: {message}"
            );
            continue;
        }
        assert_eq!(status, "fail", "{family}: {name}: {status} {message}");
        assert!(
            message.contains("cannot build"),
            "{family}: {name}: {message}"
        );
    }
}

#[test]
fn gfx90a_runs_its_cases_against_the_stand_in() {
    runs_green("gfx90a", "gfx90a");
}

#[test]
fn gfx94x_runs_its_cases_against_the_stand_in() {
    runs_green("gfx94x", "gfx940");
}

#[test]
fn gfx103x_runs_its_cases_against_the_stand_in() {
    runs_green("gfx103x", "gfx1030");
}

#[test]
fn gfx110x_runs_its_cases_against_the_stand_in_with_the_device_library_subset() {
    runs_green("gfx110x", "gfx1100");
}

#[test]
fn gfx120x_runs_its_cases_against_the_stand_in_built_by_clang19() {
    runs_green("gfx120x", "gfx1200");
}

#[test]
fn gfx1150_runs_its_cases_against_the_stand_in_built_by_clang19() {
    runs_green("gfx1150", "gfx1150");
}

#[test]
fn gfx1151_runs_its_cases_against_the_stand_in_built_by_clang19() {
    runs_green("gfx1151", "gfx1151");
}

#[test]
fn sm90_runs_its_cases_against_the_stand_in_cuda_runtime() {
    runs_green("sm90", "sm_90");
}

/// nvcc's static runtime reaches the driver through private export tables no stand-in
/// has: under the stand-in every GPU case of sm90-static is skipped saying so, never run
/// and never passed (the H200 runs them: docs/api.md, "Any CUDA program").
#[test]
fn sm90_static_is_skipped_under_the_stand_in_never_passed() {
    let Some(r) = run_family("sm90-static") else {
        return;
    };
    let all = cases(&r);
    assert!(all.len() > 30, "{}\n{}", r.stdout, r.stderr);
    for (name, status, message) in &all {
        if name == "archive_tools" {
            continue;
        }
        // Archive cases build nothing: a stored archive replays as on sm90 (the stand-in
        // one passes as stand-in, the others skip saying why).
        if name.starts_with("stored_") {
            assert!(
                status == "stand-in"
                    || (status == "skip"
                        && (message.contains("captured on a")
                            || message.contains("code objects are for"))),
                "{name}: {status} {message}"
            );
            continue;
        }
        assert_eq!(status, "skip", "{name}: {message}");
        assert!(
            message.contains("private export tables"),
            "{name}: {message}"
        );
    }
}

#[test]
fn gfx950_is_reported_unbuildable_never_passed() {
    not_buildable("gfx950");
}

#[test]
fn gfx1153_is_reported_unbuildable_never_passed() {
    not_buildable("gfx1153");
}
