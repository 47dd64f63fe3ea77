//! The CI-facing modes of `hrr-harness run` and `report merge`, end to end on a machine
//! without a GPU: compile-only (every GPU case compiled by a stand-in nvcc, none run, never
//! a pass), a run that needs a GPU and has none (exit 7), `--list` per shard, tags,
//! `--rerun-failed`, shards dealt by durations, and merges that expect every family and
//! shard (a missing one is `not-run` and fails the merge; durations.json for the next run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{text, write};

const HARNESS: &str = env!("CARGO_BIN_EXE_hrr-harness");

const MATRIX: &str = r#"version: 1
tools:
  build: [sh, build.sh]
  capture: "{target_dir}/release/libhrr_capture.so"
  replay: "{target_dir}/release/hrr-replay"
defaults:
  timeout: 60s
families:
  - name: sm90
    vendor: nvidia
    targets: [sm_90]
    runner: [self-hosted, sm90]
    shards: 2
  - name: sm100
    vendor: nvidia
    targets: [sm_100]
    runner: [self-hosted, sm100]
cases:
  - name: hello
    dir: hello
    kind: host
    tags: [host]
    command: [sh, run.sh]
    checks: [exit-zero]
  - name: g1
    dir: g1
    checks: [roundtrip]
  - name: g2
    dir: g2
    tags: [heavy]
    checks: [roundtrip]
  - name: g3
    dir: g3
    checks: [roundtrip]
rules:
  - family: sm90
    case: g3
    expect: fail
    reason: a known bug
"#;

/// A stand-in nvcc: knows sm_90 only, "compiles" by writing its output, fails on `#error`.
const NVCC: &str = r#"#!/bin/sh
case "$1" in
  --version) echo "Cuda compilation tools, release 13.0, V13.0.0 (stand-in)"; exit 0;;
  --list-gpu-code) echo sm_90; exit 0;;
esac
out=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in -o) out="$2"; shift;; *.cpp|*.cu) src="$1";; esac
  shift
done
if grep -q '#error' "$src"; then echo "$src:1: error: #error on purpose" >&2; exit 1; fi
: > "$out"
"#;

fn make_repo() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("repo");
    write(&root, "matrix/matrix.yaml", MATRIX);
    write(&root, "build.sh", "set -e\nmkdir -p \"$CARGO_TARGET_DIR/release\"\n: > \"$CARGO_TARGET_DIR/release/hrr-replay\"\nchmod +x \"$CARGO_TARGET_DIR/release/hrr-replay\"\n: > \"$CARGO_TARGET_DIR/release/libhrr_capture.so\"\n");
    write(&root, "cases/hello/run.sh", "echo hello\n");
    for g in ["g1", "g2", "g3"] {
        write(
            &root,
            &format!("cases/{g}/main.cpp"),
            "int main() { return 0; }\n",
        );
    }
    write(&root, "cases/common/README", "shared headers\n");
    write(&root, "bin/nvcc", NVCC);
    let nvcc = root.join("bin/nvcc");
    let mut perm = std::fs::metadata(&nvcc).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&nvcc, perm).unwrap();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "cases",
    ]);
    (t, root)
}

/// The harness with no GPU visible, even on a GPU machine (empty visible-devices values
/// mean none), and the stand-in nvcc.
fn harness(root: &Path, args: &[&str]) -> Output {
    Command::new(HARNESS)
        .args(args)
        .current_dir(root)
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("CUDA_VISIBLE_DEVICES", "")
        .env("ROCR_VISIBLE_DEVICES", "")
        .env("HIP_VISIBLE_DEVICES", "")
        .env("NVCC", root.join("bin/nvcc"))
        .output()
        .unwrap()
}

fn statuses(file: &Path) -> Vec<(String, String)> {
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["case"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn compile_only_compiles_every_gpu_case_and_never_reports_a_pass() {
    let (_t, root) = make_repo();
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--compile-only",
            "--output",
            "co",
            "--no-progress",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(
        s.contains("COMPILED, NOT RUN: 3 compiled, 1 host case passed (no GPU used)"),
        "{s}"
    );
    assert_eq!(
        statuses(&root.join("co/results.json")),
        pairs(&[
            ("g1", "compiled-not-run"),
            ("g2", "compiled-not-run"),
            ("g3", "compiled-not-run"),
            ("hello", "pass"),
        ])
    );
    let json = std::fs::read_to_string(root.join("co/results.json")).unwrap();
    assert!(json.contains("\"schema_version\": \"1.4\""), "{json}");
    let junit = std::fs::read_to_string(root.join("co/junit.xml")).unwrap();
    assert!(junit.contains("type=\"compiled-not-run\""), "{junit}");
    let md = std::fs::read_to_string(root.join("co/summary.md")).unwrap();
    assert!(md.contains("**COMPILED, NOT RUN**"), "{md}");
    // A case that does not compile fails the compile-only run (exit 1).
    write(&root, "cases/g2/main.cpp", "#error broken\n");
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--compile-only",
            "--output",
            "co",
            "--no-progress",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(
        s.contains("FAIL: 2 compiled, 1 host case passed, 1 fail"),
        "{s}"
    );
    // A family whose target the compiler does not know: a compile failure per case.
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm100",
            "--compile-only",
            "--case",
            "g1",
            "--output",
            "co100",
            "--no-progress",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(s.contains("does not list sm_100"), "{s}");
    assert!(
        s.contains("FAIL: 0 compiled, 0 host cases passed, 1 fail"),
        "{s}"
    );
    // And `build` of it names that too.
    let o = harness(&root, &["build", "--family", "sm100"]);
    let s = text(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(s.contains("target sm_100 not built"), "{s}");
    // No compiler at all: infrastructure (7), naming it and its package.
    let o = Command::new(HARNESS)
        .args([
            "run",
            "--family",
            "sm90",
            "--compile-only",
            "--output",
            "none",
            "--no-progress",
        ])
        .current_dir(&root)
        .env("NVCC", "/nonexistent/nvcc")
        .output()
        .unwrap();
    let s = text(&o);
    assert_eq!(o.status.code(), Some(7), "{s}");
    assert!(
        s.contains("nvidia-cuda-nvcc") && s.contains("were not compiled"),
        "{s}"
    );
    assert!(s.contains("3 not-run"), "{s}");
}

#[test]
fn a_run_that_needs_a_gpu_and_has_none_exits_7_and_names_what_is_missing() {
    let (_t, root) = make_repo();
    for args in [
        &["run", "--family", "sm90", "--no-progress"][..],
        &["run", "--family", "auto", "--no-progress"][..],
    ] {
        let o = harness(&root, args);
        let s = text(&o);
        assert_eq!(o.status.code(), Some(7), "{args:?}: {s}");
        assert!(
            s.contains("--compile-only") && s.contains("not a pass"),
            "{s}"
        );
    }
    let s = text(&harness(
        &root,
        &["run", "--family", "sm90", "--no-progress"],
    ));
    assert!(s.contains("/dev/nvidiactl"), "{s}");
    // An empty visible-devices value is no GPU, said as such where there were GPUs to
    // narrow; the device nodes are named either way.
    assert!(
        s.contains("no GPU of family sm90 (sm_90) visible here"),
        "{s}"
    );
    // Host cases alone need no GPU.
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--tag",
            "host",
            "--output",
            "h",
            "--no-progress",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        statuses(&root.join("h/results.json")),
        pairs(&[("hello", "pass")])
    );
}

#[test]
fn list_shows_each_shard_what_runs_skips_or_is_expected_to_fail() {
    let (_t, root) = make_repo();
    let o = harness(&root, &["run", "--family", "sm90", "--list"]);
    let s = text(&o);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(
        s.contains("4 case(s) in 2 shard(s), dealt round robin by name"),
        "{s}"
    );
    assert!(
        s.contains("shard 1/2: 2 case(s)") && s.contains("shard 2/2: 2 case(s)"),
        "{s}"
    );
    assert!(s.contains("expect-fail  a known bug [rule 1]"), "{s}");
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--list",
            "--json",
            "--exclude-tag",
            "heavy",
            "--shard",
            "1/2",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows: Vec<(String, String, String)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["shard"].as_str().unwrap().into(),
                r["case"].as_str().unwrap().into(),
                r["action"].as_str().unwrap().into(),
            )
        })
        .collect();
    // g1, g3, hello without g2; round robin: g1 and hello in 1/2.
    assert_eq!(
        rows,
        vec![
            ("1/2".into(), "g1".into(), "run".into()),
            ("1/2".into(), "hello".into(), "run".into())
        ]
    );
    // Dealt by durations: g2 (long) alone, the rest together.
    write(
        &root,
        "d.json",
        "{\"g1\": 1.0, \"g2\": 50.0, \"g3\": 2.0, \"hello\": 0.5}",
    );
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--list",
            "--json",
            "--durations",
            "d.json",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let shard_of = |c: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["case"] == c)
            .unwrap()["shard"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(shard_of("g2"), "1/2");
    for c in ["g1", "g3", "hello"] {
        assert_eq!(shard_of(c), "2/2", "{c}");
    }
    assert_eq!(
        harness(
            &root,
            &["run", "--family", "sm90", "--list", "--tag", "nope"]
        )
        .status
        .code(),
        Some(2)
    );
}

#[test]
fn rerun_failed_takes_only_the_unexpected_cases_of_an_earlier_run() {
    let (_t, root) = make_repo();
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--compile-only",
            "--output",
            "first",
            "--no-progress",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Make g1 a failure and g3 an unexpected pass in the earlier results.
    let p = root.join("first/results.json");
    let mut r: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    for c in r["cases"].as_array_mut().unwrap() {
        match c["case"].as_str().unwrap() {
            "g1" => c["status"] = "fail".into(),
            "g3" => c["status"] = "unexpected-pass".into(),
            _ => {}
        }
    }
    std::fs::write(&p, serde_json::to_vec(&r).unwrap()).unwrap();
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--compile-only",
            "--rerun-failed",
            "first/results.json",
            "--output",
            "again",
            "--no-progress",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        statuses(&root.join("again/results.json")),
        pairs(&[("g1", "compiled-not-run"), ("g3", "compiled-not-run")])
    );
    // A newer major schema is refused, not misread.
    let newer = std::fs::read_to_string(&p).unwrap().replacen(
        "\"schema_version\":\"1.4\"",
        "\"schema_version\":\"2.0\"",
        1,
    );
    std::fs::write(&p, newer).unwrap();
    let o = harness(
        &root,
        &[
            "run",
            "--family",
            "sm90",
            "--rerun-failed",
            "first/results.json",
            "--list",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("newer than this tool reads"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_merge_expecting_the_matrix_names_a_missing_shard_and_fails() {
    let (_t, root) = make_repo();
    for k in ["1/2", "2/2"] {
        let out = format!("shards/sm90-{}", k.replace('/', "-of-"));
        let o = harness(
            &root,
            &[
                "run",
                "--family",
                "sm90",
                "--compile-only",
                "--shard",
                k,
                "--output",
                &out,
                "--no-progress",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    // Both shards of sm90 present: complete.
    let o = harness(
        &root,
        &[
            "report",
            "merge",
            "shards",
            "--output",
            "m",
            "--expect",
            "matrix",
            "--families",
            "sm90",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(s.contains("all 2 expected shard(s) present"), "{s}");
    let d: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("m/durations.json")).unwrap()).unwrap();
    assert!(d.get("hello").is_some() && d.get("g1").is_none(), "{d}");
    // The whole matrix expects sm100 too: missing, named, not-run, exit 1.
    let o = harness(
        &root,
        &[
            "report", "merge", "shards", "--output", "m", "--expect", "matrix",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(
        s.contains("missing: family sm100 shard 1/1 sent no results.json"),
        "{s}"
    );
    let st = statuses(&root.join("m/results.json"));
    assert_eq!(
        st.iter().filter(|(_, s)| s == "not-run").count(),
        4,
        "{st:?}"
    );
    // Shard 2/2 lost: its cases are not-run.
    std::fs::remove_dir_all(root.join("shards/sm90-2-of-2")).unwrap();
    write(
        &root,
        "expect.txt",
        "# from the workflow\nsm90 1/2\nsm90 2/2\n",
    );
    let o = harness(
        &root,
        &[
            "report",
            "merge",
            "shards",
            "--output",
            "m",
            "--expect-list",
            "expect.txt",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(s.contains("missing: family sm90 shard 2/2"), "{s}");
    let junit = std::fs::read_to_string(root.join("m/junit.xml")).unwrap();
    assert!(junit.contains("type=\"not-run\""), "{junit}");
    // Nothing arrived at all (every shard job failed before writing): with an expectation
    // that is every shard missing, reported in full, and red.
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let o = harness(
        &root,
        &[
            "report", "merge", "empty", "--output", "e", "--expect", "matrix",
        ],
    );
    let s = text(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert!(s.contains("missing: family sm90 shard 2/2"), "{s}");
    let st = statuses(&root.join("e/results.json"));
    assert!(
        !st.is_empty() && st.iter().all(|(_, s)| s == "not-run"),
        "{st:?}"
    );
    assert!(root.join("e/report.html").is_file() && root.join("e/junit.xml").is_file());
    // Without an expectation the merge cannot know, and says only what it has.
    let o = harness(&root, &["report", "merge", "shards", "--output", "m"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The same shard twice stays an error.
    let dup = root.join("shards/copy");
    std::fs::create_dir_all(&dup).unwrap();
    std::fs::copy(
        root.join("shards/sm90-1-of-2/results.json"),
        dup.join("results.json"),
    )
    .unwrap();
    let o = harness(&root, &["report", "merge", "shards", "--output", "m"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("sm90` shard 1/2 appears in two reports"),
        "{}",
        text(&o)
    );
}
